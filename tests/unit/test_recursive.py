"""Recursive chunking and the paragraph packer: separators, real overlap, the packer's contract.

The recursive strategy's contract in every unit is tests/unit/test_chunk_contract.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_text_splitters import RecursiveCharacterTextSplitter

from chunklab.chunk import check_chunks
from chunklab.chunkers.recursive import chunk_recursive, pack_paragraphs
from tests.support.strategies import any_text


@given(text=any_text, size=st.integers(1, 300), data=st.data())
def test_paragraph_packer_keeps_the_contract(text, size, data):
    k = data.draw(st.integers(0, 3))
    chunks = pack_paragraphs(text, size, overlap_paragraphs=k)
    assert check_chunks(chunks, text, max_size=size, overlap=k) == []


def test_cuts_at_paragraph_before_line_before_sentence():
    text = "First paragraph here.\n\nSecond one. It has two sentences.\nAnd a line."
    chunks = chunk_recursive(text, 40)
    assert chunks[0].text == "First paragraph here."
    assert chunks[0].metadata["cut"] == "paragraph"
    assert all(text[c.start : c.end] == c.text for c in chunks)


def test_separators_stay_with_the_text_they_end():
    text = "One sentence here. Another sentence there. A third one."
    chunks = chunk_recursive(text, 25)
    assert [c.text for c in chunks] == ["One sentence here.", "Another sentence there.", "A third one."]


def test_custom_separators_are_used_in_order():
    text = "a;b;c;d|e;f"
    chunks = chunk_recursive(text, 4, separators=["|", ";"])
    assert [c.text for c in chunks] == ["a;b;", "c;d|", "e;f"]


def test_overlap_applies_when_every_piece_fits_where_langchain_gives_none():
    # Paragraphs each smaller than the chunk size: LangChain's splitter merges them and
    # silently drops the configured overlap (its issues #8142, #30200, #34804).
    paragraphs = [f"Paragraph {i} talks about topic {i} in a few words." for i in range(8)]
    text = "\n\n".join(paragraphs)
    size, overlap = 120, 30
    lc = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)
    lc_shared = [
        len(
            set(range(text.index(a), text.index(a) + len(a)))
            & set(range(text.index(b), text.index(b) + len(b)))
        )
        for a, b in zip(lc, lc[1:])
    ]
    assert lc_shared and max(lc_shared) == 0  # LangChain: no overlap at all

    ours = chunk_recursive(text, size, overlap)
    assert len(ours) > 1
    for a, b in zip(ours, ours[1:]):
        shared = a.end - b.start
        assert 0 < shared <= overlap
        assert text[b.start : a.end] == a.text[-shared:] == b.text[:shared]


def test_overlap_starts_at_a_word_boundary_when_one_exists():
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"
    chunks = chunk_recursive(text, 30, overlap=12)
    for c in chunks[1:]:
        assert c.start == 0 or text[c.start - 1] == " "


def test_a_single_long_word_is_cut_by_characters_within_the_size():
    text = "w" * 10_000
    chunks = chunk_recursive(text, 800, overlap=80)
    assert all(len(c.text) <= 800 for c in chunks)
    assert chunks[-1].end == len(text)
    assert check_chunks(chunks, text, max_size=800, overlap=80) == []


def test_crlf_bom_and_tabs_keep_exact_offsets():
    text = "\ufeffTitle\r\n\r\nBody line one.\r\nBody\tline two.\r\n\r\nEnd."
    chunks = chunk_recursive(text, 20, overlap=5)
    assert check_chunks(chunks, text, max_size=20, overlap=5) == []


def test_packer_repeats_whole_paragraphs_as_overlap():
    paras = ["A" * 30, "B" * 30, "C" * 30, "D" * 30]
    text = "\n\n".join(paras)
    chunks = pack_paragraphs(text, max_chars=70, overlap_paragraphs=1)
    assert [c.text for c in chunks] == [
        "A" * 30 + "\n\n" + "B" * 30,
        "B" * 30 + "\n\n" + "C" * 30,
        "C" * 30 + "\n\n" + "D" * 30,
    ]


def test_packer_never_lets_overlap_push_a_chunk_past_the_limit():
    text = "\n\n".join(["A" * 40, "B" * 40, "C" * 40])
    chunks = pack_paragraphs(text, max_chars=50, overlap_paragraphs=1)
    assert [c.text for c in chunks] == ["A" * 40, "B" * 40, "C" * 40]
    assert all(c.metadata.get("no_overlap_reason") for c in chunks[1:])


def test_packer_splits_long_paragraphs_by_sentences():
    para = " ".join(f"Sentence number {i} is here." for i in range(10))
    chunks = pack_paragraphs(para, max_chars=60, overlap_paragraphs=0)
    assert all(len(c.text) <= 60 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"size": 0}, "size"), ({"size": 5, "overlap": 5}, "overlap"), ({"size": 5, "unit": "x"}, "unit")],
)
def test_recursive_rejects_impossible_parameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        chunk_recursive("text", **kwargs)


def test_recursive_rejects_bad_separators():
    with pytest.raises(ValueError, match="separators"):
        chunk_recursive("text", 5, separators="\n")


def test_packer_rejects_bad_parameters():
    with pytest.raises(ValueError, match="max_size"):
        pack_paragraphs("x", 0)
    with pytest.raises(ValueError, match="overlap_paragraphs"):
        pack_paragraphs("x", 10, overlap_paragraphs=-1)


_SEPARATOR_SETS = st.sampled_from(
    [
        None,  # the defaults: the overlap's start found by one regex search
        ["\n\n", "\n", " "],
        [["\n\n", "\r\n\r\n"], ".", ""],  # separators ending in a character that is no separator
        ["", "x"],  # "anywhere" before a later level
        [["ab", "b"], "\t"],
    ]
)
_NASTY_TEXT = (
    st.text(alphabet="ab \n", max_size=40)  # short words and breaks: overlaps that reach the next start
    | st.text(alphabet="ab .。!\n\n\r\t\u3000\u00a0\x1c\U0001f600", max_size=400)
    | any_text
)


@given(text=_NASTY_TEXT, size=st.integers(1, 120), data=st.data(), separators=_SEPARATOR_SETS)
def test_character_walk_gives_the_spans_of_the_reference_walk(text, size, data, separators):
    """``_char_spans`` (the fast path in characters) cuts exactly where ``_unit_spans`` does."""
    from chunklab.chunkers.recursive import _char_spans, _levels, _unit_spans
    from chunklab.units import UnitIndex

    overlap = data.draw(st.integers(0, size - 1))
    levels = _levels(separators)[0]
    reference = _unit_spans(text, size, overlap, levels, UnitIndex(text, "chars"))
    assert _char_spans(text, size, overlap, levels) == reference


@pytest.mark.parametrize(
    ("text", "size", "overlap"),
    [(" \n\n \nb a b ab  aa\n\na a\nba", 6, 4)],  # the overlap's window ends on the next start
)
def test_character_walk_keeps_the_overlap_rule_at_its_edge(text, size, overlap):
    from chunklab.chunkers.recursive import _char_spans, _levels, _unit_spans
    from chunklab.units import UnitIndex

    levels = _levels(None)[0]
    reference = _unit_spans(text, size, overlap, levels, UnitIndex(text, "chars"))
    assert _char_spans(text, size, overlap, levels) == reference


def test_make_chunk_builds_the_same_chunk_as_the_constructor():
    from chunklab.chunk import Chunk, make_chunk

    fast = make_chunk("xabcx", 1, 4, "d", {"strategy": "s"})
    slow = Chunk("abc", 1, 4, "d", {"strategy": "s"})
    assert fast == slow and repr(fast) == repr(slow) and fast.id == slow.id
    assert fast.metadata == slow.metadata and fast._id == slow.id
