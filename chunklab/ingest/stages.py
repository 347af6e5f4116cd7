"""The stages every engine runs on the same Arrow rows: load → chunk → context, then embed.

:func:`load` and :func:`chunk` are the one load-and-chunk stage of the kit: ``chunklab chunk``,
every ingest engine and (through :func:`chunk_document`, its documents being loaded already)
the benchmark call them, so a file or corpus member gives the same chunks everywhere.
:func:`chunk_items` is one task of the chunk side: each work item is loaded (:func:`load`,
through :mod:`chunklab.documents`), chunked by the catalog strategy (:func:`chunk`) and given
its title and section path (:func:`context`, when asked). It returns one **document row** per
item (status ``document``, with its chunk count; or ``skipped`` / ``failed`` with the reason)
and one **chunk row** per chunk: status ``embed``, or ``unchanged`` when the sink already holds
that chunk as it is (same id, text and metadata, so the same embedded text: its
:func:`~chunklab.retrieval.filters.fingerprint` is in ``known``). :class:`Embedder` embeds the
``embed`` rows only. The local engine runs these in worker processes, the Ray engine in Ray
tasks and actors; the in-process path runs them here. Nothing here imports Ray.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from chunklab._validate import check_positive_int
from chunklab.chunk import Chunk, embedding_text
from chunklab.chunkers.catalog import StrategySpec
from chunklab.documents import Document
from chunklab.embed import DEFAULT_MODEL, get_encoder
from chunklab.ingest.plan import WorkItem
from chunklab.ingest.report import document_notes, problem_of
from chunklab.retrieval.filters import fingerprint, metadata_json

if TYPE_CHECKING:
    from chunklab.chunkers.catalog import Strategy
    from chunklab.protocols import DocumentLike, EncoderLike

__all__ = [
    "CHUNK_SCHEMA",
    "ChunkConfig",
    "Embedder",
    "chunk",
    "chunk_document",
    "chunk_items",
    "context",
    "encode_items",
    "load",
]

#: columns of the chunk stage's output (the Embedder drops ``embed`` and adds ``vector``, ``truncated``)
CHUNK_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("doc_id", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("text", pa.string()),
        ("metadata", pa.string()),  # the chunk's metadata as JSON (metadata_json)
        ("embed", pa.string()),  # what gets embedded
        ("source", pa.string()),  # the file (or corpus member) the row came from
        ("status", pa.string()),  # embed / unchanged (chunk rows); document / skipped / failed
        ("error", pa.string()),  # "reason: detail" of a problem; a document row's decoding problem
        ("chunks", pa.int64()),  # a document row: how many chunk rows its document gave
    ]
)
#: statuses of chunk rows, and of the one row per document
CHUNK_STATUSES = ("embed", "unchanged")


@dataclass(frozen=True)
class ChunkConfig:
    """What the chunk side needs (picklable): the strategy spec and the load/context switches."""

    spec: StrategySpec
    strict: bool = False
    context: bool = False
    embed_context: bool = True
    model: str = DEFAULT_MODEL  # the encoder a strategy that embeds (semantic) chunks with
    device: str = "auto"


# -- the stages ----------------------------------------------------------------------------
def load(item: WorkItem, strict: bool = False) -> Document:
    """The load stage: the item's document, read through :mod:`chunklab.documents` by its format.

    A file by :func:`~chunklab.documents.load_document`; a corpus member (which may live in an
    archive) from its bytes by :func:`~chunklab.documents.load_bytes`, as the format it
    declares (``CorpusFile.format``: a code-poly member's language, a PDF), under its corpus id.
    """
    from chunklab.documents import load_bytes, load_document

    if item.member is not None:
        f = item.member
        return load_bytes(f.read_bytes(), f.path, format=f.format, strict=strict, doc_id=item.doc_id)
    return load_document(item.source, root=item.root, strict=strict)


def chunk(doc: Document, config: ChunkConfig) -> list[Chunk]:
    """The chunk stage: :func:`chunk_document` with the config's strategy (and encoder, if it embeds)."""
    strategy = config.spec.build()
    encoder = get_encoder(config.model, device=config.device) if strategy.needs_encoder else None
    return chunk_document(doc, strategy, encoder)


def chunk_document(doc: DocumentLike, strategy: Strategy, encoder: EncoderLike | None = None) -> list[Chunk]:
    """The one chunking rule of ``chunk``, ``index`` and ``evaluate``: ``strategy``'s chunks of ``doc``.

    Each must be a :class:`~chunklab.chunk.Chunk` (else a ValueError naming the strategy);
    whitespace-only chunks are dropped (there is nothing in them to embed or to find).
    """
    got = strategy(doc, encoder=encoder)
    for c in got:
        if not isinstance(c, Chunk):
            raise ValueError(f"strategy {strategy.name!r} returned {type(c).__name__}, not Chunk")
    return [c for c in got if c.text.strip()]


def context(chunks: list[Chunk], doc: Document) -> list[Chunk]:
    """The context stage: the document title and section path on each chunk (:func:`add_context`)."""
    from chunklab.enrich.context import add_context

    return add_context(chunks, title=doc.title, source=doc.text if doc.format == "markdown" else None)


# -- one chunking task ---------------------------------------------------------------------
def encode_items(items: Sequence[WorkItem]) -> pa.Table:
    """Work items as a one-column Arrow table (pickled), the input of :func:`chunk_items`."""
    return pa.table({"item": pa.array([pickle.dumps(i) for i in items], pa.binary())})


def chunk_items(batch: pa.Table, config: ChunkConfig, known: frozenset[int] = frozenset()) -> pa.Table:
    """Load, chunk and (optionally) add context to the work items of ``batch`` (:func:`encode_items`).

    One document row per item and one chunk row per chunk (see the module docstring); a
    document that cannot be read, or that the chunker fails on, gives its problem row and
    never stops the batch. ``known`` holds the fingerprints the sink already stores.
    """
    rows: dict[str, list[str | int]] = {name: [] for name in CHUNK_SCHEMA.names}
    for blob in batch.column("item").to_pylist():
        item: WorkItem = pickle.loads(blob)
        try:
            doc = load(item, config.strict)
            chunks = chunk(doc, config)
            if config.context:
                chunks = context(chunks, doc)
            document_rows = _document_rows(doc, chunks, item.source, config, known)
        except Exception as exc:  # a bad document is reported, never raised, and none of its rows is kept
            pile, reason, detail = problem_of(exc)
            _append(rows, "", item.doc_id, 0, 0, "", "{}", "", item.source, pile, f"{reason}: {detail}", 0)
            continue
        for values in document_rows:
            _append(rows, *values)
    return pa.table(rows, schema=CHUNK_SCHEMA)


def _document_rows(
    doc: Document, chunks: list[Chunk], source: str, config: ChunkConfig, known: frozenset[int]
) -> list[tuple[str | int, ...]]:
    """The document row (its notes in ``metadata``) and chunk rows of one document.

    Every string is checked to encode as UTF-8 here, so a text Arrow cannot take fails this
    document alone (its problem row), never the batch and the store behind it.
    """
    notes = document_notes(doc.metadata)
    doc_meta = metadata_json({"notes": notes}) if notes else "{}"
    out: list[tuple[str | int, ...]] = [
        ("", doc.doc_id, 0, 0, "", doc_meta, "", source, "document", _decoding(doc), len(chunks))
    ]
    for c in chunks:
        meta = metadata_json(c.metadata)
        status = "unchanged" if fingerprint(c.id, c.text, meta) in known else "embed"
        embed = (embedding_text(c) if config.embed_context else c.text) if status == "embed" else ""
        out.append((c.id, c.doc_id, c.start, c.end, c.text, meta, embed, source, status, "", 0))
    for row in out:
        for value in row:
            if isinstance(value, str):
                value.encode("utf-8")  # UnicodeEncodeError names the character and where it is
    return out


def problem_table(items: Sequence[WorkItem], reason: str, detail: str) -> pa.Table:
    """Failed document rows for ``items`` (their worker process died)."""
    rows: dict[str, list[str | int]] = {name: [] for name in CHUNK_SCHEMA.names}
    for item in items:
        _append(rows, "", item.doc_id, 0, 0, "", "{}", "", item.source, "failed", f"{reason}: {detail}", 0)
    return pa.table(rows, schema=CHUNK_SCHEMA)


def _decoding(doc: Document) -> str:
    return str(doc.metadata.get("decode_problem") or "")


def _append(rows: dict[str, list[str | int]], *values: str | int) -> None:
    for name, value in zip(CHUNK_SCHEMA.names, values, strict=True):
        rows[name].append(value)


# -- embed stage ---------------------------------------------------------------------------
class Embedder:
    """The embed stage: the model is loaded once (per process, or per Ray actor) and reused.

    ``__call__`` takes a chunk-stage table and returns it without the ``embed`` column and
    with a ``vector`` column (fixed-size list of float32; zeros on rows that are not embedded)
    and a ``truncated`` column (the embedded text is longer than the model's window).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        device: str = "auto",
        cache_dir: str | None = None,
        threads: int | None = None,
        batch_size: int = 64,
    ) -> None:
        check_positive_int(batch_size, "batch_size")
        self.encoder = get_encoder(model, device=device, cache_dir=cache_dir, threads=threads)
        self.batch_size = batch_size
        self.dim = self.encoder.dim
        self.window = self.encoder.max_seq_length
        # the encoder is the process's shared one: count this embedder's texts from here
        self._calls0, self._hits0 = self.encoder.model_calls, self.encoder.cache_hits

    @property
    def model_calls(self) -> int:
        """Texts this embedder sent to the model."""
        return self.encoder.model_calls - self._calls0

    @property
    def cache_hits(self) -> int:
        """Texts this embedder found in the vector cache."""
        return self.encoder.cache_hits - self._hits0

    def __call__(self, batch: pa.Table) -> pa.Table:
        todo = np.asarray(batch.column("status").to_pylist(), dtype=object) == "embed"
        vectors = np.zeros((batch.num_rows, self.dim), dtype=np.float32)
        truncated = np.zeros(batch.num_rows, dtype=bool)
        if todo.any():
            texts = [t for t, go in zip(batch.column("embed").to_pylist(), todo, strict=True) if go]
            vectors[todo] = self.encoder.encode(texts, show_progress=False, batch_size=self.batch_size)
            if self.window:  # the model adds two special tokens
                truncated[todo] = [self.encoder.count_tokens(t) > self.window - 2 for t in texts]
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), self.dim)
        table = batch.drop_columns(["embed"]).append_column("vector", column)
        return table.append_column("truncated", pa.array(truncated))
