"""Where a store is, from one argument: a folder or a Chroma server URL, and opening the store there.

:func:`open_store` is what a command (``chunklab search STORE``, ``chunklab index --query``) calls
with the location it was given; :func:`is_url` tells a server from a folder.
"""

from __future__ import annotations

from pathlib import Path

from chunklab.retrieval.chroma.files import is_store
from chunklab.retrieval.chroma.lock import READ_WAIT
from chunklab.retrieval.chroma.store import ChunkStore

__all__ = ["is_url", "open_store"]


def is_url(location: str | Path | None) -> bool:
    """Whether a store location names a Chroma server (``http://`` or ``https://``) rather than a folder."""
    return bool(location) and str(location).lower().startswith(("http://", "https://"))


def open_store(
    location: str | Path | None,
    collection: str = "chunks",
    model: str | None = None,
    progress: bool = False,
    wait: float | None = READ_WAIT,
) -> ChunkStore:
    """The existing store at ``location``: a folder, a Chroma server URL, or None (the default folder).

    ``model`` None: the encoder the collection recorded (the static model for a store built
    with it); a folder that does not exist is an error naming it, and so is a folder that is
    not a store (nothing is written into it). A folder store is read under its shared lock,
    waiting at most ``wait`` seconds for a writer to finish (None: as long as it takes).
    """
    encoder = None
    if model is not None:
        from chunklab.embed import Encoder

        encoder = Encoder(model, show_progress=None if progress else False)
    if is_url(location):
        return ChunkStore(url=str(location), collection=collection, encoder=encoder, create=False)
    if location is not None and not is_store(location):
        what = "is not a Chroma store (no chroma.sqlite3)" if Path(location).is_dir() else "does not exist"
        raise ValueError(
            f"no store at {str(location)!r}: it {what}; give a folder written by chunklab index --store, "
            "or a Chroma server URL (http://host:port)"
        )
    return ChunkStore(path=location, collection=collection, encoder=encoder, create=False, wait=wait)
