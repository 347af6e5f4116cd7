"""Documentation sites as people publish them: Python's own HTML library reference, chunked and searched.

The corpus is the ``library/`` folder of Python 3.11's HTML documentation (317 pages built by
Sphinx), taken from Debian's ``python3.11-doc`` package: fetched once with ``apt-get download``,
verified against the pinned sha256, and the pages read straight out of the package's archive.

For each configuration it counts what page furniture does to chunks: chunks that hold the
copyright footer, chunks with the "¶" permalink character, chunks under 60 characters, and
chunks that are a heading alone. Then 34 real questions (``benchmarks/data/python_docs_questions.json``,
quotes format: each gold answer an exact quote of a page) are answered by dense retrieval with
the packaged MiniLM through :class:`chunklab.evaluate.Benchmark`: recall@5, MRR and precision Ω with
paired bootstrap intervals. Configurations: ``structural`` (furniture dropped, the default),
``structural[keep_boilerplate=true]`` (every visible character kept), and ``recursive`` on the
page's visible text::

    nice .venv/bin/python benchmarks/docsites.py [--size 1500] [--deb PATH] [--no-retrieval]

Results go to ``benchmarks/results/docsites.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "python3.11-doc=3.11.2-6+deb12u9"
DEB_NAME = "python3.11-doc_3.11.2-6+deb12u9_all.deb"
DEB_SHA256 = "5b3594189d6ef9a6963ce0347fd307a1cc67620ad697e144db366070e2e146be"
LIBRARY = "./usr/share/doc/python3.11/html/library/"
QUESTIONS = ROOT / "benchmarks" / "data" / "python_docs_questions.json"
FOOTER = "This page is licensed under the Python Software Foundation License"


def fetch_deb(cache: Path) -> Path:
    """The pinned ``python3.11-doc`` package in ``cache`` (downloaded with apt-get when missing)."""
    deb = cache / DEB_NAME
    if not deb.exists():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"fetching {PACKAGE} with apt-get download into {cache}", file=sys.stderr)
        subprocess.run(["apt-get", "download", PACKAGE], cwd=cache, check=True)
    digest = hashlib.sha256(deb.read_bytes()).hexdigest()
    if digest != DEB_SHA256:
        raise SystemExit(f"{deb}: sha256 {digest} is not the pinned {DEB_SHA256}")
    return deb


def library_pages(deb: Path) -> dict[str, bytes]:
    """``{file name: bytes}`` of ``library/*.html``, read from the package's data archive in memory."""
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], check=True, capture_output=True).stdout
    pages = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            name = member.name
            if (
                member.isfile()
                and name.startswith(LIBRARY)
                and name.endswith(".html")
                and "/" not in name[len(LIBRARY) :]
            ):
                extracted = tar.extractfile(member)
                assert extracted is not None  # a regular file
                pages[name[len(LIBRARY) :]] = extracted.read()
    return dict(sorted(pages.items()))


def furniture_counts(strategy: Any, docs: list[Any]) -> dict[str, Any]:
    """Chunks of ``strategy`` over ``docs`` and how many of them carry page furniture."""
    t0 = time.perf_counter()
    chunks = [c for d in docs for c in strategy(d)]
    seconds = time.perf_counter() - t0
    sizes = sorted(len(c.text) for c in chunks)

    def heading_alone(c: Any) -> bool:
        path = c.metadata.get("headings") or []
        return bool(path) and c.text.strip() == path[-1]

    return {
        "chunks": len(chunks),
        "footer": sum(FOOTER in c.text for c in chunks),
        "pilcrow": sum("\u00b6" in c.text for c in chunks),
        "under_60_chars": sum(n < 60 for n in sizes),
        "heading_alone": sum(heading_alone(c) for c in chunks),
        "median_chars": sizes[len(sizes) // 2] if sizes else 0,
        "seconds": round(seconds, 2),
    }


def main(argv: list[str] | None = None) -> int:
    """Fetch the pages, count furniture per configuration, run the retrieval benchmark, write JSON."""
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.documents import Document
    from chunklab.embed import get_encoder
    from chunklab.evaluate import Benchmark
    from chunklab.evaluate.userdata import load_user_dataset
    from chunklab.paths import chunklab_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1500, help="chunk budget in characters")
    parser.add_argument("--deb", type=Path, help="a python3.11-doc .deb already on disk")
    parser.add_argument("--cache", type=Path, default=None, help="where the .deb is kept")
    parser.add_argument("--no-retrieval", action="store_true", help="furniture counts only")
    parser.add_argument("--model", default="minilm", help="the embedding model (minilm, static)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "docsites.json")
    args = parser.parse_args(argv)
    deb = args.deb or fetch_deb(args.cache or chunklab_dir() / "corpora" / "python-docs")
    pages = library_pages(deb)
    docs = [
        Document.from_text(raw.decode("utf-8"), doc_id=name, format="html") for name, raw in pages.items()
    ]
    strategies = {
        "structural": get_strategy("structural", max_chars=args.size),
        "structural+furniture": get_strategy("structural", max_chars=args.size, keep_boilerplate=True),
        "recursive": get_strategy("recursive", size=args.size),
    }
    report: dict[str, Any] = {"pages": len(docs), "size": args.size, "model": args.model, "furniture": {}}
    print(f"{len(docs)} pages of library/; budget {args.size} characters")
    print(f"{'configuration':24} {'chunks':>7} {'footer':>7} {'¶':>6} {'<60':>5} {'heading':>8} {'s':>6}")
    for name, strategy in strategies.items():
        row = furniture_counts(strategy, docs)
        report["furniture"][name] = row
        print(
            f"{name:24} {row['chunks']:>7} {row['footer']:>7} {row['pilcrow']:>6} "
            f"{row['under_60_chars']:>5} {row['heading_alone']:>8} {row['seconds']:>6}"
        )
    if not args.no_retrieval:
        with tempfile.TemporaryDirectory(prefix="chunklab-docsites-") as tmp:
            corpus = Path(tmp) / "library"
            corpus.mkdir()
            for name, raw in pages.items():
                (corpus / name).write_bytes(raw)
            dataset = load_user_dataset(corpus, QUESTIONS, format="quotes")
            result = Benchmark(dataset, strategies, k=5, encoder=get_encoder(args.model)).run()
        report["retrieval"] = result.to_json()
        print(f"\n{'configuration':24} {'recall@5 [95% interval]':>26} {'MRR':>6} {'precision Ω':>12}")
        for row in report["retrieval"]["summary"]:
            interval = f"{row['recall']:.3f} [{row['recall_lo']:.3f}, {row['recall_hi']:.3f}]"
            print(f"{row['strategy']:24} {interval:>26} {row['mrr']:>6.3f} {row['precision_omega']:>12.3f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
