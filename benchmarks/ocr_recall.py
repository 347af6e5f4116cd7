"""Retrieval on OCR text against the digital text: recall@5 on the same pages, with a paired interval.

Pages of the ``pdf-docs`` corpus's born-digital PDFs that carry a question (a quote of
``chunklab/data/corpora/pdf-docs-questions.jsonl`` found on exactly one page of the file's
text layer, by :func:`chunklab.datasets.model.locate_quote`) are drawn at random (seeded); the
drawn pages of each file are copied into one PDF, which the kit's loader
(:func:`chunklab.documents.load_document`) reads twice: from its text layer (OCR mode
``never``), and with every page rendered by pypdfium2 at
:data:`~chunklab.documents.ocr.DEFAULT_DPI` and read by
:data:`~chunklab.documents.ocr.DEFAULT_ENGINE` (OCR mode ``always``, the flag that forces OCR
on every page). Both corpora are cut by the same chunker (``structural``, 1,000 characters)
and embedded by the same encoder (the static model by default, for speed); each question's
top 5 chunks over its corpus are scored: a hit when every quote of the question lies in a
retrieved chunk of its file, as :func:`~chunklab.datasets.model.locate_quote` matches it
(line breaks, whitespace and hyphenation tolerated). Questions whose quote is not found in
the digital pages are left out (listed); quotes not found anywhere in the OCR text of their
file are listed as what OCR lost. The interval is the 95% paired cluster bootstrap
(documents as clusters) of :mod:`chunklab.evaluate.bootstrap` on OCR minus digital.

    python -m benchmarks.ocr_recall [--pages 60] [--seed 0] [--corpus-dir DIR] [--model static]
    # benchmarks/results/ocr_recall.json and .md
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.code_rag_50k.resources import machine, measured  # noqa: E402
from chunklab.datasets.model import QuoteNotFoundError, locate_quote  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "ocr_recall.json"
K = 5
SIZE = 1000
CHUNKER = "structural"


def quotes_of(row: Mapping[str, Any]) -> list[str]:
    """A question row's quotes: its ``answer``, a quote or a list of them."""
    answer = row["answer"]
    return [answer] if isinstance(answer, str) else list(answer)


def found(text: str, quote: str) -> bool:
    """Whether ``quote`` lies in ``text`` as the kit's tolerant matching finds it (more than once counts)."""
    try:
        locate_quote(text, quote)
    except QuoteNotFoundError:
        return False
    except ValueError:  # found more than once: it is there
        return True
    return True


def question_pages(
    page_texts: Mapping[str, Sequence[str]], rows: Sequence[Mapping[str, Any]]
) -> dict[str, int]:
    """Each question's page (1-based): the one page of its file whose text holds all its quotes.

    ``page_texts`` maps a file to its pages' texts. A question whose file is not there, or whose
    quotes are not all on one single page (not found, split across pages, on several pages), has
    no page and is left out.
    """
    out: dict[str, int] = {}
    for row in rows:
        pages = page_texts.get(row["path"])
        if pages is None:
            continue
        on = [n for n, text in enumerate(pages, 1) if all(found(text, q) for q in quotes_of(row))]
        if len(on) == 1:
            out[row["id"]] = on[0]
    return out


