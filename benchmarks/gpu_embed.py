"""MiniLM embedding throughput on one GPU (fp16): chunks/s, for the scaling-out cost model.

Runs as is on a machine with a CUDA GPU and finishes in well under 5 minutes: it chunks a
fixed sample of the installed-files corpus (recursive, 1000 characters), then embeds the
chunks with ``Encoder("minilm", device="cuda")`` (fp16 on CUDA, embedding cache off) at a
few batch sizes, each timed after a warm-up batch, stopping a batch size after
``--seconds`` of work. On a machine without a GPU it says so and exits 0 at once.

``--cpu`` measures the CPU side of the same cost model instead: MiniLM on one torch thread,
CPU seconds per chunk (structural chunks of the same sample, 32 to warm up, ``--chunks`` timed).

    .venv/bin/python benchmarks/gpu_embed.py            # prints JSON lines and a summary
    nice -n 10 .venv/bin/python benchmarks/gpu_embed.py --cpu --chunks 128

Results go to ``benchmarks/results/gpu_embed.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def sample_texts(n_chunks: int, strategy_name: str = "recursive", **params: object) -> list[str]:
    """The embedded text of the first ``n_chunks`` chunks of a fixed corpus sample."""
    from chunklab.chunk import embedding_text
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.datasets.corpora.code import code_corpus
    from chunklab.documents import Document, decode_bytes

    strategy = get_strategy(strategy_name, **params)
    texts: list[str] = []
    for f in code_corpus().sample(4000, seed=0):
        doc = Document(f.relpath, decode_bytes(f.read_bytes(), "python", name=f.path).text, f.path, "python")
        texts.extend(embedding_text(c) for c in strategy(doc) if c.text.strip())
        if len(texts) >= n_chunks:
            break
    return texts[:n_chunks]


def main() -> int:
    """Time MiniLM on the GPU at each batch size; exit 0 without a GPU."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--chunks", type=int, default=20000, help="chunks to embed per batch size (default 20000)"
    )
    parser.add_argument("--batch-sizes", default="64,256,1024", help="default 64,256,1024")
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="stop a batch size after this long (default 60)"
    )
    parser.add_argument("--cpu", action="store_true", help="measure MiniLM CPU seconds per chunk instead")
    args = parser.parse_args()
    if args.cpu:
        return cpu_cost(args.chunks)
    import torch

    if not torch.cuda.is_available():
        print("no GPU: torch sees no CUDA device, nothing to measure (run this on a GPU machine)")
        return 0
    from chunklab.embed import Encoder

    t0 = time.perf_counter()
    texts = sample_texts(args.chunks, "recursive", size=1000)
    prep = time.perf_counter() - t0
    name = torch.cuda.get_device_name(0)
    print(f"{len(texts)} chunks prepared in {prep:.1f}s; GPU {name}", flush=True)
    rows = []
    for batch in (int(b) for b in args.batch_sizes.split(",")):
        encoder = Encoder("minilm", "cuda", cache_dir=False, batch_size=batch, show_progress=False)
        encoder.encode(texts[:batch])  # load the model, warm the kernels
        torch.cuda.synchronize()
        done, start = 0, time.perf_counter()
        step = batch * 8
        while done < len(texts) and time.perf_counter() - start < args.seconds:
            encoder.encode(texts[done : done + step])
            done += len(texts[done : done + step])
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        row = {
            "batch_size": batch,
            "chunks": done,
            "seconds": round(seconds, 2),
            "chunks_per_second": round(done / seconds, 1),
            "dtype": str(next(encoder.model.parameters()).dtype),
            "max_memory_gb": round(torch.cuda.max_memory_allocated() / 1e9, 2),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    best = max(rows, key=lambda r: r["chunks_per_second"])
    print(
        f"MiniLM on one {name}: best {best['chunks_per_second']:,.0f} chunks/s at batch {best['batch_size']}"
    )
    RESULTS.mkdir(exist_ok=True)
    summary = {
        "gpu": name,
        "torch": torch.__version__,
        "chunks": len(texts),
        "runs": rows,
        "total_seconds": round(time.perf_counter() - t0, 1),
    }
    (RESULTS / "gpu_embed.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


def cpu_cost(n_chunks: int) -> int:
    """MiniLM on one CPU thread: CPU seconds for ``n_chunks`` structural chunks (after 32 to warm up)."""
    from chunklab.embed import Encoder

    texts = sample_texts(n_chunks + 32, "structural")
    encoder = Encoder("minilm", "cpu", cache_dir=False, threads=1, batch_size=32, show_progress=False)
    encoder.encode(texts[:32])
    cpu, wall = time.process_time(), time.perf_counter()
    encoder.encode(texts[32:])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    timed = texts[32:]
    print(
        json.dumps(
            {
                "model": "minilm",
                "device": "cpu",
                "threads": 1,
                "chunks": len(timed),
                "mean_chars": round(sum(map(len, timed)) / len(timed)),
                "cpu_seconds": round(cpu, 2),
                "wall_seconds": round(wall, 2),
                "chunks_per_cpu_second": round(len(timed) / cpu, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
