"""A Chroma-backed index of chunks: idempotent upsert, metadata filters, parent lookup, persistence.

Vectors come from chunklab's own :class:`~chunklab.embed.Encoder` (MiniLM or the static
model), registered with Chroma as the embedding function ``chunklab-minilm`` so a collection
reopened in another process (even by plain ``chromadb``, once ``chunklab.retrieval.chroma.store`` is imported)
answers text queries with the same model. Chroma's default embedding function downloads a
model and is never used. The store is a local folder (``path=``), a Chroma server
(``url="http://127.0.0.1:8000"``, e.g. ``chroma run --path DIR``) or memory: same behaviour.

Leaves go to the collection ``collection``; chunks that have children (their metadata lists
``child_ids``, as :mod:`chunklab.chunkers.hierarchical` writes) go to the sibling collection
``{collection}_parents``, so leaf search never returns a parent and
:meth:`ChunkStore.get_parent` still finds it.

**Several processes.** A folder store has one writer at a time (a file lock, held while the
store is open: :mod:`chunklab.retrieval.chroma.lock`); a long-lived process calls :meth:`ChunkStore.close`
to let others write and :meth:`ChunkStore.reopen` to see what they wrote. A server store
(``url=``) sees every write at once: concurrent writers and readers should share a server.
"""

from __future__ import annotations

import contextlib
import copy
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chunklab._validate import check_positive_int
from chunklab.chunk import Chunk, embedding_text
from chunklab.protocols import EncoderLike
from chunklab.retrieval.chroma.backend import ChunklabEmbeddingFunction, Collections, batches, make_client
from chunklab.retrieval.chroma.documents import document_ids, plan_replacement
from chunklab.retrieval.chroma.files import DamagedStoreError, open_folder, store_folder
from chunklab.retrieval.chroma.records import StoreMismatchError, check_record, recorded_config
from chunklab.retrieval.chroma.retry import RetryPolicy
from chunklab.retrieval.chroma.server import open_collections
from chunklab.retrieval.filters import (
    BatchRetriever,
    check_queries,
    check_where,
    decode_metadata,
    encode_metadata,
)

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

__all__ = [
    "ChunkStore",
    "ChunklabEmbeddingFunction",
    "DamagedStoreError",
    "StoreMismatchError",
    "decode_metadata",
    "encode_metadata",
]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,470}[A-Za-z0-9]$")


