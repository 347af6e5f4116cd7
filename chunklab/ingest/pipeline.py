"""The one driver loop: plan → (engine: load → chunk → context → embed) → sink, and the report.

:func:`run` plans the work (:mod:`chunklab.ingest.plan`), opens the sink, asks it which chunks
it already holds, lets the engine schedule the stages of :mod:`chunklab.ingest.stages` and
writes what comes back. An engine only decides *where* the stages run: ``local`` (this
process, or worker processes for chunking) or ``ray`` (Ray tasks and actors). Every engine
and ``chunklab index`` without ``--engine`` take the same :class:`IngestOptions`, so a store
built by one is updated by any other, embedding only what changed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pyarrow as pa

from chunklab._validate import check_positive_int
from chunklab.chunkers.catalog import StrategySpec
from chunklab.embed import DEFAULT_MODEL, get_encoder
from chunklab.ingest.plan import Sources, WorkItem, collection_config, resolve_sources
from chunklab.ingest.report import IngestReport
from chunklab.ingest.sinks import Sink, StoreSink
from chunklab.ingest.sinks.parquet import ParquetSink
from chunklab.ingest.stages import ChunkConfig

if TYPE_CHECKING:
    from chunklab.chunkers.catalog import Strategy
    from chunklab.protocols import EncoderLike
    from chunklab.retrieval.chroma.records import CollectionConfig
    from chunklab.retrieval.chroma.store import ChunkStore

__all__ = ["Engine", "IngestOptions", "Job", "batched", "clock", "options_from", "run", "task_size"]

T = TypeVar("T")
#: most documents one chunking task gets (small enough to keep every worker busy to the end)
FILES_PER_TASK = 16


@dataclass(frozen=True)
class IngestOptions:
    """What to ingest how, for every engine.

    ``strategy`` is a catalog name, a :class:`~chunklab.chunkers.catalog.Strategy` or a
    :class:`~chunklab.chunkers.catalog.StrategySpec`; ``model`` the encoder (``"minilm"``, the default
    :data:`chunklab.embed.DEFAULT_MODEL`, or ``"static"``). Chunks go to ``out`` (a folder of
    Parquet shards), a Chroma server (``chroma_url``) or a store (``store``: a ChunkStore or a
    folder; default ``.chunklab/chroma``), collection ``collection``. ``workers`` chunking processes
    or Ray workers (default: the CPU count) feed batches of ``batch_size`` chunks to the embedder.
    ``root`` is what doc ids are relative to; ``strict`` skips files not valid in their encoding;
    ``context`` adds title and section path; ``embed_context`` embeds
    :func:`chunklab.chunk.embedding_text` rather than the bare text. ``clear`` rebuilds the sink;
    ``prune`` deletes stored documents that are not in ``sources`` any more. ``retry_budget`` is how
    many seconds a Chroma server may stay silent (a restart) before the run stops with
    :class:`~chunklab.retrieval.chroma.retry.ServerUnavailableError`. ``wait`` is how many
    seconds to wait for a folder store's writer lock (None: as long as it takes, 0: not at all); the
    store takes it once, for the whole run.
    """

    strategy: StrategySpec | Strategy | str = "structural"
    model: str = DEFAULT_MODEL
    store: ChunkStore | str | os.PathLike[str] | None = None
    chroma_url: str | None = None
    collection: str = "chunks"
    out: str | os.PathLike[str] | None = None
    batch_size: int = 256
    workers: int | None = None
    root: str | None = None
    strict: bool = False
    context: bool = False
    embed_context: bool = True
    device: str = "auto"
    clear: bool = False
    prune: bool = False
    progress: bool = True
    retry_budget: float = 60.0
    wait: float | None = None

    def __post_init__(self) -> None:
        check_positive_int(self.batch_size, "batch_size")
        if self.workers is not None:
            check_positive_int(self.workers, "workers")
        if sum(x is not None for x in (self.store, self.chroma_url, self.out)) > 1:
            raise ValueError("give at most one of store=, chroma_url= and out=")


def options_from(engine: str, options: Mapping[str, Any]) -> IngestOptions:
    """:class:`IngestOptions` from keyword arguments; an unknown one is a ValueError naming it."""
    names = {f.name for f in dataclasses.fields(IngestOptions)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise ValueError(
            f"{', '.join(unknown)}: not an option of the {engine} engine "
            f"(options: {', '.join(sorted(names))})"
        )
    return IngestOptions(**options)


@dataclass(frozen=True)
class Job:
    """What an engine schedules: the planned items, the chunk side's config, the stored fingerprints."""

    items: Sequence[WorkItem]
    chunking: ChunkConfig
    known: frozenset[int]
    options: IngestOptions


