"""Hybrid query latency at 100,000 chunks with the static model: p50/p95 of one ``search`` call.

Indexes ``--chunks`` synthetic code-shaped chunks (``bm25_scale.synthetic_chunks``) in a local
Chroma store with the static model and in a BM25 index, then times ``HybridRetriever.search``
(query embedding, dense top 50, BM25 top 50, RRF) over ``--queries`` queries, next to the
dense-only and BM25-only searches it is made of. Target: hybrid p95 under 80 ms.

    python benchmarks/hybrid_latency.py [--chunks 100000] [--queries 200] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time

from bm25_scale import latency, peak_mb, synthetic_chunks


def main() -> None:
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore
    from chunklab.retrieval.hybrid import HybridRetriever
    from chunklab.retrieval.lexical import BM25Index

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    chunks = list(synthetic_chunks(args.chunks))
    rng = random.Random(5)
    queries = [" ".join(rng.sample(rng.choice(chunks).text.split()[2:], 4)) for _ in range(args.queries)]
    encoder = Encoder("static", show_progress=False)
    folder = tempfile.mkdtemp(prefix="hybrid-latency-")
    try:
        t0 = time.perf_counter()
        store = ChunkStore(path=folder, collection="latency", encoder=encoder, embed_context=False)
        store.add(chunks, batch_size=5000, show_progress=False)
        index_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        lexical = BM25Index(chunks, context=False)
        bm25_s = time.perf_counter() - t0
        hybrid = HybridRetriever(store, lexical)
        hybrid.search(queries[0])  # warm: first HNSW load
        result = {
            "chunks": args.chunks,
            "device": encoder.device,
            "model": encoder.name,
            "dense_index_s": round(index_s, 1),
            "bm25_build_s": round(bm25_s, 1),
            "embed_query": latency(lambda q: encoder.encode([q]), queries),
            "dense": latency(lambda q: store.search(q, k=50), queries),
            "bm25": latency(lambda q: lexical.search(q, k=50), queries),
            "hybrid_rrf": latency(lambda q: hybrid.search(q, k=5), queries),
            "peak_mb": round(peak_mb()),
        }
        result["target_p95_under_80ms"] = result["hybrid_rrf"]["p95_ms"] < 80
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
