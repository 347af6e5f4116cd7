"""The Parquet sink: shards that are idempotent by construction and a run that resumes where it stopped.

The visible dataset is the ``part-NNNNN.parquet`` shards of a folder (readable as one dataset,
``pyarrow.parquet.read_table(folder)``). Three rules make it safe to kill at any point:

* **nothing half-written is visible**: every file is written under a dot-name (which Parquet
  readers skip) and renamed into place with :func:`os.replace`;
* **a run's rows are durable before they are visible**: each batch the run embeds is committed
  as a shard of the staging folder ``.chunklab-staging`` (named by the digest of its rows). A
  run that dies leaves the visible shards as they were; the next run with the same record
  counts the staged rows as already embedded (:meth:`ParquetSink.known`) and embeds only the rest;
* **the swap is journalled**: when a run succeeds, the final rows (sorted by document and
  offset) are written as temporary shards, a journal naming them is committed, the old shards
  they replace are removed and the new ones renamed in. A run that dies during the swap leaves
  rows missing, never doubled, and the next open (:func:`recover`) rolls the journal forward.

Shard names are deterministic (``part-00000``, ... of the sorted rows) and each records the
digest of its rows: a re-run that gives the same rows skips the identical shards.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, TypedDict

import pyarrow as pa

from chunklab._validate import check_positive_int
from chunklab.ingest.sinks import OUTPUT_COLUMNS, Sink
from chunklab.ingest.stages import CHUNK_STATUSES
from chunklab.retrieval.filters import fingerprint, metadata_json

if TYPE_CHECKING:
    from chunklab.retrieval.chroma.records import CollectionConfig

__all__ = ["JOURNAL", "RECORD_KEY", "STAGING", "ParquetSink", "read_dataset", "recover", "shard_paths"]

#: the Parquet schema metadata key holding the record {"encoder", "config"}
RECORD_KEY = b"chunklab"
#: the schema metadata key holding a shard's digest (of its rows' fingerprints)
DIGEST_KEY = b"chunklab.digest"
#: the folder (inside the output folder) of the committed batches of a run not finished yet
STAGING = ".chunklab-staging"
#: the swap journal: {"replace": [[temporary, final], ...], "remove": [old shard, ...]}
JOURNAL = ".chunklab-commit.json"


class Journal(TypedDict):
    """The swap journal (:data:`JOURNAL`): ``[temporary, final]`` names to rename, old shards to remove."""

    replace: list[list[str]]
    remove: list[str]


class ShardRecord(TypedDict):
    """What each shard's schema metadata records (:data:`RECORD_KEY`): the encoder and collection config."""

    encoder: str
    config: CollectionConfig


def shard_paths(directory: str | os.PathLike[str]) -> list[str]:
    """The visible shards of ``directory``, sorted."""
    return sorted(glob.glob(os.path.join(glob.escape(os.fspath(directory)), "part-*.parquet")))


def read_dataset(directory: str | os.PathLike[str]) -> pa.Table:
    """The shards of ``directory`` as one table, after rolling forward an interrupted swap."""
    import pyarrow.parquet as pq

    recover(directory)
    return pa.concat_tables([pq.read_table(p) for p in shard_paths(directory)])


def recover(directory: str | os.PathLike[str]) -> bool:
    """Finish the swap a run was killed in (its journal), if any; True when there was one."""
    journal = os.path.join(os.fspath(directory), JOURNAL)
    try:
        with open(journal, encoding="utf-8") as f:
            plan = json.load(f)
    except FileNotFoundError:
        return False
    _apply(os.fspath(directory), plan)
    return True


def _apply(directory: str, plan: Journal) -> None:
    """Carry out a committed journal (again, if need be): removals first, so nothing is ever doubled.

    An old shard whose name a new one takes is removed only while the new one is still under
    its temporary name, so that replaying the journal never removes a shard it renamed in.
    """
    pending = {final: tmp for tmp, final in plan["replace"]}
    for name in plan["remove"]:
        if name not in pending or os.path.exists(os.path.join(directory, pending[name])):
            _remove(os.path.join(directory, name))
    for tmp, final in plan["replace"]:
        if os.path.exists(os.path.join(directory, tmp)):
            os.replace(os.path.join(directory, tmp), os.path.join(directory, final))
    _fsync_dir(directory)
    _remove(os.path.join(directory, JOURNAL))
    shutil.rmtree(os.path.join(directory, STAGING), ignore_errors=True)


