"""What every engine shares: the work items, the chunk and embed stages, the sinks and the report.

The stages work on Arrow tables so that the local engine (processes) and the Ray engine (Ray
Data) run the *same* functions on the same rows: :func:`chunk_items` turns work items (files,
or members of a named corpus) into one row per chunk (a document that cannot be read gives one
row with its ``status`` and ``error`` instead), :class:`Embedder` adds a ``vector`` column, and a
sink (:mod:`chunklab.ingest.sinks`) writes the chunk rows. Nothing here imports Ray.
"""

from __future__ import annotations

import glob
import json
import os
import pickle
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from chunklab.chunk import Chunk, embedding_text

__all__ = [
    "CHUNK_SCHEMA",
    "Embedder",
    "IngestReport",
    "StrategySpec",
    "WorkItem",
    "chunk_items",
    "resolve_sources",
]

#: columns of the chunk stage's output (``vector`` is added by :class:`Embedder`)
CHUNK_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("doc_id", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("text", pa.string()),
        ("metadata", pa.string()),  # the chunk's metadata as JSON
        ("embed", pa.string()),  # what gets embedded (dropped by the Embedder)
        ("source", pa.string()),  # the file (or corpus member) the row came from
        ("status", pa.string()),  # "ok", or "skipped"/"failed" for a document that gave no chunks
        ("error", pa.string()),
    ]
)
#: DocumentError reasons that mean "not a document" (skipped) rather than "broken" (failed)
SKIP_REASONS = frozenset({"binary", "not-regular", "undecodable"})


@dataclass(frozen=True)
class StrategySpec:
    """A catalog strategy by name and parameters: picklable, rebuilt once per worker process."""

    name: str
    params: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, strategy: Any, **params: Any) -> StrategySpec:
        """From a :class:`~chunklab.chunkers.catalog.Strategy` or a catalog name (with ``params``)."""
        from chunklab.chunkers.catalog import Strategy, get_strategy

        if isinstance(strategy, str):
            strategy = get_strategy(strategy, **params)
        elif params:
            raise ValueError("strategy params are given with a strategy name, not with a Strategy object")
        if not isinstance(strategy, Strategy):
            raise ValueError(f"strategy must be a catalog name or a Strategy, got {type(strategy).__name__}")
        return cls(strategy.kind, tuple(sorted(strategy.params.items())))

    def build(self) -> Any:
        """The strategy itself (cached per process)."""
        if self not in _BUILT:
            from chunklab.chunkers.catalog import get_strategy

            _BUILT[self] = get_strategy(self.name, **dict(self.params))
        return _BUILT[self]


_BUILT: dict[StrategySpec, Any] = {}


@dataclass(frozen=True)
class WorkItem:
    """One document to ingest: a file under ``root``, or a member of a named corpus (``member``)."""

    source: str
    root: str | None = None
    member: Any = None  # a chunklab.datasets CodeFile: read by itself (wheel members are not files)


@dataclass
class IngestReport:
    """What an ingest run did: documents and chunks written, files skipped or failed, timings."""

    engine: str
    model: str
    documents: int = 0
    chunks: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0  # wall time of the whole run, start-up included
    startup_seconds: float = 0.0  # getting the workers (or the Ray cluster) ready
    workers: int = 1
    target: str = ""  # where the chunks went

    @property
    def chunks_per_second(self) -> float:
        """Chunks written per second of wall time after start-up."""
        busy = self.seconds - self.startup_seconds
        return self.chunks / busy if busy > 0 else 0.0

    @property
    def exit_code(self) -> int:
        """1 when a document failed, else 0 (skipped files are not failures)."""
        return 1 if self.failed else 0

    def summary(self) -> str:
        """A few lines for the command line."""
        lines = [
            f"engine {self.engine} ({self.workers} workers, model {self.model}): {self.chunks:,} chunks from "
            f"{self.documents:,} documents in {self.seconds:.1f}s (start-up {self.startup_seconds:.1f}s, "
            f"{self.chunks_per_second:,.0f} chunks/s) -> {self.target}",
            f"  files skipped {len(self.skipped):,}, failed {len(self.failed):,}",
        ]
        lines.extend(f"    failed: {path}: {why}" for path, why in self.failed[:10])
        lines.extend(f"    skipped: {path}: {why}" for path, why in self.skipped[:10])
        return "\n".join(lines)

    def take(self, table: pa.Table, sink: Any) -> None:
        """Write the chunk rows of an embedded batch to ``sink``; record its skipped/failed rows."""
        rows, problems = split_problems(table)
        self.add_problems(problems)
        if rows.num_rows:
            self.chunks += sink.write(rows)

    def finish(self, items: int, sink: Any, started: float) -> IngestReport:
        """Fill in the totals once the run is over (``items`` work items, begun at ``started``)."""
        self.documents = items - len(self.skipped) - len(self.failed)
        self.target = str(sink)
        self.seconds = clock() - started
        return self

    def add_problems(self, table: pa.Table) -> None:
        """Record the skipped/failed rows of a stage output."""
        for source, status, error in zip(
            table.column("source").to_pylist(),
            table.column("status").to_pylist(),
            table.column("error").to_pylist(),
            strict=True,
        ):
            (self.skipped if status == "skipped" else self.failed).append((source, error))


