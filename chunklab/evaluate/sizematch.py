"""Size matching by characters returned: the control that keeps a comparison from rewarding size.

A strategy that hands the model more text finds the answer more often by that alone. The fair
flat comparison for a strategy that returns ``T`` characters per question is a flat chunker
that returns ``T`` too, so the size to give it is read off a sweep (size -> characters returned
per question) by :func:`size_for_chars`, and the sweep itself is the recall-vs-characters curve.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from chunklab._validate import check_number

__all__ = ["size_for_chars"]


def size_for_chars(sweep: Mapping[float, float], target: float) -> float:
    """The size at which a chunker returns ``target`` characters per question, from a sweep.

    ``sweep`` maps each size tried to the mean characters returned per question at that size
    (:attr:`BenchmarkResult.summary`'s ``retrieved_chars``). Characters returned grow with the
    size, so the size is interpolated linearly between the two sweep points around ``target``.
    ``ValueError`` when the sweep has fewer than two points, is not increasing, or does not
    reach ``target`` (widen the sweep rather than extrapolate).
    """
    target = check_number(target, "target")
    if len(sweep) < 2:
        raise ValueError(f"sweep needs at least two sizes, got {dict(sweep)!r}")
    sizes = np.array(sorted(sweep), dtype=float)
    chars = np.array([check_number(sweep[s], "sweep") for s in sorted(sweep)], dtype=float)
    if (np.diff(chars) <= 0).any():
        raise ValueError(
            f"sweep: characters returned must grow with the size, got {dict(zip(sizes, chars))!r}"
        )
    if not chars[0] <= target <= chars[-1]:
        raise ValueError(
            f"target {target:,.0f} lies outside the sweep's {chars[0]:,.0f} to {chars[-1]:,.0f} characters: "
            "add sizes to the sweep"
        )
    return float(np.interp(target, chars, sizes))