class ParquetSink(Sink):
    """Parquet shards ``part-00000.parquet``, ... in ``directory``: one row per chunk.

    Columns: id, doc_id, start, end, text, metadata (JSON) and vector (fixed-size float32
    list); every shard's schema metadata records the encoder and the collection config. Each
    written batch is committed to the staging folder at once; when the run succeeds the kept
    old rows (unchanged chunks, documents it did not touch) and the new ones are swapped in as
    shards of at most ``rows_per_shard`` rows. Re-running on the same corpus embeds nothing and
    leaves the same shards; re-running after a killed run embeds only what it had not staged.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        config: CollectionConfig,
        encoder_name: str,
        clear: bool = False,
        rows_per_shard: int = 100_000,
    ) -> None:
        super().__init__()
        check_positive_int(rows_per_shard, "rows_per_shard")
        self.directory = os.fspath(directory)
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise ValueError(f"out {self.directory} exists and is not a directory")
        os.makedirs(self.directory, exist_ok=True)
        recover(self.directory)
        for stray in glob.glob(os.path.join(glob.escape(self.directory), ".*-part-*.parquet")):
            _remove(stray)  # a shard a killed run was writing before it journalled the swap
        self.record: ShardRecord = {"encoder": encoder_name, "config": config}
        self.existing = shard_paths(self.directory)
        self.old = [] if clear else self.existing  # the shards whose rows may stay
        self.staging = os.path.join(self.directory, STAGING)
        self.rows_per_shard = rows_per_shard
        self.shards = 0
        self.staged: set[int] = set()  # fingerprints committed to staging (by this run or a killed one)
        self._old_fps: dict[str, list[int]] = {}  # old shard -> its rows' fingerprints
        self._final: set[int] = set()  # fingerprints of the chunk rows of this run
        self._documents: set[str] = set()  # documents whose document row arrived in this run
        self._drop: set[str] = set()  # documents whose old rows go (replaced or pruned)
        for path in self.old:
            self._read_old(path)
        self._read_staging()

    # -- opening -----------------------------------------------------------------------------
    def _read_old(self, path: str) -> None:
        import pyarrow.parquet as pq

        raw = (pq.read_schema(path).metadata or {}).get(RECORD_KEY)
        recorded = json.loads(raw) if raw else None
        if recorded not in (None, self.record):
            raise ValueError(
                f"the Parquet shards in {self.directory} were written with {recorded} (this run: "
                f"{self.record}): pass clear=True (--clear) to replace them, or use another folder"
            )
        table = pq.read_table(path, columns=["id", "doc_id", "text", "metadata"])
        fps = self._old_fps[path] = []
        for cid, doc_id, text, meta in zip(*(c.to_pylist() for c in table.columns), strict=True):
            fp = fingerprint(cid, text, metadata_json(json.loads(meta)))
            fps.append(fp)
            self.stored.setdefault(doc_id, {})[cid] = fp

    def _read_staging(self) -> None:
        """Keep the staged batches of a killed run with this record; drop the rest (another record)."""
        import pyarrow.parquet as pq

        for path in self._staged_paths():
            try:
                raw = (pq.read_schema(path).metadata or {}).get(RECORD_KEY)
                same = raw is not None and json.loads(raw) == self.record
                fps = pq.read_table(path, columns=["fp"]).column("fp").to_pylist() if same else []
            except (OSError, pa.ArrowInvalid):  # not a shard this sink committed
                same = False
            if same:
                self.staged.update(fps)
            else:
                _remove(path)

    def _staged_paths(self) -> list[str]:
        return sorted(glob.glob(os.path.join(glob.escape(self.staging), "*.parquet")))

    def known(self) -> frozenset[int]:
        """Fingerprints of the stored chunks and of the chunks a killed run already staged."""
        return super().known() | frozenset(self.staged)

    # -- the run -----------------------------------------------------------------------------
    def write(self, table: pa.Table) -> None:
        """Write a batch, skipping rows this run already got (a retried task may deliver them twice)."""
        status, cids, docs = (table.column(c).to_pylist() for c in ("status", "id", "doc_id"))
        texts, metas = table.column("text").to_pylist(), table.column("metadata").to_pylist()
        keep = []
        for i, (st, cid, doc) in enumerate(zip(status, cids, docs, strict=True)):
            if st in CHUNK_STATUSES:
                fp = fingerprint(cid, texts[i], metas[i])
                if fp not in self._final:
                    self._final.add(fp)
                    keep.append(i)
            elif st != "document" or doc not in self._documents:
                self._documents.add(doc)
                keep.append(i)
        super().write(table if len(keep) == table.num_rows else table.take(keep))

    def _write(self, rows: pa.Table) -> None:
        """Commit a batch of embedded rows to the staging folder (temporary name, then renamed)."""
        fps = self._fps_of(rows)
        table = rows.select(list(OUTPUT_COLUMNS)).append_column("fp", pa.array(fps, pa.uint64()))
        os.makedirs(self.staging, exist_ok=True)
        _write_atomic(table, os.path.join(self.staging, f"{_digest(fps)}.parquet"), self.record, fps)
        self.staged.update(fps)

    def _fps_of(self, rows: pa.Table) -> list[int]:
        """The fingerprints of ``rows`` (as :func:`fingerprint` of their id, text and metadata JSON)."""
        return [
            fingerprint(c, t, m)
            for c, t, m in zip(*(rows.column(n).to_pylist() for n in ("id", "text", "metadata")), strict=True)
        ]

    def _replaced(self, doc_id: str, stale: set[str], unchanged: set[str]) -> None:
        self._drop.add(doc_id)
        self.deleted += len(stale)

    def _prune_document(self, doc_id: str) -> None:
        self._drop.add(doc_id)
        self.deleted += len(self.stored.get(doc_id, {}))

    # -- the swap ----------------------------------------------------------------------------
    def _final_rows(self) -> pa.Table | None:
        """Every row the folder holds after this run, sorted: kept old rows, then the run's (staged) rows."""
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        keep = set(self._final)
        for path in self.old:
            docs = pq.read_table(path, columns=["doc_id"]).column("doc_id").to_pylist()
            keep.update(
                fp for fp, doc in zip(self._old_fps[path], docs, strict=True) if doc not in self._drop
            )
        parts, seen = [], set()
        for path, fps in [*self._old_fps.items(), *((p, None) for p in self._staged_paths())]:
            table = pq.read_table(path)
            fps = table.column("fp").to_pylist() if fps is None else fps
            take = []
            for i, fp in enumerate(fps):
                if fp in keep and fp not in seen:
                    seen.add(fp)
                    take.append(i)
            if take:
                parts.append(
                    table.select(list(OUTPUT_COLUMNS))
                    .take(take)
                    .append_column("fp", pa.array([fps[i] for i in take], pa.uint64()))
                )
        if not parts:
            return None
        rows = pa.concat_tables([p.replace_schema_metadata(None) for p in parts])
        order = pc.sort_indices(
            rows, [("doc_id", "ascending"), ("start", "ascending"), ("end", "ascending"), ("id", "ascending")]
        )
        return rows.take(order)

    def _commit(self) -> None:
        """Write the final shards under temporary names, journal them, and swap them in."""
        import pyarrow.parquet as pq

        rows = self._final_rows()
        replace: list[list[str]] = []
        finals: list[str] = []
        total = 0 if rows is None else rows.num_rows
        for n, at in enumerate(range(0, total, self.rows_per_shard)):
            assert rows is not None
            part = rows.slice(at, self.rows_per_shard)
            fps = part.column("fp").to_pylist()
            name = f"part-{n:05d}.parquet"
            finals.append(name)
            path = os.path.join(self.directory, name)
            if (
                os.path.exists(path)
                and (pq.read_schema(path).metadata or {}).get(DIGEST_KEY)
                == _digest(fps, self.record).encode()
            ):
                continue  # an identical shard is already there
            tmp = f".tmp-{uuid.uuid4().hex[:8]}-{name}"
            _write_atomic(part.drop_columns(["fp"]), os.path.join(self.directory, tmp), self.record, fps)
            replace.append([tmp, name])
        self.shards = len(finals)
        replacing = {final for _tmp, final in replace}
        remove = [os.path.basename(p) for p in self.existing if os.path.basename(p) not in finals]
        remove += sorted(replacing & {os.path.basename(p) for p in self.existing})
        plan: Journal = {"replace": replace, "remove": remove}
        _write_json_atomic(os.path.join(self.directory, JOURNAL), plan)
        _apply(self.directory, plan)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Swap the run's rows in when it succeeded; otherwise keep what it staged for the next run."""
        if exc_type is None:
            self._commit()

    def __str__(self) -> str:
        return f"{self.shards} Parquet shard(s) in {self.directory}"


def _digest(fps: Iterable[int], record: ShardRecord | None = None) -> str:
    """A name for a set of rows: the hash of their sorted fingerprints (and of the record)."""
    h = hashlib.blake2b(digest_size=12)
    if record is not None:
        h.update(json.dumps(record, sort_keys=True).encode())
    for fp in sorted(fps):
        h.update(fp.to_bytes(8, "big"))
    return h.hexdigest()


def _write_atomic(table: pa.Table, path: str, record: ShardRecord, fps: list[int]) -> None:
    """Write ``table`` to ``path`` through a dot-named temporary file, synced, then renamed."""
    import pyarrow.parquet as pq

    meta = {RECORD_KEY: json.dumps(record).encode(), DIGEST_KEY: _digest(fps, record).encode()}
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".writing-{uuid.uuid4().hex[:8]}-{name}")
    pq.write_table(table.replace_schema_metadata(meta), tmp)
    _fsync(tmp)
    os.replace(tmp, path)


def _write_json_atomic(path: str, value: Journal) -> None:
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".writing-{name}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(folder)


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: str) -> None:
    try:
        _fsync(path)
    except OSError:  # a file system that cannot sync a folder
        pass


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
