"""Static (model2vec, distilled from MiniLM) against MiniLM: chunks embedded per second, in one run.

Chunks the kit's documents with the structural strategy (the chunks a learner indexes) and
embeds them with both models, caches off, models loaded before timing. MiniLM gets
``--minilm-chunks`` chunks (it is slow on a CPU); the static model embeds the same chunks
repeated to ``--static-chunks`` texts. Reports chunks/s for each, the ratio (target: at least
50x), the device each ran on and the model load times.

    python benchmarks/static_throughput.py [--minilm-chunks 256] [--static-chunks 20000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time


def docs_chunk_texts() -> list[str]:
    """What the store would embed for the docs corpus chunked structurally (header + text)."""
    from chunklab.chunk import embedding_text
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.datasets.corpora.docs import load_docs

    strategy = get_strategy("structural", max_chars=1000)
    texts = []
    for doc in load_docs().documents:
        texts.extend(embedding_text(c) for c in strategy(doc))
    return texts


def measure(model: str, texts: list[str], batch_size: int) -> dict:
    """Load ``model`` (timed apart), then embed ``texts`` once; chunks per second."""
    from chunklab.embed import Encoder

    encoder = Encoder(model, cache_dir=False, batch_size=batch_size, show_progress=False)
    t0 = time.perf_counter()
    encoder.encode(texts[:8])  # loads (and for static, distils once per machine) the model
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    vecs = encoder.encode(texts)
    seconds = time.perf_counter() - t0
    return {
        "model": model,
        "device": encoder.device,
        "dim": int(vecs.shape[1]),
        "chunks": len(texts),
        "seconds": round(seconds, 3),
        "chunks_per_s": round(len(texts) / seconds, 1),
        "load_s": round(load, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minilm-chunks", type=int, default=256)
    parser.add_argument("--static-chunks", type=int, default=20000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    texts = docs_chunk_texts()
    minilm_texts = (texts * (args.minilm_chunks // len(texts) + 1))[: args.minilm_chunks]
    static_texts = (texts * (args.static_chunks // len(texts) + 1))[: args.static_chunks]
    mean_chars = sum(map(len, texts)) / len(texts)
    minilm = measure("minilm", minilm_texts, args.batch_size)
    static = measure("static", static_texts, args.batch_size)
    ratio = static["chunks_per_s"] / minilm["chunks_per_s"]
    result = {
        "corpus_chunks": len(texts),
        "mean_chars": round(mean_chars, 1),
        "torch_threads": os.environ.get("CHUNKLAB_TORCH_THREADS", "default"),
        "minilm": minilm,
        "static": static,
        "ratio": round(ratio, 1),
        "target_met": ratio >= 50,
    }
    for row in (minilm, static):
        print(
            f"{row['model']:7s} on {row['device']}: {row['chunks']:6d} chunks in {row['seconds']:8.2f} s = "
            f"{row['chunks_per_s']:9.1f} chunks/s  (dim {row['dim']}, load {row['load_s']} s)"
        )
    print(
        f"static / minilm throughput: {ratio:.1f}x (target >= 50x: {'met' if ratio >= 50 else 'NOT met'}); "
        f"mean chunk {mean_chars:.0f} chars"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
