"""The Chunk contract, for every strategy of the catalog in every unit, on nasty text of every format.

One parametrized test instead of a copy per strategy: exact offsets (``source[start:end] == text``;
for HTML the visible text, its span on the markup), nothing lost, every chunk within its budget
measured where it lies (or marked oversize, and then really indivisible), real overlap where the
strategy takes an overlap, and the same chunks on a second run. The inputs mix blocks that give each
format its structure with nasty pieces (CRLF, a BOM, tabs, combining accents, emoji, NUL, empty and
whitespace-only text). The units are characters, words, the model's tokens and two tokenizers
trained at test time; semantic chunking embeds with the real static model.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chunklab.chunk import check_chunks
from chunklab.chunkers.catalog import available_strategies
from chunklab.chunkers.structural.html import html_text_map
from chunklab.documents import Document
from chunklab.embed import get_encoder
from chunklab.units import length_function
from tests.support.contract import TEXT_FORMATS, build_strategy, chunk_budget, document_text, in_place_measure

STRATEGIES = available_strategies()
#: characters, words, the embedding model's tokens, and the two trained tokenizers (``trained``)
UNIT_NAMES = ("chars", "words", "tokens", "bpe", "bytelevel")
#: the strategies whose overlap is a number of units (the others overlap whole sentences or paragraphs)
OVERLAPPING = {"fixed", "recursive"}


@pytest.fixture(scope="module")
def encoder():
    """The distilled static model: real embeddings for semantic chunking, at little cost."""
    return get_encoder("static")


@pytest.mark.parametrize("unit_name", UNIT_NAMES)
@pytest.mark.parametrize("name", STRATEGIES)
@given(
    text=document_text, fmt=st.sampled_from(TEXT_FORMATS), budget=st.integers(3, 60), share=st.integers(0, 99)
)
@example(text="", fmt="text", budget=3, share=0)
@example(text=" \t\r\n\r\n  \n", fmt="markdown", budget=3, share=50)
@example(text="\ufeff# Title\r\n\r\nOne line.\tA tab.\r\nTwo lines.\r\n", fmt="markdown", budget=4, share=99)
@example(
    text="e\u0301t\u00e9 👩\u200d👩\u200d👧 中文句子。第二句！\x00 done.", fmt="text", budget=5, share=40
)
def test_every_catalog_strategy_keeps_the_chunk_contract_in_every_unit(
    trained, encoder, name, unit_name, text, fmt, budget, share
):
    unit = trained.get(unit_name, unit_name)
    overlap = (budget - 1) * share // 99  # 0 .. budget - 1
    strategy = build_strategy(name, unit, budget, overlap)
    doc = Document("doc", text, None, fmt, None)
    chunks = strategy(doc, encoder=encoder)
    html = fmt == "html"
    # exact offsets (for HTML: visible text, spans on the markup), nothing lost, real overlap
    if html and not chunks:  # a page with no visible text has no chunks
        assert not html_text_map(text)[0].strip()
    else:
        real = overlap if name in OVERLAPPING and not html else 0
        assert check_chunks(chunks, text, html=html, overlap=real) == []
    assert strategy(doc, encoder=encoder) == chunks  # deterministic: the same chunks, ids and metadata
    measures: dict[str, tuple] = {}
    for c in chunks:
        # the unit the chunk was measured in: ours, except Markdown hierarchy on another format
        # in characters, which falls back to MiniLM token levels
        unit_c = c.metadata["params"].get("unit", "chars")
        fallback = (
            strategy.family == "markdown-hierarchy" and unit == "chars" and "levels" in c.metadata["params"]
        )
        assert unit_c == ("tokens" if fallback else unit)
        if unit_c not in measures:
            measures[unit_c] = (length_function(unit_c), *in_place_measure(text, unit_c))
        measure, in_place, indivisible = measures[unit_c]
        budget_c = chunk_budget(strategy, c)
        if budget_c is None:
            continue
        size = measure(c.text)
        if size > budget_c:
            assert c.metadata.get("oversize"), (c.metadata, size, budget_c)
        if html or not c.metadata.get("oversize"):
            continue
        # a chunk over budget is one line that cannot be cut (structural Python), an atom no cut
        # can shrink, or a piece that fits where it lies and re-tokenizes longer on its own
        one_line = "\n" not in c.text.strip() and strategy.family == "structural"
        fits = in_place(c.start, c.end) <= budget_c
        assert one_line or fits or indivisible(c.start, c.end), (c.metadata, c.text)