def pick_pages(candidates: Sequence[tuple[str, int]], n: int, seed: int) -> list[tuple[str, int]]:
    """``n`` of the (file, page) ``candidates`` drawn at random (seeded), sorted; all when fewer."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n!r}")
    unique = sorted(set(candidates))
    chosen = unique if len(unique) <= n else random.Random(seed).sample(unique, n)
    return sorted(chosen)


def hit(ranked: Sequence[tuple[str, str]], doc_id: str, quotes: Sequence[str]) -> bool:
    """Whether every quote lies in one of the ``ranked`` (doc id, chunk text) pairs of ``doc_id``."""
    texts = [text for d, text in ranked if d == doc_id]
    return all(any(found(t, q) for t in texts) for q in quotes)


def paired_summary(
    digital: Sequence[float], ocr: Sequence[float], clusters: Sequence[str], seed: int = 0
) -> dict[str, Any]:
    """Mean recall on each side and OCR minus digital, each with its 95% paired cluster-bootstrap interval."""
    from chunklab.evaluate.bootstrap import bootstrap_means, cluster_resample_counts, confidence_interval

    if not (len(digital) == len(ocr) == len(clusters)) or not digital:
        raise ValueError(
            f"digital, ocr and clusters must be non-empty and of one length, got "
            f"{len(digital)}, {len(ocr)}, {len(clusters)}"
        )
    values = np.array([digital, ocr, np.subtract(ocr, digital)], dtype=np.float64)
    counts = cluster_resample_counts(list(clusters), seed=seed)
    means = bootstrap_means(values, counts)
    low, high = confidence_interval(means)
    out: dict[str, Any] = {}
    for i, name in enumerate(("digital", "ocr", "ocr_minus_digital")):
        out[name] = {
            "mean": round(float(values[i].mean()), 4),
            "ci95": [round(float(low[i]), 4), round(float(high[i]), 4)],
        }
    out["clusters"] = len(set(clusters))
    return out


def by_kind(rows: Sequence[Mapping[str, Any]], per_q: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """Per question kind (``fact``, ``table``, ``multi``): how many, and mean recall on each side."""
    out: dict[str, Any] = {}
    for kind in sorted({r["kind"] for r in rows}):
        idx = [i for i, r in enumerate(rows) if r["kind"] == kind]
        out[kind] = {"questions": len(idx)} | {
            side: round(sum(per_q[side][i] for i in idx) / len(idx), 4) for side in ("digital", "ocr")
        }
    return out


def page_texts_of(path: Path) -> list[str]:
    """The text layer of each page of a PDF, as pypdfium2 gives it (for finding a question's page)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        out = []
        for page in doc:
            tp = page.get_textpage()
            out.append(tp.get_text_bounded())
            tp.close()
            page.close()
        return out
    finally:
        doc.close()


def subset_pdf(src: Path, pages: Sequence[int], target: Path) -> None:
    """Write the ``pages`` (1-based) of ``src`` into the PDF ``target``, in order."""
    import pypdfium2 as pdfium

    doc, out = pdfium.PdfDocument(str(src)), pdfium.PdfDocument.new()
    out.import_pages(doc, [p - 1 for p in pages])
    target.parent.mkdir(parents=True, exist_ok=True)
    out.save(str(target))
    out.close()
    doc.close()


def load_all(
    root: Path, files: Sequence[str], mode: str, engine: str | None
) -> tuple[dict[str, Any], float, float]:
    """The files read by ``load_document`` with OCR ``mode``: documents by id, wall and CPU seconds."""
    from chunklab.documents import load_document
    from chunklab.documents.ocr import set_ocr

    set_ocr(mode, engine)
    t0, c0 = time.perf_counter(), _cpu()
    docs = {f: load_document(root / f, root=root) for f in files}
    return docs, time.perf_counter() - t0, _cpu() - c0


def _cpu() -> float:
    """CPU seconds of this process and its finished children (tesseract runs as a child)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def retrieve(
    docs: Mapping[str, Any], questions: Sequence[str], model: str, cache_dir: str | None
) -> list[list[tuple[str, str]]]:
    """Each question's top-K (doc id, chunk text) over the chunks of ``docs`` (cosine, the kit's encoder)."""
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.embed.encoder import get_encoder

    strategy = get_strategy(CHUNKER, max_chars=SIZE)
    chunks = [c for doc in docs.values() for c in strategy(doc)]
    encoder = get_encoder(model, cache_dir=cache_dir)
    vecs = encoder.encode([c.text for c in chunks], show_progress=False)
    qv = encoder.encode(list(questions), show_progress=False)
    top = np.argsort(-(qv @ vecs.T), axis=1)[:, :K]
    return [[(chunks[j].doc_id, chunks[j].text) for j in row] for row in top]


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The whole measurement: pages found and drawn, both corpora read, chunked, embedded and scored."""
    from chunklab.datasets.corpora.pdfdocs import NAME, load_manifest
    from chunklab.datasets.corpora.pinned import corpus_dir
    from chunklab.datasets.questions.pdf import read_question_rows
    from chunklab.documents.ocr import DEFAULT_DPI, DEFAULT_ENGINE

    root = Path(args.corpus_dir) if args.corpus_dir else corpus_dir(NAME)
    manifest = load_manifest()
    born_digital = {
        f.path
        for f in manifest.files
        if f.path.endswith(".pdf") and not f.pages_without_text and (root / f.path).is_file()
    }
    if not born_digital:
        raise SystemExit(
            f"no pdf-docs PDFs under {root}: run `chunklab corpus fetch pdf-docs` or pass --corpus-dir"
        )
    rows = [r for r in read_question_rows() if r["path"] in born_digital]
    texts = {f: page_texts_of(root / f) for f in sorted({r["path"] for r in rows})}
    pages = question_pages(texts, rows)
    chosen = pick_pages(
        [(r["path"], pages[r["id"]]) for r in rows if r["id"] in pages], args.pages, args.seed
    )
    by_file: dict[str, list[int]] = defaultdict(list)
    for f, p in chosen:
        by_file[f].append(p)
    picked = [r for r in rows if r["id"] in pages and pages[r["id"]] in by_file.get(r["path"], [])]
    with tempfile.TemporaryDirectory() as tmp:
        sub = Path(tmp)
        for f, ps in by_file.items():
            subset_pdf(root / f, ps, sub / f)
        files = sorted(by_file)
        digital, d_wall, d_cpu = load_all(sub, files, "never", None)
        ocr, o_wall, o_cpu = load_all(sub, files, "always", DEFAULT_ENGINE)
    left_out, lost, kept = [], [], []
    for r in picked:
        qs = quotes_of(r)
        if not all(found(digital[r["path"]].text, q) for q in qs):
            left_out.append(r["id"])
            continue
        kept.append(r)
        missing = [q for q in qs if not found(ocr[r["path"]].text, q)]
        if missing:
            lost.append({"id": r["id"], "page": pages[r["id"]], "quotes": missing})
    questions = [r["question"] for r in kept]
    per_q: dict[str, list[float]] = {}
    for name, docs in (("digital", digital), ("ocr", ocr)):
        ranked = retrieve(docs, questions, args.model, args.cache_dir)
        per_q[name] = [float(hit(rk, r["path"], quotes_of(r))) for rk, r in zip(ranked, kept, strict=True)]
    summary = paired_summary(per_q["digital"], per_q["ocr"], [r["path"] for r in kept], args.seed)
    gone = {row["id"] for row in lost}
    whole = [i for i, r in enumerate(kept) if r["id"] not in gone]
    summary_whole = (
        paired_summary(
            [per_q["digital"][i] for i in whole],
            [per_q["ocr"][i] for i in whole],
            [kept[i]["path"] for i in whole],
            args.seed,
        )
        if whole
        else None
    )
    confidences = [p["confidence"] for d in ocr.values() for p in d.metadata.get("ocr", [])]
    return {
        "measured": measured(),  # date and machine, the block the book names
        "machine": machine(),
        "engine": DEFAULT_ENGINE,
        "dpi": DEFAULT_DPI,
        "chunker": f"{CHUNKER}, size {SIZE}",
        "encoder": args.model,
        "k": K,
        "seed": args.seed,
        "pages": [{"file": f, "page": p} for f, p in chosen],
        "files": len(by_file),
        "questions": len(kept),
        "questions_left_out": left_out,
        "recall_at_5": summary,
        "recall_at_5_quotes_kept_by_ocr": summary_whole,
        "recall_at_5_by_kind": by_kind(kept, per_q),
        "per_question": [
            {"id": r["id"], "kind": r["kind"], "digital": d, "ocr": o, "quote_lost_by_ocr": r["id"] in gone}
            for r, d, o in zip(kept, per_q["digital"], per_q["ocr"], strict=True)
        ],
        "quotes_lost_by_ocr": lost,
        "ocr_confidence_mean": round(float(np.mean(confidences)), 3) if confidences else None,
        "read_seconds": {
            "digital": {"wall": round(d_wall, 1), "cpu": round(d_cpu, 1)},
            "ocr": {"wall": round(o_wall, 1), "cpu": round(o_cpu, 1)},
        },
        "chars": {
            "digital": sum(len(d.text) for d in digital.values()),
            "ocr": sum(len(d.text) for d in ocr.values()),
        },
    }


