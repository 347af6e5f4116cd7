"""Reading a small model's answers: pure functions, no model, safe on any string.

- :func:`parse_boundary_answer`: which numbered unit a boundary answer names (a number,
  ``"Paragraph 7"``, a quoted sentence found in a unit), or why none can be used.
- :func:`parse_propositions`: the statements of a propositions answer (lines, bullets, numbered
  items, or a JSON list), cleaned and de-duplicated.
- :func:`align_proposition`: the source span a proposition came from: an exact substring first,
  else the sentence sharing most of its words. A span is always a slice of the source; a
  proposition that matches nothing well enough gets None, never an invented offset.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "MIN_OVERLAP",
    "Alignment",
    "BoundaryAnswer",
    "align_proposition",
    "parse_boundary_answer",
    "parse_propositions",
]

#: the share of a proposition's distinct words a sentence must hold for the proposition to align to it
MIN_OVERLAP = 0.6
#: a quoted answer shorter than this (after normalizing) is too short to identify a unit
MIN_QUOTE = 12

_LABELLED = re.compile(r"(?i)(?<!\w)(?:paragraph|passage|unit|section|id|number|no\.?|#)\s*[:#=]?\s*(\d+)")
_LEADING = re.compile(r"^\W*(\d+)(?!\d)")
_ANY_NUMBER = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_LABEL_PREFIX = re.compile(r"(?i)^\W*(?:answer|paragraph|passage|unit)\s*\d*\s*[:.\-]\s*")
_BULLET = re.compile(r"^\s*(?:[-*•·‣◦]+|\(?\d{1,3}[.)\]:]|\(?[a-zA-Z][.)]\s)\s*")
_QUOTES = "\"'“”‘’«»「」`"


class BoundaryAnswer(NamedTuple):
    """A boundary answer read: ``unit`` (1-based, in ``2..len(units)``) or None, and ``how``.

    ``how`` is ``"number"`` or ``"quote"`` when a unit was found, else why not: ``"empty"``,
    ``"out_of_range"`` (a number or a quote of a unit that cannot start a new chunk) or
    ``"nonsense"`` (neither a number nor a quote of any unit).
    """

    unit: int | None
    how: str

    @property
    def fallback(self) -> bool:
        """Whether the answer names no usable unit (the chunker then cuts by size)."""
        return self.unit is None


def parse_boundary_answer(answer: str, units: Sequence[str]) -> BoundaryAnswer:
    """The unit where a new topic starts, as named by ``answer`` about the numbered
    ``units``.

    Unit 1 cannot start a new chunk, so the usable numbers are ``2..len(units)``. Tried
    in order: a labelled number (``"Paragraph 7"``, ``"ID: 7"``, ``"#7"``) or a leading
    one (``"7."``); a quote of a unit's text (whitespace and case ignored; the first
    unit after the first that holds it); any number in the answer. Digits in any script
    count (NFKC-normalized, so full-width ``"７"`` is 7).
    """
    raw = answer if isinstance(answer, str) else ""
    text = unicodedata.normalize("NFKC", raw).strip()
    if not text:
        return BoundaryAnswer(None, "empty")
    n = len(units)
    first = _LABELLED.search(text) or _LEADING.search(text)
    if first is not None:
        number = _number(first.group(1))
        if 2 <= number <= n:
            return BoundaryAnswer(number, "number")
    quoted = _quoted_unit(text, units)
    if quoted is not None:
        if quoted >= 2:
            return BoundaryAnswer(quoted, "quote")
        return BoundaryAnswer(None, "out_of_range")
    any_number = first or _ANY_NUMBER.search(text)
    if any_number is None:
        return BoundaryAnswer(None, "nonsense")
    digits = any_number.group(1) if any_number is first else any_number.group(0)
    number = _number(digits)
    if 2 <= number <= n:
        return BoundaryAnswer(number, "number")
    return BoundaryAnswer(None, "out_of_range")


def _quoted_unit(text: str, units: Sequence[str]) -> int | None:
    """The 1-based unit whose text holds the quote in ``text`` (or is held by it): the first after unit 1."""
    quote = _normalize(_LABEL_PREFIX.sub("", text).strip(_QUOTES + " \t\n.…"))
    if len(quote) < MIN_QUOTE:
        return None
    found = [
        i
        for i, unit in enumerate(units, 1)
        if (norm := _normalize(unit)) and (quote in norm or (len(norm) >= MIN_QUOTE and norm in quote))
    ]
    if not found:
        return None
    later = [i for i in found if i >= 2]
    return later[0] if later else found[0]


def parse_propositions(answer: str) -> list[str]:
    """The propositions in a model's answer, in order, each once, without bullets, numbers or quotes.

    A JSON list of strings is read as such; otherwise each non-empty line is one proposition,
    except a line ending in ``":"`` (an introduction such as "Here are the propositions:").
    """
    text = unicodedata.normalize("NFC", answer if isinstance(answer, str) else "").strip()
    items: list[str] = []
    if text.startswith("["):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, list):
            items = [x for x in data if isinstance(x, str)]
    if not items:
        items = [line for line in text.splitlines() if not line.rstrip().endswith(":")]
    out: list[str] = []
    for item in items:
        clean = _BULLET.sub("", item).strip().strip(_QUOTES).strip()
        if _WORD.search(clean) and clean not in out:
            out.append(clean)
    return out


@dataclass(frozen=True)
class Alignment:
    """A proposition's source span ``[start, end)`` and ``how`` it was found: ``"exact"``, ``"overlap"``."""

    start: int
    end: int
    how: str
    score: float = 1.0


def align_proposition(
    proposition: str,
    source: str,
    sentences: Sequence[tuple[int, int]],
    start: int = 0,
    end: int | None = None,
    *,
    min_overlap: float = MIN_OVERLAP,
) -> Alignment | None:
    """Where ``proposition`` came from in ``source[start:end]``, or None when nothing
    matches well enough.

    An exact occurrence (its first, stripped of surrounding whitespace) wins. Otherwise
    the sentence span (among ``sentences``, inside the range) holding the largest share
    of the proposition's distinct words (case-folded), at least ``min_overlap``; ties go
    to the shorter sentence, then the earlier.
    """
    end = len(source) if end is None else end
    needle = proposition.strip() if isinstance(proposition, str) else ""
    if not needle:
        return None
    at = source.find(needle, start, end)
    if at != -1:
        return Alignment(at, at + len(needle), "exact")
    words = set(_WORD.findall(needle.casefold()))
    if not words:
        return None
    best: tuple[float, int, int, int] | None = None  # (-score, length, start, end)
    for s, e in sentences:
        if s < start or e > end or e <= s:
            continue
        share = len(words & set(_WORD.findall(source[s:e].casefold()))) / len(words)
        key = (-share, e - s, s, e)
        if share >= min_overlap and (best is None or key < best):
            best = key
    if best is None:
        return None
    return Alignment(best[2], best[3], "overlap", -best[0])


def _number(digits: str) -> int:
    """The value of a run of digits; -1 (out of any range) for one too long to be a unit's number."""
    return int(digits) if len(digits) <= 9 else -1


def _normalize(text: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()