# -- sources ------------------------------------------------------------------------------
def resolve_sources(
    sources: str | os.PathLike[str] | Iterable[Any], root: str | None = None
) -> list[WorkItem]:
    """Work items for paths, directories, glob patterns and named corpora (``code-50k``, ``installed``).

    Files are listed by :func:`chunklab.documents.iter_paths` and get ids relative to ``root``
    (default: :func:`chunklab.documents.corpus_root` of the paths), computed here once so that
    every worker gives the same ``doc_id``. A corpus member's id is ``"{root}:{relpath}"``, as
    in :func:`chunklab.datasets.code_questions.code_questions`.
    """
    from chunklab.documents import corpus_root, iter_paths

    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    paths: list[str] = []
    items: list[WorkItem] = []
    for src in sources:
        if not isinstance(src, (str, os.PathLike)):
            raise ValueError(
                f"sources must be paths, glob patterns or corpus names, got {type(src).__name__}"
            )
        name = os.fspath(src)
        if os.path.lexists(name):
            paths.append(name)
        elif glob.has_magic(name):
            found = sorted(glob.glob(name, recursive=True))
            if not found:
                raise FileNotFoundError(f"no file matches the pattern {name!r}")
            paths.extend(found)
        else:
            corpus = _named_corpus(name)
            items.extend(WorkItem(f.path, None, f) for f in corpus)
    if paths:
        base = os.path.abspath(root) if root is not None else corpus_root(paths)
        items = [WorkItem(os.path.abspath(p), base) for p in iter_paths(paths)] + items
    return items


def _named_corpus(name: str) -> Sequence[Any]:
    """A named corpus of code files, or FileNotFoundError listing what exists."""
    from chunklab.datasets.code import code_corpus
    from chunklab.datasets.wheels import corpus_names

    if name == "installed":
        return code_corpus()
    if name in corpus_names():
        from chunklab.datasets.code50k import wheel_corpus

        return wheel_corpus(name)
    raise FileNotFoundError(
        f"{name!r} is neither a file, a directory, a glob pattern matching files, nor a corpus name "
        f"(corpora: installed, {', '.join(corpus_names())})"
    )


# -- chunk stage --------------------------------------------------------------------------
def encode_items(items: Sequence[WorkItem]) -> pa.Table:
    """Work items as a one-column Arrow table (pickled), the input of :func:`chunk_items`."""
    return pa.table({"item": pa.array([pickle.dumps(i) for i in items], pa.binary())})


