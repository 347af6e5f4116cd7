"""The stages every engine runs on the same Arrow rows: load → chunk → context, then embed.

:func:`chunk_items` is one task of the chunk side: each work item is loaded
(:func:`load`, through :mod:`chunklab.documents`), chunked by the catalog strategy
(:func:`chunk`) and given its title and section path (:func:`context`, when asked). It returns
one **document row** per item (status ``document``, with its chunk count; or ``skipped`` /
``failed`` with the reason) and one **chunk row** per chunk: status ``embed``, or
``unchanged`` when the sink already holds that chunk as it is (same id, text and metadata,
so the same embedded text: its :func:`fingerprint` is in ``known``). :class:`Embedder` embeds
the ``embed`` rows only. The local engine runs these in worker processes, the Ray engine in
Ray tasks and actors; the in-process path runs them here. Nothing here imports Ray.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from chunklab.chunk import Chunk, embedding_text
from chunklab.documents import Document
from chunklab.ingest.plan import StrategySpec, WorkItem, json_default
from chunklab.ingest.report import problem_of

__all__ = [
    "CHUNK_SCHEMA",
    "ChunkConfig",
    "Embedder",
    "chunk",
    "chunk_items",
    "context",
    "encode_items",
    "fingerprint",
    "load",
    "metadata_json",
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
    model: str = "static"  # the encoder a strategy that embeds (semantic) chunks with


# -- the stages ----------------------------------------------------------------------------
def load(item: WorkItem, strict: bool = False) -> Document:
    """The load stage: the item's document (a file by :func:`chunklab.documents.load_document`)."""
    from chunklab.documents import load_document

    if item.member is not None:
        f = item.member
        return Document(item.doc_id, f.read_text(), f.path, "python", os.path.basename(f.relpath))
    return load_document(item.source, root=item.root, strict=strict)


def chunk(doc: Document, config: ChunkConfig) -> list[Chunk]:
    """The chunk stage: the catalog strategy's chunks of ``doc`` (whitespace-only chunks dropped)."""
    strategy = config.spec.build()
    encoder = _encoder(config.model) if strategy.needs_encoder else None
    return [c for c in strategy(doc, encoder=encoder) if c.text.strip()]


def context(chunks: list[Chunk], doc: Document) -> list[Chunk]:
    """The context stage: the document title and section path on each chunk (:func:`add_context`)."""
    from chunklab.chunkers.context import add_context

    return add_context(chunks, title=doc.title, source=doc.text if doc.format == "markdown" else None)


def metadata_json(metadata: dict[str, Any]) -> str:
    """A chunk's metadata as canonical JSON (sorted keys): how rows carry it and fingerprints hash it."""
    return json.dumps(metadata, ensure_ascii=False, sort_keys=True, default=json_default)


def fingerprint(chunk_id: str, text: str, metadata: str) -> int:
    """A 64-bit hash of a chunk's id, text and canonical metadata JSON: equal means "stored as it is"."""
    data = "\0".join((chunk_id, text, metadata)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


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
    rows: dict[str, list[Any]] = {name: [] for name in CHUNK_SCHEMA.names}
    for blob in batch.column("item").to_pylist():
        item: WorkItem = pickle.loads(blob)
        try:
            doc = load(item, config.strict)
            chunks = chunk(doc, config)
            if config.context:
                chunks = context(chunks, doc)
        except Exception as exc:  # a bad document is reported, never raised
            pile, reason, detail = problem_of(exc)
            _append(rows, "", item.doc_id, 0, 0, "", "{}", "", item.source, pile, f"{reason}: {detail}", 0)
            continue
        _append(
            rows, "", doc.doc_id, 0, 0, "", "{}", "", item.source, "document", _decoding(doc), len(chunks)
        )
        for c in chunks:
            meta = metadata_json(c.metadata)
            status = "unchanged" if fingerprint(c.id, c.text, meta) in known else "embed"
            embed = (embedding_text(c) if config.embed_context else c.text) if status == "embed" else ""
            _append(rows, c.id, c.doc_id, c.start, c.end, c.text, meta, embed, item.source, status, "", 0)
    return pa.table(rows, schema=CHUNK_SCHEMA)


def problem_table(items: Sequence[WorkItem], reason: str, detail: str) -> pa.Table:
    """Failed document rows for ``items`` (their worker process died)."""
    rows: dict[str, list[Any]] = {name: [] for name in CHUNK_SCHEMA.names}
    for item in items:
        _append(rows, "", item.doc_id, 0, 0, "", "{}", "", item.source, "failed", f"{reason}: {detail}", 0)
    return pa.table(rows, schema=CHUNK_SCHEMA)


def _decoding(doc: Document) -> str:
    return str(doc.metadata.get("decode_problem") or "")


def _append(rows: dict[str, list[Any]], *values: Any) -> None:
    for name, value in zip(CHUNK_SCHEMA.names, values, strict=True):
        rows[name].append(value)


_ENCODERS: dict[str, Any] = {}


def _encoder(model: str) -> Any:
    """This process's encoder for a strategy that embeds while chunking."""
    if model not in _ENCODERS:
        from chunklab.embed import Encoder

        _ENCODERS[model] = Encoder(model, show_progress=False)
    return _ENCODERS[model]


# -- embed stage ---------------------------------------------------------------------------
class Embedder:
    """The embed stage: the model is loaded once (per process, or per Ray actor) and reused.

    ``__call__`` takes a chunk-stage table and returns it without the ``embed`` column and
    with a ``vector`` column (fixed-size list of float32; zeros on rows that are not embedded)
    and a ``truncated`` column (the embedded text is longer than the model's window).
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
        self.window = self.encoder.max_seq_length

    def __call__(self, batch: pa.Table) -> pa.Table:
        todo = np.asarray(batch.column("status").to_pylist(), dtype=object) == "embed"
        vectors = np.zeros((batch.num_rows, self.dim), dtype=np.float32)
        truncated = np.zeros(batch.num_rows, dtype=bool)
        if todo.any():
            texts = [t for t, go in zip(batch.column("embed").to_pylist(), todo, strict=True) if go]
            vectors[todo] = self.encoder.encode(texts, show_progress=False)
            if self.window:  # the model adds two special tokens
                truncated[todo] = [self.encoder.count_tokens(t) > self.window - 2 for t in texts]
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), self.dim)
        table = batch.drop_columns(["embed"]).append_column("vector", column)
        return table.append_column("truncated", pa.array(truncated))
