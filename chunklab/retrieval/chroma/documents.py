"""Per-document updates of a store's collections: which chunks to write, which to delete, which documents.

Re-indexing a changed file must leave exactly its new chunks in the store: new ones
upserted, vanished ones deleted, unchanged ones not embedded again. "Unchanged" has one rule,
here: the same :func:`~chunklab.retrieval.filters.fingerprint` (of the chunk's id, text and
canonical metadata JSON),
which the ingest sinks keep for every stored chunk and :func:`plan_replacement` compares for
:meth:`chunklab.retrieval.chroma.store.ChunkStore.replace_document`, which then embeds and writes only
the fresh ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chunklab.chunk import Chunk
from chunklab.retrieval.chroma.backend import Collections, pages
from chunklab.retrieval.filters import chunk_fingerprint, chunk_from_stored, fingerprint, metadata_json

__all__ = ["Replacement", "document_ids", "plan_replacement"]


@dataclass(frozen=True)
class Replacement:
    """What replacing one document's chunks takes: ``fresh`` to upsert, ``gone`` ids to delete."""

    fresh: list[Chunk]
    gone: list[str]
    unchanged: int

    def counts(self) -> dict[str, int]:
        """``{"added", "unchanged", "deleted"}``, as :meth:`ChunkStore.replace_document` reports."""
        return {"added": len(self.fresh), "unchanged": self.unchanged, "deleted": len(self.gone)}


def plan_replacement(collections: Collections, doc_id: str, chunks: Sequence[Chunk]) -> Replacement:
    """Compare ``chunks`` (the whole of ``doc_id``) with what ``collections`` hold for that document.

    A stored chunk with the same :func:`~chunklab.retrieval.filters.fingerprint` (id, text and
    metadata) is unchanged; every other given chunk is fresh; stored ids not among the given
    chunks are gone. Refuses a chunk of another document (or anything not a Chunk) before reading the store.
    """
    if not isinstance(doc_id, str) or not doc_id:
        raise ValueError(f"doc_id must be a non-empty str, got {doc_id!r}")
    chunks = list(chunks)
    for i, c in enumerate(chunks):
        if not isinstance(c, Chunk):
            raise ValueError(f"replace_document: item {i} is {type(c).__name__}, expected Chunk")
        if c.doc_id != doc_id:
            raise ValueError(f"replace_document({doc_id!r}): chunk {i} belongs to {c.doc_id!r}")
    stored: dict[str, int] = {}
    for coll in collections.both():
        res = coll.get(where={"doc_id": doc_id}, include=["documents", "metadatas"])
        for cid, doc, meta in zip(res["ids"], res["documents"] or [], res["metadatas"] or [], strict=True):
            stored[cid] = fingerprint(cid, doc or "", metadata_json(chunk_from_stored(doc, meta).metadata))
    wanted = {c.id: c for c in chunks}
    fresh = [c for cid, c in wanted.items() if stored.get(cid) != chunk_fingerprint(c)]
    gone = [cid for cid in stored if cid not in wanted]
    return Replacement(fresh, gone, len(wanted) - len(fresh))


def document_ids(collections: Collections) -> list[str]:
    """The documents with chunks in ``collections`` (leaves or parents), sorted."""
    found: set[str] = set()
    for coll in collections.both():
        for res in pages(coll, ["metadatas"], batch_size=5000):
            found.update(str(meta.get("doc_id")) for meta in res["metadatas"] or [])
    return sorted(found)