class ChunkStore(BatchRetriever):
    """Chunks in a Chroma collection, searched by cosine similarity of the encoder's vectors.

    ``path`` defaults to ``<project root>/.chunklab/chroma``; ``url`` talks to a Chroma
    server instead (``http://127.0.0.1:8000``); ``in_memory=True`` uses Chroma's in-process
    client, with a collection private to this object. ``embed_context`` embeds
    :func:`chunklab.chunk.embedding_text` (title, section path, table header in front of the
    text) rather than the bare text; the stored document is always ``chunk.text``.

    ``create=False`` opens for reading: a missing store folder or collection is a
    ValueError that lists the collections that do exist. A collection records the encoder
    that filled it and, when ``config`` is given (the chunker's strategy and parameters),
    that configuration; opening it with another raises :class:`StoreMismatchError` unless
    ``replace=True``, which empties it first. ``verify=False`` skips that comparison: for a
    store about to be rebuilt beside itself with :meth:`rebuild` (``chunklab index --clear``).
    ``retry`` is how a server store rides through a server restart (default: 60 s in total,
    :class:`~chunklab.retrieval.chroma.retry.RetryPolicy`); past it a request raises
    :class:`~chunklab.retrieval.chroma.retry.ServerUnavailableError`.

    A folder store is locked while this object is open (until :meth:`close`, the end of a
    ``with`` block, or garbage collection): exclusively when ``create`` (one writer at a time),
    shared for reading (:mod:`chunklab.retrieval.chroma.lock`); ``wait`` bounds the wait in seconds
    (None: as long as it takes). Reading a folder that is not a store writes nothing into it;
    a damaged store raises :class:`~chunklab.retrieval.chroma.files.DamagedStoreError`.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        collection: str = "chunks",
        encoder: EncoderLike | None = None,
        in_memory: bool = False,
        embed_context: bool = True,
        *,
        url: str | None = None,
        create: bool = True,
        config: Mapping[str, object] | None = None,
        replace: bool = False,
        verify: bool = True,
        retry: RetryPolicy | None = None,
        wait: float | None = None,
    ) -> None:
        if not isinstance(collection, str) or not _NAME_RE.match(collection) or ".." in collection:
            raise ValueError(
                "collection must be 3-472 characters of letters, digits, '.', '_' or '-', starting and "
                f"ending with a letter or digit; got {collection!r}"
            )
        if sum([path is not None, url is not None, bool(in_memory)]) > 1:
            raise ValueError("give at most one of path=..., url=... or in_memory=True")
        if config is not None and not isinstance(config, Mapping):
            raise ValueError(
                f"config must be a dict (the chunker configuration), got {type(config).__name__}"
            )
        self.embed_context = bool(embed_context)
        self.in_memory = bool(in_memory)
        self.url = url
        self.name = collection
        self.config = dict(config) if config is not None else None
        self.path = None if in_memory or url is not None else store_folder(path, create)
        self._lock = open_folder(self.path, create, wait) if self.path is not None else None
        self._create, self._wait, self._retry = create, wait, retry
        try:
            self._open(collection, encoder, create, verify, replace)
        except BaseException:
            self.close()  # a store that failed to open holds no lock
            raise

    def _open(
        self, collection: str, encoder: EncoderLike | None, create: bool, verify: bool, replace: bool
    ) -> None:
        # Chroma shares one in-memory system per process: keep this store's data private.
        physical = f"{collection}-{uuid.uuid4().hex[:12]}" if self.in_memory else collection
        policy = self._retry if self._retry is not None else RetryPolicy()
        self.encoder, opened = open_collections(
            self.url, self.path, self.in_memory, physical, encoder, create, policy, collection
        )
        self._collections: Collections = opened
        if verify and check_record(self.collection, self.encoder, self.config, replace):
            self.clear()

    def __repr__(self) -> str:
        where = "memory" if self.in_memory else (self.url or str(self.path))
        return f"ChunkStore({where!r}, collection={self.name!r}, count={self.count()})"

    @property
    def client(self) -> ClientAPI:
        """The Chroma client (a local folder's, a server's or the in-memory one)."""
        return self._collections.client

    @property
    def collection(self) -> Collection:
        """The Chroma collection holding the leaves (parents live in ``{collection}_parents``)."""
        return self._collections.leaves

    # -- collections -------------------------------------------------------------------
    def recorded_config(self) -> dict[str, object] | None:
        """The chunker configuration this collection recorded (None when none was given)."""
        return recorded_config(self.collection)

    def reopen(self) -> None:
        """See what other processes wrote since this store was opened (needed for local-folder stores).

        Chroma's local client keeps the index in memory; a closed folder store takes its lock
        again. Server and in-memory stores need no reopening (it is harmless there).
        """
        client = None
        if self.path is not None:
            from chromadb.api.client import SharedSystemClient

            if self._lock is None or self._lock.released:  # closed: take the lock again
                self._lock = open_folder(self.path, self._create, self._wait)

            SharedSystemClient.clear_system_cache()
            client = make_client(self.path, None, False)
        self._collections.reset(client)

    def clear(self) -> None:
        """Remove every chunk (leaves and parents), keeping the collection and its records.

        Useful before re-indexing with different chunker parameters: their chunks have other
        ids, so an upsert alone would keep the old ones next to the new.
        """
        self._collections.drop()
        self._collections.reset()
        check_record(self.collection, self.encoder, self.config, replace=True)

    def close(self) -> None:
        """Drop an in-memory store's collections; let a folder store's lock go."""
        if self.in_memory and hasattr(self, "_collections"):
            self._collections.drop(alias=True)
        if (held := getattr(self, "_lock", None)) is not None:
            held.release()

    def __enter__(self) -> ChunkStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------
    def embedded_text(self, chunk: Chunk) -> str:
        """What this store embeds for ``chunk``: its contextual header and text, or the bare text."""
        return embedding_text(chunk) if self.embed_context else chunk.text

    def add(
        self,
        chunks: Iterable[Chunk],
        batch_size: int = 512,
        show_progress: bool | None = None,
        vectors: np.ndarray | None = None,
    ) -> int:
        """Upsert ``chunks`` by ``chunk.id`` (re-adding the same chunks changes nothing).

        Chunks are embedded and written in batches of ``batch_size`` so memory stays flat
        for large corpora; a progress bar shows for 256 chunks or more. ``vectors``, an
        (n, dim) array aligned with ``chunks``, skips embedding (a pipeline that embedded
        :meth:`embedded_text` elsewhere). Returns how many chunks were written.
        """
        check_positive_int(batch_size, "batch_size")
        if isinstance(chunks, Chunk):
            raise ValueError("add expects an iterable of Chunk, not a single Chunk")
        if vectors is not None:
            chunks = list(chunks)
            vectors = np.asarray(vectors, dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(chunks):
                raise ValueError(
                    f"vectors must be an array of shape ({len(chunks)}, dim), got {vectors.shape}"
                )
        total = len(chunks) if isinstance(chunks, Sequence) else None
        limit = min(batch_size, self.client.get_max_batch_size())
        bar = None
        progress = show_progress if show_progress is not None else (total is None or total >= 256)
        if progress and (total is None or total > 0):
            from tqdm.auto import tqdm

            bar = tqdm(total=total, desc="indexing", unit="chunk")
        written = 0
        try:
            for batch in batches(chunks, limit):
                rows = vectors[written : written + len(batch)] if vectors is not None else None
                self._upsert(batch, rows)
                written += len(batch)
                if bar is not None:
                    bar.update(len(batch))
        finally:
            if bar is not None:
                bar.close()
        return written

    def _upsert(self, batch: list[Chunk], given: np.ndarray | None = None) -> None:
        unique: dict[str, int] = {}
        for i, c in enumerate(batch):
            if not isinstance(c, Chunk):
                raise ValueError(f"add: item {i} is {type(c).__name__}, expected Chunk")
            if not c.text.strip():
                raise ValueError(f"add: chunk {c.id} at {c.start}-{c.end} has no text to embed")
            unique[c.id] = i
        chunks = [batch[i] for i in unique.values()]
        if given is not None:
            vecs = given[list(unique.values())]
            if vecs.shape[1] != self.encoder.dim:
                raise ValueError(
                    f"vectors must have {self.encoder.dim} columns (the encoder's), got {vecs.shape[1]}"
                )
        else:
            vecs = self.encoder.encode([self.embedded_text(c) for c in chunks], show_progress=False)
        self._collections.upsert(chunks, vecs)

    def delete(self, doc_id: str | None = None, ids: Sequence[str] | None = None) -> int:
        """Delete every chunk of ``doc_id`` (or the given ``ids``); returns how many went."""
        if (doc_id is None) == (ids is None):
            raise ValueError("delete needs exactly one of doc_id=... or ids=[...]")
        if doc_id is not None and not isinstance(doc_id, str):
            raise ValueError(f"doc_id must be a str, got {type(doc_id).__name__}")
        before = self.count() + self.count(parents=True)
        self._collections.delete(doc_id, list(ids or []))
        return before - self.count() - self.count(parents=True)

    # -- reading -----------------------------------------------------------------------
    def search_many(
        self,
        queries: Sequence[str],
        k: int = 5,
        where: Mapping[str, Any] | None = None,
    ) -> list[list[tuple[Chunk, float]]]:
        """The ``k`` leaves most similar to each query as ``(chunk, cosine similarity)`` pairs.

        The queries are embedded in one batch; :meth:`search` asks one query. ``where`` is a
        Chroma metadata filter over the chunk's scalar metadata plus ``doc_id``, ``start``,
        ``end``, ``section`` (the last heading) and ``headings_path``, e.g.
        ``{"kind": "function"}`` or ``{"doc_id": {"$in": ["a", "b"]}}``.
        """
        queries = check_queries(queries)
        if not queries:
            return []
        vecs = self.encoder.encode(queries, show_progress=False)
        return self.search_vectors(vecs, k=k, where=where)

    def search_vectors(
        self,
        vectors: np.ndarray,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        parents: bool = False,
    ) -> list[list[tuple[Chunk, float]]]:
        """Nearest leaves (or parents) to already-embedded query vectors, one list per row."""
        check_positive_int(k, "k")
        vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if vectors.shape[1] != self.encoder.dim:
            raise ValueError(f"query vectors must have {self.encoder.dim} columns, got {vectors.shape[1]}")
        return self._collections.query(vectors, k, check_where(where), parents)

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        """The stored chunks (leaves or parents) with these ids, in the given order; unknown ids skipped."""
        if isinstance(ids, str):
            ids = [ids]
        ids = list(ids)
        found = self._collections.fetch(ids)
        return [found[i] for i in ids if i in found]

    def get_parent(self, chunk: Chunk) -> Chunk | None:
        """The chunk named by ``chunk.metadata["parent_id"]``, or None (no parent, or not stored)."""
        pid = chunk.metadata.get("parent_id")
        if not pid:
            return None
        got = self.get([str(pid)])
        return got[0] if got else None

    def iter_chunks(self, parents: bool = False, batch_size: int = 1000) -> Iterator[Chunk]:
        """Every stored leaf (or parent), in no particular order."""
        return self._collections.iter_chunks(parents, batch_size)

    def count(self, parents: bool = False) -> int:
        """Number of stored leaves (or parents with ``parents=True``)."""
        return self._collections.count(parents)

    def stats(self) -> dict[str, int]:
        """Sizes: vectors (leaves + parents), dim, bytes on disk, and raw float32 vector bytes."""
        leaves, parents = self.count(), self.count(parents=True)
        vectors = leaves + parents
        on_disk = 0
        if self.path is not None:
            on_disk = sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())
        return {
            "vectors": vectors,
            "leaves": leaves,
            "parents": parents,
            "dim": self.encoder.dim,
            "bytes_on_disk": on_disk,
            "raw_vector_bytes": 4 * vectors * self.encoder.dim,
        }

    # -- per document ------------------------------------------------------------------
    def replace_document(
        self, doc_id: str, chunks: Sequence[Chunk], show_progress: bool | None = False
    ) -> dict[str, int]:
        """Make ``chunks`` the whole of ``doc_id`` in the store: exactly its chunks, nothing stale.

        Chunks whose id is already stored are left alone (not re-embedded: ids hash the
        span and the strategy parameters, and the text is compared too), new ones are
        upserted, vanished ones deleted. Returns ``{"added", "unchanged", "deleted"}``.
        """
        plan = plan_replacement(self._collections, doc_id, chunks)
        self.add(plan.fresh, show_progress=show_progress)  # upsert first: a failure leaves the old chunks
        if plan.gone:
            self.delete(ids=plan.gone)
        return plan.counts()

    def delete_document(self, doc_id: str) -> int:
        """Delete every chunk (leaves and parents) of the document ``doc_id``; returns how many went."""
        return self.delete(doc_id=doc_id)

    def doc_ids(self) -> list[str]:
        """The documents with chunks in this store, sorted (for pruning documents gone from disk)."""
        return document_ids(self._collections)

    @contextlib.contextmanager
    def rebuild(self) -> Iterator[ChunkStore]:
        """Build a replacement of this collection beside it; swap it in only if the block succeeds.

        ``with store.rebuild() as staging: staging.add(chunks)`` fills a new generation of the
        collection; on success the store's alias is switched to it in one atomic update and
        the old generation is dropped (this store then serves the new chunks; a reader
        elsewhere follows the alias at its next query, :mod:`chunklab.retrieval.chroma.aliases`); on
        an exception the new generation is dropped and the old one is untouched. What
        ``chunklab index --clear`` needs so a failed run never leaves the store worse than
        before, and readers never see two chunker configurations in one answer.
        """
        staging = copy.copy(self)
        staging._collections = self._collections.staging()
        check_record(staging.collection, staging.encoder, staging.config, replace=True)
        try:
            yield staging
        except BaseException:
            staging._collections.drop(best_effort=True)  # the original error matters
            raise
        staging._collections.swap_into(self._collections)
