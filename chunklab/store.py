"""A Chroma-backed index of chunks: idempotent upsert, metadata filters, parent lookup, persistence.

Vectors come from chunklab's own :class:`~chunklab.embed.Encoder`, registered with Chroma as
the embedding function ``chunklab-minilm`` so a collection reopened in another process
(even by plain ``chromadb``, once ``chunklab.store`` is imported) answers text queries with
the same model. Chroma's default embedding function downloads a model and is never used.

Leaves go to the collection ``collection``; chunks that have children (their metadata lists
``child_ids``, as :mod:`chunklab.hierarchical` writes) go to the sibling collection
``{collection}_parents``, so leaf search never returns a parent and
:meth:`ChunkStore.get_parent` still finds it.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chunklab.chunk import Chunk, embedding_text
from chunklab.embed import DEFAULT_MODEL_NAME, Encoder, chunklab_dir, get_encoder

__all__ = ["ChunkStore", "ChunklabEmbeddingFunction", "decode_metadata", "encode_metadata"]

EF_NAME = "chunklab-minilm"
PARENTS_SUFFIX = "_parents"
META_KEY = "chunklab_meta"  # the whole metadata dict, JSON: restored exactly on the way out
_RESERVED = {"doc_id", "start", "end", META_KEY, "section", "headings_path"}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,470}[A-Za-z0-9]$")
_INT64 = 2**63 - 1

try:  # registration makes reopened collections find this embedding function by name
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
    from chromadb.utils.embedding_functions import register_embedding_function
except ImportError as exc:  # pragma: no cover - chromadb is in requirements.txt
    raise ImportError("chunklab.store needs chromadb: install the pinned requirements.txt") from exc


@register_embedding_function
class ChunklabEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function backed by :class:`chunklab.embed.Encoder` (local, cached)."""

    def __init__(self, encoder: Encoder | None = None, model_path: str | None = None) -> None:
        self._encoder = encoder
        if encoder is not None:
            custom = getattr(encoder, "_model_path", None)
            model_path = str(custom) if custom is not None else None
        self._model_path = model_path

    @property
    def encoder(self) -> Encoder:
        """The encoder (the shared default one unless a model path was configured)."""
        if self._encoder is None:
            self._encoder = get_encoder() if self._model_path is None else Encoder(self._model_path)
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
        return {"model": DEFAULT_MODEL_NAME, "model_path": self._model_path}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ChunklabEmbeddingFunction:
        return ChunklabEmbeddingFunction(model_path=config.get("model_path"))

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        return None