def chunk_items(
    batch: pa.Table,
    spec: StrategySpec,
    strict: bool = False,
    context: bool = False,
    embed_context: bool = True,
) -> pa.Table:
    """Chunk the work items of ``batch`` (made by :func:`encode_items`): one row per chunk.

    A document that cannot be read, or that the chunker fails on, gives one row with
    ``status`` "skipped" or "failed" and the reason in ``error``; it never stops the batch.
    ``context`` adds the document title and section path (:func:`chunklab.chunkers.context.add_context`);
    ``embed_context`` embeds :func:`chunklab.chunk.embedding_text` rather than the bare text.
    """
    rows: dict[str, list[Any]] = {name: [] for name in CHUNK_SCHEMA.names}
    strategy = spec.build()
    for blob in batch.column("item").to_pylist():
        item: WorkItem = pickle.loads(blob)
        try:
            chunks = _chunk_one(item, strategy, strict, context)
        except Exception as exc:  # a bad document is reported, never raised
            status, why = _classify(exc)
            _append(rows, "", "", 0, 0, "", "{}", "", item.source, status, why)
            continue
        for c in chunks:
            embed = embedding_text(c) if embed_context else c.text
            meta = json.dumps(c.metadata, ensure_ascii=False, sort_keys=True, default=json_default)
            _append(rows, c.id, c.doc_id, c.start, c.end, c.text, meta, embed, item.source, "ok", "")
    return pa.table(rows, schema=CHUNK_SCHEMA)


def _chunk_one(item: WorkItem, strategy: Any, strict: bool, context: bool) -> list[Chunk]:
    from chunklab.documents import Document, load_document

    if item.member is not None:
        f = item.member
        doc = Document(f"{f.root}:{f.relpath}", f.read_text(), f.path, "python", os.path.basename(f.relpath))
    else:
        doc = load_document(item.source, root=item.root, strict=strict)
    chunks = strategy(doc)
    if context:
        from chunklab.chunkers.context import add_context

        chunks = add_context(chunks, title=doc.title, source=doc.text if doc.kind == "markdown" else None)
    return [c for c in chunks if c.text.strip()]


def _classify(exc: Exception) -> tuple[str, str]:
    from chunklab.documents import DocumentError

    if isinstance(exc, DocumentError):
        return ("skipped" if exc.reason in SKIP_REASONS else "failed"), f"{exc.reason}: {exc.detail}"
    return "failed", f"{type(exc).__name__}: {exc}"


def _append(rows: dict[str, list[Any]], *values: Any) -> None:
    for name, value in zip(CHUNK_SCHEMA.names, values, strict=True):
        rows[name].append(value)


def json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


# -- embed stage --------------------------------------------------------------------------
class Embedder:
    """The embed stage: the model is loaded once (per process, or per Ray actor) and reused.

    ``__call__`` takes a chunk-stage table and returns it with a ``vector`` column (a
    fixed-size list of float32; zeros on the rows of documents that gave no chunks) and
    without the ``embed`` column.
    """

    def __init__(
        self,
        model: str = "static",
        device: str = "auto",
        cache_dir: str | None = None,
        threads: int | None = None,
        batch_size: int = 64,
    ) -> None:
        from chunklab.embed import Encoder

        self.encoder = Encoder(
            model, device, cache_dir=cache_dir, threads=threads, batch_size=batch_size, show_progress=False
        )
        self.dim = self.encoder.dim

    def __call__(self, batch: pa.Table) -> pa.Table:
        ok = np.asarray(batch.column("status").to_pylist(), dtype=object) == "ok"
        vectors = np.zeros((batch.num_rows, self.dim), dtype=np.float32)
        if ok.any():
            texts = [t for t, good in zip(batch.column("embed").to_pylist(), ok, strict=True) if good]
            vectors[ok] = self.encoder.encode(texts, show_progress=False)
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), self.dim)
        return batch.drop_columns(["embed"]).append_column("vector", column)


def split_problems(table: pa.Table) -> tuple[pa.Table, pa.Table]:
    """``(chunk rows, problem rows)`` of an embedded table."""
    import pyarrow.compute as pc

    ok = pc.equal(table.column("status"), "ok")
    return table.filter(ok), table.filter(pc.invert(ok))


#: most documents one chunking task gets (small enough to keep every worker busy to the end)
FILES_PER_TASK = 16


def task_size(items: int, workers: int) -> int:
    """Documents per chunking task: :data:`FILES_PER_TASK`, fewer for a small corpus (two tasks per worker)."""
    return max(1, min(FILES_PER_TASK, -(-items // (2 * workers))))


def batched(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """Consecutive slices of ``items`` of at most ``size``."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def clock() -> float:
    """Wall-clock seconds (one name for the engines' timings)."""
    return time.perf_counter()
