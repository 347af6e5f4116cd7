"""Throughput of chunklab's recursive chunker against LangChain's, on the standard library.

Chunks every ``.py`` file of the running interpreter's standard library (about 1,800 files,
31 MB) with ``chunk_recursive`` (800 chars, overlap 80, exact offsets) and with LangChain's
``RecursiveCharacterTextSplitter`` (same settings), with ``add_start_index=True`` and without.
Reports the median of several repetitions in MB/s and the ratios.

    python benchmarks/throughput.py [--repeat 5] [--size 800] [--overlap 80]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import sysconfig
import time
from pathlib import Path


def stdlib_texts() -> list[str]:
    """Every .py file of the standard library (site-packages excluded), decoded, sorted by path."""
    from chunklab.documents import DocumentError, load_document

    root = Path(sysconfig.get_paths()["stdlib"])
    texts = []
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts or "dist-packages" in path.parts:
            continue
        try:
            texts.append(load_document(path, strict=True).text)
        except DocumentError:
            continue
    return texts


def time_run(fn, texts: list[str], repeat: int) -> tuple[float, int]:
    """Median seconds over ``repeat`` runs of ``fn`` over all texts, and the chunk count."""
    times = []
    count = 0
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        count = 0
        for t in texts:
            count += len(fn(t))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=800)
    parser.add_argument("--overlap", type=int, default=80)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/throughput.json"))
    args = parser.parse_args(argv)

    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from chunklab.chunkers.recursive import chunk_recursive

    texts = stdlib_texts()
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"corpus: {len(texts)} stdlib files, {mb:.1f} MB (python {sys.version.split()[0]})")

    lc_plain = RecursiveCharacterTextSplitter(chunk_size=args.size, chunk_overlap=args.overlap)
    lc_index = RecursiveCharacterTextSplitter(
        chunk_size=args.size, chunk_overlap=args.overlap, add_start_index=True
    )
    runs = {
        "chunklab recursive (offsets)": lambda t: chunk_recursive(t, args.size, args.overlap),
        "langchain (add_start_index=True)": lambda t: lc_index.create_documents([t]),
        "langchain (no offsets)": lc_plain.split_text,
    }
    results = {}
    for name, fn in runs.items():
        seconds, chunks = time_run(fn, texts, args.repeat)
        results[name] = {"seconds": seconds, "mb_per_s": mb / seconds, "chunks": chunks}
        print(f"{name:34s} {mb / seconds:8.1f} MB/s  {seconds:6.2f} s  {chunks:7d} chunks")

    ours = results["chunklab recursive (offsets)"]["mb_per_s"]
    ratio_index = ours / results["langchain (add_start_index=True)"]["mb_per_s"]
    ratio_plain = ours / results["langchain (no offsets)"]["mb_per_s"]
    print(f"ratio vs langchain with offsets:    {ratio_index:.2f}x  (target >= 1.5x)")
    print(f"ratio vs langchain without offsets: {ratio_plain:.2f}x  (goal >= 1.0x)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "files": len(texts),
                "mb": mb,
                "repeat": args.repeat,
                "results": results,
                "ratio_vs_langchain_offsets": ratio_index,
                "ratio_vs_langchain_plain": ratio_plain,
            },
            indent=2,
        )
    )
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
