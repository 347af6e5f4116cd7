"""Query latency of ChunkStore at 10,000 and 100,000 chunks, and peak memory while indexing them.

Embedding 100,000 texts on a 2-core CPU takes far longer than the measurement, so the
**stored vectors are synthetic**: random unit vectors (384-d, seeded) produced by a
stand-in encoder, written through the real ``ChunkStore.add`` path (batching, metadata
encoding, Chroma upserts into a persistent HNSW index with cosine space). Documents and
metadata look like real chunks (text, offsets, doc_id, kind, headings, params).

Queries are measured two ways on a store reopened with the **real** MiniLM encoder
(embedding cache disabled, so every query is embedded by the model):

* ``search``: ``ChunkStore.search(text, k=5)``, query embedding included;
* ``vector``: ``ChunkStore.search_vectors(vector, k=5)``, the index alone.

Peak RSS is the process's ``ru_maxrss`` after indexing the largest size, with the model
already loaded (so it includes the model, Chroma and Python). Targets: p95 < 50 ms at
100,000 chunks; peak RSS < 2 GB. Run with ``nice``:

    nice .venv/bin/python benchmarks/query_latency.py --sizes 10000 100000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
WORDS = (
    "invoice refund shipment carrier depot driver route billing ledger policy retention audit "
    "backup restore deploy rollback schema index query latency cache token vector chunk embed "
    "parse config service worker queue retry timeout alert incident runbook customer order"
).split()


class RandomUnitEncoder:
    """Stand-in for indexing only: a seeded random unit vector per text (no model)."""

    name = "synthetic-random-unit"
    dim = 384
    max_seq_length = 256

    def encode(self, texts, show_progress=None):
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def synthetic_chunks(n: int):
    """``n`` chunk-shaped records, generated lazily (the corpus is never held in memory)."""
    from chunklab.chunk import Chunk

    rng = np.random.default_rng(7)
    kinds = ("paragraph", "function", "class", "table")
    for i in range(n):
        words = " ".join(WORDS[j] for j in rng.integers(0, len(WORDS), 40))
        text = f"Chunk {i}: {words}."
        start = (i % 50) * 1000
        yield Chunk(
            text,
            start,
            start + len(text),
            f"doc-{i // 50:05d}",
            {
                "strategy": "recursive",
                "params": {"size": 1000, "overlap": 0, "unit": "chars"},
                "index": i % 50,
                "kind": kinds[i % 4],
                "headings": ["Guide", f"Section {i % 13}"],
            },
        )


def percentiles(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


def measure(size: int, work: Path, queries: int, encoder) -> dict:
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    path = work / f"store-{size}"
    writer = ChunkStore(path=path, collection="latency", encoder=RandomUnitEncoder())
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    writer.add(synthetic_chunks(size), batch_size=1000, show_progress=False)
    index_s = time.perf_counter() - t0
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del writer

    store = ChunkStore(path=path, collection="latency", encoder=encoder)
    assert store.count() == size, store.count()
    rng = np.random.default_rng(11)
    texts = [
        f"how do I {WORDS[a]} the {WORDS[b]} after a {WORDS[c]} ({i})"
        for i, (a, b, c) in enumerate(rng.integers(0, len(WORDS), (queries + 10, 3)))
    ]
    vecs = rng.standard_normal((queries + 10, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)

    by_vector, by_text, embed_only = [], [], []
    for i in range(queries + 10):
        t = time.perf_counter()
        hits = store.search_vectors(vecs[i], k=5)[0]
        dt = (time.perf_counter() - t) * 1000
        assert len(hits) == 5
        if i >= 10:
            by_vector.append(dt)
    for i in range(queries + 10):
        t = time.perf_counter()
        encoder.encode([texts[i] + " embed-only"])
        e = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        hits = store.search(texts[i], k=5)
        dt = (time.perf_counter() - t) * 1000
        assert len(hits) == 5
        if i >= 10:
            by_text.append(dt)
            embed_only.append(e)
    # the same queries again through a store whose encoder answers from a warm disk cache:
    # what a repeated query (evaluation over several strategies) costs
    cached = ChunkStore(path=path, collection="latency", encoder=Encoder(cache_dir=work / "qcache"))
    cached.encoder.encode(texts)
    by_cached = []
    for i in range(10, queries + 10):
        t = time.perf_counter()
        cached.search(texts[i], k=5)
        by_cached.append((time.perf_counter() - t) * 1000)
    stats = store.stats()
    result = {
        "chunks": size,
        "index_seconds": round(index_s, 1),
        "index_chunks_per_s": round(size / index_s, 1),
        "rss_before_index_mb": round(rss_before, 1),
        "peak_rss_after_index_mb": round(rss_after, 1),
        "bytes_on_disk_mb": round(stats["bytes_on_disk"] / 1e6, 1),
        "raw_vector_mb": round(stats["raw_vector_bytes"] / 1e6, 1),
        "vector": percentiles(by_vector),
        "search": percentiles(by_text),
        "search_cached_query": percentiles(by_cached),
        "query_embedding": percentiles(embed_only),
    }
    print(
        f"{size:>7} chunks: indexed in {index_s:6.1f}s ({size / index_s:7.0f}/s), "
        f"peak RSS {rss_after:6.0f} MB, "
        f"disk {result['bytes_on_disk_mb']:.0f} MB | by vector p50 {result['vector']['p50_ms']:.1f} ms "
        f"p95 {result['vector']['p95_ms']:.1f} ms | search() p50 {result['search']['p50_ms']:.1f} ms "
        f"p95 {result['search']['p95_ms']:.1f} ms "
        f"(query embedding p50 {result['query_embedding']['p50_ms']:.1f} ms) "
        f"| cached query p50 {result['search_cached_query']['p50_ms']:.1f} ms "
        f"p95 {result['search_cached_query']['p95_ms']:.1f} ms"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--out", default="query_latency.json", help="file name under benchmarks/results/")
    args = parser.parse_args()
    if args.threads:
        os.environ["CHUNKLAB_TORCH_THREADS"] = str(args.threads)
    from chunklab.embed import Encoder

    encoder = Encoder(cache_dir=False, show_progress=False)
    encoder.encode(["load the model before measuring memory"])
    work = Path(tempfile.mkdtemp(prefix="chunklab-latency-"))
    try:
        results = [measure(size, work, args.queries, encoder) for size in args.sizes]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {
        "note": "stored vectors are synthetic random unit vectors; queries use the real model",
        "results": results,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "cpus": os.cpu_count(),
    }
    (RESULTS / args.out).write_text(json.dumps(out, indent=2))
    print(f"peak RSS {out['peak_rss_mb']:.0f} MB; wrote {RESULTS / args.out}")


if __name__ == "__main__":
    main()
