"""Which Chroma collection is live: a store's name is an alias, switched in one atomic update.

A store's collection ``name`` starts as a Chroma collection of that name. A rebuild
(``chunklab index --clear``, :meth:`~chunklab.retrieval.chroma.store.ChunkStore.rebuild`) fills a new
generation ``{name}.gen-XXXXXXXX`` (and its ``_parents``) beside it and, once it is complete,
points the alias record at it: the metadata of an empty collection ``{name}.live`` names the
live generation, and switching it is one metadata update (atomic on a folder store and on a
server alike). Only then is the old generation dropped. A reader resolves the alias once per
query, so every answer comes from one generation, and a generation only ever holds the
chunks of one chunker configuration (its record says which): search results are never a mix
of two configurations, and there is no moment when the name points at nothing.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.types import Documents, Embeddable, EmbeddingFunction

__all__ = ["ALIAS_SUFFIX", "GENERATION_INFIX", "LIVE_KEY", "alias_of", "live_name", "logical_names", "switch"]

#: the alias record of the store ``name`` is the (empty) collection ``name + ALIAS_SUFFIX``
ALIAS_SUFFIX = ".live"
#: a rebuilt generation of ``name`` is ``name + GENERATION_INFIX + 8 hex digits``
GENERATION_INFIX = ".gen-"
#: the alias record's metadata key naming the live collection
LIVE_KEY = "chunklab_live"
_OLD_STAGING = ".staging-"  # what rebuilds left behind before generations had this name


def new_generation(name: str) -> str:
    """A fresh generation name for the store ``name``."""
    return f"{name}{GENERATION_INFIX}{uuid.uuid4().hex[:8]}"


def alias_of(name: str) -> str:
    """The alias record's collection name for the store ``name``."""
    return name + ALIAS_SUFFIX


def live_name(client: ClientAPI, name: str) -> str:
    """The collection that holds the store ``name`` now: what its alias names, else ``name`` itself."""
    from chromadb.errors import NotFoundError

    try:
        record = client.get_collection(name=alias_of(name))
    except (NotFoundError, ValueError):  # never rebuilt: the collection is the name
        return name
    live = (record.metadata or {}).get(LIVE_KEY)
    return str(live) if live else name


def switch(client: ClientAPI, name: str, live: str, ef: EmbeddingFunction[Documents]) -> None:
    """Point the store ``name``'s alias at the collection ``live`` (one metadata update)."""
    from typing import cast

    # chromadb types the parameter as a function of any Embeddable; chunklab's embeds documents only
    function = cast("EmbeddingFunction[Embeddable]", ef)
    record = client.get_or_create_collection(
        name=alias_of(name), embedding_function=function, metadata={LIVE_KEY: live}
    )
    if (record.metadata or {}).get(LIVE_KEY) != live:
        record.modify(metadata={LIVE_KEY: live})


def logical_names(names: list[str]) -> list[str]:
    """Store names among Chroma collection ``names``: aliases by their store, generations hidden."""
    out = set()
    for n in names:
        if GENERATION_INFIX in n or _OLD_STAGING in n:
            continue
        out.add(n.removesuffix(ALIAS_SUFFIX))
    return sorted(out)
