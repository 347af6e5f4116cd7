"""The wording of a paired comparison: "established: +0.05 [+0.01, +0.09]" or "not established: …".

A paired comparison (:meth:`~chunklab.evaluate.result.BenchmarkResult.compare`: ``diff`` and
its 95% paired-bootstrap interval ``lo``/``hi``) is judged by the kit's one rule,
:func:`~chunklab.evaluate.bootstrap.is_established`. This module turns it into a
:class:`Verdict` that is printed at a precision where the rule can be checked by eye: an end
of the interval that excludes zero never prints as ``0.00`` (``+0.004`` is printed with three
decimals, not as ``+0.00``), so an interval that reads ``[+0.00, +0.09]`` is never called
established next to a ``[-0.00, +0.09]`` that is not.

:func:`describe` writes the verdict in English; other languages pass their own words and
number format (the book's Spanish edition does, through ``chunklab.book.labels``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from chunklab.evaluate.bootstrap import is_established

__all__ = ["MAX_DIGITS", "Verdict", "describe", "verdict", "visible_digits"]

#: the most decimals a verdict is printed with: an interval end closer to zero than this prints as 0
MAX_DIGITS = 4

#: ``(value, lo, hi, digits) -> "+0.05 [+0.01, +0.09]"``: how one language writes an estimate
EstimateFormat = Callable[[float, float, float, int], str]


@dataclass(frozen=True)
class Verdict:
    """A paired difference, its 95% interval, the rule's verdict and the decimals to print it with."""

    diff: float
    lo: float
    hi: float
    established: bool
    digits: int

    @property
    def direction(self) -> int:
        """``+1``: A established ahead of B; ``-1``: established behind; ``0``: not established."""
        if not self.established:
            return 0
        return 1 if self.lo > 0 else -1

    def __str__(self) -> str:
        return describe(self)


def visible_digits(lo: float, hi: float, digits: int = 2) -> int:
    """The fewest decimals (``digits`` to :data:`MAX_DIGITS`) at which no non-zero end prints as 0.

    At that precision the printed interval shows the rule: both ends with one sign means
    established, a sign change (or an exact zero) means not established.
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be a non-negative integer, got {digits!r}")
    for name, end in (("lo", lo), ("hi", hi)):
        if not math.isfinite(end):
            raise ValueError(f"{name} must be a finite number, got {end!r}")
    if lo > hi:
        raise ValueError(f"lo must not exceed hi, got lo={lo!r} > hi={hi!r}")
    d = digits
    while d < MAX_DIGITS and any(end != 0 and round(end, d) == 0 for end in (lo, hi)):
        d += 1
    return max(d, digits)


def verdict(comparison: Mapping[str, float], digits: int = 2) -> Verdict:
    """The :class:`Verdict` of a comparison with ``diff``, ``lo``, ``hi`` (``BenchmarkResult.compare``).

    ``digits`` is the precision wanted; the verdict's own ``digits`` may be larger
    (:func:`visible_digits`). ``established`` is :func:`~chunklab.evaluate.bootstrap.is_established`.
    """
    missing = [key for key in ("diff", "lo", "hi") if key not in comparison]
    if missing:
        raise ValueError(f"comparison needs diff, lo and hi; it has no {', '.join(missing)}")
    diff, lo, hi = (float(comparison[key]) for key in ("diff", "lo", "hi"))
    if not math.isfinite(diff):
        raise ValueError(f"diff must be a finite number, got {comparison['diff']!r}")
    return Verdict(diff, lo, hi, is_established(comparison), visible_digits(lo, hi, digits))


def _english_estimate(value: float, lo: float, hi: float, digits: int) -> str:
    return f"{value:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def describe(
    v: Verdict,
    *,
    established: str = "established",
    not_established: str = "not established",
    estimate: EstimateFormat = _english_estimate,
) -> str:
    """``"established: +0.05 [+0.01, +0.09]"``: the rule's word, then the difference and its interval.

    ``established``/``not_established`` and ``estimate`` give another language's words and
    number format; the defaults are English.
    """
    word = established if v.established else not_established
    return f"{word}: {estimate(v.diff, v.lo, v.hi, v.digits)}"