class Engine(Protocol):
    """How the stages are scheduled: work items in, embedded tables (chunk and document rows) out."""

    name: str

    def schedule(self, job: Job, report: IngestReport) -> Iterator[pa.Table]:
        """The embedded tables of ``job.items``; fills the report's engine fields (workers, start-up)."""
        ...


def run(sources: Sources, options: IngestOptions, engine: Engine) -> IngestReport:
    """Ingest ``sources`` (paths, directories, globs or corpus names) with ``engine``; the report."""
    t0 = clock()
    spec = StrategySpec.of(options.strategy)
    items, root = resolve_sources(sources, options.root)
    config = collection_config(spec, root, options.context, options.embed_context)
    # names the vectors; the same (shared) encoder embeds them when the engine runs in this process
    encoder = get_encoder(options.model, device=options.device)
    report = IngestReport(engine.name, options.model, window=encoder.max_seq_length)
    report.title = f"strategy {spec.build().name}" + (f" (root {root})" if root else "")
    chunking = ChunkConfig(
        spec, options.strict, options.context, options.embed_context, options.model, options.device
    )
    with open_sink(options, config, encoder) as sink:
        for table in engine.schedule(Job(items, chunking, sink.known(), options), report):
            tally(report, table)
            sink.write(table)
        if options.prune:
            sink.prune(frozenset(item.doc_id for item in items))
    report.deleted, report.pruned = sink.deleted, sink.pruned
    report.target = str(sink)
    report.seconds = clock() - t0
    return report


def open_sink(options: IngestOptions, config: CollectionConfig, encoder: EncoderLike) -> Sink:
    """The sink of ``options``: Parquet shards (``out``), a Chroma server, or a store folder."""
    if options.out is not None:
        return ParquetSink(options.out, config, encoder.name, options.clear)
    from chunklab.retrieval.chroma.retry import RetryPolicy, ServerUnavailableError
    from chunklab.retrieval.chroma.store import ChunkStore

    store = options.store
    if not isinstance(store, ChunkStore):
        if store is not None and not isinstance(store, (str, os.PathLike)):
            raise ValueError(f"store must be a ChunkStore or a folder, got {type(store).__name__}")
        try:
            store = ChunkStore(
                os.fspath(store) if store is not None else None,
                options.collection,
                encoder,
                embed_context=options.embed_context,
                url=options.chroma_url,
                config=config,
                verify=not options.clear,
                retry=RetryPolicy(budget_s=options.retry_budget),
                wait=options.wait,
            )
        except ServerUnavailableError as exc:
            raise ServerUnavailableError(
                f"wrote 0 chunks to {exc.url}; the server did not answer for {exc.waited_s:.0f} s; "
                "re-run when it is up",
                url=exc.url,
                waited_s=exc.waited_s,
            ) from exc
    return StoreSink(store, config, encoder.name, options.clear)


def tally(report: IngestReport, table: pa.Table) -> None:
    """Count an embedded table's rows into ``report``: documents, problems, chunks, truncations."""
    columns = ("status", "source", "error", "truncated", "metadata")
    for status, source, error, truncated, meta in zip(
        *(table.column(c).to_pylist() for c in columns), strict=True
    ):
        if status == "embed":
            report.added += 1
            report.over_window += bool(truncated)
        elif status == "unchanged":
            report.unchanged += 1
        elif status == "document":  # its metadata holds the document's notes, if any
            report.document_ok(source, error or None, json.loads(meta).get("notes", []) if meta else [])
        else:
            reason, _, detail = error.partition(": ")
            report.problem(source, status, reason, detail)


def task_size(items: int, workers: int) -> int:
    """Documents per chunking task: :data:`FILES_PER_TASK`, fewer for a small corpus (two per worker)."""
    return max(1, min(FILES_PER_TASK, -(-items // (2 * workers))))


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Consecutive slices of ``items`` of at most ``size``."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def clock() -> float:
    """Wall-clock seconds (one name for the engines' timings)."""
    return time.perf_counter()
