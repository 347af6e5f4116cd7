"""How submissions are graded: time limits, sandbox, limits, hidden checks (:class:`GradeOptions`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from chunklab.course.sandbox import DEFAULT_MEMORY, Limits

__all__ = ["GradeOptions", "default_cache", "describe_grading"]
_CACHE_COPY_LIMIT = 256 * 1024**2


@dataclass(frozen=True)
class GradeOptions:
    """How submissions are run: limits, sandbox, hidden checks."""

    timeout: float = 1200.0  # seconds, for each cell and, separately, for each notebook as a whole
    notebook_timeout: float | None = None  # seconds for each notebook as a whole (None: 2 × ``timeout``)
    memory: int | None = DEFAULT_MEMORY  # address-space limit of a kernel, in bytes (None: no limit)
    sandbox: bool | None = (
        None  # None: bubblewrap when installed (warn when not); False: never; True: required
    )
    hidden: bool = True  # run the hidden checks
    seed: int | None = None  # seed of the hidden checks' inputs (None: fresh per submission)
    startup_timeout: float = 120.0
    cache: Path | None = None  # embedding cache copied into each run (None: the course's, when present)
    interrupt_grace: float = 10.0  # seconds a cell past its per-cell limit gets to stop once interrupted
    limits: Limits | None = (
        None  # /tmp, scratch, output and message caps (None: the defaults; ``memory`` wins)
    )
    progress: Callable[[str], None] | None = None  # told before each code cell runs ("code cell 3 of 9 ...")

    @property
    def kernel_limits(self) -> Limits:
        """The limits each kernel runs under (``memory`` set here overrides ``limits.memory``)."""
        return replace(self.limits or Limits(), memory=self.memory)


def describe_grading(options: GradeOptions) -> str:
    """One line: the sandbox and the limits notebooks are graded under."""
    from chunklab.course.sandbox import sandbox_line

    opts = options
    limit = f"time {opts.timeout:g} s per cell / {opts.notebook_timeout or 2 * opts.timeout:g} s per notebook"
    return f"{sandbox_line(opts.sandbox, opts.kernel_limits)}, {limit}"


def default_cache() -> Path | None:
    """The embedding cache (:func:`chunklab.paths.cache_dir`) when it exists and its files are small
    enough to copy."""
    from chunklab.paths import cache_dir

    cache = cache_dir()
    if not cache.is_dir():
        return None
    size = sum(f.stat().st_size for f in cache.iterdir() if f.is_file())
    return cache if size <= _CACHE_COPY_LIMIT else None