class ChunkStore:
    """Chunks in a Chroma collection, searched by cosine similarity of MiniLM vectors.

    ``path`` defaults to ``<project root>/.chunklab/chroma``; ``in_memory=True`` uses
    Chroma's in-process client instead, with a collection private to this object.
    ``embed_context`` embeds :func:`chunklab.chunk.embedding_text` (title, section path,
    table header in front of the text) rather than the bare text; the stored document is
    always ``chunk.text``.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        collection: str = "chunks",
        encoder: Encoder | None = None,
        in_memory: bool = False,
        embed_context: bool = True,
    ) -> None:
        import chromadb
        from chromadb.config import Settings

        if not isinstance(collection, str) or not _NAME_RE.match(collection) or ".." in collection:
            raise ValueError(
                "collection must be 3-472 characters of letters, digits, '.', '_' or '-', starting and "
                f"ending with a letter or digit; got {collection!r}"
            )
        self.encoder = encoder if encoder is not None else get_encoder()
        self.embed_context = bool(embed_context)
        self.in_memory = bool(in_memory)
        self.name = collection
        self._ef = ChunklabEmbeddingFunction(self.encoder)
        settings = Settings(anonymized_telemetry=False)
        if in_memory:
            if path is not None:
                raise ValueError("in_memory=True stores nothing on disk: leave path as None")
            self.path: Path | None = None
            self.client = chromadb.EphemeralClient(settings=settings)
            # Chroma shares one in-memory system per process: keep this store's data private.
            self._physical = f"{collection}-{uuid.uuid4().hex[:12]}"
        else:
            self.path = Path(path) if path is not None else chunklab_dir() / "chroma"
            if self.path.exists() and not self.path.is_dir():
                raise ValueError(f"store path {self.path} exists and is not a directory")
            self.path.mkdir(parents=True, exist_ok=True)
            self.client = chromadb.PersistentClient(path=str(self.path), settings=settings)
            self._physical = collection
        self.collection = self._open(self._physical, create=True)
        self._parents: Any = None

    def __repr__(self) -> str:
        where = "memory" if self.in_memory else str(self.path)
        return f"ChunkStore({where!r}, collection={self.name!r}, count={self.count()})"

    # -- collections -------------------------------------------------------------------
    def _open(self, name: str, create: bool) -> Any:
        if create:
            return self.client.get_or_create_collection(
                name=name,
                embedding_function=self._ef,
                configuration={"hnsw": {"space": "cosine"}},
            )
        try:
            return self.client.get_collection(name=name, embedding_function=self._ef)
        except Exception:  # chromadb raises NotFoundError / ValueError depending on version
            return None

    def _parents_collection(self, create: bool = False) -> Any:
        if self._parents is None:
            self._parents = self._open(self._physical + PARENTS_SUFFIX, create)
        return self._parents

    def clear(self) -> None:
        """Remove every chunk (leaves and parents), keeping the collection and its settings.

        Useful before re-indexing with different chunker parameters: their chunks have other
        ids, so an upsert alone would keep the old ones next to the new.
        """
        for name in (self._physical, self._physical + PARENTS_SUFFIX):
            try:
                self.client.delete_collection(name)
            except Exception:  # not created yet
                pass
        self._parents = None
        self.collection = self._open(self._physical, create=True)

    def close(self) -> None:
        """Drop an in-memory store's collections (a persistent store needs no closing)."""
        if self.in_memory:
            for name in (self._physical, self._physical + PARENTS_SUFFIX):
                try:
                    self.client.delete_collection(name)
                except Exception:
                    pass

    # -- writing -----------------------------------------------------------------------
    def add(
        self,
        chunks: Iterable[Chunk],
        batch_size: int = 512,
        show_progress: bool | None = None,
    ) -> int:
        """Upsert ``chunks`` by ``chunk.id`` (re-adding the same chunks changes nothing).

        Chunks are embedded and written in batches of ``batch_size`` so memory stays flat
        for large corpora; a progress bar shows for 256 chunks or more. Returns how many
        chunks were written.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if isinstance(chunks, Chunk):
            raise ValueError("add expects an iterable of Chunk, not a single Chunk")
        total = len(chunks) if isinstance(chunks, Sequence) else None
        limit = min(batch_size, self.client.get_max_batch_size())
        bar = None
        progress = show_progress if show_progress is not None else (total is None or total >= 256)
        if progress and (total is None or total > 0):
            from tqdm.auto import tqdm

            bar = tqdm(total=total, desc="indexing", unit="chunk")
        written = 0
        try:
            for batch in _batches(chunks, limit):
                self._upsert(batch)
                written += len(batch)
                if bar is not None:
                    bar.update(len(batch))
        finally:
            if bar is not None:
                bar.close()
        return written

    def _upsert(self, batch: list[Chunk]) -> None:
        unique: dict[str, Chunk] = {}
        for i, c in enumerate(batch):
            if not isinstance(c, Chunk):
                raise ValueError(f"add: item {i} is {type(c).__name__}, expected Chunk")
            if not c.text.strip():
                raise ValueError(f"add: chunk {c.id} at {c.start}-{c.end} has no text to embed")
            unique[c.id] = c
        chunks = list(unique.values())
        texts = [embedding_text(c) if self.embed_context else c.text for c in chunks]
        vecs = self.encoder.encode(texts, show_progress=False)
        leaves = [i for i, c in enumerate(chunks) if not c.metadata.get("child_ids")]
        parents = [i for i, c in enumerate(chunks) if c.metadata.get("child_ids")]
        for idx, coll in ((leaves, self.collection), (parents, None)):
            if not idx:
                continue
            if coll is None:
                coll = self._parents_collection(create=True)
            coll.upsert(
                ids=[chunks[i].id for i in idx],
                embeddings=vecs[idx],
                documents=[chunks[i].text for i in idx],
                metadatas=[encode_metadata(chunks[i]) for i in idx],
            )

    def delete(self, doc_id: str | None = None, ids: Sequence[str] | None = None) -> int:
        """Delete every chunk of ``doc_id`` (or the given ``ids``); returns how many went."""
        if (doc_id is None) == (ids is None):
            raise ValueError("delete needs exactly one of doc_id=... or ids=[...]")
        before = self.count() + self.count(parents=True)
        for coll in (self.collection, self._parents_collection()):
            if coll is None:
                continue
            if doc_id is not None:
                if not isinstance(doc_id, str):
                    raise ValueError(f"doc_id must be a str, got {type(doc_id).__name__}")
                coll.delete(where={"doc_id": doc_id})
            elif ids:
                coll.delete(ids=list(ids))
        return before - self.count() - self.count(parents=True)

    # -- reading -----------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
    ) -> list[tuple[Chunk, float]]:
        """The ``k`` leaves most similar to ``query`` as ``(chunk, cosine similarity)`` pairs.

        ``where`` is a Chroma metadata filter over the chunk's scalar metadata plus
        ``doc_id``, ``start``, ``end``, ``section`` (the last heading) and ``headings_path``,
        e.g. ``{"kind": "function"}`` or ``{"doc_id": {"$in": ["a", "b"]}}``.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        return self.search_many([query], k=k, where=where)[0]

    def search_many(
        self,
        queries: Sequence[str],
        k: int = 5,
        where: Mapping[str, Any] | None = None,
    ) -> list[list[tuple[Chunk, float]]]:
        """:meth:`search` for many queries at once (queries embedded in one batch)."""
        if isinstance(queries, str):
            raise ValueError("search_many expects a list of query strings")
        queries = list(queries)
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
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if vectors.shape[1] != self.encoder.dim:
            raise ValueError(f"query vectors must have {self.encoder.dim} columns, got {vectors.shape[1]}")
        if where is not None and not isinstance(where, Mapping):
            raise ValueError(f"where must be a dict (a Chroma metadata filter), got {type(where).__name__}")
        if where:
            _check_where_keys(where)
        coll = self._parents_collection() if parents else self.collection
        if coll is None:
            return [[] for _ in range(len(vectors))]
        try:
            res = coll.query(
                query_embeddings=vectors,
                n_results=k,
                where=dict(where) if where else None,
                include=["documents", "metadatas", "distances"],
            )
        except ValueError as exc:
            raise ValueError(f"search failed (check the where filter {where!r}): {exc}") from exc
        out: list[list[tuple[Chunk, float]]] = []
        for ids, docs, metas, dists in zip(res["ids"], res["documents"], res["metadatas"], res["distances"], strict=True):
            hits = []
            for _id, doc, meta, dist in zip(ids, docs, metas, dists, strict=True):
                hits.append((_to_chunk(doc, meta), float(1.0 - dist)))
            out.append(hits)
        return out

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        """The stored chunks (leaves or parents) with these ids, in the given order; unknown ids skipped."""
        if isinstance(ids, str):
            ids = [ids]
        ids = list(ids)
        found: dict[str, Chunk] = {}
        for coll in (self.collection, self._parents_collection()):
            want = [i for i in ids if i not in found]
            if coll is None or not want:
                continue
            res = coll.get(ids=want, include=["documents", "metadatas"])
            for _id, doc, meta in zip(res["ids"], res["documents"], res["metadatas"], strict=True):
                found[_id] = _to_chunk(doc, meta)
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
        coll = self._parents_collection() if parents else self.collection
        if coll is None:
            return
        offset = 0
        while True:
            res = coll.get(include=["documents", "metadatas"], limit=batch_size, offset=offset)
            if not res["ids"]:
                return
            for doc, meta in zip(res["documents"], res["metadatas"], strict=True):
                yield _to_chunk(doc, meta)
            offset += len(res["ids"])

    def count(self, parents: bool = False) -> int:
        """Number of stored leaves (or parents with ``parents=True``)."""
        coll = self._parents_collection() if parents else self.collection
        return int(coll.count()) if coll is not None else 0

    def stats(self) -> dict[str, Any]:
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


