"""The sink stage: a Chroma store (a folder or a server) or Parquet shards, replaced per document.

Every sink works the same way, whichever engine feeds it (always from the driver, in
batches): it tells the run which chunks it already holds (:meth:`Sink.known`, fingerprints of
id, text and metadata), so those are never embedded again; it writes the embedded rows; once
all the chunks of a document have arrived (its document row says how many) it drops that
document's stale chunks; with ``prune`` it drops the documents gone from the corpus. Each
sink records one :func:`~chunklab.ingest.plan.collection_config` (and the encoder) and refuses
a run with another unless ``clear``, which builds the new contents beside the old and swaps
them in only when the run got through. The Parquet sink lives in :mod:`chunklab.ingest.sinks.parquet`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from chunklab.chunk import Chunk
from chunklab.ingest.stages import CHUNK_STATUSES
from chunklab.retrieval.chroma.retry import ServerUnavailableError
from chunklab.retrieval.filters import chunk_fingerprint

if TYPE_CHECKING:
    from chunklab.retrieval.chroma.records import CollectionConfig
    from chunklab.retrieval.chroma.store import ChunkStore

__all__ = ["OUTPUT_COLUMNS", "Sink", "StoreSink", "chunks_of", "vectors_of"]

#: the columns a sink writes, in this order (Parquet shards: one row per chunk)
OUTPUT_COLUMNS = ("id", "doc_id", "start", "end", "text", "metadata", "vector")


def vectors_of(table: pa.Table) -> np.ndarray:
    """The ``vector`` column as an (n, dim) float32 array."""
    col = table.column("vector").combine_chunks()
    dim = col.type.list_size
    return np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dim)


def chunks_of(table: pa.Table) -> list[Chunk]:
    """Chunk rows back as :class:`~chunklab.chunk.Chunk` objects (ids recomputed, so checked)."""
    cols = [table.column(n).to_pylist() for n in ("id", "text", "start", "end", "doc_id", "metadata")]
    out = []
    for cid, text, start, end, doc_id, meta in zip(*cols, strict=True):
        chunk = Chunk(text, start, end, doc_id, json.loads(meta))
        if chunk.id != cid:
            raise ValueError(f"chunk {cid} of {doc_id} changed id through its JSON metadata ({chunk.id})")
        out.append(chunk)
    return out


class Sink:
    """What every sink shares: stored fingerprints, the per-document ledger, pruning, the counts.

    A subclass fills ``stored`` (doc_id -> {chunk id: fingerprint}) when it opens and writes
    with :meth:`_write`, :meth:`_replaced` and :meth:`_prune_document`.
    """

    def __init__(self) -> None:
        self.stored: dict[str, dict[str, int]] = {}
        self.deleted = 0  # stale chunks and chunks of pruned documents
        self.pruned = 0  # documents pruned
        self._expected: dict[str, int] = {}  # doc_id -> chunk rows its document row announced
        self._arrived: dict[str, set[str]] = {}  # doc_id -> chunk ids seen in this run
        self._rows: dict[str, int] = {}  # doc_id -> chunk rows seen in this run
        self._unchanged: dict[str, set[str]] = {}
        self.seen: set[str] = set()  # documents of this run (read and chunked)

    def known(self) -> frozenset[int]:
        """Fingerprints of every chunk stored: the chunk stage marks these ``unchanged``."""
        return frozenset(fp for chunks in self.stored.values() for fp in chunks.values())

    def write(self, table: pa.Table) -> None:
        """Write the embedded chunk rows of a batch; finish the documents it completes."""
        import pyarrow.compute as pc

        fresh = table.filter(pc.equal(table.column("status"), "embed"))
        if fresh.num_rows:
            self._write(fresh)
        statuses = table.column("status").to_pylist()
        for doc_id, cid, status, n in zip(
            table.column("doc_id").to_pylist(),
            table.column("id").to_pylist(),
            statuses,
            table.column("chunks").to_pylist(),
            strict=True,
        ):
            if status == "document":
                self._expected[doc_id] = n
                self._arrived.setdefault(doc_id, set())
                self.seen.add(doc_id)
            elif status in CHUNK_STATUSES:
                self._arrived.setdefault(doc_id, set()).add(cid)
                self._rows[doc_id] = self._rows.get(doc_id, 0) + 1
                if status == "unchanged":
                    self._unchanged.setdefault(doc_id, set()).add(cid)
            else:
                continue
            if self._rows.get(doc_id, 0) == self._expected.get(doc_id, -1):
                ids = self._arrived.pop(doc_id)
                del self._expected[doc_id]
                self._rows.pop(doc_id, None)
                stale = set(self.stored.get(doc_id, {})) - ids
                self._replaced(doc_id, stale, self._unchanged.pop(doc_id, set()))

    def prune(self, present: frozenset[str]) -> None:
        """Delete the stored documents that are not in ``present`` (the corpus as planned)."""
        for doc_id in sorted(set(self.stored) - present - self.seen):
            self.pruned += 1
            self._prune_document(doc_id)

    def _write(self, rows: pa.Table) -> None:
        raise NotImplementedError

    def _replaced(self, doc_id: str, stale: set[str], unchanged: set[str]) -> None:
        raise NotImplementedError

    def _prune_document(self, doc_id: str) -> None:
        raise NotImplementedError

    def __enter__(self) -> Sink:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Finish (or, on an exception, abandon) what this run wrote."""


