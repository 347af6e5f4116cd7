"""A folder store's files: is this a store, is it damaged, and repairing it from what it still holds.

Chroma's local store is ``chroma.sqlite3`` (collections, the metadata segment with every
record's id, document and metadata, and the write-ahead log ``embeddings_queue``) plus one
folder per vector segment (the HNSW index). The vector segment records in ``max_seq_id`` how
far into the log it got; the log is purged up to the oldest segment's position. When a
segment's position is *behind the start of the log* (two processes wrote the folder at once,
or a compaction was interrupted) the entries in between are gone for it: the index can
never catch up and Chroma hangs or crashes on open. :func:`diagnose` reads only SQLite
(read-only, never the Rust segment) and says so in one line; :func:`repair` rebuilds the
store from the metadata segment (every id, text and metadata is kept; vectors are
recomputed with the recorded encoder, mostly from the embedding cache).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunklab.paths import chunklab_dir

if TYPE_CHECKING:
    import numpy as np
    from chromadb.api.types import Embeddable, EmbeddingFunction

    from chunklab.protocols import EncoderLike
    from chunklab.retrieval.chroma.lock import StoreLock

__all__ = [
    "SQLITE_NAME",
    "Damaged",
    "DamagedStoreError",
    "diagnose",
    "is_store",
    "open_folder",
    "read_records",
    "reembed",
    "repair",
    "store_folder",
]

#: the file that makes a folder a Chroma store
SQLITE_NAME = "chroma.sqlite3"
_DOCUMENT_KEY = "chroma:document"


class DamagedStoreError(ValueError):
    """A folder store whose vector index can no longer catch up with its records."""


def is_store(folder: str | Path) -> bool:
    """Whether ``folder`` holds a Chroma store (its ``chroma.sqlite3``)."""
    return (Path(folder) / SQLITE_NAME).is_file()


def _connect(folder: Path) -> sqlite3.Connection:
    uri = (folder / SQLITE_NAME).resolve().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=30)


@dataclass
class Damaged:
    """One collection whose vector segment lost log entries."""

    collection: str
    segment_seq: int
    log_start: int
    records: int = field(default=0)

    def __str__(self) -> str:
        return (
            f"collection {self.collection!r}: its vector index stopped at write {self.segment_seq} but the "
            f"log now starts at {self.log_start} ({self.records} records)"
        )


def diagnose(folder: str | Path) -> list[Damaged]:
    """The damaged collections of the store in ``folder`` (empty when it is sound), from SQLite alone."""
    folder = Path(folder)
    if not is_store(folder):
        return []
    try:
        con = _connect(folder)
        try:
            return _diagnose(con)
        finally:
            con.close()
    except sqlite3.OperationalError:  # a store Chroma has not finished creating: nothing recorded yet
        return []


def _diagnose(con: sqlite3.Connection) -> list[Damaged]:
    found = []
    rows = con.execute(
        "SELECT c.id, c.name, s.id, s.scope FROM collections c JOIN segments s ON s.collection = c.id"
    ).fetchall()
    seqs = dict(con.execute("SELECT segment_id, seq_id FROM max_seq_id").fetchall())
    for cid, name, sid, scope in rows:
        if scope != "VECTOR":
            continue
        meta_sid = next((s for c, _n, s, sc in rows if c == cid and sc == "METADATA"), None)
        vec, meta = int(seqs.get(sid) or 0), int(seqs.get(meta_sid) or 0)
        topic_like = f"%/{cid}"
        (start,) = con.execute(
            "SELECT min(seq_id) FROM embeddings_queue WHERE topic LIKE ?", (topic_like,)
        ).fetchone()
        log_start = int(start) if start is not None else meta + 1
        # seq ids are global to the store: lost entries are records written after the vector
        # segment's position but before the start of this collection's log
        (lost,) = con.execute(
            "SELECT count(*) FROM embeddings WHERE segment_id = ? AND seq_id > ? AND seq_id < ?",
            (meta_sid, vec, log_start),
        ).fetchone()
        if lost and meta > vec:
            (n,) = con.execute("SELECT count(*) FROM embeddings WHERE segment_id = ?", (meta_sid,)).fetchone()
            found.append(Damaged(name, vec, log_start, int(n)))
    return found


def lagging(folder: str | Path) -> bool:
    """Whether a vector segment has not applied the whole log yet (a writer stopped before persisting)."""
    try:
        con = _connect(Path(folder))
        try:
            rows = con.execute(
                "SELECT m.seq_id, (SELECT max(seq_id) FROM embeddings_queue) FROM max_seq_id m "
                "JOIN segments s ON s.id = m.segment_id WHERE s.scope = 'VECTOR'"
            ).fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return any(last is not None and int(seq or 0) < int(last) for seq, last in rows)


@dataclass
class CollectionRecords:
    """What the metadata segment still holds of one collection."""

    name: str
    metadata: dict[str, Any]
    rows: list[tuple[str, str | None, dict[str, Any]]]


def read_records(folder: str | Path) -> Iterator[CollectionRecords]:
    """Every collection of the store with its metadata and (id, document, metadata) rows, from SQLite."""
    con = _connect(Path(folder))
    try:
        for cid, name in con.execute("SELECT id, name FROM collections ORDER BY name").fetchall():
            meta = {
                key: _value(s, i, f, b)
                for key, s, i, f, b in con.execute(
                    "SELECT key, str_value, int_value, float_value, bool_value FROM collection_metadata "
                    "WHERE collection_id = ?",
                    (cid,),
                )
            }
            rows: dict[int, tuple[str, dict[str, Any]]] = {}
            query = (
                "SELECT e.id, e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, "
                "m.bool_value FROM embeddings e JOIN segments s ON s.id = e.segment_id "
                "LEFT JOIN embedding_metadata m ON m.id = e.id "
                "WHERE s.collection = ? AND s.scope = 'METADATA'"
            )
            for rid, eid, key, s, i, f, b in con.execute(query, (cid,)):
                rows.setdefault(rid, (eid, {}))
                if key is not None:
                    rows[rid][1][key] = _value(s, i, f, b)
            out = [(eid, m.pop(_DOCUMENT_KEY, None), m) for eid, m in rows.values()]
            yield CollectionRecords(name, {k: v for k, v in meta.items() if v is not None}, out)
    finally:
        con.close()


def _value(s: str | None, i: int | None, f: float | None, b: int | None) -> str | int | float | bool | None:
    if b is not None:
        return bool(b)
    for value in (s, i, f):
        if value is not None:
            return value
    return None


def set_aside(folder: Path, keep: tuple[str, ...]) -> Path:
    """Move Chroma's files of ``folder`` (everything but ``keep``) into ``folder/.damaged-<time>``."""
    aside = folder / f".damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    aside.mkdir()
    for entry in folder.iterdir():
        if entry.name not in keep and entry != aside and not entry.name.startswith(".damaged-"):
            shutil.move(str(entry), aside / entry.name)
    return aside