# -- metadata conversion -----------------------------------------------------------------
def encode_metadata(chunk: Chunk) -> dict[str, str | int | float | bool]:
    """Chroma metadata for ``chunk``: the whole metadata as JSON plus queryable scalar copies.

    Scalar top-level keys (str, int, float, bool) are copied as they are so ``where``
    filters work on them; ``headings`` also gives ``section`` (the last heading) and
    ``headings_path`` (the path joined with " > "). Lists, dicts and None survive in the
    JSON copy, which is what :func:`decode_metadata` restores.
    """
    meta = chunk.metadata
    out: dict[str, str | int | float | bool] = {
        "doc_id": chunk.doc_id,
        "start": chunk.start,
        "end": chunk.end,
        META_KEY: json.dumps(meta, ensure_ascii=False, default=_json_default),
    }
    for key, value in meta.items():
        if not isinstance(key, str) or key in _RESERVED or not key:
            continue
        if isinstance(value, bool) or isinstance(value, str):
            out[key] = value
        elif isinstance(value, int) and abs(value) <= _INT64:
            out[key] = value
        elif isinstance(value, float) and math.isfinite(value):
            out[key] = value
    headings = meta.get("headings")
    if isinstance(headings, (list, tuple)) and headings:
        out["section"] = str(headings[-1])
        out["headings_path"] = " > ".join(str(h) for h in headings)
    elif isinstance(headings, str) and headings:
        out["section"] = headings
        out["headings_path"] = headings
    return out


