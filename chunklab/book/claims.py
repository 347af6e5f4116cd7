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

A word is a claim about a magnitude, not only a sign: "always" needs a share of 1, "exactly"
and "identical" a difference of 0, "about as much" a ratio within 10 % of 1, "larger" an
established difference, "keeps whole where the other cuts" a share of at least 90 %. :data:`WORDINGS`
maps each such wording to the assertions that check it; a registered sentence that uses the word
must assert one of them (``tests/unit/test_claims.py``), so the number has to meet the word.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from chunklab.evaluate.verdict import verdict

__all__ = [
    "ABOUT_AS_MUCH",
    "ASSERTIONS",
    "GLUE_PREFIX",
    "KEEPS_WHOLE",
    "WORDINGS",
    "Claim",
    "ClaimError",
    "claims",
    "holds",
    "record",
    "wordings_in",
]

#: the glue name of a recorded quantity is this prefix plus the quantity's name
GLUE_PREFIX = "claim__"

#: "about as much": a ratio of two sizes within this share of 1
ABOUT_AS_MUCH = 0.10
#: "keeps whole where the other cuts": at least this share of the units the other cuts stay whole
KEEPS_WHOLE = 0.90

#: what a claim may assert: about a paired comparison (a dict with diff, lo, hi) or a number
ASSERTIONS: dict[str, str] = {
    "established_ahead": "A - B is established above zero (its 95% interval is above 0)",
    "established_behind": "A - B is established below zero (its 95% interval is below 0)",
    "not_established": "the interval of A - B contains zero",
    "not_established_ahead": "A is not established ahead of B (B may be ahead, or tied)",
    "greater_than": "the number is above `than`",
    "less_than": "the number is below `than`",
    "always": "the number is a share equal to 1 (every case)",
    "exactly": "the number (a difference) is 0",
    "identical": "the number (a share or count of cases that differ) is 0",
    "about_as_much": f"the number (a ratio) lies within {ABOUT_AS_MUCH:.0%} of 1",
    "larger": "A - B (or a difference of differences) is established above zero",
    "keeps_whole": f"the number (share of the units the other cuts that this keeps whole) >= {KEEPS_WHOLE}",
}

#: wording of a sentence (a regular expression, case-insensitive) -> the assertions that check it
WORDINGS: dict[str, frozenset[str]] = {
    r"\balways (?:returns?|buys|keeps|finds|gives|wins)\b": frozenset({"always"}),
    r"\bon every question\b": frozenset({"always", "identical"}),
    r"\b(?:is|are|returned|returns) exactly\b": frozenset({"exactly", "identical"}),
    r"\bidentical (?:to|on|with)\b": frozenset({"identical", "exactly"}),
    r"\babout as (?:much|many)\b": frozenset({"about_as_much"}),
    r"\b(?:gain|difference|effect) is larger\b|\blarger on\b": frozenset({"larger"}),
    r"\bwhole where\b": frozenset({"keeps_whole"}),
}
_COMPARISON_ASSERTIONS = frozenset(
    {"established_ahead", "established_behind", "not_established", "not_established_ahead", "larger"}
)


def wordings_in(sentence: str) -> dict[str, frozenset[str]]:
    """The :data:`WORDINGS` a sentence uses: each matched pattern and the assertions that check it."""
    return {p: ok for p, ok in WORDINGS.items() if re.search(p, sentence, re.IGNORECASE)}


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
        bound = f" (within {ABOUT_AS_MUCH:.0%})" if self.asserts == "about_as_much" else bound
        bound = f" (>= {KEEPS_WHOLE:.0%})" if self.asserts == "keeps_whole" else bound
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
            "larger": direction > 0,
        }[claim.asserts]
    if isinstance(value, Mapping) or isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{claim.describe()}: needs a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{claim.describe()}: needs a finite number, got {value!r}")
    rules = {
        "greater_than": lambda v: v > claim.than,
        "less_than": lambda v: v < claim.than,
        "always": lambda v: v == 1,
        "exactly": lambda v: v == 0,
        "identical": lambda v: v == 0,
        "about_as_much": lambda v: abs(v - 1) <= ABOUT_AS_MUCH,
        "keeps_whole": lambda v: v >= KEEPS_WHOLE,
    }
    return bool(rules[claim.asserts](float(value)))


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