def config_json(metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The chunker configuration recorded in a collection's metadata (None when none)."""
    raw = metadata.get("chunklab_config")
    return json.loads(raw) if raw else None


def store_folder(path: str | Path | None, create: bool) -> Path:
    """The store folder (default ``<project root>/.chunklab/chroma``), made when missing and ``create``."""
    folder = Path(path) if path is not None else chunklab_dir() / "chroma"
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"store path {folder} exists and is not a directory")
    if not create and not is_store(folder):
        what = "is not a Chroma store (no chroma.sqlite3)" if folder.is_dir() else "does not exist"
        raise ValueError(f"no store at {folder}: it {what}; index something into it first (chunklab index)")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_folder(folder: Path, create: bool, wait: float | None) -> StoreLock:
    """Lock ``folder`` (exclusive to write, shared to read), then refuse it if it is damaged."""
    from chunklab.retrieval.chroma.lock import lock_store

    held = lock_store(folder, exclusive=create, wait=wait)
    if not create and lagging(folder):  # the first reader after a killed writer replays the log: alone
        held.release()
        held = lock_store(folder, exclusive=True, wait=wait)
    damage = diagnose(folder)
    if damage:
        held.release()
        raise DamagedStoreError(
            f"the store at {folder} is damaged ({damage[0]}): `chunklab index --store {folder} --repair` "
            "rebuilds it from the records it still holds"
        )
    return held


