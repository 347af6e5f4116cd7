"""Worker processes that notice when one of them dies, and say which item it was working on.

``multiprocessing.Pool`` replaces a worker killed by a signal (the OOM killer, ``kill -9``)
but loses its task, so ``imap`` waits for it forever. :class:`WorkerPool` feeds each worker
one item at a time over its own pipe and watches the process sentinels: a worker that exits
without answering turns its item into ``on_death(item, reason)`` and a fresh worker takes
its place. Results come back in input order.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: items sent ahead of the next result to give back, per worker (bounds what is held in memory)
AHEAD = 64


class WorkerPool:
    """``func(item, config)`` over items in ``jobs`` processes; a dead worker's item becomes ``on_death(item, reason)``."""

    def __init__(
        self,
        jobs: int,
        func: Callable[[Any, Any], Any],
        config: Any,
        on_death: Callable[[Any, str], Any],
    ) -> None:
        self.jobs = jobs
        self.func = func
        self.config = config
        self.on_death = on_death
        self.ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")

    def _start(self) -> list[Any]:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker_main, args=(child, self.func, self.config), daemon=True)
        proc.start()
        child.close()
        return [proc, parent, None]  # process, connection, the (index, item) it is working on

    def run(self, items: Sequence[Any]) -> Iterator[Any]:
        """The results of every item, in input order."""
        workers = [self._start() for _ in range(self.jobs)]
        done: dict[int, Any] = {}
        sent = given = 0
        try:
            while given < len(items):
                for w in workers:
                    if w[2] is None and sent < len(items) and sent < given + AHEAD * self.jobs:
                        try:
                            w[1].send((sent, items[sent]))
                        except OSError:  # died while idle: start another and give it the item
                            w[1].close()
                            w[0].join()
                            w[:] = self._start()
                            w[1].send((sent, items[sent]))
                        w[2] = (sent, items[sent])
                        sent += 1
                busy = [w for w in workers if w[2] is not None]
                ready = set(
                    multiprocessing.connection.wait([w[1] for w in busy] + [w[0].sentinel for w in busy])
                )
                for k, w in enumerate(workers):
                    if w[2] is None or not ({w[1], w[0].sentinel} & ready):
                        continue
                    try:
                        index, result = w[1].recv()
                    except (EOFError, OSError):  # the worker is gone without answering
                        w[0].join()
                        index, item = w[2]
                        done[index] = self.on_death(item, _death(w[0].exitcode))
                        w[1].close()
                        workers[k] = self._start()
                        continue
                    done[index] = result
                    w[2] = None
                while given in done:
                    yield done.pop(given)
                    given += 1
        finally:
            _stop(workers)


def _stop(workers: list[list[Any]]) -> None:
    for _proc, conn, _task in workers:
        with contextlib.suppress(OSError):
            conn.send(None)
        conn.close()
    for proc, _conn, _task in workers:
        proc.join(timeout=2)
        if proc.is_alive():
            proc.terminate()
            proc.join()


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process died ({name}) while working on this file"
    return f"the worker process exited (status {exitcode}) while working on this file"


def _worker_main(conn: Any, func: Callable[[Any, Any], Any], config: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        index, item = task
        conn.send((index, func(item, config)))