def markdown(result: Mapping[str, Any]) -> str:
    """The result as a short Markdown report."""
    s, m = result["recall_at_5"], result["machine"]
    ci = s["ocr_minus_digital"]["ci95"]
    lines = [
        "# Recall@5 on OCR text against the digital text (pdf-docs pages)",
        "",
        f"Measured {m['time']} on {m['cpus']} CPUs, load average {m['loadavg']}, Python {m['python']}; "
        f"benchmarks/ocr_recall.py, seed {result['seed']}.",
        "",
        f"{len(result['pages'])} pages of {result['files']} born-digital PDFs, "
        f"{result['questions']} questions; "
        f"OCR by {result['engine']} at {result['dpi']} dpi (every page); chunker {result['chunker']}; "
        f"encoder {result['encoder']}; top {result['k']}; 95% paired cluster bootstrap by document "
        f"({s['clusters']} documents).",
        "",
        "| corpus | recall@5 | 95% interval |",
        "| --- | --- | --- |",
    ]
    for name in ("digital", "ocr"):
        lines.append(
            f"| {name} | {s[name]['mean']:.3f} | {s[name]['ci95'][0]:.3f} to {s[name]['ci95'][1]:.3f} |"
        )
    lines += [
        f"| OCR minus digital | {s['ocr_minus_digital']['mean']:+.3f} | {ci[0]:+.3f} to {ci[1]:+.3f} |",
        "",
    ]
    w = result["recall_at_5_quotes_kept_by_ocr"]
    if w is not None:
        wq = result["questions"] - len(result["quotes_lost_by_ocr"])
        wci = w["ocr_minus_digital"]["ci95"]
        lines += [
            f"On the {wq} questions whose quotes OCR kept (retrieval alone): "
            f"digital {w['digital']['mean']:.3f}, "
            f"OCR {w['ocr']['mean']:.3f}, OCR minus digital {w['ocr_minus_digital']['mean']:+.3f} "
            f"({wci[0]:+.3f} to {wci[1]:+.3f}).",
            "",
        ]
    lines += ["| kind | questions | digital | OCR |", "| --- | --- | --- | --- |"]
    for kind, row in result["recall_at_5_by_kind"].items():
        lines.append(f"| {kind} | {row['questions']} | {row['digital']:.3f} | {row['ocr']:.3f} |")
    lines += [
        "",
        f"Quotes not found in the OCR text of their file: {len(result['quotes_lost_by_ocr'])} questions "
        f"of {result['questions']}. Mean OCR confidence {result['ocr_confidence_mean']}.",
        "",
    ]
    for row in result["quotes_lost_by_ocr"]:
        lines.append(f"- {row['id']} (page {row['page']}): " + "; ".join(repr(q) for q in row["quotes"]))
    rs = result["read_seconds"]
    lines += [
        "",
        f"Reading the pages: digital {rs['digital']['wall']} s wall / {rs['digital']['cpu']} s CPU; "
        f"OCR {rs['ocr']['wall']} s wall / {rs['ocr']['cpu']} s CPU (including tesseract's processes).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the measurement; write the JSON and Markdown results and print the table."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pages", type=int, default=60, help="pages drawn (default 60)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--corpus-dir", help="the fetched pdf-docs folder (default: the kit's cache)")
    p.add_argument("--model", default="static", help="encoder model: static (default) or minilm")
    p.add_argument("--cache-dir", help="the kit's cache folder for the encoder (default: the kit's)")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    report = markdown(result)
    args.out.with_suffix(".md").write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
