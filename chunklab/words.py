"""Counts in English messages: "1 chunk", "2 chunks", "1,500 files"; "1/1 checkpoint", "2/3 checkpoints"."""

from __future__ import annotations

__all__ = ["counted", "plural"]


def plural(n: float, singular: str, plural_form: str | None = None) -> str:
    """``singular`` for exactly one, else ``plural_form`` (default: ``singular + "s"``)."""
    if n == 1:
        return singular
    return plural_form if plural_form is not None else singular + "s"


def counted(n: int, singular: str, plural_form: str | None = None) -> str:
    """``n`` with thousands separators and the noun agreeing with it: ``counted(1, "chunk")`` is "1 chunk"."""
    return f"{n:,} {plural(n, singular, plural_form)}"