def repair(folder: str | Path, wait: float | None = None) -> dict[str, int]:
    """Rebuild the store in ``folder`` from its metadata segment; returns ``{collection: records kept}``.

    Holds the store's writer lock throughout. Every record's id, text and metadata is kept and
    each collection keeps its recorded encoder and chunker configuration; the vectors are
    recomputed with that encoder (the embedding cache answers the texts it embedded before).
    The old files wait in ``.damaged-<time>/`` until the rebuild succeeded, and come back if it fails.
    """
    from chromadb.api.client import SharedSystemClient

    from chunklab.retrieval.chroma.lock import LOCK_NAME, lock_store

    folder = Path(folder)
    if not is_store(folder):
        raise ValueError(f"no store at {folder} (no {SQLITE_NAME}): nothing to repair")
    with lock_store(folder, exclusive=True, wait=wait):
        records = list(read_records(folder))
        SharedSystemClient.clear_system_cache()
        aside = set_aside(folder, keep=(LOCK_NAME,))
        try:
            kept = _rebuild(folder, records)
        except BaseException:
            SharedSystemClient.clear_system_cache()
            for entry in folder.iterdir():
                if entry.name != LOCK_NAME and entry != aside:
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            for entry in aside.iterdir():
                shutil.move(str(entry), folder / entry.name)
            aside.rmdir()
            raise
        SharedSystemClient.clear_system_cache()
        shutil.rmtree(aside, ignore_errors=True)
    return kept


def _rebuild(folder: Path, records: list[CollectionRecords]) -> dict[str, int]:
    from typing import cast

    from chunklab.retrieval.chroma.backend import (
        INDEX_CONFIGURATION,
        PARENTS_SUFFIX,
        ChunklabEmbeddingFunction,
        batches,
        make_client,
    )
    from chunklab.retrieval.chroma.records import ENCODER_KEY, encoder_for

    client = make_client(folder, None, False)
    by_name = {r.name: r for r in records}
    kept: dict[str, int] = {}
    for rec in records:
        owner = by_name.get(rec.name.removesuffix(PARENTS_SUFFIX), rec)
        encoder = encoder_for(rec.metadata.get(ENCODER_KEY) or owner.metadata.get(ENCODER_KEY))
        config = config_json(owner.metadata) or {}
        meta = {k: v for k, v in rec.metadata.items() if not k.startswith("hnsw:")}
        coll = client.create_collection(
            name=rec.name,
            embedding_function=cast("EmbeddingFunction[Embeddable]", ChunklabEmbeddingFunction(encoder)),
            configuration=INDEX_CONFIGURATION,
            metadata=meta or None,
        )
        for batch in batches(rec.rows, min(512, client.get_max_batch_size())):
            vecs = reembed(batch, encoder, config)
            coll.upsert(
                ids=[i for i, _d, _m in batch],
                embeddings=vecs,
                documents=[d or "" for _i, d, _m in batch],
                metadatas=[m or None for _i, _d, m in batch],  # type: ignore[misc]
            )
        kept[rec.name] = len(rec.rows)
    return kept


def reembed(
    rows: Sequence[tuple[str, str | None, dict[str, Any] | None]],
    encoder: EncoderLike,
    config: dict[str, Any],
) -> np.ndarray:
    """Vectors of stored ``(id, document, metadata)`` rows, as the store embedded them (float32).

    What the store embeds: the chunk with its title and section path in front, or the bare text
    when the recorded chunker configuration says ``embed_context: False``; the embedding cache
    answers the texts it embedded before.
    """
    import numpy as np

    from chunklab.chunk import embedding_text
    from chunklab.retrieval.filters import chunk_from_stored

    chunks = [chunk_from_stored(doc, meta) for _id, doc, meta in rows]
    texts = [embedding_text(c) if config.get("embed_context", True) else c.text for c in chunks]
    return np.asarray(encoder.encode(texts, show_progress=False), dtype=np.float32)
