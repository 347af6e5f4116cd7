"""The Ray engine: the same ingest pipeline on Ray Data, from one laptop to a cluster.

The driver lists the work items (it never reads a file) and hands them to Ray Data in blocks
of at most 16 (:func:`~chunklab.ingest.pipeline.task_size`). Chunking runs in stateless
``map_batches`` **tasks**, anywhere in the cluster; embedding runs in an **actor pool**
(``workers`` actors, the model loaded once per actor, one GPU each with ``num_gpus``). On
CPUs both stages reserve the same half CPU, so Ray Data fuses them and each actor chunks its
own blocks. The driver streams the embedded rows back in batches and hands them to the sink of
:mod:`chunklab.ingest.pipeline`, as the local engine does.
Ray Data's streaming executor bounds the rows in flight between stages, so a slow writer
slows the readers down instead of filling memory.

A lost worker or node costs a retry, not the job, by Ray Data's defaults, which this engine
keeps on purpose: chunking tasks are re-run on a system failure (``max_retries=-1``) and
embedding actors restarted with their tasks retried (``max_restarts=-1``,
``max_task_retries=-1``); a bad document never raises, so nothing else is retried. Setting
them here would cost the fusion of the two stages (Ray Data fuses map stages only when their
remote arguments agree, and tasks and actors take different ones). A retried task may deliver
rows the driver already got: the Parquet sink skips them and a Chroma upsert by id is
idempotent, so the output holds each chunk once (tests/integration/test_ray_faults.py kills nodes to check).

Ray is an optional extra (``pip install 'chunklab[distributed]'``); this module imports it
only when :func:`ingest` runs, and says how to install it when it is missing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chunklab.ingest.pipeline import Job, batched, clock, options_from, run, task_size
from chunklab.ingest.plan import Sources
from chunklab.ingest.report import IngestReport
from chunklab.ingest.stages import Embedder, chunk_items, encode_items

if TYPE_CHECKING:
    from ray.data import Dataset

__all__ = ["CHUNK_CPUS", "EMBED_CPUS", "INSTALL_HINT", "RayEngine", "connect", "ingest", "require_ray"]
#: logical CPUs a chunking task and a CPU embedding actor each reserve: ``workers`` of each
#: fit in ``workers`` CPUs (a chunking task and an actor take turns on one core), so that
#: neither stage can take every CPU and starve the other
CHUNK_CPUS = EMBED_CPUS = 0.5
#: how many times a local cluster start is tried (a loaded machine can miss Ray's start-up deadlines)
START_TRIES = 3
INSTALL_HINT = "the ray engine needs Ray: pip install 'chunklab[distributed]' (it pins ray[data])"


def require_ray() -> ModuleType:
    """The ``ray`` module with Ray Data, or ImportError saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return ray


def connect(address: str | None = None, num_cpus: int | None = None, num_gpus: int | None = None) -> bool:
    """Join the Ray cluster at ``address``, or start a local one; True when this call connected.

    An already initialized Ray (a test, a notebook) is used as it is and False is returned, so
    the caller knows not to shut it down.
    """
    ray = require_ray()
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: no usage report
    quiet = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": False}
    if address is not None:
        ray.init(address=address, **quiet)
        return True
    for attempt in range(START_TRIES):
        try:
            ray.init(num_cpus=num_cpus, num_gpus=num_gpus, **quiet)
            return True
        except Exception as exc:  # Ray raises a bare Exception when its agents start too slowly
            ray.shutdown()
            if "timed out during startup" not in str(exc) or attempt == START_TRIES - 1:
                raise
    return True  # pragma: no cover - the loop returns or raises


def ingest(
    sources: Sources,
    *,
    address: str | None = None,
    num_gpus: int = 0,
    **options: Any,
) -> IngestReport:
    """Chunk, embed and write ``sources`` with Ray Data; ``options`` are :class:`IngestOptions` fields.

    ``address`` joins a running cluster (``ray start --head`` prints it; ``"auto"`` finds a
    local one); without it a local cluster of ``workers`` CPUs is started and shut down at
    the end. ``workers`` is the cap on concurrent chunking tasks and the number of CPU
    embedding actors (default: the cluster's CPUs). ``num_gpus`` runs that many embedding
    actors instead, one GPU each. ``batch_size`` is the number of chunks an actor embeds at
    once and the driver writes at once.
    """
    return run(sources, options_from("ray", options), RayEngine(address, num_gpus))


class RayEngine:
    """Chunking in Ray tasks, embedding in an actor pool, results streamed back to the driver."""

    name = "ray"

    def __init__(self, address: str | None = None, num_gpus: int = 0) -> None:
        if isinstance(num_gpus, bool) or not isinstance(num_gpus, int) or num_gpus < 0:
            raise ValueError(f"num_gpus must be a non-negative integer, got {num_gpus!r}")
        require_ray()
        self.address, self.num_gpus = address, num_gpus

    def schedule(self, job: Job, report: IngestReport) -> Iterator[pa.Table]:
        """Embedded tables of the job's items (in no particular order: the sink needs none)."""
        options = job.options
        ray = require_ray()
        start = clock()
        owned = connect(self.address, options.workers, self.num_gpus or None)
        report.startup_seconds = clock() - start
        try:
            workers = options.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            report.workers = workers
            if job.items:
                ray.data.DataContext.get_current().enable_progress_bars = bool(options.progress)
                dataset = self._pipeline(ray, job, workers)
                yield from dataset.iter_batches(batch_size=options.batch_size, batch_format="pyarrow")
        finally:
            if owned:
                ray.shutdown()

    def _pipeline(self, ray: ModuleType, job: Job, workers: int) -> Dataset:
        """The Ray Data dataset: work-item blocks -> chunking tasks -> embedding actors."""
        from chunklab.paths import cache_dir

        options = job.options
        per_task = task_size(len(job.items), workers)
        ds = ray.data.from_arrow([encode_items(part) for part in batched(list(job.items), per_task)])
        ds = ds.map_batches(
            chunk_items,
            batch_size=per_task,
            batch_format="pyarrow",
            compute=ray.data.TaskPoolStrategy(size=workers),
            num_cpus=CHUNK_CPUS,
            fn_kwargs={"config": job.chunking, "known": job.known},
        )
        actors = {"num_gpus": 1} if self.num_gpus else {"num_cpus": EMBED_CPUS}
        return ds.map_batches(
            Embedder,
            batch_size=options.batch_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=self.num_gpus or workers),
            **actors,
            fn_constructor_kwargs={
                "model": options.model,
                "device": "cuda" if self.num_gpus else options.device,
                "cache_dir": str(cache_dir()),
                "threads": 1,
                "batch_size": min(options.batch_size, 256),
            },
        )
