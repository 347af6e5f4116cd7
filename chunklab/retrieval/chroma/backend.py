"""What :class:`~chunklab.retrieval.chroma.store.ChunkStore` needs from Chroma: clients, collections, records.

A store lives in a local folder (``PersistentClient``), in memory (``EphemeralClient``) or on a
Chroma server (``HttpClient``, e.g. one started with ``chroma run --path DIR --port 8000``);
the store itself never knows which. Each collection records in its Chroma metadata which
encoder filled it and, when given, the chunker configuration, so a later writer cannot mix
another model's vectors or another chunking into it by accident.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import urlparse

import numpy as np

from chunklab.chunk import Chunk, is_leaf
from chunklab.embed import DEFAULT_MODEL, Encoder, get_encoder
from chunklab.protocols import EncoderLike, Hit
from chunklab.retrieval.chroma import aliases
from chunklab.retrieval.chroma.retry import is_connection_error
from chunklab.retrieval.filters import chunk_from_stored, encode_metadata

try:  # registration makes reopened collections find this embedding function by name
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
    from chromadb.errors import NotFoundError
    from chromadb.utils.embedding_functions import register_embedding_function
except ImportError as exc:  # pragma: no cover - chromadb is in requirements.txt
    raise ImportError(
        "chunklab.retrieval.chroma.store needs chromadb: install the pinned requirements.txt"
    ) from exc

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.collection_configuration import CreateCollectionConfiguration
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import Embeddable, GetResult, Include, Where

__all__ = [
    "EF_NAME",
    "ChunklabEmbeddingFunction",
    "Collections",
    "make_client",
    "parse_url",
]

EF_NAME = "chunklab-minilm"  # the registered name (kept from the MiniLM-only days: old stores reopen)
PARENTS_SUFFIX = "_parents"
# The vector index every collection is made with. HNSW search is approximate, and Chroma's
# graph is not the same from one build of the same records to the next: at its default breadth
# (ef_search 100) a search of ~500 chunks missed a true top-5 neighbour in about 1 build in 10,
# a different one each time (issue 38: chapter 6's bootstrap interval changed between two runs
# of the same code). At 1,000 the search of a store of up to 1,000 chunks reaches every chunk,
# so every build gives the same answers, and larger stores miss less; a query of 20,000 chunks
# took 3.7 ms instead of 1.8 ms here.
SEARCH_BREADTH = 1000
INDEX_CONFIGURATION: CreateCollectionConfiguration = {
    "hnsw": {"space": "cosine", "ef_search": SEARCH_BREADTH}
}
T = TypeVar("T")


@register_embedding_function
class ChunklabEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function backed by :class:`chunklab.embed.Encoder` (local, cached)."""

    def __init__(
        self, encoder: EncoderLike | None = None, model_path: str | None = None, model: str = DEFAULT_MODEL
    ) -> None:
        self._encoder = encoder
        if encoder is not None:
            custom = getattr(encoder, "_model_path", None)
            model_path = str(custom) if custom is not None else None
            model = getattr(encoder, "model_kind", DEFAULT_MODEL)
        self._model_path = model_path
        self._model = model

    @property
    def encoder(self) -> EncoderLike:
        """The encoder (the shared default one unless a model path was configured)."""
        if self._encoder is None:
            if self._model_path is None:
                self._encoder = get_encoder(self._model)
            else:
                self._encoder = Encoder(self._model, model_path=self._model_path)
        return self._encoder

    def __call__(self, input: Documents) -> Embeddings:
        vecs = self.encoder.encode(list(input), show_progress=False)
        return [v for v in vecs]

    @staticmethod
    def name() -> str:
        return EF_NAME

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"

    def supported_spaces(self) -> list[str]:  # type: ignore[override]
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        return {"model": self._model, "model_path": self._model_path}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ChunklabEmbeddingFunction:
        model = config.get("model")
        return ChunklabEmbeddingFunction(
            model_path=config.get("model_path"), model="static" if model == "static" else "minilm"
        )

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        return None


def parse_url(url: str) -> tuple[str, int, bool]:
    """``(host, port, ssl)`` of a Chroma server URL such as ``http://127.0.0.1:8000``."""
    if not isinstance(url, str) or "://" not in url:
        raise ValueError(f"url must look like http://HOST:PORT, got {url!r}")
    parts = urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"url must look like http://HOST:PORT, got {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 8000)
    except ValueError as exc:
        raise ValueError(f"url has a bad port: {url!r}") from exc
    return parts.hostname, port, parts.scheme == "https"