class StoreSink(Sink):
    """A :class:`~chunklab.retrieval.chroma.store.ChunkStore` (a folder or a server), upserted with vectors.

    Opening reads every stored chunk once (:meth:`ChunkStore.iter_chunks`) for the
    fingerprints; ``clear`` fills a staging collection (:meth:`ChunkStore.rebuild`) that
    replaces the old one only when the run succeeds. On a server, a write that finds the server
    gone past the store's retry budget stops the run with a
    :class:`~chunklab.retrieval.chroma.retry.ServerUnavailableError` that says how much was written.
    """

    def __init__(
        self, store: ChunkStore, config: CollectionConfig, encoder_name: str, clear: bool = False
    ) -> None:
        super().__init__()
        self.store = store
        self.received = 0  # embedded chunk rows handed to the sink
        self.written = 0  # ... and acknowledged by the store
        if store.encoder.name != encoder_name:
            raise ValueError(
                f"the store's encoder is {store.encoder.name!r}, this run embeds with {encoder_name!r}"
            )
        recorded = store.recorded_config()
        if not clear and recorded not in (None, config):
            raise ValueError(
                f"collection {store.name!r} was built with the chunker configuration {recorded} "
                f"(this run uses {config}): pass clear=True (--clear) to rebuild it"
            )
        with self._server_down():
            self._rebuild = store.rebuild() if clear else contextlib.nullcontext(store)
            self.target = self._rebuild.__enter__()
            if not clear:
                for parents in (False, True):
                    for c in store.iter_chunks(parents=parents):
                        fp = chunk_fingerprint(c)
                        self.stored.setdefault(c.doc_id, {})[c.id] = fp

    @contextlib.contextmanager
    def _server_down(self) -> Iterator[None]:
        """Turn a server that stayed down into one line: what was written where, and what to do."""
        try:
            yield
        except ServerUnavailableError as exc:
            raise ServerUnavailableError(
                f"wrote {self.written:,} of {self.received:,} chunks embedded so far to {exc.url}; "
                f"the server did not answer for {exc.waited_s:.0f} s; re-run to finish",
                url=exc.url,
                waited_s=exc.waited_s,
            ) from exc

    def _write(self, rows: pa.Table) -> None:
        self.received += rows.num_rows
        with self._server_down():
            self.target.add(chunks_of(rows), vectors=vectors_of(rows), show_progress=False)
        self.written += rows.num_rows

    def _replaced(self, doc_id: str, stale: set[str], unchanged: set[str]) -> None:
        if stale:
            with self._server_down():
                self.deleted += self.target.delete(ids=sorted(stale))

    def _prune_document(self, doc_id: str) -> None:
        with self._server_down():
            self.deleted += self.target.delete(doc_id=doc_id)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with self._server_down():
            self._rebuild.__exit__(exc_type, exc, tb)

    def __str__(self) -> str:
        stats = self.store.stats()
        where = self.store.url or self.store.path
        return (
            f"collection {self.store.name!r} at {where}: {stats['leaves']} leaves + {stats['parents']} "
            f"parents" + (f", {stats['bytes_on_disk'] / 1e6:.1f} MB on disk" if not self.store.url else "")
        )
