"""The claims registry: every sentence of the book that says what wins, helps or costs more, and its number.

A sentence of a chapter whose wording does not change with the numbers ("structural keeps
more functions whole", "auto-merge rarely merges at k = 5") is registered in
``chunklab/data/claims.toml``: the page, the quantity the chapter computes, the direction
the sentence asserts, and a fragment of the sentence itself (``says``). The chapter hands the
computed quantity to :func:`record`, which checks the page's claims on it while the book
builds (a claim that no longer holds stops the chapter with :class:`ClaimError`) and glues
the value into the executed notebook, where ``tests/unit/test_claims.py`` checks it again.

Sentences whose verdict can change are not registered: they are computed
(:func:`chunklab.book.labels.fmt_verdict` and glue).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from chunklab.evaluate.verdict import verdict

__all__ = ["ASSERTIONS", "GLUE_PREFIX", "Claim", "ClaimError", "claims", "holds", "record"]

#: the glue name of a recorded quantity is this prefix plus the quantity's name
GLUE_PREFIX = "claim__"

#: what a claim may assert: about a paired comparison (a dict with diff, lo, hi) or a number
ASSERTIONS: dict[str, str] = {
    "established_ahead": "A - B is established above zero (its 95% interval is above 0)",
    "established_behind": "A - B is established below zero (its 95% interval is below 0)",
    "not_established": "the interval of A - B contains zero",
    "not_established_ahead": "A is not established ahead of B (B may be ahead, or tied)",
    "greater_than": "the number is above `than`",
    "less_than": "the number is below `than`",
}
_COMPARISON_ASSERTIONS = frozenset(
    {"established_ahead", "established_behind", "not_established", "not_established_ahead"}
)


class ClaimError(AssertionError):
    """A registered sentence of the book that its computed number no longer supports."""


@dataclass(frozen=True)
class Claim:
    """One registered sentence: on ``page``, ``says`` asserts ``asserts`` about ``quantity``."""

    page: str
    quantity: str
    asserts: str
    says: str
    than: float = 0.0

    def describe(self) -> str:
        """The claim in one line, for error messages."""
        bound = f" {self.than}" if self.asserts in ("greater_than", "less_than") else ""
        return f"{self.page}: {self.says!r} needs {self.quantity} {self.asserts}{bound}"


@cache
def claims() -> tuple[Claim, ...]:
    """Every registered claim (read once from ``chunklab/data/claims.toml``), validated."""
    raw = resources.files("chunklab").joinpath("data/claims.toml").read_text(encoding="utf-8")
    out = []
    for i, entry in enumerate(tomllib.loads(raw).get("claim", [])):
        missing = [key for key in ("page", "quantity", "asserts", "says") if not entry.get(key)]
        if missing:
            raise ValueError(f"claim {i} in claims.toml has no {', '.join(missing)}")
        if entry["asserts"] not in ASSERTIONS:
            raise ValueError(
                f"claim {i} in claims.toml: asserts must be one of {', '.join(ASSERTIONS)}; "
                f"got {entry['asserts']!r}"
            )
        out.append(Claim(**entry))
    return tuple(out)


def holds(claim: Claim, value: Mapping[str, float] | float) -> bool:
    """Whether ``value`` (a comparison with diff/lo/hi, or a number) supports ``claim``."""
    if claim.asserts in _COMPARISON_ASSERTIONS:
        if not isinstance(value, Mapping):
            raise ValueError(f"{claim.describe()}: needs a comparison (diff, lo, hi), got {value!r}")
        direction = verdict(value).direction
        return {
            "established_ahead": direction > 0,
            "established_behind": direction < 0,
            "not_established": direction == 0,
            "not_established_ahead": direction <= 0,
        }[claim.asserts]
    if isinstance(value, Mapping) or isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{claim.describe()}: needs a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{claim.describe()}: needs a finite number, got {value!r}")
    return value > claim.than if claim.asserts == "greater_than" else value < claim.than


def record(page: str, quantity: str, value: Mapping[str, float] | float) -> None:
    """Check the claims ``page`` makes about ``quantity`` against ``value``; glue it (hidden) for the tests.

    Raises :class:`ClaimError` naming the sentence when a claim does not hold, and
    ``ValueError`` when no claim of ``page`` rests on ``quantity`` (a recorded quantity that
    backs nothing is a registry out of date).
    """
    mine = [c for c in claims() if c.page == page and c.quantity == quantity]
    if not mine:
        raise ValueError(f"no claim of page {page!r} rests on {quantity!r}: register it in claims.toml")
    if isinstance(value, Mapping):
        stored: dict[str, float] | float = {k: float(value[k]) for k in ("diff", "lo", "hi")}
    else:
        stored = float(value)
    failed = [c.describe() for c in mine if not holds(c, stored)]
    if failed:
        raise ClaimError(f"{quantity} = {stored!r} does not support: " + "; ".join(failed))
    from myst_nb import glue

    glue(GLUE_PREFIX + quantity, stored, display=False)
