"""The one worker pool: a picklable function over items in N processes, results in input order.

``multiprocessing.Pool`` replaces a worker killed by a signal (the OOM killer, ``kill -9``)
but loses its task, so ``imap`` waits for it forever. :func:`map_ordered` feeds each worker
one item at a time over its own pipe and watches the process sentinels: a worker that exits
without answering turns its item into ``on_death(item, reason)`` and a fresh worker takes its
place. Workers ignore SIGINT, so Ctrl-C reaches only the main process, whose
``KeyboardInterrupt`` stops every worker at once.

``map_ordered(func, items, workers, initializer=..., initargs=..., progress=...)``:

* ``func(item)`` runs in a worker; ``func`` (a module-level function or a
  :func:`functools.partial` of one) is sent once per worker, never per item;
* ``initializer(*initargs)`` runs once in each worker before its first item;
* ``workers <= 1`` runs everything in this process (initializer included), in order;
* ``progress`` shows a bar (``True``, or a description string) over the items.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from tqdm.auto import tqdm

__all__ = ["AHEAD", "StartMethod", "WorkerDied", "map_ordered"]

T = TypeVar("T")
R = TypeVar("R")
#: how worker processes start (see :mod:`multiprocessing`)
StartMethod = Literal["fork", "spawn", "forkserver"]
#: items sent ahead of the next result to give back, per worker (bounds what is held in memory)
AHEAD = 64


class WorkerDied(RuntimeError):
    """A worker process exited while working on an item (raised when no ``on_death`` is given)."""


def map_ordered(
    func: Callable[[T], R],
    items: Iterable[T],
    workers: int = 1,
    *,
    initializer: Callable[..., object] | None = None,
    initargs: Sequence[object] = (),
    on_death: Callable[[T, str], R] | None = None,
    progress: bool | str = False,
    unit: str = "item",
    start_method: StartMethod | None = None,
    preload: Sequence[str] = (),
) -> Iterator[R]:
    """``func(item)`` for every item, in input order, in ``workers`` processes.

    ``on_death(item, reason)`` stands in for the result of an item whose worker died (without
    it, :class:`WorkerDied` is raised). ``start_method`` defaults to ``"fork"`` on Linux (fast,
    and ``func`` need not be picklable) and ``"spawn"`` elsewhere; ``"forkserver"`` starts
    workers from a clean server process that imported ``preload`` once, for a caller that
    holds threads (a loaded model, a Ray driver).
    """
    from chunklab._validate import check_positive_int

    check_positive_int(workers, "workers")
    items = list(items)
    bar = _bar(len(items), progress, unit)
    try:
        if workers == 1 or len(items) <= 1:
            if initializer is not None:
                initializer(*initargs)
            results: Iterator[R] = map(func, items)
        else:
            pool = _Pool(func, workers, initializer, tuple(initargs), on_death, start_method, preload)
            results = pool.run(items)
        for result in results:
            if bar is not None:
                bar.update(1)
            yield result
    finally:
        if bar is not None:
            bar.close()


def _bar(total: int, progress: bool | str, unit: str) -> tqdm | None:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=progress if isinstance(progress, str) else None, unit=unit)


@dataclass
class _Worker(Generic[T, R]):
    """One worker process, its end of the pipe, and the ``(index, item)`` it is working on."""

    proc: BaseProcess
    conn: Connection[tuple[int, T] | None, tuple[int, R]]
    task: tuple[int, T] | None = None


class _Pool(Generic[T, R]):
    """The processes behind :func:`map_ordered`: one pipe each, one item in flight each."""

    def __init__(
        self,
        func: Callable[[T], R],
        workers: int,
        initializer: Callable[..., object] | None,
        initargs: tuple[object, ...],
        on_death: Callable[[T, str], R] | None,
        start_method: StartMethod | None,
        preload: Sequence[str],
    ) -> None:
        self.func, self.workers, self.on_death = func, workers, on_death
        self.init = (initializer, initargs)
        method: StartMethod = start_method or ("fork" if sys.platform.startswith("linux") else "spawn")
        # Any: typeshed types get_context(str) as BaseContext, which has no Process (its subclasses do)
        self.ctx: Any = multiprocessing.get_context(method)
        if method == "forkserver" and preload:
            self.ctx.set_forkserver_preload(list(preload))

    def _start(self) -> _Worker[T, R]:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker_main, args=(child, self.func, *self.init), daemon=True)
        proc.start()
        child.close()
        return _Worker(proc, parent)

    def run(self, items: Sequence[T]) -> Iterator[R]:
        """The results of every item, in input order."""
        workers = [self._start() for _ in range(self.workers)]
        done: dict[int, R] = {}
        sent = given = 0
        finished = False
        try:
            while given < len(items):
                for k, w in enumerate(workers):
                    if w.task is None and sent < len(items) and sent < given + AHEAD * self.workers:
                        try:
                            w.conn.send((sent, items[sent]))
                        except OSError:  # died while idle: start another and give it the item
                            w.conn.close()
                            w.proc.join()
                            workers[k] = w = self._start()
                            w.conn.send((sent, items[sent]))
                        w.task = (sent, items[sent])
                        sent += 1
                busy = [w for w in workers if w.task is not None]
                ready = set(
                    multiprocessing.connection.wait([w.conn for w in busy] + [w.proc.sentinel for w in busy])
                )
                for k, w in enumerate(workers):
                    if w.task is None or not ({w.conn, w.proc.sentinel} & ready):
                        continue
                    try:
                        index, result = w.conn.recv()
                    except (EOFError, OSError):  # the worker is gone without answering
                        w.proc.join()
                        index, item = w.task
                        done[index] = self._died(item, w.proc.exitcode)
                        w.conn.close()
                        workers[k] = self._start()
                        continue
                    done[index] = result
                    w.task = None
                while given in done:
                    yield done.pop(given)
                    given += 1
            finished = True
        finally:
            _stop(workers, graceful=finished)

    def _died(self, item: T, exitcode: int | None) -> R:
        reason = _death(exitcode)
        if self.on_death is None:
            raise WorkerDied(f"{reason} (item {item!r})")
        return self.on_death(item, reason)


def _stop(workers: Sequence[_Worker[T, R]], graceful: bool) -> None:
    """Ask idle workers to exit (``graceful``), or terminate them at once (an error, Ctrl-C)."""
    for w in workers:
        if graceful:
            with contextlib.suppress(OSError):
                w.conn.send(None)
        else:
            w.proc.terminate()
        w.conn.close()
    for w in workers:
        proc = w.proc
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


def _worker_main(
    conn: Connection[tuple[int, R], tuple[int, T] | None],
    func: Callable[[T], R],
    initializer: Callable[..., object] | None,
    initargs: tuple[object, ...],
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        index, item = task
        conn.send((index, func(item)))
