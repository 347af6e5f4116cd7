"""The one text scanner: Markdown blocks and headings (CommonMark fences), sentence ends, lines."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.chunkers.hierarchical import chunk_markdown_hierarchy
from chunklab.chunkers.recursive import chunk_recursive, pack_paragraphs
from chunklab.chunkers.structural.markdown import chunk_markdown
from chunklab.enrich.context import add_context
from chunklab.text import (
    LineIndex,
    markdown_blocks,
    markdown_headings,
    prose_sentences,
    sentence_end_before,
    split_sentences,
)
from tests.support.strategies import nasty_text

#: The case of issue 10: a four-backtick fence holding a three-backtick line and a "#" line.
FENCED = (
    "# Guide\n\nIntro text for the guide.\n\n"
    "````markdown\n```\n# not a heading\n```\n````\n\n"
    "## Install\n\nRun the installer and wait.\n"
)

MARKDOWN_LINES = [
    "# Title",
    "## Sub section",
    "### Deep #",
    "text line",
    "more text.",
    "",
    "",
    "Setext title",
    "======",
    "------",
    "- item one",
    "* item two",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "    # indented",
    "\t# tabbed",
    "#nospace",
    "> quote",
    "\ufeffbom line",
    "\r",
    "---",
    "...",
]
markdownish = st.one_of(
    nasty_text,
    st.lists(
        st.sampled_from([*MARKDOWN_LINES, "```", "````md", "~~~", "~~~~", "``` py ``"]), max_size=30
    ).map("\n".join),
)
#: what a fence may hold: shorter fences of both characters, "#" lines, anything
fence_inner = st.one_of(
    st.lists(
        st.sampled_from(["```", "~~~", "````", "  ~~~~", "```python", "# h", "## h2", "x", "", "==="]),
        max_size=10,
    ).map("\n".join),
    st.text(alphabet="`~#x \n", max_size=80),
)
plain_lines = st.lists(st.sampled_from(MARKDOWN_LINES[:15]), max_size=12).map(
    lambda ls: "".join(f"{x}\n" for x in ls)
)


# -- blocks --------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(markdownish)
def test_blocks_cover_the_text_exactly_in_order(text):
    blocks = markdown_blocks(text)
    if not text:
        assert blocks == []
        return
    assert blocks[0].start == 0 and blocks[-1].end == len(text)
    for a, b in zip(blocks, blocks[1:]):
        assert a.end == b.start and a.last + 1 == b.first
    for b in blocks:
        assert b.start < b.end and b.first <= b.last
        if b.kind == "blank":
            assert not text[b.start : b.end].strip()
        else:
            assert text[b.start : b.end].strip()


@settings(max_examples=300, deadline=None)
@given(plain_lines, fence_inner, st.sampled_from("`~"), plain_lines)
def test_headings_are_never_found_inside_a_fence(pre, inner, mark, post):
    runs = [len(r) for r in re.findall(re.escape(mark) + "+", inner)]
    fence = mark * max(3, max(runs, default=0) + 1)  # longer than any run inside: nothing closes it early
    pre = "Intro\n\n" + pre
    code = f"{fence}\n{inner}\n{fence}\n"
    post = "\n" + post
    got = markdown_headings(pre + code + post)
    shift = len(pre) + len(code)
    expected = markdown_headings(pre) + [(o + shift, lv, t) for o, lv, t in markdown_headings(post)]
    assert got == expected
    kinds = [b.kind for b in markdown_blocks(pre + code + post) if b.start == len(pre)]
    assert kinds == ["code"]


def test_a_fence_closes_only_on_the_same_character_at_least_as_long():
    md = "````\n```\n~~~~\n# inside\n`````\n# outside\n"
    kinds = [(b.kind, b.first, b.last) for b in markdown_blocks(md)]
    assert kinds == [("code", 0, 4), ("heading", 5, 5)]
    assert [t for _o, _lv, t in markdown_headings(md)] == ["outside"]


def test_an_unclosed_fence_runs_to_the_end():
    md = "# Top\n~~~\n# not a heading\n~~\n"
    assert [b.kind for b in markdown_blocks(md)] == ["heading", "code"]
    assert markdown_headings(md) == [(0, 1, "Top")]


def test_atx_and_setext_headings_with_their_levels_and_titles():
    md = "Front\n---\n\n## Two ##\nMulti line\ntitle\n=====\n- a list\n---\n    # code, not heading\n"
    heads = [(lv, t) for _o, lv, t in markdown_headings(md)]
    assert heads == [(2, "Front"), (2, "Two"), (1, "Multi line title")]


def test_front_matter_is_one_block_and_no_heading():
    md = "---\ntitle: x\n---\n# Real\n"
    assert [b.kind for b in markdown_blocks(md)] == ["frontmatter", "heading"]


# -- one scanner, three chunkers -------------------------------------------------------------
def test_the_four_backtick_fence_case_gives_the_same_headings_in_all_three_chunkers():
    expected = [["Guide"], ["Guide", "Install"]]
    by_markdown = [c.metadata["headings"] for c in chunk_markdown(FENCED, max_chars=200)]
    assert by_markdown == expected
    parents = [c for c in chunk_markdown_hierarchy(FENCED, max_chars=200) if c.metadata["level"] == 0]
    assert [c.metadata["headings"] for c in parents] == expected
    with_context = add_context(chunk_recursive(FENCED, 30), source=FENCED)
    contexts = {c.metadata.get("context") for c in with_context}
    assert contexts == {"Guide", "Guide > Install"}
    inside = [c for c in with_context if "# not a heading" in c.text]
    assert inside and all(c.metadata["context"] == "Guide" for c in inside)


def test_markdown_hierarchy_joins_a_setext_heading_to_the_block_after_it_like_an_atx_one():
    md = "Title\n=====\n\nFirst paragraph.\n\n# Other\n\nSecond paragraph.\n"
    kids = [c.text for c in chunk_markdown_hierarchy(md, max_chars=200) if c.metadata["level"] == 1]
    assert kids == ["Title\n=====\n\nFirst paragraph.", "# Other\n\nSecond paragraph."]


# -- sentences -----------------------------------------------------------------------------------
prose = st.lists(
    st.sampled_from(
        [
            "Dr.",
            "Smith",
            "e.g.",
            "U.S.",
            "3.14",
            "setup.py",
            "It",
            "ends.",
            "Why?",
            "no!",
            "Fig.",
            "3",
            "(see",
            "this).",
            "*great.*",
            "J.",
            "R.",
            "wait...",
            "Next",
            "中文。",
            "x",
            "1.",
            "2.",
            "3.",
            "steps:",
            "line",
        ]
    ),
    min_size=1,
    max_size=25,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(prose)
def test_sentence_ends_found_by_the_splitter_are_the_ends_the_viz_rule_sees(text):
    spans = prose_sentences(text, 0, len(text))
    assert spans == split_sentences(text)
    for s, e in spans[:-1]:
        assert sentence_end_before(text, e), text[s:e]
    for s, e in spans:
        for p in range(s + 1, e):
            if text[p] == " ":
                assert not sentence_end_before(text, p), (text[s:p], text[p:e])


def test_pack_paragraphs_overlap_repeats_whole_sentences_by_the_one_rule():
    # the old rule of its own cut after "Dr." and repeated "Watson now." as the overlap
    text = "Call Dr. Watson now. Go home."
    chunks = pack_paragraphs(text, 24, overlap_paragraphs=1)
    assert [c.text for c in chunks] == ["Call Dr. Watson now.", "Go home."]
    assert "no_overlap_reason" in chunks[1].metadata


ITEM = st.sampled_from(
    ["Open the file", "Read it", "The manager approves it", "Send `POST /x`", "**Keep it short.**", "Wait"]
)
_BARE_NUMBER_END = re.compile(r"(?:^|\s)\d{1,3}\.\Z")


@settings(max_examples=200, deadline=None)
@given(
    intro=st.sampled_from(["Do this", "To open a dispute, follow the steps", "Steps"]),
    items=st.lists(ITEM, min_size=1, max_size=6),
    end=st.sampled_from(["", "."]),
    layout=st.sampled_from(["\n", "\n\n", " ", "inline"]),
)
def test_a_list_number_never_ends_a_sentence_and_a_new_line_item_starts_one(intro, items, end, layout):
    numbered = [f"{i}. {item}{end}" for i, item in enumerate(items, 1)]
    if layout == "inline":  # "Do this: 1. Open the file 2. Read it."
        text = f"{intro}: " + " ".join(numbered)
    else:  # a sentence, then the list: one item a line (or the items run on after a period)
        text = f"{intro} below.{'' if layout == ' ' else chr(10)}{layout}" + layout.join(numbered)
    spans = split_sentences(text)
    for s, e in spans:
        assert not _BARE_NUMBER_END.search(text[s:e]), text[s:e]  # "1." never stands alone or ends one
    starts = {s for s, _e in spans}
    if layout.startswith("\n"):
        line = text.index("1. ")
        for item in numbered:
            assert line in starts, (text[line:], [text[s:e] for s, e in spans])
            line += len(item) + len(layout)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Stop at line 3. The belt stops.", ["Stop at line 3.", "The belt stops."]),
        ("See Fig. 3. The belt stops.", ["See Fig. 3.", "The belt stops."]),
        ("See steps 1. and 2. Then go.", ["See steps 1. and 2.", "Then go."]),
        ("It ends.\n1. The person asks.", ["It ends.", "1. The person asks."]),
        ("To open a dispute: 1. Find the line.", ["To open a dispute: 1. Find the line."]),
    ],
)
def test_a_number_after_a_word_ends_a_sentence_but_a_list_number_does_not(text, expected):
    assert [text[s:e] for s, e in split_sentences(text)] == expected


def test_a_period_inside_a_token_is_no_sentence_end():
    text = "Pi is 3.14 and setup.py runs."
    assert not sentence_end_before(text, text.index("14"))
    assert not sentence_end_before(text, text.index("py"))
    assert sentence_end_before(text, len(text))


# -- lines ---------------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(nasty_text, st.booleans())
def test_line_index_agrees_with_counting_newlines(text, universal):
    idx = LineIndex(text, universal=universal)
    breaks = re.compile(r"\r\n|\r|\n") if universal else re.compile(r"\n")
    for offset in range(len(text) + 1):
        expected = 1 + sum(1 for m in breaks.finditer(text) if m.end() <= offset)
        assert idx.line_of(offset) == expected
        assert idx.offset_of(expected) <= offset
    assert idx.edges in (idx.starts, [*idx.starts, len(text)])


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\nb", "a\r\nb\r", "\n\n"])
def test_line_edges_close_the_last_line_at_the_end_of_the_text(text):
    edges = LineIndex(text, universal=True).edges
    assert edges[0] == 0 and edges[-1] == len(text)
    assert "".join(text[a:b] for a, b in zip(edges, edges[1:])) == text
