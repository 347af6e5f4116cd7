"""A collection a Chroma server can no longer read after a crash: told in one line, and rebuilt.

A ``chroma run`` killed while it writes a collection's vector index (the HNSW files of its
vector segment) can leave files it cannot load when it starts again: every read of that
collection then fails with ``chromadb.errors.InternalError: Error executing plan: Error
sending backfill request to compactor: Error constructing hnsw segment reader: ... Error loading
hnsw index``, while the records themselves (ids, texts, metadata, the write-ahead log) are
still in the server's SQLite. A lesser damage lets the server return ids, texts and metadata
but not the vectors (``Error getting embedding``, ``Error finding id``). Restarting the
server does not help; dropping the collection and writing it again does.

:func:`is_damage` recognises those errors, :func:`damaged` turns one into a
:class:`DamagedCollectionError` whose message is one line naming the collection and the way
out, and :func:`repair_collection` rebuilds the collection from what the server still returns,
as :func:`chunklab.retrieval.chroma.files.repair` does for a folder store: a new generation
(:mod:`chunklab.retrieval.chroma.aliases`) filled with every record read back (ids, texts and
metadata as stored, vectors as stored where the server returns them, re-embedded with the
recorded encoder where it does not), then switched live, and only then the damaged one dropped.
A failed rebuild leaves the damaged collection as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from chunklab.retrieval.chroma.damage import DAMAGE_SIGNS, DamagedCollectionError, damaged, is_damage
from chunklab.retrieval.chroma.files import config_json, reembed

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

    from chunklab.retrieval.chroma.server import ServerCollections

__all__ = [
    "DAMAGE_SIGNS",
    "DamagedCollectionError",
    "ServerRepair",
    "damaged",
    "is_damage",
    "repair_collection",
    "repair_server",
]

_TEXT: list[Any] = ["documents", "metadatas"]
_ROW = tuple[str, "str | None", "dict[str, Any] | None"]


@dataclass
class ServerRepair:
    """What :func:`repair_collection` did to one store: records kept, vectors recomputed, or nothing."""

    collection: str
    url: str
    records: int = 0
    reembedded: int = 0
    sound: bool = False
    unreadable: bool = False
    by_collection: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """One line for the command's output."""
        where = f"the collection {self.collection!r} on {self.url}"
        if self.sound:
            return f"{where} is sound ({self.records} records read back): nothing to repair"
        if self.unreadable:
            return (
                f"{where} returned none of its records (its vector index cannot be loaded): dropped it and "
                "made it again, empty, with its recorded encoder and chunker configuration"
            )
        return (
            f"repaired {where}: kept {self.records} records "
            f"({self.records - self.reembedded} vectors as stored, {self.reembedded} re-embedded)"
        )


def repair_server(url: str, collection: str, budget_s: float = 60.0, empty_ok: bool = False) -> ServerRepair:
    """:func:`repair_collection` of the store ``collection`` on the Chroma server at ``url``.

    Requests are retried for ``budget_s`` seconds of silence (a server still starting); a
    collection that does not exist is a ValueError listing those that do.
    """
    from chunklab.retrieval.chroma.retry import RetryPolicy
    from chunklab.retrieval.chroma.server import ServerCollections, open_collections

    policy = RetryPolicy(budget_s=budget_s)
    _encoder, opened = open_collections(url, None, False, collection, None, False, policy, collection)
    assert isinstance(opened, ServerCollections)  # a URL opens a server's collections
    return repair_collection(opened, empty_ok=empty_ok)


def repair_collection(
    opened: ServerCollections, batch_size: int = 500, empty_ok: bool = False
) -> ServerRepair:
    """Rebuild the store ``opened`` (its leaves and parents) from what the server still returns.

    A store the server reads whole is left as it is (``sound``). A store whose records cannot
    be read at all is refused with :class:`DamagedCollectionError`, unless ``empty_ok`` (the
    caller indexes its documents again right after): then it is replaced by an empty generation
    with the same recorded metadata (``unreadable``).
    """
    from chunklab.retrieval.chroma import retry

    name = opened.logical or opened.name
    report = ServerRepair(name, opened.url)
    parts = retry.call(opened.both, *opened.where())
    readings: list[tuple[Collection, list[_ROW], list[np.ndarray | None]]] = []
    try:
        for coll in parts:
            rows, vectors = _read_all(opened, coll, batch_size)
            readings.append((coll, rows, vectors))
    except Exception as exc:
        if not is_damage(exc):
            raise
        if not empty_ok:
            said = " ".join(str(exc).split()).rsplit(": ", 1)[-1][:200]
            raise DamagedCollectionError(
                f"the collection {name!r} on the Chroma server at {opened.url} is damaged and the server "
                f"returns none of its records ({said}): give its documents to index again, "
                f"`chunklab index PATHS --server {opened.url} --collection {name} --repair`",
                url=opened.url,
                collection=name,
            ) from exc
        report.unreadable = True
        readings = [(coll, [], []) for coll in parts]
    if not report.unreadable and all(v is not None for _c, _r, vs in readings for v in vs):
        report.sound = True
        report.records = sum(len(r) for _c, r, _v in readings)
        return report
    _rebuild(opened, readings, report)
    return report


