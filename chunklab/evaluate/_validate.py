"""Argument checks of the evaluation package: a wrong value raises a ValueError naming the parameter."""

from __future__ import annotations

from typing import Any

from chunklab._validate import check_choice, check_positive_int

__all__ = [
    "CONVENTIONS",
    "check_choice",
    "check_convention",
    "check_number",
    "check_positive_int",
    "check_share",
    "is_int",
]

#: How span metrics count retrieved characters: as a set, or summed as Chroma's report does.
CONVENTIONS = ("union", "chroma")


def check_convention(convention: Any) -> str:
    """``convention`` if it is one of :data:`CONVENTIONS` (``"union"`` or ``"chroma"``)."""
    return check_choice(convention, CONVENTIONS, "convention")


def check_share(value: Any, name: str) -> float:
    """``value`` as a float in ``(0, 1]``, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    return float(value)


def is_int(value: Any) -> bool:
    """True for an ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_number(value: Any, name: str) -> float:
    """``value`` as a float (an int or float, not a bool, not NaN), else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)
