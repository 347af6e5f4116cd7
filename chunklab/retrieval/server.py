"""A store's collections on a Chroma server, every request retried per :mod:`chunklab.retrieval.retry`.

:class:`ServerCollections` is :class:`~chunklab.retrieval.backend.Collections` with each call
to the server wrapped in :func:`chunklab.retrieval.retry.call`: writes are upserts by content
id and deletes by id, so a request repeated after a lost answer changes nothing twice. A
collection swapped in by another process (``chunklab index --clear`` elsewhere) is found again
by name: a reader holding the old one reopens it instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from chunklab.chunk import Chunk
from chunklab.protocols import EncoderLike, Hit
from chunklab.retrieval import retry
from chunklab.retrieval.backend import (
    ChunklabEmbeddingFunction,
    Collections,
    _open_collection,
    collection_names,
    encoder_for,
    make_client,
    recorded_encoder,
)
from chunklab.retrieval.filters import chunk_from_stored

try:
    from chromadb.errors import NotFoundError
except ImportError as exc:  # pragma: no cover - chromadb is in requirements.txt
    raise ImportError(
        "chunklab.retrieval.server needs chromadb: install the pinned requirements.txt"
    ) from exc

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
        leaves = retry.call(lambda: _open_collection(client, name, ef, create), policy, url, "open")
        if leaves is None:
            return None
        opened = cls(client, name, ef, leaves)
        opened.url, opened.policy = url, policy
        return opened

    def _call(self, fn: Callable[[], T], what: str) -> T:
        return retry.call(fn, self.policy, self.url, what)

    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Upsert ``chunks`` (repeated until the server answers, or the budget is spent)."""
        self._call(lambda: super(ServerCollections, self).upsert(chunks, vectors), "upsert")

    def delete(self, doc_id: str | None, ids: list[str]) -> None:
        """Delete by document or ids (idempotent, so safely repeated)."""
        self._call(lambda: super(ServerCollections, self).delete(doc_id, ids), "delete")

    def query(self, vectors: np.ndarray, k: int, where: Where | None, parents: bool) -> list[list[Hit]]:
        """The nearest chunks; a collection replaced meanwhile by a rebuild is reopened by name."""

        def ask() -> list[list[Hit]]:
            return super(ServerCollections, self).query(vectors, k, where, parents)

        try:
            return self._call(ask, "query")
        except NotFoundError:
            self._find_again()
            return self._call(ask, "query")

    def _find_again(self) -> None:
        """Reopen the collections by name (never creating one: a swap may be halfway through)."""
        import time

        for wait in [*self.policy.delays(), None]:
            leaves = self._call(lambda: _open_collection(self.client, self.name, self.ef, False), "open")
            if leaves is not None:
                self.leaves, self._parents = leaves, None
                return
            if wait is not None:
                time.sleep(wait)
        raise ValueError(f"collection {self.name!r} vanished from {self.url} and did not come back")

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
        """A new, empty sibling set on the same server, with the same retry policy."""
        import uuid

        staged = ServerCollections.open_on(
            self.client, f"{self.name}.staging-{uuid.uuid4().hex[:8]}", self.ef, True, self.url, self.policy
        )
        assert staged is not None  # created
        return staged


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
