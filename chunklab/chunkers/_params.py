"""Strategy parameters as the catalog reads them: command-line values, percentages, level sizes.

Helpers of :mod:`chunklab.chunkers.catalog` (which re-exports :func:`parse_param_value`).
"""

from __future__ import annotations

from typing import Any

from chunklab._validate import check_positive_int


def parse_param_value(value: str) -> Any:
    """``"400"`` -> 400, ``"0.5"`` -> 0.5, ``"true"`` -> True, ``"10%"`` and others stay strings."""
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def resolve_overlap(overlap: Any, size: Any) -> Any:
    """``overlap`` as given, or a percentage of ``size`` (``"10%"``) as an int."""
    if isinstance(overlap, str) and overlap.strip().endswith("%"):
        try:
            share = float(overlap.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"overlap {overlap!r} is not a number or a percentage") from None
        if not 0 <= share < 1:
            raise ValueError(f"overlap {overlap!r} must be a percentage in [0, 100)")
        if not isinstance(size, int):
            raise ValueError(f"a percentage overlap needs an integer size, got {size!r}")
        return int(round(size * share))
    return overlap


def show_param(value: Any) -> str:
    """A parameter value as a label shows it (level sizes as ``2048/512/128``)."""
    if isinstance(value, tuple):
        return "/".join(map(str, value))
    return str(value)


def parse_levels(levels: Any) -> tuple[int, ...]:
    """Level sizes, largest first: a sequence of ints, or ``"2048/512/128"`` (``"2048,512,128"`` accepted)."""
    if isinstance(levels, str):  # from the command line
        try:
            levels = [int(x) for x in levels.replace("/", " ").replace(",", " ").split()]
        except ValueError:
            raise ValueError(f"levels must be sizes like 2048/512/128, got {levels!r}") from None
    elif isinstance(levels, int):
        levels = [levels]
    out = tuple(check_positive_int(v, "levels") for v in levels)
    if not out:
        raise ValueError("levels must name at least one size, like 2048/512/128")
    return out
