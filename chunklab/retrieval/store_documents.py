"""Per-document updates for :class:`chunklab.retrieval.store.ChunkStore`: replace a document's chunks, delete it, list them.

Re-indexing a changed file must leave exactly its new chunks in the store: new ones
upserted, vanished ones deleted, unchanged ones (same id, text and metadata) not embedded
again. Kept apart from the store's core so each file does one job.
"""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from chromadb.errors import NotFoundError

from chunklab.chunk import Chunk
from chunklab.retrieval.backend import PARENTS_SUFFIX, check_record, pages
from chunklab.retrieval.filters import META_KEY, encode_metadata

__all__ = ["DocumentUpdates"]


class DocumentUpdates:
    """Mixed into ChunkStore, whose ``collection``, ``_parents_collection``, ``add`` and ``delete`` it uses."""

    collection: Any

    @contextlib.contextmanager
    def rebuild(self) -> Iterator[Any]:
        """Build a replacement of this collection beside it; swap it in only if the block succeeds.

        ``with store.rebuild() as staging: staging.add(chunks)`` fills a sibling collection;
        on success the old collection is dropped and the staging one takes its name (this
        store then serves the new chunks); on an exception the staging collection is
        dropped and the old one is untouched. What ``chunklab index --clear`` needs so a
        failed run never leaves the store worse than before.
        """
        staging = copy.copy(self)
        staging._physical = f"{self._physical}.staging-{uuid.uuid4().hex[:8]}"
        staging._parents = None
        staging.collection = staging._open(staging._physical, create=True)
        check_record(staging.collection, staging.encoder, staging.config, replace=True)
        try:
            yield staging
        except BaseException:
            for name in (staging._physical, staging._physical + PARENTS_SUFFIX):
                with contextlib.suppress(Exception):  # best effort: the original error matters
                    self.client.delete_collection(name)
            raise
        parents = staging._parents_collection()
        for name in (self._physical, self._physical + PARENTS_SUFFIX):
            with contextlib.suppress(NotFoundError, ValueError):
                self.client.delete_collection(name)
        staging.collection.modify(name=self._physical)
        if parents is not None:
            parents.modify(name=self._physical + PARENTS_SUFFIX)
        self._parents = None
        self.collection = self._open(self._physical, create=True)

    def delete_document(self, doc_id: str) -> int:
        """Delete every chunk (leaves and parents) of the document ``doc_id``; returns how many went."""
        return self.delete(doc_id=doc_id)

    def doc_ids(self) -> list[str]:
        """The documents with chunks in this store, sorted (for pruning documents gone from disk)."""
        found: set[str] = set()
        for coll in (self.collection, self._parents_collection()):
            if coll is not None:
                for res in pages(coll, ["metadatas"], batch_size=5000):
                    found.update(str(meta.get("doc_id")) for meta in res["metadatas"])
        return sorted(found)

    def replace_document(
        self, doc_id: str, chunks: Sequence[Chunk], show_progress: bool | None = False
    ) -> dict[str, int]:
        """Make ``chunks`` the whole of ``doc_id`` in the store: exactly its chunks, nothing stale.

        Chunks whose id is already stored are left alone (not re-embedded: ids hash the
        span and the strategy parameters, and the text is compared too), new ones are
        upserted, vanished ones deleted. Returns ``{"added", "unchanged", "deleted"}``.
        """
        if not isinstance(doc_id, str) or not doc_id:
            raise ValueError(f"doc_id must be a non-empty str, got {doc_id!r}")
        chunks = list(chunks)
        for i, c in enumerate(chunks):
            if not isinstance(c, Chunk):
                raise ValueError(f"replace_document: item {i} is {type(c).__name__}, expected Chunk")
            if c.doc_id != doc_id:
                raise ValueError(f"replace_document({doc_id!r}): chunk {i} belongs to {c.doc_id!r}")
        stored: dict[str, tuple[str, Any]] = {}
        for coll in (self.collection, self._parents_collection()):
            if coll is not None:
                res = coll.get(where={"doc_id": doc_id}, include=["documents", "metadatas"])
                for cid, doc, meta in zip(res["ids"], res["documents"], res["metadatas"], strict=True):
                    stored[cid] = (doc, meta.get(META_KEY))
        wanted = {c.id: c for c in chunks}
        fresh = [c for cid, c in wanted.items() if stored.get(cid) != (c.text, encode_metadata(c)[META_KEY])]
        gone = [cid for cid in stored if cid not in wanted]
        self.add(fresh, show_progress=show_progress)  # upsert first: a failure leaves the old chunks
        if gone:
            self.delete(ids=gone)
        return {"added": len(fresh), "unchanged": len(wanted) - len(fresh), "deleted": len(gone)}
