"""Structural Markdown chunking against LangChain's MarkdownHeaderTextSplitter.

Runs over the Markdown files installed on the machine (the virtualenv and ``/usr``) plus
this repository's chapters. Methods, interleaved in every repetition:

- ``chunklab structural``: ``chunk_markdown(md, max_size=SIZE)`` (size budget enforced);
- ``LangChain MarkdownHeaderTextSplitter``: sections only, no size budget;
- ``LangChain header + recursive``: those sections re-split by
  ``RecursiveCharacterTextSplitter(SIZE, 0)``, LangChain's way to enforce a budget.

Reports throughput (MB/s, median), chunk counts, the size distribution, chunks over
budget, and "fence breaks": chunks holding an odd number of ``` fence lines (a code
block cut open, or a ``#`` comment in code read as a heading). Prints a table and writes
``benchmarks/results/structural_markdown.json``.

    nice python benchmarks/structural_markdown.py [--repeat 3] [--size 1500]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HEADERS = [("#", "h1"), ("##", "h2"), ("###", "h3")]


def markdown_files(roots: list[str]) -> list[str]:
    """Every regular .md file under ``roots``, sorted."""
    files = []
    for root in roots:
        for dirpath, _dirs, names in os.walk(root):
            for n in names:
                if n.endswith(".md"):
                    p = os.path.join(dirpath, n)
                    if os.path.isfile(p) and not os.path.islink(p):
                        files.append(p)
    return sorted(set(files))


def fence_breaks(chunk: str) -> bool:
    """An odd count of fence lines: the chunk opens a code block it does not close."""
    n = sum(1 for line in chunk.splitlines() if line.lstrip().startswith(("```", "~~~")))
    return n % 2 == 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=1500)
    parser.add_argument("--roots", nargs="*", default=[sys.prefix, "/usr", "chapters"])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/structural_markdown.json"))
    args = parser.parse_args(argv)

    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    from chunklab.chunkers.structural import chunk_markdown
    from chunklab.documents import load_document

    texts = [load_document(f).text for f in markdown_files(args.roots)]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    header_splitter = MarkdownHeaderTextSplitter(HEADERS, strip_headers=False)
    recursive = RecursiveCharacterTextSplitter(chunk_size=args.size, chunk_overlap=0)

    def lc_headers(t: str) -> list[str]:
        return [d.page_content for d in header_splitter.split_text(t)]

    def lc_budget(t: str) -> list[str]:
        return [d.page_content for d in recursive.split_documents(header_splitter.split_text(t))]

    methods = {
        "chunklab structural": lambda t: [c.text for c in chunk_markdown(t, max_size=args.size)],
        "LangChain MarkdownHeaderTextSplitter": lc_headers,
        "LangChain header + recursive": lc_budget,
    }
    times: dict[str, list[float]] = {m: [] for m in methods}
    outputs: dict[str, list[str]] = {}
    for r in range(args.repeat):
        for name, fn in methods.items():
            gc.collect()
            t0 = time.perf_counter()
            out = [c for t in texts for c in fn(t)]
            times[name].append(time.perf_counter() - t0)
            if r == 0:
                outputs[name] = out
    results = {}
    for name in methods:
        sec = statistics.median(times[name])
        chunks = outputs[name]
        sizes = np.array([len(c) for c in chunks])
        results[name] = {
            "mb_per_s": mb / sec,
            "seconds": sec,
            "chunks": len(chunks),
            "p50": int(np.percentile(sizes, 50)),
            "p90": int(np.percentile(sizes, 90)),
            "p99": int(np.percentile(sizes, 99)),
            "max": int(sizes.max()),
            "over_budget": int((sizes > args.size).sum()),
            "fence_breaks": sum(fence_breaks(c) for c in chunks),
        }
    ours = results["chunklab structural"]["mb_per_s"]
    ratios = {
        f"structural / {k}": ours / v["mb_per_s"] for k, v in results.items() if k != "chunklab structural"
    }
    print(f"{len(texts)} Markdown files, {mb:.1f} MB, size {args.size}, median of {args.repeat}")
    header = (
        f"{'method':38} {'MB/s':>6} {'chunks':>7} {'p50':>5} {'p90':>6} {'p99':>6} {'max':>8} "
        f"{'over':>6} {'fence':>6}"
    )
    print(header)
    print("-" * len(header))
    for name, r in results.items():
        print(
            f"{name:38} {r['mb_per_s']:6.2f} {r['chunks']:7d} {r['p50']:5d} {r['p90']:6d} {r['p99']:6d} "
            f"{r['max']:8d} {r['over_budget']:6d} {r['fence_breaks']:6d}"
        )
    for k, v in ratios.items():
        print(f"{k}: {v:.2f}x")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "files": len(texts),
        "mb": mb,
        "size": args.size,
        "repeat": args.repeat,
        "results": results,
        "ratios": ratios,
    }
    args.out.write_text(json.dumps(payload, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
