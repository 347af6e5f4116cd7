"""Markdown and rst sections: a heading never becomes a chunk alone, it joins the content it heads.

The rule mirrors chunk_html's: bare headings lead the first piece of what follows them (a
paragraph is cut to leave them room), headings at the end of the document join the chunk
before them when it has room. A heading stays alone only where nothing of what follows fits
beside it, where what follows is a fence or a table that fits the budget (those are never
cut unless over budget alone), or as a piece of a heading longer than the budget itself.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks
from chunklab.chunkers.structural import chunk_markdown, chunk_rst
from chunklab.chunkers.structural.rst import rst_blocks
from chunklab.text import markdown_blocks
from chunklab.units import length_function

WORDS = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon", "x", "the"]), min_size=1)


@st.composite
def md_block(draw) -> str:
    kind = draw(st.sampled_from(["heading", "heading", "para", "para", "code", "table"]))
    if kind == "heading":
        return "#" * draw(st.integers(1, 4)) + " " + " ".join(draw(WORDS.filter(lambda w: len(w) < 6)))
    if kind == "para":
        return " ".join(draw(st.lists(WORDS.map(" ".join), min_size=1, max_size=8))) + "."
    if kind == "code":
        lines = draw(st.lists(WORDS.map("_".join), min_size=1, max_size=6))
        return "```\n" + "\n".join(lines) + "\n```"
    rows = draw(st.lists(WORDS.map("-".join), min_size=1, max_size=6))
    return "| k | v |\n|---|---|\n" + "\n".join(f"| {r} | {i} |" for i, r in enumerate(rows))


@st.composite
def rst_block(draw) -> str:
    kind = draw(st.sampled_from(["heading", "heading", "para", "para", "directive"]))
    words = " ".join(draw(WORDS))
    if kind == "heading":
        return words + "\n" + draw(st.sampled_from("=-~")) * len(words)
    if kind == "para":
        return " ".join(draw(st.lists(WORDS.map(" ".join), min_size=1, max_size=8))) + "."
    return ".. note::\n   " + words


def markdown_docs():
    gaps = st.sampled_from(["\n\n", "\n\n\n"])
    return st.lists(st.tuples(md_block(), gaps), min_size=1, max_size=14).map(
        lambda parts: "".join(b + s for b, s in parts)
    )


def rst_docs():
    return st.lists(rst_block(), min_size=1, max_size=14).map(lambda blocks: "\n\n".join(blocks) + "\n")


def assert_no_bare_heading_chunk(chunks, text, blocks, max_chars) -> None:
    """Every chunk made of headings only is one of the exceptions the module docstring lists."""
    blocks = [b for b in blocks if b.kind != "blank"]
    for i, c in enumerate(chunks):
        inside = [b for b in blocks if b.start < c.end and b.end > c.start]
        if not inside or any(b.kind != "heading" for b in inside):
            continue
        rest = text[c.end :]
        if not rest.strip():  # headings at the end of the document: the chunk before had no room
            assert i == 0 or len(text[chunks[i - 1].start : c.end]) > max_chars, (c.text, chunks[i - 1].text)
            continue
        p = c.end + len(rest) - len(rest.lstrip())
        nxt_block = next(b for b in blocks if b.start <= p < b.end)
        nxt = chunks[i + 1]
        if p - c.start + 1 > max_chars:
            continue  # not even one character of what follows fits beside the headings
        if c.metadata.get("split") and nxt_block is inside[-1]:
            continue  # a piece of a heading cut because it is longer than the budget
        whole = text[nxt.start : nxt.end]
        fence = text[p : nxt_block.end].rstrip()
        assert nxt_block.kind in ("code", "table", "directive") and fence in whole, (c.text, whole)
        assert len(text[c.start : p]) + len(fence) > max_chars  # it did not fit beside its heading


FORMATS = {
    "markdown": (chunk_markdown, markdown_blocks, markdown_docs()),
    "rst": (chunk_rst, rst_blocks, rst_docs()),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), max_chars=st.integers(8, 300), max_level=st.integers(1, 4))
def test_a_heading_never_becomes_a_chunk_alone(fmt, data, max_chars, max_level):
    chunker, blocks_of, docs = FORMATS[fmt]
    text = data.draw(docs)
    chunks = chunker(text, max_chars=max_chars, max_level=max_level)
    assert check_chunks(chunks, text, max_size=max_chars) == []
    assert_no_bare_heading_chunk(chunks, text, blocks_of(text), max_chars)


def test_a_heading_joins_the_sibling_section_after_it():
    md = "# Intro\n\n# Usage\n\nCall the function.\n"
    chunks = chunk_markdown(md)
    assert [c.text for c in chunks] == [md.strip()]
    assert chunks[0].metadata["headings"] == ["Usage"]


_BODY = " ".join(f"Sentence {i} about the event loop." for i in range(40))


_MD_OPENING = "## Loop\n\n### Running"
_RST_OPENING = "Loop\n====\n\nRunning\n-------"


@pytest.mark.parametrize(
    ("chunker", "source", "opening"),
    [
        (chunk_markdown, f"{_MD_OPENING}\n\n{_BODY}\n\n## Next\n\nMore.\n", _MD_OPENING),
        (chunk_rst, f"{_RST_OPENING}\n\n{_BODY}\n\nNext\n====\n\nMore.\n", _RST_OPENING),
    ],
)
def test_headings_lead_the_first_piece_of_a_paragraph_that_must_be_split(chunker, source, opening):
    chunks = chunker(source, max_chars=200)
    assert check_chunks(chunks, source, max_size=200) == []
    assert chunks[0].text.startswith(opening + "\n\nSentence 0 about")
    assert chunks[-1].text.endswith("\n\nMore.") and chunks[-1].text.startswith(("## Next", "Next"))


def test_headings_at_the_end_of_the_document_join_the_chunk_before_them():
    md = "# Guide\n\nSome text.\n\n## Appendix\n"
    assert [c.text for c in chunk_markdown(md, max_chars=200)] == [md.strip()]
    # with no room there, they stay a chunk of their own
    assert [c.text for c in chunk_markdown(md, max_chars=24)] == ["# Guide\n\nSome text.", "## Appendix"]


def test_a_fence_that_fits_is_not_cut_to_make_room_for_its_heading():
    code = "```\n" + "x = 1\n" * 6 + "```"
    md = f"# Setup\n\n{code}\n"
    chunks = chunk_markdown(md, max_chars=len(code) + 2)
    assert [c.text for c in chunks] == ["# Setup", code]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(md=markdown_docs(), max_words=st.integers(3, 60))
def test_headings_leading_a_piece_keep_the_bound_in_words(md, max_words):
    chunks = chunk_markdown(md, max_chars=max_words, unit="words")
    assert check_chunks(chunks, md, max_size=max_words, length=length_function("words")) == []
