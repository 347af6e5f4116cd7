"""A server collection Chroma can no longer read: recognised, and told in one line.

:func:`is_damage` recognises Chroma's errors for a collection whose segments cannot be loaded,
:func:`damaged` turns one into a :class:`DamagedCollectionError` naming the collection and the
way out (``--repair``: :mod:`chunklab.retrieval.chroma.mend`). Kept apart from the repair, which
opens the server, so that :mod:`chunklab.retrieval.chroma.server` can raise it.
"""

from __future__ import annotations

from chunklab.retrieval.chroma.files import DamagedStoreError

__all__ = ["DAMAGE_SIGNS", "DamagedCollectionError", "damaged", "is_damage"]

#: what Chroma's InternalError says when a collection's segments cannot be loaded or caught up
DAMAGE_SIGNS = (
    "hnsw segment",
    "hnsw index",
    "backfill",
    "compactor",
    "segment reader",
    "segment writer",
    "Error getting embedding",
    "Error finding id",
    "Failed to apply logs",
    "Error in compaction",
)


class DamagedCollectionError(DamagedStoreError):
    """A collection on a Chroma server that the server can no longer read (``--repair`` rebuilds it)."""

    def __init__(self, message: str, url: str = "", collection: str = "") -> None:
        super().__init__(message)
        self.url = url
        self.collection = collection


def is_damage(exc: BaseException) -> bool:
    """Whether ``exc`` is Chroma saying a collection's segments cannot be loaded (not a bad request)."""
    from chromadb.errors import InternalError

    return isinstance(exc, InternalError) and any(s.lower() in str(exc).lower() for s in DAMAGE_SIGNS)


def damaged(exc: BaseException, url: str, collection: str, paths: str = "") -> DamagedCollectionError:
    """The one-line error for the damaged ``collection`` on the server at ``url`` (``exc``: Chroma's).

    ``paths`` goes into the suggested command (where the documents must be indexed again).
    """
    if isinstance(exc, DamagedCollectionError) and exc.__cause__ is not None:
        exc = exc.__cause__  # Chroma's own words
    said = " ".join(str(exc).split()).rsplit(": ", 1)[-1][:200]
    command = (
        f"chunklab index {paths + ' ' if paths else ''}--server {url} --collection {collection} --repair"
    )
    return DamagedCollectionError(
        f"the collection {collection!r} on the Chroma server at {url} is damaged: the server cannot read "
        f"its vector index ({said}), as a server killed while writing it leaves it; `{command}` rebuilds "
        "it from the records the server still returns"
        + ("" if paths else " (give its documents as PATHS if none)"),
        url=url,
        collection=collection,
    )
