"""Watching a ``chunklab index`` run write a folder store, from outside, by the store file's size.

The kill trials of :mod:`store_faults` need to know when a run's first upsert reached the
store (its ``chroma.sqlite3`` grows past the size of a store holding only the collection and
its records) and, for the clean run, when its writes ended (the file's last change). Only
``stat`` is used: opening the SQLite file would take locks the writer then waits on (Chroma
keeps a rollback journal), so the watcher would change what it measures.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["POLL_S", "RUN_TIMEOUT", "empty_store_bytes", "first_write", "write_span"]

#: how often the store's files are looked at while a run writes (seconds)
POLL_S = 0.01
#: no run may take longer than this (a hang counts as a failed trial, never a stuck benchmark)
RUN_TIMEOUT = 240.0


def empty_store_bytes(folder: Path, config: dict[str, Any] | None) -> int:
    """The size of ``chroma.sqlite3`` in a store that holds a collection and its records, no chunks."""
    from chromadb.api.client import SharedSystemClient

    from chunklab.embed import get_encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    with ChunkStore(folder, encoder=get_encoder(), config=config):
        pass
    SharedSystemClient.clear_system_cache()
    return (folder / "chroma.sqlite3").stat().st_size


def _stat(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return 0, 0
    return st.st_size, st.st_mtime_ns


def first_write(proc: subprocess.Popen[str], store: Path, empty: int) -> float | None:
    """Wait until ``proc``'s first upsert is in ``store`` (its SQLite file grew past ``empty`` bytes).

    The time it was seen (``time.perf_counter``), or None when the run ended (or hung) first.
    Only the file's size is looked at: opening the SQLite file would take locks the writer waits on.
    """
    db, end = store / "chroma.sqlite3", time.perf_counter() + RUN_TIMEOUT
    while proc.poll() is None and time.perf_counter() < end:
        if _stat(db)[0] > empty:
            return time.perf_counter()
        time.sleep(POLL_S)
    return None


def write_span(proc: subprocess.Popen[str], store: Path, empty: int) -> tuple[float | None, float]:
    """``(first write, last write)`` times of a run into ``store``: the file growing, its last change."""
    began = first_write(proc, store, empty)
    db, last, ended = store / "chroma.sqlite3", None, time.perf_counter()
    while began is not None and proc.poll() is None:
        now = _stat(db)
        if now != last:
            last, ended = now, time.perf_counter()
        time.sleep(POLL_S)
    if began is not None and _stat(db) != last:  # a change between the last look and the exit
        ended = time.perf_counter()
    return began, ended
