"""The sentence strategy: whole sentences to a budget, real sentence overlap, the Chunk contract."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks
from chunklab.chunkers.catalog import get_strategy
from chunklab.chunkers.sentences import chunk_sentences
from chunklab.text import split_sentences
from chunklab.units import length_function
from tests.support.strategies import any_text, nasty_text

SENTENCE = st.sampled_from(
    [
        "The pump runs at 40 rpm.",
        "Dr. Smith measured 3.14 volts at 9 a.m. on Monday!",
        "Is it on?",
        "See setup.py and example.com/a.html for details.",
        "A much longer sentence that keeps going with several clauses, commas and words in it.",
        "中文句子。",
    ]
)
prose = st.lists(st.tuples(SENTENCE, st.sampled_from([" ", "  ", "\n", "\n\n"])), max_size=30).map(
    lambda parts: "".join(s + sep for s, sep in parts)
)


@settings(max_examples=60, deadline=None)
@given(text=st.one_of(any_text, prose), size=st.integers(1, 300), overlap=st.integers(0, 3))
def test_contract_holds_on_any_text(text: str, size: int, overlap: int) -> None:
    chunks = chunk_sentences(text, size, overlap)
    assert check_chunks(chunks, text, max_size=size, overlap=overlap) == []
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)


@settings(max_examples=40, deadline=None)
@given(text=prose, size=st.integers(40, 400))
def test_chunks_are_whole_sentences(text: str, size: int) -> None:
    """A chunk not marked cut starts at a sentence start and ends at a sentence end of the one rule."""
    spans = split_sentences(text)
    starts = {s for s, _ in spans}
    ends = {e for _, e in spans}
    for c in chunk_sentences(text, size, 1):
        if not c.metadata.get("cut_sentence"):
            assert c.start in starts and c.end in ends, (c.start, c.end)


@settings(max_examples=40, deadline=None)
@given(text=prose, size=st.integers(60, 400), overlap=st.integers(1, 3))
def test_overlap_repeats_whole_sentences(text: str, size: int, overlap: int) -> None:
    """The next chunk opens with the previous chunk's last sentences, as many as asked or recorded why not."""
    chunks = chunk_sentences(text, size, overlap)
    for a, b in zip(chunks, chunks[1:]):
        shared = b.metadata["overlap"]
        assert shared <= overlap
        if shared:
            assert b.start < a.end
            assert text[b.start : a.end].strip() and a.text.endswith(text[b.start : a.end])
        else:
            assert b.start >= a.end
            assert "no_overlap_reason" in b.metadata or a.metadata["sentences"] == 1


@settings(max_examples=25, deadline=None)
@given(text=nasty_text, size=st.integers(1, 40))
def test_words_budget(text: str, size: int) -> None:
    chunks = chunk_sentences(text, size, 1, unit="words")
    assert check_chunks(chunks, text, max_size=size, length=length_function("words"), overlap=1) == []


def test_packs_greedily_and_cuts_only_overlong_sentences() -> None:
    text = "One two three. Four five six. Seven eight nine. " + "x" * 50 + "."
    chunks = chunk_sentences(text, 30, 0)
    assert [c.text for c in chunks[:2]] == ["One two three. Four five six.", "Seven eight nine."]
    assert all(c.metadata.get("cut_sentence") for c in chunks[2:])
    assert "".join(c.text for c in chunks[2:]) == "x" * 50 + "."


def test_catalog_entry_and_bad_arguments() -> None:
    s = get_strategy("sentences", size=200, overlap_sentences=2, unit="words")
    assert s.size_param == "size" and s.budget == 200 and s.unit == "words"
    for bad in ({"size": 0}, {"overlap_sentences": -1}, {"unit": "furlongs"}):
        with pytest.raises(ValueError):
            get_strategy("sentences", **bad)
    with pytest.raises(ValueError):
        chunk_sentences("text", 10, 1, doc_id=3)  # type: ignore[arg-type]
