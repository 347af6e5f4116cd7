"""Ingest throughput into ChunkStore with a cold and a warm embedding cache.

Chunks: the Python standard library's .py files (sorted by path, deterministic), cut by
``chunk_recursive`` at 800 characters, first ``--chunks`` of them. Three runs, each into a
fresh Chroma directory:

1. cold: empty embedding cache, every chunk goes through the model;
2. warm: same cache, new store: every vector comes from the cache;
3. re-index: the warm store again (an idempotent upsert: the count must not change).

Reports chunks/s and the time spent inside ``Encoder.encode`` (model + cache) for each run;
the target is warm encode time < 5% of the cold one. Run with ``nice``:

    nice .venv/bin/python benchmarks/ingest.py --chunks 2000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sysconfig
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def stdlib_files(limit_bytes: int | None = None) -> list[Path]:
    """The standard library's .py files, sorted (tests and site-packages left out)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = []
    total = 0
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        if rel[0] in ("site-packages", "test", "idlelib", "lib2to3") or "tests" in rel:
            continue
        files.append(path)
        total += path.stat().st_size
        if limit_bytes is not None and total >= limit_bytes:
            break
    return files


def corpus_chunks(n: int, size: int = 800):
    """The first ``n`` recursive chunks of the standard library."""
    from chunklab.chunkers.recursive import chunk_recursive
    from chunklab.documents import load_document

    out = []
    for path in stdlib_files():
        text = load_document(path).text
        out.extend(chunk_recursive(text, size, doc_id=str(path.name)))
        if len(out) >= n:
            break
    return out[:n]


class TimedEncoder:
    """Wraps an Encoder and adds up the wall time spent in ``encode`` (model and cache)."""

    def __init__(self, encoder) -> None:
        self.inner = encoder
        self.seconds = 0.0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def encode(self, texts, show_progress=None):
        t0 = time.perf_counter()
        try:
            return self.inner.encode(texts, show_progress=show_progress)
        finally:
            self.seconds += time.perf_counter() - t0


def run_once(chunks, cache_dir: Path, store_dir: Path, label: str) -> dict:
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    encoder = Encoder(cache_dir=cache_dir, show_progress=False)
    encoder.model  # load outside the timed region: a fair chunks/s for the cold run  # noqa: B018
    timed = TimedEncoder(encoder)
    store = ChunkStore(path=store_dir, collection="bench", encoder=encoder)
    store.encoder = timed  # the store calls encode() through the timer
    t0 = time.perf_counter()
    store.add(chunks, show_progress=False)
    total = time.perf_counter() - t0
    result = {
        "run": label,
        "chunks": len(chunks),
        "seconds": round(total, 3),
        "chunks_per_s": round(len(chunks) / total, 1),
        "encode_seconds": round(timed.seconds, 3),
        "model_calls": encoder.model_calls,
        "cache_hits": encoder.cache_hits,
        "count_after": store.count(),
    }
    print(
        f"{label:>9}: {total:7.2f}s  {result['chunks_per_s']:8.1f} chunks/s  encode {timed.seconds:7.3f}s  "
        f"model {encoder.model_calls:6d}  cache hits {encoder.cache_hits:6d}  count {result['count_after']}"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        os.environ["CHUNKLAB_TORCH_THREADS"] = str(args.threads)
    chunks = corpus_chunks(args.chunks)
    print(f"{len(chunks)} chunks, {sum(len(c.text) for c in chunks) / 1e6:.2f} MB of text")
    work = Path(tempfile.mkdtemp(prefix="chunklab-ingest-"))
    try:
        cold = run_once(chunks, work / "cache", work / "store-cold", "cold")
        warm = run_once(chunks, work / "cache", work / "store-warm", "warm")
        again = run_once(chunks, work / "cache", work / "store-warm", "re-index")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratio = warm["encode_seconds"] / cold["encode_seconds"]
    print(f"warm encode time / cold encode time = {ratio:.2%} (target < 5%)")
    print(f"re-index count unchanged: {again['count_after'] == warm['count_after'] == len(chunks)}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {
        "runs": [cold, warm, again],
        "warm_over_cold_encode": round(ratio, 5),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "cpus": os.cpu_count(),
    }
    (RESULTS / "ingest.json").write_text(json.dumps(out, indent=2))
    print(f"wrote {RESULTS / 'ingest.json'}")


if __name__ == "__main__":
    main()
