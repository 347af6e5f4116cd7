"""Retries for a Chroma server: exponential backoff with jitter inside one total time budget.

A server store (``ChunkStore(url=...)``, ``chunklab index --chroma-url``) calls Chroma over
HTTP; a server that restarts (``chroma run`` killed and started again on the same path)
refuses connections for a few seconds and then answers with everything it had acknowledged.
Every write of the kit is an upsert by content id or a delete by id, so repeating a request
that may or may not have reached the server is safe: :func:`call` repeats it on connection
errors, waiting ``base_s``, ``2 * base_s``, ... (at most ``max_s``, each scaled by a random
factor in [1 - jitter, 1]) until ``budget_s`` seconds have passed without an answer, then
raises :class:`ServerUnavailableError`. Anything else the server says (a bad filter, a
missing collection) is not a connection error and is raised at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["EXIT_SERVER_DOWN", "RetryPolicy", "ServerUnavailableError", "call", "is_connection_error"]

T = TypeVar("T")

#: the exit status of ``chunklab`` when the server stayed down past the budget (sysexits' EX_TEMPFAIL)
EXIT_SERVER_DOWN = 75


class ServerUnavailableError(ConnectionError, ValueError):
    """The Chroma server did not answer within the retry budget (exit status :data:`EXIT_SERVER_DOWN`).

    Also a ValueError, as an unreachable server always was for
    :class:`~chunklab.retrieval.chroma.store.ChunkStore`.
    """

    exit_code = EXIT_SERVER_DOWN

    def __init__(self, message: str, url: str = "", waited_s: float = 0.0) -> None:
        super().__init__(message)
        self.url = url
        self.waited_s = waited_s


@dataclass(frozen=True)
class RetryPolicy:
    """How long and how often to retry: ``budget_s`` in total, delays from ``base_s`` doubling to ``max_s``.

    ``budget_s=0`` tries once. ``seed`` makes the jitter reproducible (tests).
    """

    budget_s: float = 60.0
    base_s: float = 0.2
    max_s: float = 5.0
    jitter: float = 0.5
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("budget_s", "base_s", "max_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must lie in [0, 1], got {self.jitter!r}")

    def delays(self) -> list[float]:
        """The waits between attempts, in order, whose sum stays within the budget."""
        rng = random.Random(self.seed)
        out: list[float] = []
        total, step = 0.0, self.base_s
        while total < self.budget_s:
            wait = min(step, self.max_s) * (1.0 - self.jitter * rng.random())
            wait = min(wait, self.budget_s - total)
            if wait <= 0:
                break
            out.append(wait)
            total += wait
            step *= 2
        return out


def is_connection_error(exc: BaseException) -> bool:
    """True for errors that mean "no answer" (worth retrying), not "the server said no"."""
    try:
        import httpx
    except ImportError:  # pragma: no cover - chromadb depends on httpx
        httpx = None  # type: ignore[assignment]
    if httpx is not None and isinstance(exc, httpx.TransportError):
        return True
    if isinstance(exc, (ConnectionError, TimeoutError)) and not isinstance(exc, ServerUnavailableError):
        return True
    # chromadb's HttpClient raises this ValueError when its first request finds no server
    return isinstance(exc, ValueError) and "Could not connect to a Chroma server" in str(exc)


def call(
    fn: Callable[[], T],
    policy: RetryPolicy,
    url: str,
    what: str = "request",
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[], None] | None = None,
) -> T:
    """``fn()``, repeated on connection errors per ``policy``; :class:`ServerUnavailableError` past it.

    ``on_retry`` runs before each repeat (e.g. to reopen the client).
    """
    start = time.monotonic()
    for wait in [*policy.delays(), None]:
        try:
            return fn()
        except Exception as exc:
            if not is_connection_error(exc):
                raise
            if wait is None:
                waited = time.monotonic() - start
                raise ServerUnavailableError(
                    f"the Chroma server at {url} did not answer the {what} for {waited:.0f} s ({exc})",
                    url=url,
                    waited_s=waited,
                ) from exc
        sleep(wait)
        if on_retry is not None:
            try:
                on_retry()
            except Exception as exc:
                if not is_connection_error(exc):
                    raise
    raise AssertionError("unreachable")  # pragma: no cover
