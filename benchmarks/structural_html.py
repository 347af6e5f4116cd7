"""Structural HTML chunking against LangChain's HTMLSectionSplitter and HTMLHeaderTextSplitter.

Runs over every ``.html``/``.htm`` file installed on the machine (the virtualenv's
site-packages and ``/usr``; about 500 files, 25 MB here). chunklab gets the raw bytes
(it decodes them itself: BOM, XML declaration, ``<meta charset>``); the LangChain splitters
get the same pages decoded to ``str`` (what they accept). Each method runs in its own
child process so that its peak resident memory can be reported. Reports throughput (MB/s
of raw HTML), failures (exceptions; for chunklab also pages that went to the plain-text
fallback), chunk counts, the size distribution, chunks over budget and peak RSS; prints a
table and writes ``benchmarks/results/structural_html.json``. A last row times building
BeautifulSoup's ``html.parser`` tree alone (no chunking), the cost chunklab avoids by
reading the same parser's events directly.

    nice python benchmarks/structural_html.py [--size 1500] [--every N]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

HEADERS = [("h1", "h1"), ("h2", "h2"), ("h3", "h3")]


def installed_html_files(roots: list[str]) -> list[str]:
    """Every regular .html/.htm file under ``roots``, sorted."""
    files = []
    for root in roots:
        for dirpath, _dirs, names in os.walk(root):
            for n in names:
                if n.endswith((".html", ".htm")):
                    p = os.path.join(dirpath, n)
                    if os.path.isfile(p) and not os.path.islink(p):
                        files.append(p)
    return sorted(set(files))


def _run_method(name: str, files: list[str], size: int, queue) -> None:
    """Child process: run one method over every file, send back numbers."""
    warnings.simplefilter("ignore")
    import logging

    logging.disable(logging.WARNING)
    from chunklab.chunkers.structural import chunk_html
    from chunklab.documents import decode_bytes

    raws = [open(f, "rb").read() for f in files]
    strs = [decode_bytes(r, "html").text for r in raws] if name != "chunklab structural" else None
    fallbacks: Counter = Counter()
    if name == "chunklab structural":

        def fn(i):
            chunks = chunk_html(raws[i], max_size=size)
            reason = next(
                (c.metadata.get("fallback_reason") for c in chunks if c.metadata.get("fallback")), None
            )
            if reason is not None:
                fallbacks[f"fallback: {reason[:80]}"] += 1
            return [c.text for c in chunks]
    elif name == "BeautifulSoup tree only":
        from bs4 import BeautifulSoup

        def fn(i):
            BeautifulSoup(strs[i], "html.parser")
            return []
    elif name == "LangChain HTMLSectionSplitter":
        from langchain_text_splitters import HTMLSectionSplitter

        splitter = HTMLSectionSplitter(HEADERS)

        def fn(i):
            return [d.page_content for d in splitter.split_text(strs[i])]
    else:
        from langchain_text_splitters import HTMLHeaderTextSplitter

        splitter = HTMLHeaderTextSplitter(HEADERS)

        def fn(i):
            return [d.page_content for d in splitter.split_text(strs[i])]

    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sizes: list[int] = []
    failures: Counter = Counter()
    t0 = time.perf_counter()
    for i in range(len(raws)):
        try:
            sizes.extend(len(t) for t in fn(i))
        except Exception as exc:  # counted: the point is how often a splitter fails
            failures[f"{type(exc).__name__}: {str(exc)[:80]}"] += 1
    sec = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    failures.update(fallbacks)
    queue.put(
        {
            "seconds": sec,
            "sizes": sizes,
            "failures": dict(failures),
            "peak_rss_mb": peak,
            "base_rss_mb": base_rss,
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1500)
    parser.add_argument("--every", type=int, default=1, help="use every N-th file (1: all)")
    parser.add_argument("--roots", nargs="*", default=[sys.prefix, "/usr"])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/structural_html.json"))
    args = parser.parse_args(argv)

    files = installed_html_files(args.roots)[:: args.every]
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    methods = [
        "chunklab structural",
        "LangChain HTMLSectionSplitter",
        "LangChain HTMLHeaderTextSplitter",
        "BeautifulSoup tree only",
    ]
    ctx = multiprocessing.get_context("fork")
    results = {}
    for name in methods:
        q = ctx.Queue()
        p = ctx.Process(target=_run_method, args=(name, files, args.size, q))
        p.start()
        r = q.get()
        p.join()
        sizes = np.array(r["sizes"]) if r["sizes"] else np.zeros(1, dtype=int)
        results[name] = {
            "mb_per_s": mb / r["seconds"],
            "seconds": r["seconds"],
            "failed_files": sum(r["failures"].values()),
            "failures": r["failures"],
            "chunks": len(r["sizes"]),
            "p50": int(np.percentile(sizes, 50)),
            "p90": int(np.percentile(sizes, 90)),
            "p99": int(np.percentile(sizes, 99)),
            "max": int(sizes.max()),
            "over_budget": int((sizes > args.size).sum()),
            "peak_rss_mb": r["peak_rss_mb"],
        }
    ours = results["chunklab structural"]["mb_per_s"]
    ratios = {
        f"structural / {k}": ours / v["mb_per_s"] for k, v in results.items() if k.startswith("LangChain")
    }
    print(f"{len(files)} HTML files, {mb:.1f} MB, size {args.size}")
    header = (
        f"{'method':34} {'MB/s':>6} {'failed':>6} {'chunks':>7} {'p50':>5} {'p90':>6} {'max':>8} "
        f"{'over':>6} {'RSS MB':>7}"
    )
    print(header)
    print("-" * len(header))
    for name, r in results.items():
        print(
            f"{name:34} {r['mb_per_s']:6.2f} {r['failed_files']:6d} {r['chunks']:7d} {r['p50']:5d} "
            f"{r['p90']:6d} {r['max']:8d} {r['over_budget']:6d} {r['peak_rss_mb']:7.0f}"
        )
    for k, v in ratios.items():
        print(f"{k}: {v:.2f}x")
    for name, r in results.items():
        for reason, n in sorted(r["failures"].items(), key=lambda kv: -kv[1])[:3]:
            print(f"  {name} failure x{n}: {reason}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {"files": len(files), "mb": mb, "size": args.size, "results": results, "ratios": ratios}, indent=2
        )
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
