"""The local engine: chunk in this process or in worker processes, embed and write in this process.

``chunklab index`` runs it in-process (one worker: every stage here, in order);
``--engine local`` hands the chunk side to ``workers`` processes of :mod:`chunklab.ingest.pool`
in small batches (:func:`~chunklab.ingest.pipeline.task_size`), and the chunk rows come back
in input order to be embedded by one model and written by the sink. The Ray engine runs the
same stage functions, so both give the same ids, spans and vectors.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import pyarrow as pa

from chunklab.ingest.pipeline import Job, batched, options_from, run, task_size
from chunklab.ingest.plan import Sources, WorkItem
from chunklab.ingest.pool import map_ordered
from chunklab.ingest.report import IngestReport
from chunklab.ingest.stages import ChunkConfig, Embedder, chunk_items, encode_items, problem_table

__all__ = ["LocalEngine", "ingest"]


def ingest(sources: Sources, **options: Any) -> IngestReport:
    """Chunk, embed and write ``sources`` (paths, directories, globs or a corpus name) on this machine.

    ``options`` are the fields of :class:`~chunklab.ingest.pipeline.IngestOptions`. A document
    that cannot be read or chunked (or whose worker process died) is reported in the returned
    :class:`~chunklab.ingest.report.IngestReport` and the run goes on.
    """
    return run(sources, options_from("local", options), LocalEngine())


class LocalEngine:
    """Chunk tasks over :func:`~chunklab.ingest.pool.map_ordered`; embed each batch here."""

    name = "local"

    def schedule(self, job: Job, report: IngestReport) -> Iterator[pa.Table]:
        """Embedded tables of the job's items, in input order."""
        options = job.options
        from chunklab.embed.models import torch_threads_for_workers

        workers = options.workers or os.cpu_count() or 1
        tasks = list(batched(list(job.items), task_size(len(job.items), workers)))
        pooled = workers > 1 and len(tasks) > 1
        report.workers = workers if pooled else 1
        threads = torch_threads_for_workers(workers + 1) if pooled else None
        embedder = Embedder(
            options.model, options.device, threads=threads, batch_size=min(options.batch_size, 256)
        )
        tables = map_ordered(
            partial(chunk_task, config=job.chunking, known=job.known),
            tasks,
            workers if pooled else 1,
            on_death=_died,
            progress="ingest (local)" if options.progress else False,
            unit="batch",
            # a clean server process forks the workers: never this one, which may hold threads
            start_method="forkserver",
            preload=["chunklab.ingest.stages", "chunklab.chunkers.catalog"],
        )
        for table in tables:
            for offset in range(0, max(table.num_rows, 1), options.batch_size):
                yield embedder(table.slice(offset, options.batch_size))
        report.model_calls = embedder.model_calls
        report.cache_hits = embedder.cache_hits


def chunk_task(items: Sequence[WorkItem], config: ChunkConfig, known: frozenset[int]) -> pa.Table:
    """One chunking task (in a worker process, or here): the chunk-stage table of ``items``."""
    return chunk_items(encode_items(items), config, known)


def _died(items: Sequence[WorkItem], reason: str) -> pa.Table:
    return problem_table(items, "worker-died", reason)
