"""BM25 at scale: build and query :class:`chunklab.retrieval.lexical.BM25Index` over up to 1,000,000
code-like chunks.

The chunks are synthetic but shaped like code: a ``def`` line with a snake_case or camelCase
identifier, then words and identifiers drawn from a Zipf-distributed vocabulary of 50,000
terms (about 40 tokens a chunk, as a 300-character code chunk has). Reports the build time
(tokenizing included), query latency p50/p95 over ``--queries`` queries (with and without a
``where`` filter), save/load times and the process's peak resident memory. Targets at
1,000,000 chunks: build < 3 min, p95 < 50 ms, peak < 3 GB.

    python benchmarks/bm25_scale.py [--chunks 1000000] [--queries 200] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import tempfile
import time


def vocabulary(n: int, seed: int = 1) -> list[str]:
    """``n`` distinct pronounceable terms (syllables joined), deterministic."""
    rng = random.Random(seed)
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"] + ["qu", "th", "ch", "sh"]
    words: dict[str, None] = {}
    while len(words) < n:
        words["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


def synthetic_chunks(n: int, seed: int = 7):
    """``n`` code-shaped chunks with ``kind`` metadata, generated lazily."""
    from chunklab.chunk import Chunk

    rng = random.Random(seed)
    words = vocabulary(50_000)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]  # Zipf
    cumulative = list(_accumulate(weights))
    kinds = ("function", "method", "class", "module")

    def draw(k: int) -> list[str]:
        return rng.choices(words, cum_weights=cumulative, k=k)

    for i in range(n):
        a, b, c = draw(3)
        name = f"{a}_{b}" if i % 2 else f"{a}{b.capitalize()}{c.capitalize()}"
        body = draw(34)
        for j in range(0, len(body), 6):
            body[j] = f"{body[j]}_{body[j - 1]}" if j % 12 == 0 else body[j]
        text = f"def {name}(self, {c}):\n    " + " ".join(body)
        yield Chunk(
            text, 0, len(text), f"pkg/mod{i // 40:06d}.py", {"kind": kinds[i % 4], "strategy": "synthetic"}
        )


def _accumulate(values: list[float]):
    total = 0.0
    for v in values:
        total += v
        yield total


def peak_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def latency(fn, queries: list[str]) -> dict:
    """p50/p95/max milliseconds of ``fn(query)`` over ``queries`` (first call not discarded)."""
    times = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t0) * 1000)
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(percentile(times, 95), 2),
        "max_ms": round(max(times), 2),
    }


def main() -> None:
    from chunklab.retrieval.filters import check_where
    from chunklab.retrieval.lexical import BM25Index

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    t0 = time.perf_counter()
    chunks = list(synthetic_chunks(args.chunks))
    generate_s = time.perf_counter() - t0
    corpus_mb = peak_mb()
    rng = random.Random(3)
    queries = []
    for _ in range(args.queries):
        c = rng.choice(chunks)
        words = c.text.replace("(", " ").replace(")", " ").replace(",", " ").replace(":", " ").split()
        queries.append(" ".join(rng.sample(words, k=min(len(words), rng.randint(2, 5)))))

    check_where({"kind": "function"})  # imports chromadb's validator now, not inside a timed query
    t0, c0 = time.perf_counter(), time.process_time()
    index = BM25Index(chunks, context=False)
    build_s, build_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    build_mb = peak_mb()
    plain = latency(lambda q: index.search(q, k=10), queries)
    filtered_first = time.perf_counter()
    index.search(queries[0], k=10, where={"kind": "function"})
    mask_ms = (time.perf_counter() - filtered_first) * 1000
    filtered = latency(lambda q: index.search(q, k=10, where={"kind": "function"}), queries)

    folder = tempfile.mkdtemp(prefix="bm25-scale-")
    try:
        t0 = time.perf_counter()
        index.save(folder)
        save_s = time.perf_counter() - t0
        index = None  # free the first index before loading the saved one
        t0 = time.perf_counter()
        loaded = BM25Index.load(folder)
        load_s = time.perf_counter() - t0
        reloaded = latency(lambda q: loaded.search(q, k=10), queries[:50])
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    result = {
        "chunks": args.chunks,
        "generate_s": round(generate_s, 1),
        "build_s": round(build_s, 1),
        "build_cpu_s": round(build_cpu_s, 1),
        "query": plain,
        "query_where_kind": filtered,
        "first_filtered_query_ms": round(mask_ms, 1),
        "save_s": round(save_s, 1),
        "load_s": round(load_s, 1),
        "query_after_load": reloaded,
        "peak_mb_corpus_only": round(corpus_mb),
        "peak_mb_after_build": round(build_mb),
        "peak_mb": round(peak_mb()),
        "targets": {
            "build_under_180s": build_s < 180,
            "p95_under_50ms": plain["p95_ms"] < 50,
            "peak_under_3gb": peak_mb() < 3072,
        },
    }
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
