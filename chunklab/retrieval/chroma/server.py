"""A store's collections on a Chroma server, every request retried per :mod:`chunklab.retrieval.chroma.retry`.

:class:`ServerCollections` is :class:`~chunklab.retrieval.chroma.backend.Collections` with each call
to the server wrapped in :func:`chunklab.retrieval.chroma.retry.call`: writes are upserts by content
id and deletes by id, so a request repeated after a lost answer changes nothing twice. A rebuild by another
process (``chunklab index --clear`` elsewhere) switches the store's alias
(:mod:`chunklab.retrieval.chroma.aliases`): a reader resolves it once per query and so follows it.
A collection the server can no longer read (a server killed while writing its vector index) is a
:class:`~chunklab.retrieval.chroma.damage.DamagedCollectionError` naming it and ``--repair``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from chunklab.chunk import Chunk
from chunklab.protocols import EncoderLike, Hit
from chunklab.retrieval.chroma import retry
from chunklab.retrieval.chroma.backend import (
    ChunklabEmbeddingFunction,
    Collections,
    collection_names,
    make_client,
)
from chunklab.retrieval.chroma.damage import damaged, is_damage
from chunklab.retrieval.chroma.records import encoder_for, recorded_encoder
from chunklab.retrieval.filters import chunk_from_stored

if TYPE_CHECKING:
    from pathlib import Path

    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import Where

__all__ = ["ServerCollections", "connect"]

T = TypeVar("T")


def connect(url: str, policy: retry.RetryPolicy) -> ClientAPI:
    """An ``HttpClient`` for ``url``, waiting (per ``policy``) for a server that is still starting."""
    try:
        return retry.call(lambda: make_client(None, url, False), policy, url, "connection")
    except retry.ServerUnavailableError as exc:
        raise retry.ServerUnavailableError(
            f"no Chroma server answers at {url} (waited {exc.waited_s:.0f} s); start one with `chroma run`",
            url=url,
            waited_s=exc.waited_s,
        ) from exc


class ServerCollections(Collections):
    """:class:`Collections` on a server, every request retried per ``policy``."""

    url = ""
    policy = retry.RetryPolicy()

    @classmethod
    def open_on(
        cls,
        client: ClientAPI,
        name: str,
        ef: ChunklabEmbeddingFunction,
        create: bool,
        url: str,
        policy: retry.RetryPolicy,
    ) -> ServerCollections | None:
        """:meth:`Collections.open` through the retry policy (None when missing and not created)."""
        opened = retry.call(lambda: Collections.open(client, name, ef, create), policy, url, "open")
        if opened is None:
            return None
        served = cls(client, opened.name, ef, opened.leaves, logical=name, follows=opened.follows)
        served.url, served.policy = url, policy
        return served

    def where(self) -> tuple[retry.RetryPolicy, str]:
        """The retry policy and the server's URL (what :func:`retry.call` takes after the request)."""
        return self.policy, self.url

    def _call(self, fn: Callable[[], T], what: str) -> T:
        """``fn()`` through the retry policy; a collection the server cannot read is one clear error."""
        try:
            return retry.call(fn, self.policy, self.url, what)
        except Exception as exc:
            if not is_damage(exc):
                raise
            raise damaged(exc, self.url, self.logical or self.name) from exc

    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Upsert ``chunks`` (repeated until the server answers, or the budget is spent)."""
        self._call(lambda: super(ServerCollections, self).upsert(chunks, vectors), "upsert")

    def delete(self, doc_id: str | None, ids: list[str]) -> None:
        """Delete by document or ids (idempotent, so safely repeated)."""
        self._call(lambda: super(ServerCollections, self).delete(doc_id, ids), "delete")

    def query(self, vectors: np.ndarray, k: int, where: Where | None, parents: bool) -> list[list[Hit]]:
        """The nearest chunks of the generation live now (the alias resolved, then the query)."""
        return self._call(lambda: super(ServerCollections, self).query(vectors, k, where, parents), "query")

    def refresh(self) -> bool:
        """Follow the store's alias (through the retry policy)."""
        return self._call(lambda: super(ServerCollections, self).refresh(), "open")

    def fetch(self, ids: list[str]) -> dict[str, Chunk]:
        """The stored chunks among ``ids``, by id."""
        return self._call(lambda: super(ServerCollections, self).fetch(ids), "get")

    def count(self, parents: bool = False) -> int:
        """Number of stored leaves (or parents)."""
        return self._call(lambda: super(ServerCollections, self).count(parents), "count")

    def parents(self, create: bool = False) -> Collection | None:
        """The parent collection (opened through the retry policy)."""
        return self._call(lambda: super(ServerCollections, self).parents(create), "open")

    def iter_chunks(self, parents: bool, batch_size: int) -> Iterator[Chunk]:
        """Every stored leaf (or parent), each page requested through the retry policy."""
        self.refresh()
        coll = self.parents() if parents else self.leaves
        if coll is None:
            return
        offset = 0
        while True:
            res = self._call(
                partial(coll.get, include=["documents", "metadatas"], limit=batch_size, offset=offset), "get"
            )
            if not res["ids"]:
                return
            for doc, meta in zip(res["documents"] or [], res["metadatas"] or [], strict=True):
                yield chunk_from_stored(doc, meta)
            offset += len(res["ids"])

    def staging(self) -> ServerCollections:
        """A new, empty generation on the same server, with the same retry policy."""
        staged = self._call(lambda: super(ServerCollections, self).staging(), "create")
        out = ServerCollections(self.client, staged.name, self.ef, staged.leaves)
        out.url, out.policy = self.url, self.policy
        return out

    def swap_into(self, target: Collections) -> None:
        """Switch ``target``'s alias to this generation, then drop the old one (retried)."""
        self._call(lambda: super(ServerCollections, self).swap_into(target), "swap")


def open_collections(
    url: str | None,
    path: Path | None,
    in_memory: bool,
    physical: str,
    encoder: EncoderLike | None,
    create: bool,
    policy: retry.RetryPolicy,
    name: str,
) -> tuple[EncoderLike, Collections]:
    """A store's encoder and collections: on the server at ``url`` (requests retried by ``policy``),
    else in the folder ``path`` or in memory.

    Without an ``encoder``, the model that filled the collection (else MiniLM). A collection
    that does not exist, and is not to be created, is a ValueError listing those that do.
    """
    client = connect(url, policy) if url is not None else make_client(path, None, in_memory)
    chosen = encoder if encoder is not None else encoder_for(recorded_encoder(client, physical))
    ef = ChunklabEmbeddingFunction(chosen)
    opened = (
        ServerCollections.open_on(client, physical, ef, create, url, policy)
        if url is not None
        else Collections.open(client, physical, ef, create)
    )
    if opened is None:
        existing = collection_names(client)
        raise ValueError(
            f"no collection {name!r} in the store at {url or path}; it holds "
            + (", ".join(repr(n) for n in existing) if existing else "no collections")
        )
    return chosen, opened
