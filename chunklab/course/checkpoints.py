"""What checkpoint cells print: values only a correct implementation produces.

The helpers keep those values machine-independent (bands, thresholds, rounded numbers).
When a notebook is graded, the grader binds the names a checkpoint uses to a copy of this
module read again from its file (:mod:`chunklab.course.guard`), so a learner cell that
rebinds ``describe_chunks`` (or ``print``) changes nothing a checkpoint prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from chunklab.chunk import check_chunks

if TYPE_CHECKING:
    from chunklab.chunk import Chunk

__all__ = ["at_least", "at_most", "band", "describe_chunks", "show"]


def show(label: str, value: object, *, digits: int = 3) -> None:
    """Print ``label: value`` with floats rounded to ``digits`` decimals (stable across machines)."""
    print(f"{label}: {_fmt(value, digits)}")


def band(value: float, edges: Sequence[float], *, unit: str = "") -> str:
    """The band of ``edges`` that holds ``value``: ``"10-20%"``-style, for machine-dependent numbers.

    ``edges`` are increasing; a value below the first edge reads ``"< first"``, one at or
    above the last ``">= last"``. Use it for rates and sizes that differ from one machine
    to another but should land in the same band everywhere.
    """
    if not edges or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise ValueError(f"edges must be a non-empty increasing sequence, got {list(edges)!r}")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "undefined"
    if value < edges[0]:
        return f"< {_fmt(edges[0])}{unit}"
    for lo, hi in zip(edges, edges[1:], strict=False):
        if lo <= value < hi:
            return f"{_fmt(lo)}-{_fmt(hi)}{unit}"
    return f">= {_fmt(edges[-1])}{unit}"


def at_least(label: str, value: float, threshold: float) -> str:
    """``"label >= threshold: yes"`` (or ``no``): a named verdict against a threshold."""
    return f"{label} >= {_fmt(threshold)}: {'yes' if _number(value) and value >= threshold else 'no'}"


def at_most(label: str, value: float, threshold: float) -> str:
    """``"label <= threshold: yes"`` (or ``no``): a named verdict against a threshold."""
    return f"{label} <= {_fmt(threshold)}: {'yes' if _number(value) and value <= threshold else 'no'}"


def describe_chunks(
    chunks: Sequence[Chunk],
    source: str,
    *,
    max_size: int | None = None,
    length: Callable[[str], int] | None = None,
    overlap: int = 0,
    show_spans: int = 2,
) -> None:
    """Print what a checkpoint needs to know about a chunk list.

    The count, the first and last ``show_spans`` offsets, and the Chunk contract verdict
    from :func:`chunklab.check_chunks` (the number of violations and the first one).
    """
    chunks = list(chunks)
    print(f"chunks: {len(chunks)}")
    if chunks:
        print(f"first spans: {[(c.start, c.end) for c in chunks[:show_spans]]}")
        print(f"last spans: {[(c.start, c.end) for c in chunks[-show_spans:]]}")
    problems = check_chunks(chunks, source, max_size=max_size, length=length, overlap=overlap)
    print(f"contract violations: {len(problems)}")
    if problems:
        print(f"first violation: {problems[0]}")


def _number(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _fmt(value: object, digits: int = 3) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        text = f"{round(value, digits):.{digits}f}".rstrip("0").rstrip(".")
        return "0" if text == "-0" else text
    return str(value)
