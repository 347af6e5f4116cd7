"""chunk_markdown: sections by headings, fences and tables kept whole, split tables keep their header."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks, embedding_text
from chunklab.chunkers.structural import chunk_markdown
from tests.support.strategies import joined_lines


def ok(chunks, md, max_chars=1500):
    problems = check_chunks(chunks, md, max_size=max_chars)
    assert problems == [], problems


GUIDE = """# Guide

Welcome to the guide.

## Install

Use pip.

### Linux

Run the package manager.

## Usage

Call the function.
"""


def test_atx_headings_build_the_headings_path():
    chunks = chunk_markdown(GUIDE, max_chars=200)
    ok(chunks, GUIDE, 200)
    paths = [c.metadata["headings"] for c in chunks]
    assert ["Guide", "Install", "Linux"] in paths
    assert ["Guide", "Usage"] in paths
    linux = next(c for c in chunks if c.metadata["headings"] == ["Guide", "Install", "Linux"])
    assert linux.text.startswith("### Linux") and "Run the package manager." in linux.text
    assert embedding_text(linux).startswith("Guide > Install > Linux\n\n")


def test_setext_headings_open_sections():
    md = "Title\n=====\n\nIntro.\n\nPart two\n--------\n\nMore text.\n"
    chunks = chunk_markdown(md)
    ok(chunks, md)
    assert [c.metadata["headings"] for c in chunks] == [["Title"], ["Title", "Part two"]]


def test_hash_lines_inside_a_fenced_code_block_are_not_headings():
    md = "# Real\n\n```bash\n# install it\npip install x\n## still code\n```\n\n~~~\n# tilde fence\n~~~\n"
    chunks = chunk_markdown(md)
    ok(chunks, md)
    assert len(chunks) == 1
    assert chunks[0].metadata["headings"] == ["Real"]


def test_headings_deeper_than_max_level_stay_inside_their_section():
    md = "# A\n\ntext\n\n#### Deep\n\nmore\n"
    chunks = chunk_markdown(md, max_level=3)
    assert len(chunks) == 1 and chunks[0].metadata["headings"] == ["A"]
    chunks = chunk_markdown(md, max_level=4)
    assert [c.metadata["headings"] for c in chunks] == [["A"], ["A", "Deep"]]


def test_a_code_fence_is_not_split_when_it_fits():
    code = "```python\n" + "".join(f"x{i} = {i}\n" for i in range(20)) + "```\n"
    md = "# S\n\n" + "Para one. " * 20 + "\n\n" + code + "\n" + "Para two. " * 20 + "\n"
    chunks = chunk_markdown(md, max_chars=320)
    ok(chunks, md, 320)
    fence = code.rstrip()
    assert any(fence in c.text for c in chunks)
    assert not any(c.text.count("```") == 1 for c in chunks)


def test_a_split_table_carries_its_header_row_in_metadata_and_embedding_text():
    header = "| name | value |\n|------|-------|"
    rows = "".join(f"| row {i} | {i * 7} |\n" for i in range(80))
    md = "## Data\n\n" + header + "\n" + rows
    chunks = chunk_markdown(md, max_chars=300)
    ok(chunks, md, 300)
    tables = [c for c in chunks if c.metadata["kind"] == "table"]
    assert len(tables) > 3
    assert header in tables[0].text
    for c in tables[1:]:
        assert c.metadata["table_header"] == header
        assert c.text.startswith("| row")  # text itself stays an exact slice
        assert embedding_text(c).split("\n\n", 1)[1].startswith(header + "\n| row")
    all_rows = "".join(c.text + "\n" for c in tables)
    for i in range(80):
        assert f"| row {i} | {i * 7} |" in all_rows


def test_heading_only_section_joins_the_subsection_after_it():
    md = "# Top\n\n## Child\n\nBody text.\n"
    chunks = chunk_markdown(md)
    assert len(chunks) == 1
    assert chunks[0].text.startswith("# Top") and chunks[0].metadata["headings"] == ["Top", "Child"]


def test_front_matter_is_not_read_as_a_setext_heading():
    md = "---\ntitle: Doc\nauthor: me\n---\n# H\n\nbody\n"
    chunks = chunk_markdown(md)
    ok(chunks, md)
    assert chunks[0].text.startswith("---\ntitle: Doc")
    assert chunks[0].metadata["headings"] == []
    assert chunks[-1].metadata["headings"] == ["H"]


def test_section_over_budget_is_packed_by_blocks_within_budget():
    paras = "\n\n".join(f"Paragraph {i} " + "word " * 30 for i in range(12))
    md = "# Long\n\n" + paras + "\n"
    chunks = chunk_markdown(md, max_chars=400)
    ok(chunks, md, 400)
    assert len(chunks) > 3
    assert all(c.metadata["headings"] == ["Long"] for c in chunks)
    for c in chunks:  # cuts fall between paragraphs
        assert c.text.startswith(("# Long", "Paragraph"))


def test_crlf_bom_and_bytes_input():
    md = "\ufeff# Title\r\n\r\nText\r\n\r\n## Sub\r\n\r\nMore\r\n"
    chunks = chunk_markdown(md)
    ok(chunks, md)
    assert [c.metadata["headings"] for c in chunks] == [["Title"], ["Title", "Sub"]]
    from_bytes = chunk_markdown(md.encode("utf-8"))
    assert [c.metadata["headings"] for c in from_bytes] == [["Title"], ["Title", "Sub"]]


def test_empty_and_blank_documents_give_no_chunks():
    assert chunk_markdown("") == []
    assert chunk_markdown("  \n\n\t\n") == []


@pytest.mark.parametrize("kwargs", [{"max_chars": 0}, {"max_level": 0}, {"max_level": 7}, {"doc_id": 1}])
def test_bad_arguments_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        chunk_markdown("# x\n", **kwargs)


_MD_LINES = [
    "# H1",
    "## H2",
    "### H3",
    "#### H4",
    "#nospace",
    "Title",
    "=====",
    "-----",
    "---",
    "```",
    "```py",
    "~~~",
    "    # indented",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "a | b",
    "- item",
    "* item",
    "> quote",
    "",
    "",
    "plain text line",
    "word " * 40,
    "\t# tab",
    "...",
    "<div>html</div>",
    "\\# escaped",
]


def markdown_ish():
    return joined_lines(_MD_LINES, line_size=20, max_lines=50)


@given(md=markdown_ish(), max_chars=st.integers(1, 400), max_level=st.integers(1, 6))
def test_property_markdown_never_raises_offsets_exact_nothing_lost_bounds_hold(md, max_chars, max_level):
    chunks = chunk_markdown(md, max_chars=max_chars, max_level=max_level)
    ok(chunks, md, max_chars)
    for c in chunks:
        assert isinstance(c.metadata["headings"], list)
        assert c.metadata["strategy"] == "structural"


@settings(max_examples=100, deadline=None)
@given(n_rows=st.integers(3, 60), max_chars=st.integers(60, 400))
def test_property_every_piece_of_a_split_table_has_its_header(n_rows, max_chars):
    header = "| key | description |\n|-----|-------------|"
    md = header + "\n" + "".join(f"| k{i} | description number {i} |\n" for i in range(n_rows))
    chunks = chunk_markdown(md, max_chars=max_chars)
    ok(chunks, md, max_chars)
    for c in chunks:
        assert header in c.text or c.metadata.get("table_header") == header


def test_pack_blocks_packs_any_block_list_the_way_chunk_markdown_does():
    from dataclasses import replace

    from chunklab.chunkers.structural.markdown import pack_blocks
    from chunklab.text import markdown_blocks

    md = "# A\n\nPara one.\n\n```\ncode\n```\n\n## B\n\nPara two.\n"
    params = {"format": "markdown", "max_chars": 25, "max_level": 3}
    blocks = markdown_blocks(md)
    same = pack_blocks(md, blocks, 25, 3, doc_id="doc", params=params)
    assert [(c.start, c.end, c.metadata) for c in same] == [
        (c.start, c.end, c.metadata) for c in chunk_markdown(md, max_chars=25)
    ]
    # another format's block kind (an rST directive, say) is packed like a paragraph
    renamed = [replace(b, kind="directive") if b.kind == "code" else b for b in blocks]
    got = pack_blocks(md, renamed, 25, 3, doc_id="doc", params=params)
    assert [(c.start, c.end) for c in got] == [(c.start, c.end) for c in same]
    assert {c.metadata["kind"] for c in got} <= {"section", "table", "code"}
    assert check_chunks(got, md, max_size=25) == []
