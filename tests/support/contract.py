"""The Chunk contract's test inputs and measures: structured nasty text, catalog strategies sized in a unit.

Used by tests/unit/test_chunk_contract.py (every catalog strategy in every unit) and
tests/unit/test_units_tokenizer.py.
"""

from __future__ import annotations

import bisect
import re

from hypothesis import strategies as st

from chunklab.chunkers.catalog import get_strategy
from chunklab.generate import RECORDING, REPLAY_PREFIX
from chunklab.units import tokenizer_for
from tests.support.strategies import piece

#: blocks that give each format its structure: headings, fences, tables, definitions, markup
STRUCTURE = [
    "# Title\n\n",
    "## Part two\n",
    "```python\nx = 1\n\n\ny = 2\n```\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "def f(x):\n    return x\n\n",
    "class K:\n    def m(self):\n        pass\n",
    "@dec\ndef g():\n    '''doc'''\n",
    "<h2>Head</h2>",
    "<p>para &amp; more</p>",
    "<div class='x'>",
    "</div>",
    "<pre>a\n  b</pre>",
    "&#x1F600;",
    "Title\n=====\n\n",
    "Sub\n---\n",
    ".. note::\n\n   indented body\n",
    "A paragraph::\n\n    literal\n",
    "sentence one. ",
    "Sentence two! ",
    "a" * 90,
    "tokenization " * 12,
    "\n\n",
]
document_text = st.lists(st.one_of(st.sampled_from(STRUCTURE), piece), max_size=40).map("".join)
TEXT_FORMATS = ("text", "markdown", "python", "html", "rst")


def build_strategy(name: str, unit: str, budget: int, overlap: int | None = None):
    """The catalog strategy ``name`` with every size set from ``budget``, measured in ``unit``.

    ``overlap`` is the overlap of the strategies that take one (fixed, recursive); a quarter of
    the budget when not given. The LLM strategies answer from the packaged recording of the model.
    """
    overlap = budget // 4 if overlap is None else overlap
    replay = f"{REPLAY_PREFIX}{RECORDING}"  # the LLM strategies answer from recorded model outputs
    params = {
        "fixed": {"size": budget, "overlap": overlap},
        "recursive": {"size": budget, "overlap": overlap},
        "structural": {"max_chars": budget, "min_chars": budget // 3},
        "semantic": {"max_chars": budget, "min_chars": budget // 3},
        "hierarchical": {"levels": (budget * 4, budget * 2, budget)},
        "markdown-hierarchy": {"max_chars": budget},
        "paragraphs": {"max_chars": budget, "overlap_paragraphs": 1},
        "sentences": {"size": budget, "overlap_sentences": 1},
        "llm-boundaries": {"max_chars": budget, "window": 4, "model": replay},
        "propositions": {"max_chars": budget, "model": replay},
    }[name]
    return get_strategy(name, unit=unit, **params)


def chunk_budget(strategy, chunk) -> int | None:
    """The budget ``chunk`` must keep: its level's size, or None where no size applies."""
    p = strategy.params
    if strategy.family == "hierarchical" or (
        strategy.family == "markdown-hierarchy" and "levels" in chunk.metadata["params"]
    ):
        return chunk.metadata["params"]["levels"][chunk.level]
    if strategy.family == "markdown-hierarchy":
        return p["max_chars"] if chunk.level == 1 else None  # a section is a parent whatever its size
    return p.get("size", p.get("max_chars"))


def in_place_measure(source: str, unit: str):
    """``(count, indivisible)`` by the whole source's own encoding (the test's own measure).

    ``count(s, e)``: units intersecting ``source[s:e]``; ``indivisible(s, e)``: every position
    strictly inside falls strictly inside some unit, so no cut could make the span smaller
    (one character that a byte-level tokenizer spells with several tokens, for instance).
    """
    if unit == "chars":
        return (lambda s, e: e - s), (lambda s, e: e - s <= 1)
    if unit == "words":
        spans = [m.span() for m in re.finditer(r"\S+", source)]
    else:
        spans = [
            o for o in tokenizer_for(unit).encode(source, add_special_tokens=False).offsets if o[1] > o[0]
        ]
    ends = [e for _s, e in spans]
    starts = [s for s, _e in spans]

    def count(s: int, e: int) -> int:
        return max(0, bisect.bisect_left(starts, e) - bisect.bisect_right(ends, s))

    inside = bytearray(len(source) + 1)  # 1 where a position lies strictly inside a unit
    for a, b in spans:
        inside[a + 1 : b] = b"\x01" * max(0, b - a - 1)

    def indivisible(s: int, e: int) -> bool:
        return all(inside[s + 1 : e])

    return count, indivisible
