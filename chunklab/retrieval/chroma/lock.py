"""One writer at a time on a folder store: an advisory file lock beside Chroma's files.

Chroma's local ``PersistentClient`` is not safe for several processes writing one folder:
two writers each apply the write-ahead log to their own in-memory vector index and persist
it, and one purges log entries the other's segment never saw (the vector segment's
``max_seq_id`` falls behind the start of ``embeddings_queue``, and the store hangs when
opened). So every process that writes a folder store holds an **exclusive** ``flock`` on
``<store>/chunklab.lock`` for the whole write, and every reader a **shared** one while it
reads: a reader never sees a half-applied write, a writer waits for readers to finish.

Locks are per process and re-entrant: two :class:`~chunklab.retrieval.chroma.store.ChunkStore`
objects on one folder in one process share the process's lock (Chroma shares one client
per folder in a process too), and a writer in a process that already reads upgrades it.
The exclusive holder writes its pid and command line into the lock file, so a waiting
process says who it waits for: ``another chunklab index (pid N) is writing this store;
waiting…``.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BUSY_EXIT", "LOCK_NAME", "READ_WAIT", "StoreBusyError", "StoreLock", "holder", "lock_store"]

#: the lock file inside a store folder
LOCK_NAME = "chunklab.lock"
#: how often a waiting process tries the lock again (seconds)
POLL = 0.05
#: exit status of a command that found the store busy and did not wait (EX_TEMPFAIL: try again later)
BUSY_EXIT = 75
#: how long a reader waits for a writer to finish with a folder store before giving up (seconds)
READ_WAIT = 10.0


class StoreBusyError(RuntimeError):
    """Another process holds the store's lock (a writer, or readers while this process wants to write)."""


@dataclass
class _Held:
    fd: int
    shared: int = 0
    exclusive: int = 0


_HELD: dict[str, _Held] = {}
_GUARD = threading.RLock()


def holder(folder: str | os.PathLike[str]) -> str:
    """Who holds the store's exclusive lock, as recorded in the lock file (``""`` when unknown)."""
    try:
        text = (Path(folder) / LOCK_NAME).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return text.splitlines()[0] if text else ""


def _busy_message(folder: Path, exclusive: bool) -> str:
    who = holder(folder)
    pid = who.split()[0] if who else "?"
    if exclusive and not who:
        return f"chunklab: the store {folder} is being read by another process; waiting for it to finish"
    action = "writing" if who else "using"
    return f"chunklab: another chunklab index (pid {pid}) is {action} this store ({folder}); waiting…"


class StoreLock:
    """A hold on a store folder's lock; :meth:`release` (or garbage collection) lets it go."""

    def __init__(self, key: str, exclusive: bool) -> None:
        self.key = key
        self.exclusive = exclusive
        self._released = False

    @property
    def released(self) -> bool:
        """Whether this hold was given back."""
        return self._released

    def release(self) -> None:
        """Give this hold back; the file lock goes when the process's last hold on the folder does."""
        if self._released:
            return
        self._released = True
        with _GUARD:
            held = _HELD.get(self.key)
            if held is None:
                return
            if self.exclusive:
                held.exclusive -= 1
            else:
                held.shared -= 1
            if held.exclusive <= 0 and held.shared <= 0:
                del _HELD[self.key]
                try:
                    fcntl.flock(held.fd, fcntl.LOCK_UN)
                finally:
                    os.close(held.fd)
            elif held.exclusive <= 0 and self.exclusive:
                _clear_owner(held.fd)
                fcntl.flock(held.fd, fcntl.LOCK_SH)  # downgrade: this process still reads

    def __del__(self) -> None:  # a store dropped without close() still lets the lock go
        try:
            self.release()
        except Exception:  # noqa: BLE001 - interpreter shutdown: nothing left to tell
            pass

    def __enter__(self) -> StoreLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _clear_owner(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)
    except OSError:
        pass


def _write_owner(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)
        line = f"{os.getpid()} {' '.join(sys.argv)[:300]}\n".encode()
        os.pwrite(fd, line, 0)
    except OSError:  # a read-only lock file: the lock still holds, only the pid is unknown
        pass


def _try(fd: int, exclusive: bool) -> bool:
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _open_lock_file(folder: Path, exclusive: bool) -> int | None:
    path = folder / LOCK_NAME
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        if exclusive:
            raise
    try:  # a reader on a read-only store: lock what exists, or read without a lock
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None


def lock_store(
    folder: str | os.PathLike[str],
    exclusive: bool,
    wait: float | None = None,
    notify: Callable[[str], None] | None = None,
) -> StoreLock:
    """Hold ``folder``'s lock: exclusive (a writer) or shared (a reader).

    ``wait`` None waits as long as it takes, 0 fails at once, a number of seconds fails
    after that long; failing raises :class:`StoreBusyError` naming the holder's pid.
    While waiting, ``notify`` (default: print to stderr) is told once who holds it.
    """
    if wait is not None and (isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0):
        raise ValueError(f"wait must be a number of seconds >= 0 or None, got {wait!r}")
    path = Path(folder)
    key = os.path.realpath(path)
    deadline = None if wait is None else time.monotonic() + float(wait)
    told = False
    while True:
        with _GUARD:
            held = _HELD.get(key)
            if held is not None and (held.exclusive or not exclusive):
                if exclusive:
                    held.exclusive += 1
                else:
                    held.shared += 1
                return StoreLock(key, exclusive)
            fd = held.fd if held is not None else _open_lock_file(path, exclusive)
            if fd is None:  # nothing to lock on a read-only store: read as is
                return StoreLock(key, exclusive)
            if _try(fd, exclusive):
                if held is None:
                    held = _HELD[key] = _Held(fd)
                if exclusive:
                    held.exclusive += 1
                    _write_owner(fd)
                else:
                    held.shared += 1
                return StoreLock(key, exclusive)
            if held is None:
                os.close(fd)
            else:  # a failed upgrade may have dropped this process's shared lock: take it back
                fcntl.flock(fd, fcntl.LOCK_SH)
        message = _busy_message(path, exclusive)
        if deadline is not None and time.monotonic() >= deadline:
            raise StoreBusyError(
                message.removeprefix("chunklab: ").replace("; waiting…", "")
                + ("; not waiting (--no-wait)" if not wait else f"; gave up after waiting {wait:g} s")
            )
        if not told:
            (notify or _to_stderr)(message)
            told = True
        time.sleep(POLL)


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
