"""Where an engine writes its chunk rows: Parquet shards or a Chroma store (a folder or a server).

Both engines write from one process (the driver), in batches, through the same sink, so the
files and collections they produce are the same.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from chunklab._validate import check_positive_int
from chunklab.chunk import Chunk
from chunklab.ingest._common import StrategySpec, json_default

__all__ = ["OUTPUT_COLUMNS", "ParquetSink", "StoreSink", "chunks_of", "open_sink", "vectors_of"]

#: the columns a sink writes, in this order (Parquet shards: one row per chunk)
OUTPUT_COLUMNS = ("id", "doc_id", "start", "end", "text", "metadata", "vector")


def vectors_of(table: pa.Table) -> np.ndarray:
    """The ``vector`` column as an (n, dim) float32 array."""
    col = table.column("vector").combine_chunks()
    dim = col.type.list_size
    return np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dim)


def chunks_of(table: pa.Table) -> list[Chunk]:
    """Chunk rows back as :class:`~chunklab.chunk.Chunk` objects (ids recomputed, so checked)."""
    cols = [table.column(n).to_pylist() for n in ("id", "text", "start", "end", "doc_id", "metadata")]
    out = []
    for cid, text, start, end, doc_id, meta in zip(*cols, strict=True):
        chunk = Chunk(text, start, end, doc_id, json.loads(meta))
        if chunk.id != cid:
            raise ValueError(f"chunk {cid} of {doc_id} changed id through its JSON metadata ({chunk.id})")
        out.append(chunk)
    return out


# -- sinks --------------------------------------------------------------------------------
class ParquetSink:
    """Parquet shards ``part-00000.parquet``, ... in ``directory``: one row per chunk.

    Columns: id, doc_id, start, end, text, metadata (JSON) and vector (fixed-size float32
    list). Shards left by an earlier run are removed first, so re-running rewrites the same
    rows instead of adding to them.
    """

    def __init__(self, directory: str | os.PathLike[str], rows_per_shard: int = 100_000) -> None:
        check_positive_int(rows_per_shard, "rows_per_shard")
        self.directory = os.fspath(directory)
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise ValueError(f"out {self.directory} exists and is not a directory")
        os.makedirs(self.directory, exist_ok=True)
        for old in glob.glob(os.path.join(glob.escape(self.directory), "part-*.parquet")):
            os.remove(old)
        self.rows_per_shard = rows_per_shard
        self.shards = 0
        self._writer: Any = None
        self._rows_in_shard = 0

    def write(self, table: pa.Table) -> int:
        """Append chunk rows; returns how many were written."""
        import pyarrow.parquet as pq

        table = table.select(list(OUTPUT_COLUMNS))
        done = 0
        while done < table.num_rows:
            if self._writer is None:
                path = os.path.join(self.directory, f"part-{self.shards:05d}.parquet")
                self._writer = pq.ParquetWriter(path, table.schema)
                self.shards += 1
            take = min(table.num_rows - done, self.rows_per_shard - self._rows_in_shard)
            self._writer.write_table(table.slice(done, take))
            done += take
            self._rows_in_shard += take
            if self._rows_in_shard >= self.rows_per_shard:
                self._close_shard()
        return done

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._writer, self._rows_in_shard = None, 0

    def close(self) -> None:
        """Finish the last shard."""
        self._close_shard()

    def __str__(self) -> str:
        return f"{self.shards} Parquet shard(s) in {self.directory}"


class StoreSink:
    """Upserts chunk rows with their vectors into a :class:`~chunklab.retrieval.store.ChunkStore` (local or server).

    The first time a document is seen in a run its stored chunks are deleted, so re-indexing
    a changed document replaces it; re-indexing an unchanged one writes the same ids again.
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self._seen: set[str] = set()

    def write(self, table: pa.Table) -> int:
        """Upsert chunk rows; returns how many were written."""
        chunks = chunks_of(table)
        for doc_id in dict.fromkeys(c.doc_id for c in chunks):
            if doc_id not in self._seen:
                self._seen.add(doc_id)
                self.store.delete(doc_id=doc_id)
        return self.store.add(chunks, vectors=vectors_of(table), show_progress=False)

    def close(self) -> None:
        """Nothing to finish (every batch is written when it comes)."""

    def __str__(self) -> str:
        return f"collection {self.store.name!r} at {self.store.url or self.store.path}"


def open_sink(
    store: Any,
    chroma_url: str | None,
    out: str | os.PathLike[str] | None,
    model: str,
    collection: str,
    strategy: StrategySpec,
) -> ParquetSink | StoreSink:
    """The sink for an engine's arguments: Parquet shards (``out``), a Chroma server, or a store folder."""
    if sum(x is not None for x in (store, chroma_url, out)) > 1:
        raise ValueError("give at most one of store=, chroma_url= and out=")
    if out is not None:
        return ParquetSink(out)
    from chunklab.retrieval.store import ChunkStore

    if isinstance(store, ChunkStore):
        return StoreSink(store)
    if store is not None and not isinstance(store, (str, os.PathLike)):
        raise ValueError(f"store must be a ChunkStore or a folder, got {type(store).__name__}")
    from chunklab.embed import Encoder

    config = {"strategy": strategy.name, "params": _jsonable(dict(strategy.params))}
    return StoreSink(ChunkStore(store, collection, Encoder(model), url=chroma_url, config=config))


def _jsonable(params: Mapping[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(params, default=json_default))
