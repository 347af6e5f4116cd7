"""The local engine: chunk in a pool of worker processes, embed and write in this process.

The reference behaviour of ``chunklab index``: files are listed once, handed to ``workers``
processes in small batches (:func:`~chunklab.ingest._common.task_size`), chunked there by the catalog strategy,
and the chunk rows come back in input order to be embedded by one model and written to a
Chroma store (a folder or a server) or to Parquet shards. The Ray engine runs the same stage
functions, so both give the same ids, spans and vectors.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from chunklab._validate import check_positive_int
from chunklab.ingest._common import (
    Embedder,
    IngestReport,
    StrategySpec,
    WorkItem,
    batched,
    chunk_items,
    clock,
    encode_items,
    resolve_sources,
    task_size,
)
from chunklab.ingest.sinks import open_sink

__all__ = ["ingest"]


def ingest(
    sources: str | os.PathLike[str] | Iterable[Any],
    *,
    strategy: Any = "structural",
    model: str = "static",
    store: Any = None,
    chroma_url: str | None = None,
    collection: str = "chunks",
    out: str | os.PathLike[str] | None = None,
    batch_size: int = 256,
    workers: int | None = None,
    root: str | None = None,
    strict: bool = False,
    context: bool = False,
    embed_context: bool = True,
    device: str = "auto",
    address: str | None = None,
    num_gpus: int = 0,
    progress: bool = True,
) -> IngestReport:
    """Chunk, embed and write ``sources`` (paths, directories, globs or a corpus name) on this machine.

    ``strategy`` is a catalog name or a :class:`~chunklab.chunkers.catalog.Strategy`; ``model`` the
    encoder (``"static"`` or ``"minilm"``). Chunks go to ``out`` (a folder of Parquet shards),
    a Chroma server (``chroma_url``) or a store (``store``: a ChunkStore or a folder; default
    ``.chunklab/chroma``). ``workers`` chunking processes (default: the CPU count) feed
    batches of ``batch_size`` chunks to the embedder. A document that cannot be read or
    chunked is reported in the returned :class:`IngestReport` and the run goes on.
    ``address`` has no meaning here (it is the Ray engine's); ``num_gpus=1`` embeds on the GPU.
    """
    t0 = clock()
    batch_size = check_positive_int(batch_size, "batch_size")
    workers = check_positive_int(workers if workers is not None else (os.cpu_count() or 1), "workers")
    if address is not None:
        raise ValueError("address is for the ray engine; the local engine runs on this machine")
    if num_gpus not in (0, 1):
        raise ValueError(
            f"num_gpus must be 0 or 1 for the local engine (one process embeds), got {num_gpus!r}"
        )
    spec = StrategySpec.of(strategy)
    items = resolve_sources(sources, root)
    sink = open_sink(store, chroma_url, out, model, collection, spec)
    report = IngestReport("local", model, workers=workers, target="")
    start = clock()
    pool = _pool(workers) if workers > 1 and len(items) > 1 else None
    report.startup_seconds = clock() - start
    from chunklab.embed.models import torch_threads_for_workers

    threads = torch_threads_for_workers(workers + 1) if pool is not None else None
    embedder = Embedder(
        model, "cuda" if num_gpus else device, threads=threads, batch_size=min(batch_size, 256)
    )
    bar = _bar(len(items), progress)
    try:
        for size, table in _chunked(
            items, task_size(len(items), workers), spec, strict, context, embed_context, pool
        ):
            for part in _rows(table, batch_size):
                report.take(embedder(part), sink)
            if bar is not None:
                bar.update(size)
    finally:
        if pool is not None:
            pool.terminate()
        if bar is not None:
            bar.close()
        sink.close()
    return report.finish(len(items), sink, t0)


def _chunked(
    items: Sequence[WorkItem],
    per_task: int,
    spec: StrategySpec,
    strict: bool,
    context: bool,
    embed_context: bool,
    pool: Any,
) -> Iterator[tuple[int, Any]]:
    """``(documents, chunk table)`` per task, in input order."""
    tasks = ((list(part), spec, strict, context, embed_context) for part in batched(items, per_task))
    results = pool.imap(_chunk_task, tasks) if pool is not None else map(_chunk_task, tasks)
    yield from results


def _chunk_task(task: tuple[list[WorkItem], StrategySpec, bool, bool, bool]) -> tuple[int, Any]:
    items, spec, strict, context, embed_context = task
    return len(items), chunk_items(encode_items(items), spec, strict, context, embed_context)


def _rows(table: Any, size: int) -> Iterator[Any]:
    for offset in range(0, max(table.num_rows, 1), size):
        yield table.slice(offset, size)


def _pool(workers: int) -> Any:
    # forkserver: workers fork from a clean server process that imported the chunking code once,
    # never from this one (which may hold threads: a Ray driver, a loaded model).
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(["chunklab.ingest._common", "chunklab.chunkers.catalog"])
    return context.Pool(workers)


def _bar(total: int, progress: bool) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="ingest (local)", unit="doc")