def make_client(path: Path | None, url: str | None, in_memory: bool) -> ClientAPI:
    """The Chroma client for a folder, a server URL or memory (telemetry off)."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if in_memory:
        return chromadb.EphemeralClient(settings=settings)
    if url is not None:
        host, port, ssl = parse_url(url)
        try:
            return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
        except (ValueError, OSError) as exc:  # chromadb raises ValueError when the server is unreachable
            raise ValueError(
                f"no Chroma server answers at {url} ({exc}); start one with `chroma run`"
            ) from exc
    return chromadb.PersistentClient(path=str(path), settings=settings)


class Collections:
    """A store's Chroma collections: leaves under ``name``, parents (when any) under ``{name}_parents``.

    The one owner of the client, the embedding function and both collections, so the store
    never opens, drops or renames a Chroma collection itself. ``logical`` is the store's name,
    an alias (:mod:`chunklab.retrieval.chroma.aliases`) naming the live generation ``name``; a set
    opened for reading (``follows``) resolves it again at every read (:meth:`refresh`), a
    writer's stays on the generation it opened (it never writes one configuration into
    another's generation). :meth:`staging` gives a new generation that :meth:`swap_into` makes
    live (a rebuild that fails leaves this one alone).
    """

    def __init__(
        self,
        client: ClientAPI,
        name: str,
        ef: ChunklabEmbeddingFunction,
        leaves: Collection,
        logical: str | None = None,
        follows: bool = False,
    ) -> None:
        self.client = client
        self.name = name
        self.ef = ef
        self.leaves = leaves
        self._parents: Collection | None = None
        self.logical = logical  # None: a generation being built
        self.follows = follows and logical is not None

    @classmethod
    def open(
        cls, client: ClientAPI, name: str, ef: ChunklabEmbeddingFunction, create: bool
    ) -> Collections | None:
        """The live collections of the store ``name`` (created when ``create``; None when missing)."""
        live = aliases.live_name(client, name)
        leaves = _open_collection(client, live, ef, create)
        return cls(client, live, ef, leaves, logical=name, follows=not create) if leaves is not None else None

    def refresh(self) -> bool:
        """Follow the alias to the live generation (once per read, when ``follows``); True when it moved."""
        if not self.follows or self.logical is None:
            return False
        live = aliases.live_name(self.client, self.logical)
        if live == self.name:
            return False
        leaves = _open_collection(self.client, live, self.ef, False)
        if leaves is None:  # never happens: an alias is switched only to a complete generation
            return False
        self.name, self.leaves, self._parents = live, leaves, None
        return True

    def parents(self, create: bool = False) -> Collection | None:
        """The parent collection (created on demand with ``create``; None while it does not exist)."""
        if self._parents is None:
            self._parents = _open_collection(self.client, self.name + PARENTS_SUFFIX, self.ef, create)
        return self._parents

    def both(self) -> list[Collection]:
        """The leaf collection and, when it exists, the parent collection."""
        parents = self.parents()
        return [self.leaves] if parents is None else [self.leaves, parents]

    def reset(self, client: ClientAPI | None = None) -> None:
        """Open the collections afresh (through ``client`` when given: a reconnected one)."""
        if client is not None:
            self.client = client
        if self.logical is not None:
            self.name = aliases.live_name(self.client, self.logical)
        self._parents = None
        leaves = _open_collection(self.client, self.name, self.ef, create=True)
        assert leaves is not None  # created
        self.leaves = leaves

    def drop(self, best_effort: bool = False, alias: bool = False) -> None:
        """Delete both collections (and with ``alias`` the alias record); missing ones are fine.

        ``best_effort`` swallows every error.
        """
        errors: tuple[type[BaseException], ...] = (Exception,) if best_effort else (NotFoundError, ValueError)
        extra = [aliases.alias_of(self.logical)] if alias and self.logical is not None else []
        for name in (self.name, self.name + PARENTS_SUFFIX, *extra):
            with contextlib.suppress(*errors):
                self.client.delete_collection(name)

    # -- chunks in, chunks out -----------------------------------------------------------
    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Write ``chunks`` with their ``vectors`` (rows aligned): leaves here, parents beside."""
        for parents in (False, True):
            rows = [i for i, c in enumerate(chunks) if is_leaf(c) != parents]
            if not rows:
                continue
            coll = self.parents(create=True) if parents else self.leaves
            assert coll is not None  # created
            coll.upsert(
                ids=[chunks[i].id for i in rows],
                embeddings=vectors[rows],
                documents=[chunks[i].text for i in rows],
                metadatas=[encode_metadata(chunks[i]) for i in rows],
            )

    def delete(self, doc_id: str | None, ids: list[str]) -> None:
        """Delete the chunks of ``doc_id`` (when given) or those with ``ids``, leaves and parents."""
        for coll in self.both():
            if doc_id is not None:
                coll.delete(where={"doc_id": doc_id})
            elif ids:
                coll.delete(ids=ids)

    def query(self, vectors: np.ndarray, k: int, where: Where | None, parents: bool) -> list[list[Hit]]:
        """The ``k`` nearest leaves (or parents) to each row of ``vectors``, as ``(chunk, cosine)``.

        The alias is resolved first, so the answer comes from the generation live now; one
        dropped by a rebuild between that and the query is followed to its successor.
        """
        self.refresh()
        try:
            return self._query(vectors, k, where, parents)
        except Exception as exc:
            if is_connection_error(exc) or not self.refresh():  # not a generation that went away
                raise
            return self._query(vectors, k, where, parents)

    def _query(self, vectors: np.ndarray, k: int, where: Where | None, parents: bool) -> list[list[Hit]]:
        coll = self.parents() if parents else self.leaves
        if coll is None:
            return [[] for _ in range(len(vectors))]
        try:
            res = coll.query(
                query_embeddings=vectors,
                n_results=k,
                where=where,
                include=["documents", "metadatas", "distances"],
            )
        except ValueError as exc:
            raise ValueError(f"search failed (check the where filter {where!r}): {exc}") from exc
        return [
            [
                (chunk_from_stored(doc, meta), float(1.0 - dist))
                for doc, meta, dist in zip(docs, metas, dists, strict=True)
            ]
            for docs, metas, dists in zip(
                res["documents"] or [], res["metadatas"] or [], res["distances"] or [], strict=True
            )
        ]

    def fetch(self, ids: list[str]) -> dict[str, Chunk]:
        """The stored chunks (leaves or parents) among ``ids``, by id (unknown ids left out)."""
        self.refresh()
        found: dict[str, Chunk] = {}
        for coll in self.both():
            want = [i for i in ids if i not in found]
            if not want:
                continue
            res = coll.get(ids=want, include=["documents", "metadatas"])
            for cid, doc, meta in zip(
                res["ids"], res["documents"] or [], res["metadatas"] or [], strict=True
            ):
                found[cid] = chunk_from_stored(doc, meta)
        return found

    def iter_chunks(self, parents: bool, batch_size: int) -> Iterator[Chunk]:
        """Every stored leaf (or parent), ``batch_size`` records per request."""
        self.refresh()
        coll = self.parents() if parents else self.leaves
        if coll is None:
            return
        for res in pages(coll, ["documents", "metadatas"], batch_size):
            for doc, meta in zip(res["documents"] or [], res["metadatas"] or [], strict=True):
                yield chunk_from_stored(doc, meta)

    def count(self, parents: bool = False) -> int:
        """Number of stored leaves (or parents)."""
        self.refresh()
        coll = self.parents() if parents else self.leaves
        return int(coll.count()) if coll is not None else 0

    # -- rebuilding beside ---------------------------------------------------------------
    def staging(self) -> Collections:
        """A new, empty generation ``{store}.gen-XXXXXXXX`` on the same client (no alias followed)."""
        name = aliases.new_generation(self.logical or self.name)
        leaves = _open_collection(self.client, name, self.ef, True)
        assert leaves is not None  # created
        return type(self)(self.client, name, self.ef, leaves)

    def swap_into(self, target: Collections) -> None:
        """Make these ``target``'s live collections: switch its alias to them, then drop the old ones.

        Readers see the old generation or this one, whole, never both and never neither.
        """
        store = target.logical or target.name
        aliases.switch(self.client, store, self.name, self.ef)
        old = Collections(target.client, target.name, target.ef, target.leaves)
        target.name, target.leaves, target._parents, target.logical = self.name, self.leaves, None, store
        old.drop()


def _open_collection(
    client: ClientAPI, name: str, ef: ChunklabEmbeddingFunction, create: bool
) -> Collection | None:
    # chromadb types the parameter as a function of any Embeddable; this one embeds documents only
    function = cast("EmbeddingFunction[Embeddable]", ef)
    if create:
        return client.get_or_create_collection(
            name=name, embedding_function=function, configuration=INDEX_CONFIGURATION
        )
    try:
        return client.get_collection(name=name, embedding_function=function)
    except (NotFoundError, ValueError):  # chromadb raises one or the other depending on the client
        return None


def collection_names(client: ClientAPI) -> list[str]:
    """Names of the stores in ``client`` (parent collections and rebuilt generations left out), sorted."""
    names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
    return aliases.logical_names([n for n in names if not n.endswith(PARENTS_SUFFIX)])


def pages(collection: Collection, include: Include, batch_size: int = 1000) -> Iterator[GetResult]:
    """``collection.get`` results, ``batch_size`` records at a time, until none are left."""
    offset = 0
    while True:
        res = collection.get(include=include, limit=batch_size, offset=offset)
        if not res["ids"]:
            return
        yield res
        offset += len(res["ids"])


def batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of at most ``size`` (the last may be shorter)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
