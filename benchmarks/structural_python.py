"""Structural Python chunking against plain ast.parse, a naive AST chunker and LangChain.

On the standard library (``code_corpus(include_site_packages=False)``, about 1,750 files),
in one run, with the methods interleaved in every repetition so that a busy machine slows
them alike:

- ``ast.parse``: the physical floor of any AST method (parse only, no chunks);
- ``chunklab structural``: ``chunk_python(text, max_size=SIZE)``;
- ``naive AST``: one chunk per top-level statement (``lines[lineno-1:end_lineno]``), no budget;
- ``LangChain``: ``RecursiveCharacterTextSplitter.from_language(Language.PYTHON, SIZE, 0)``.

Reports throughput (MB/s, median), chunk counts, the size distribution, chunks over budget,
the share of chunks that ``ast.parse`` accepts on their own (dedented; a proxy for
"fragments that don't compile") and the ratios; prints a table and writes
``benchmarks/results/structural_python.json``.

    nice python benchmarks/structural_python.py [--repeat 3] [--size 1500] [--sample N]
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import statistics
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np


def load_texts(sample: int, seed: int) -> list[str]:
    """The standard library's files, decoded per PEP 263 (files that fail to decode skipped)."""
    from chunklab.datasets import code_corpus

    corpus = code_corpus(include_site_packages=False)
    if sample:
        corpus = corpus.sample(min(sample, len(corpus)), seed=seed)
    texts = []
    for f in corpus:
        try:
            texts.append(f.read_text())
        except OSError:
            continue
    return texts


def naive_ast_chunks(text: str) -> list[str]:
    """One chunk per top-level statement; the whole file when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return [text] if text.strip() else []
    lines = text.splitlines(keepends=True)
    return ["".join(lines[n.lineno - 1 : n.end_lineno]) for n in tree.body]


def parses(chunk: str) -> bool:
    """Does ``ast.parse`` accept the chunk on its own (dedented first)?"""
    try:
        ast.parse(textwrap.dedent(chunk))
        return True
    except (SyntaxError, ValueError):
        return False
    except RecursionError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=1500)
    parser.add_argument("--sample", type=int, default=0, help="files to sample (0: all of the stdlib)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/structural_python.json"))
    args = parser.parse_args(argv)

    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    from chunklab.chunkers.structural import chunk_python

    texts = load_texts(args.sample, args.seed)
    mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
    lc = RecursiveCharacterTextSplitter.from_language(Language.PYTHON, chunk_size=args.size, chunk_overlap=0)

    def parse_only(t: str) -> list:
        try:
            ast.parse(t)
        except (SyntaxError, ValueError):
            pass
        return []

    methods = {
        "ast.parse (floor)": parse_only,
        "chunklab structural": lambda t: [c.text for c in chunk_python(t, max_size=args.size)],
        "naive AST (1 chunk/top-level node)": naive_ast_chunks,
        "LangChain Python splitter": lc.split_text,
    }
    times: dict[str, list[float]] = {m: [] for m in methods}
    cpu: dict[str, list[float]] = {m: [] for m in methods}
    outputs: dict[str, list[str]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(args.repeat):
            for name, fn in methods.items():
                gc.collect()
                t0, c0 = time.perf_counter(), time.process_time()
                out = [c for t in texts for c in fn(t)]
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
                if r == 0:
                    outputs[name] = out
    results = {}
    for name in methods:
        sec = statistics.median(times[name])
        chunks = outputs[name]
        sizes = np.array([len(c) for c in chunks]) if chunks else np.zeros(0)
        cpu_sec = statistics.median(cpu[name])
        row = {"mb_per_s": mb / sec, "mb_per_cpu_s": mb / cpu_sec, "seconds": sec, "chunks": len(chunks)}
        if chunks:
            row.update(
                p50=int(np.percentile(sizes, 50)),
                p90=int(np.percentile(sizes, 90)),
                p99=int(np.percentile(sizes, 99)),
                max=int(sizes.max()),
                over_budget=int((sizes > args.size).sum()),
                parse_ok=sum(parses(c) for c in chunks) / len(chunks),
            )
        results[name] = row
    # ratios from CPU time: on a shared machine wall time mostly measures the neighbours
    floor = results["ast.parse (floor)"]["mb_per_cpu_s"]
    ours = results["chunklab structural"]["mb_per_cpu_s"]
    ratios = {
        "structural / ast.parse": ours / floor,
        "structural / LangChain": ours / results["LangChain Python splitter"]["mb_per_cpu_s"],
        "structural / naive AST": ours / results["naive AST (1 chunk/top-level node)"]["mb_per_cpu_s"],
    }
    print(f"{len(texts)} stdlib files, {mb:.1f} MB, size {args.size}, median of {args.repeat}")
    header = (
        f"{'method':38} {'MB/s':>6} {'MB/cpu-s':>8} {'chunks':>7} {'p50':>5} {'p90':>5} {'p99':>6} "
        f"{'max':>7} {'over':>6} {'parses':>7}"
    )
    print(header)
    print("-" * len(header))
    for name, row in results.items():
        if row["chunks"]:
            print(
                f"{name:38} {row['mb_per_s']:6.2f} {row['mb_per_cpu_s']:8.2f} {row['chunks']:7d} "
                f"{row['p50']:5d} {row['p90']:5d} "
                f"{row['p99']:6d} {row['max']:7d} {row['over_budget']:6d} {row['parse_ok']:7.1%}"
            )
        else:
            print(f"{name:38} {row['mb_per_s']:6.2f} {row['mb_per_cpu_s']:8.2f} {'-':>7}")
    for k, v in ratios.items():
        print(f"{k} (CPU time): {v:.2f}x")
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