def decode_metadata(stored: Mapping[str, Any]) -> tuple[str, int, int, dict[str, Any]]:
    """``(doc_id, start, end, metadata)`` back from what :func:`encode_metadata` wrote."""
    raw = stored.get(META_KEY)
    if raw is not None:
        meta = json.loads(raw)
    else:  # written by something else: keep its scalar keys
        meta = {k: v for k, v in stored.items() if k not in _RESERVED}
    return str(stored.get("doc_id", "doc")), int(stored.get("start", 0)), int(stored.get("end", 0)), meta


#: metadata keys that hold lists or dicts: kept in the JSON copy only, so not filterable
_NOT_FILTERABLE = {
    "headings": "filter on 'section' (the last heading) or 'headings_path' (\"A > B\") instead",
    "params": "strategy parameters are not filterable; filter on 'strategy'",
    "child_ids": "use get_parent / ChunkStore.get instead",
}


def _check_where_keys(where: Mapping[str, Any]) -> None:
    for key, value in where.items():
        if key in ("$and", "$or") and isinstance(value, list):
            for part in value:
                if isinstance(part, Mapping):
                    _check_where_keys(part)
        elif key in _NOT_FILTERABLE:
            raise ValueError(f"where: {key!r} holds a list or dict, which Chroma cannot filter; {_NOT_FILTERABLE[key]}")


def _to_chunk(document: str | None, stored: Mapping[str, Any] | None) -> Chunk:
    doc_id, start, end, meta = decode_metadata(stored or {})
    return Chunk(document or "", start, end, doc_id, meta)


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def _batches(items: Iterable[Chunk], size: int) -> Iterator[list[Chunk]]:
    batch: list[Chunk] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
