"""chunk_rst: reStructuredText sections by their adornments, literal blocks and directives kept whole.

docutils (installed with Sphinx) is the independent oracle for which lines are section titles.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.chunk import check_chunks
from chunklab.chunkers.structural import chunk_document, chunk_markdown, chunk_rst
from chunklab.chunkers.structural.rst import rst_blocks
from chunklab.documents import load_document

DOC = """\
=========
 Manual
=========

Intro paragraph
on two lines.

Install
=======

Run this::

    pip install kit

    kit --version

.. note::
   Needs Python 3.11.

   Or newer.

Linux
-----

.. code-block:: bash

   apt install kit

   kit doctor

Usage
=====

Call it.
"""


def ok(chunks, text, max_chars):
    assert check_chunks(chunks, text, max_size=max_chars) == []
    for c in chunks:
        assert text[c.start : c.end] == c.text


def docutils_titles(text: str) -> list[tuple[int, str]]:
    """(depth, title) of every section docutils finds."""
    from docutils.core import publish_doctree
    from docutils.nodes import section, title

    tree = publish_doctree(
        text, settings_overrides={"report_level": 5, "halt_level": 5, "doctitle_xform": False}
    )
    out = []
    for node in tree.findall(section):
        depth = 0
        parent = node.parent
        while parent is not None:
            depth += isinstance(parent, section)
            parent = parent.parent
        out.append((depth + 1, node.next_node(title).astext()))
    return out


def test_rst_section_adornments_give_levels_by_first_appearance_and_heading_paths():
    chunks = chunk_rst(DOC, max_chars=200)
    ok(chunks, DOC, 200)
    assert [c.metadata["headings"] for c in chunks] == [
        ["Manual"],
        ["Manual", "Install"],
        ["Manual", "Install", "Linux"],
        ["Manual", "Usage"],
    ]
    heads = [(b.level, b.title) for b in rst_blocks(DOC) if b.kind == "heading"]
    assert heads == [(1, "Manual"), (2, "Install"), (3, "Linux"), (2, "Usage")]


def test_rst_sections_agree_with_docutils():
    heads = [(b.level, b.title) for b in rst_blocks(DOC) if b.kind == "heading"]
    assert heads == docutils_titles(DOC)


def test_rst_literal_blocks_and_directives_are_kept_whole_with_their_blank_lines():
    chunks = chunk_rst(DOC, max_chars=60)
    ok(chunks, DOC, 60)
    texts = [c.text for c in chunks]
    assert "    pip install kit\n\n    kit --version" in texts
    assert ".. note::\n   Needs Python 3.11.\n\n   Or newer." in texts
    assert ".. code-block:: bash\n\n   apt install kit\n\n   kit doctor" in texts
    kinds = {b.kind for b in rst_blocks(DOC)}
    assert {"heading", "code", "directive", "para", "blank"} == kinds


def test_rst_blocks_partition_the_text_and_short_underlines_are_not_titles():
    text = "ab\n-\n\nTitle that is long\n---\n\nReal\n====\n\n----\n\nend\n"
    blocks = rst_blocks(text)
    assert [b.start for b in blocks[1:]] == [b.end for b in blocks[:-1]]
    assert (blocks[0].start, blocks[-1].end) == (0, len(text))
    heads = [b.title for b in blocks if b.kind == "heading"]
    assert heads == ["Real"] == [t for _d, t in docutils_titles(text)]  # '----' alone is a transition


def test_rst_files_are_chunked_structurally_by_kind_and_through_documents(tmp_path):
    f = tmp_path / "guide.rst"
    f.write_text(DOC, encoding="utf-8")
    doc = load_document(f)
    assert doc.format == "rst"
    chunks = chunk_document(doc, max_chars=200)
    assert chunks[0].metadata["params"]["format"] == "rst" and chunks[0].doc_id == "guide.rst"
    assert [c.metadata["headings"][-1] for c in chunks] == ["Manual", "Install", "Linux", "Usage"]


_WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=8)
_STYLES = [("=", True), ("=", False), ("-", False), ("~", False), ("^", False)]


@st.composite
def rst_document(draw):
    """Well-formed sections (one adornment style per depth) with paragraphs, literal blocks, directives."""
    parts: list[str] = []

    def body():
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["para", "literal", "note"]))
            words = " ".join(draw(st.lists(_WORD, min_size=1, max_size=12)))
            if kind == "para":
                parts.append(words + "\n\n")
            elif kind == "literal":
                parts.append(f"{words}::\n\n    {words}\n\n    x = 1\n\n")
            else:
                parts.append(f".. note::\n   {words}\n\n   {words}\n\n")

    def section(depth):
        title = " ".join(draw(st.lists(_WORD, min_size=1, max_size=3)))
        char, over = _STYLES[depth]
        line = char * (len(title) + draw(st.integers(0, 2)))
        parts.append((f"{line}\n" if over else "") + f"{title}\n{line}\n\n")
        body()
        if depth + 1 < len(_STYLES):
            for _ in range(draw(st.integers(0, 2))):
                section(depth + 1)

    body()
    for _ in range(draw(st.integers(1, 3))):
        section(0)
    return "".join(parts)


@given(doc=rst_document(), max_chars=st.integers(20, 400))
def test_property_generated_rst_titles_match_docutils_and_chunks_keep_the_contract(doc, max_chars):
    heads = [(b.level, b.title) for b in rst_blocks(doc) if b.kind == "heading"]
    assert heads == docutils_titles(doc)
    chunks = chunk_rst(doc, max_chars=max_chars, max_level=6)
    ok(chunks, doc, max_chars)


@given(st.text(alphabet="=-~ab: .\n\t", max_size=200), st.integers(1, 80))
def test_property_odd_rst_never_raises_and_keeps_offsets(text, max_chars):
    chunks = chunk_rst(text, max_chars=max_chars)
    ok(chunks, text, max_chars)


def test_installed_rst_files_keep_the_contract():
    files = sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.rst"))
    if not files:
        pytest.skip("no .rst files installed")
    for f in files[:40]:
        doc = load_document(f)
        chunks = chunk_rst(doc.text, max_chars=800, doc_id=doc.doc_id)
        assert check_chunks(chunks, doc.text, max_size=800) == [], f


@pytest.mark.parametrize(
    "text", ["\ufeff\n# Title\n\n", "\ufeff\nTitle\n=====\n\ntext\n", "\ufeff", "\ufeff\n"]
)
@pytest.mark.parametrize("max_chars", [3, 10, 200])
def test_a_lone_byte_order_mark_line_is_kept_like_markdown_does(text, max_chars):
    """A BOM alone on the first line is not whitespace: it must land in a chunk (hypothesis found it lost)."""
    from chunklab.chunk import check_chunks
    from chunklab.chunkers.structural.rst import chunk_rst

    chunks = chunk_rst(text, max_chars=max_chars)
    assert check_chunks(chunks, text) == []
    assert chunks[0].start == 0 and chunks[0].text.startswith("\ufeff")


def test_arguments_are_checked_as_for_markdown_unit_before_max_level():
    """One check of the sectioned formats' arguments (chunk_sections): the same error for rst and Markdown."""
    for chunk in (chunk_rst, chunk_markdown):
        with pytest.raises(ValueError, match="unit must be one of"):
            chunk("Title\n=====\n\ntext\n", max_level=0, unit="bogus")
        with pytest.raises(ValueError, match="max_level"):
            chunk("Title\n=====\n\ntext\n", max_level=0)