def _read_all(
    opened: ServerCollections, coll: Collection, batch_size: int
) -> tuple[list[_ROW], list[np.ndarray | None]]:
    """Every record of ``coll`` with its vector (None where the server cannot return it)."""
    rows: list[_ROW] = []
    vectors: list[np.ndarray | None] = []
    for res, with_vectors in _pages(opened, coll, batch_size):
        got = (
            res["embeddings"] if with_vectors and res["embeddings"] is not None else [None] * len(res["ids"])
        )
        for cid, doc, meta, vec in zip(
            res["ids"], res["documents"] or [], res["metadatas"] or [], got, strict=True
        ):
            rows.append((cid, doc, dict(meta) if meta is not None else None))
            vectors.append(None if vec is None else np.asarray(vec, dtype=np.float32))
    return rows, vectors


def _pages(opened: ServerCollections, coll: Collection, batch_size: int) -> Iterator[tuple[Any, bool]]:
    """``coll.get`` page by page: with vectors, else (a page whose vectors cannot be read) without.

    Chroma's own error comes through (retried only while the server does not answer).
    """
    from functools import partial

    from chunklab.retrieval.chroma import retry

    offset = 0
    while True:
        whole = partial(
            coll.get, include=["documents", "metadatas", "embeddings"], limit=batch_size, offset=offset
        )
        bare = partial(coll.get, include=["documents", "metadatas"], limit=batch_size, offset=offset)
        try:
            res = retry.call(whole, *opened.where())
            with_vectors = True
        except Exception as exc:
            if not is_damage(exc):
                raise
            res = retry.call(bare, *opened.where())
            with_vectors = False
        if not res["ids"]:
            return
        yield res, with_vectors
        offset += len(res["ids"])


def _rebuild(
    opened: ServerCollections,
    readings: list[tuple[Collection, list[_ROW], list[np.ndarray | None]]],
    report: ServerRepair,
) -> None:
    """Write the records read into a new generation, switch it live, drop the damaged one."""
    from functools import partial

    from chunklab.retrieval.chroma.records import ENCODER_KEY, encoder_for

    owner_meta = dict(opened.leaves.metadata or {})
    encoder = encoder_for(owner_meta.get(ENCODER_KEY))
    config = config_json(owner_meta) or {}
    staged = opened.staging()
    try:
        for coll, rows, vectors in readings:
            parents = coll.name != opened.name
            target = staged.parents(create=True) if parents else staged.leaves
            assert target is not None  # created
            meta = {k: v for k, v in (coll.metadata or {}).items() if not k.startswith("hnsw:")}
            if meta:
                opened._call(partial(target.modify, metadata=meta), "modify")
            missing = [i for i, v in enumerate(vectors) if v is None]
            if missing:
                fresh = reembed([rows[i] for i in missing], encoder, config)
                for i, vec in zip(missing, fresh, strict=True):
                    vectors[i] = vec
            for start in range(0, len(rows), 500):
                part = rows[start : start + 500]
                block = np.stack([v for v in vectors[start : start + 500] if v is not None])
                write = partial(
                    target.upsert,
                    ids=[r[0] for r in part],
                    embeddings=block,
                    documents=[r[1] or "" for r in part],
                    metadatas=[r[2] or None for r in part],  # type: ignore[misc]
                )
                opened._call(write, "upsert")
            report.records += len(rows)
            report.reembedded += len(missing)
            report.by_collection[coll.name] = len(rows)
    except BaseException:
        staged.drop(best_effort=True)  # the damaged generation stays as it was
        raise
    staged.swap_into(opened)
