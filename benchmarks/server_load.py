"""The query-load scenario of :mod:`server_faults`: concurrent clients against one Chroma server.

``clients`` processes query a collection of ``chunks`` RANDOM unit vectors of dimension 256
(labelled so in the JSON: the load is Chroma's HNSW search and the kit's client path, not a
model) for ``seconds`` each; p50/p95/p99 latency and errors.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from chroma_process import ChromaServer

__all__ = ["query_load"]


def _client(url: str, collection: str, seconds: float, seed: int, queue: Any) -> None:
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    store = ChunkStore(url=url, collection=collection, encoder=Encoder("static"), create=False)
    rng = np.random.default_rng(seed)
    lat, errors = [], 0
    store.search_vectors(rng.standard_normal((1, 256)).astype(np.float32), k=10)  # warm-up, not timed
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        q = rng.standard_normal((1, 256)).astype(np.float32)
        q /= np.linalg.norm(q)
        t = time.perf_counter()
        try:
            hits = store.search_vectors(q, k=10)[0]
            if len(hits) != 10:
                errors += 1
        except Exception:
            errors += 1
        lat.append(time.perf_counter() - t)
    queue.put((lat, errors))


def query_load(srv: ChromaServer, chunks: int, clients: int, seconds: float) -> dict:
    """``clients`` processes querying a collection of ``chunks`` random unit vectors for ``seconds``."""
    from chunklab.chunk import Chunk
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    name = f"load-{chunks}"
    store = ChunkStore(url=srv.url, collection=name, encoder=Encoder("static"))
    rng = np.random.default_rng(0)
    t0 = time.monotonic()
    step = 2000
    for start in range(store.count(), chunks, step):
        n = min(step, chunks - start)
        vecs = rng.standard_normal((n, 256)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        rows = [Chunk(f"record {i}", 0, len(f"record {i}"), f"doc-{i}") for i in range(start, start + n)]
        store.add(rows, vectors=vecs, show_progress=False, batch_size=step)
    build = time.monotonic() - t0
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_client, args=(srv.url, name, seconds, i, queue)) for i in range(clients)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=seconds + 300) for _ in procs]
    for p in procs:
        p.join()
    lat = np.array([x for r, _ in results for x in r]) * 1000
    return {
        "fault": f"query load: {clients} clients for {seconds:g} s, {chunks:,} chunks",
        "vectors": "random unit vectors, dim 256 (not a model: Chroma's search and the kit's client path)",
        "clients": clients,
        "seconds": seconds,
        "chunks": store.count(),
        "build_s": round(build, 1),
        "queries": int(lat.size),
        "qps": round(lat.size / seconds, 1),
        "p50_ms": round(float(np.percentile(lat, 50)), 2),
        "p95_ms": round(float(np.percentile(lat, 95)), 2),
        "p99_ms": round(float(np.percentile(lat, 99)), 2),
        "errors": sum(e for _, e in results),
        "outcome": "0 errors" if sum(e for _, e in results) == 0 else "errors",
    }
