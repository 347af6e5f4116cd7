"""Word files cite pages where the file records its page breaks (generated with python-docx)."""

from __future__ import annotations

import docx
from docx.enum.section import WD_SECTION
from docx.enum.text import WD_BREAK
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks
from chunklab.chunkers.structural import chunk_document
from chunklab.documents import load_document, locate, where
from tests.support import docgen

WORD = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzéñ.,;"), min_size=1, max_size=8)
SEGMENT = st.tuples(st.lists(WORD, min_size=1, max_size=6).map(" ".join), st.sampled_from(docgen.DOCX_STARTS))
PARAGRAPHS = st.lists(st.lists(SEGMENT, min_size=1, max_size=4), min_size=1, max_size=8)


def _segment_spans(paragraphs: list[list[tuple[str, str]]]) -> list[tuple[int, int]]:
    """Where each segment lies in the loader's text: paragraphs joined by a blank line."""
    spans, pos = [], 0
    for segments in paragraphs:
        for k, (text, _) in enumerate(segments):
            spans.append((pos, pos + len(text)))
            pos += len(text) + (1 if k + 1 < len(segments) else 2)
    return spans


@settings(max_examples=40, deadline=None)
@given(paragraphs=PARAGRAPHS, own_paragraph=st.booleans())
def test_every_character_maps_to_the_page_its_breaks_put_it_on(tmp_path_factory, paragraphs, own_paragraph):
    paragraphs[0][0] = (paragraphs[0][0][0], "same")  # nothing comes before the first page
    path = tmp_path_factory.mktemp("w") / "paged.docx"
    expected = docgen.docx_paged(path, paragraphs, own_paragraph=own_paragraph)
    doc = load_document(path)
    # the text is the same with or without pages: paragraphs joined by a blank line
    assert doc.text == "\n\n".join(" ".join(t for t, _ in segs) for segs in paragraphs)
    paged = expected[-1] > 1
    for (start, end), page in zip(_segment_spans(paragraphs), expected):
        for at in range(start, end):
            if not doc.text[at].isspace():
                got = locate(doc.elements, at, at + 1)
                assert got.get("page") == (page if paged else None), (at, doc.text[at])
                assert where(got) == (f"p. {page}" if paged else f"¶ {got['paragraph']}")
    if paged:
        assert doc.metadata["pages"] == expected[-1] and "pages_note" not in doc.metadata
    else:
        assert doc.metadata["pages_note"] == "pages not recorded in this file"
    chunks = chunk_document(doc, max_chars=60)
    assert check_chunks(chunks, doc.text, max_size=60) == []
    if paged:
        for c in chunks:
            on = [p for (s, e), p in zip(_segment_spans(paragraphs), expected) if s < c.end and e > c.start]
            assert (c.metadata["page"], c.metadata["page_end"]) == (min(on), max(on))


def test_a_file_without_page_breaks_says_pages_are_not_recorded(tmp_path):
    d = docx.Document()
    d.add_heading("Notes", 1)
    d.add_paragraph("Only one stretch of text, and no break anywhere.")
    d.save(tmp_path / "flat.docx")
    doc = load_document(tmp_path / "flat.docx")
    assert doc.metadata["pages_note"] == "pages not recorded in this file" and "pages" not in doc.metadata
    assert all(e.page is None for e in doc.elements)
    chunk = chunk_document(doc, max_chars=500)[0]
    assert "page" not in chunk.metadata and where(chunk.metadata) == "¶ 1-2"


def test_sections_start_pages_as_their_type_says(tmp_path):
    d = docx.Document()
    d.add_paragraph("one")
    d.add_section(WD_SECTION.NEW_PAGE)
    d.add_paragraph("two")
    d.add_section(WD_SECTION.CONTINUOUS)
    d.add_paragraph("still two")
    d.add_section(WD_SECTION.ODD_PAGE)  # from page 2 the next odd page is 3
    d.add_paragraph("three")
    d.add_section(WD_SECTION.EVEN_PAGE)  # from page 3 the next even page is 4
    d.add_paragraph("four")
    d.save(tmp_path / "s.docx")
    doc = load_document(tmp_path / "s.docx")
    got = {doc.text[e.start : e.end]: e.page for e in doc.elements}
    assert got == {"one": 1, "two": 2, "still two": 2, "three": 3, "four": 4}


def test_a_table_row_across_a_page_counts_one_page_not_one_per_cell(tmp_path):
    d = docx.Document()
    d.add_paragraph("before the table")
    t = d.add_table(rows=3, cols=3)
    for r, row in enumerate(t.rows):
        for c, cell in enumerate(row.cells):
            para = cell.paragraphs[0]
            para.add_run(f"r{r}c{c} head")
            tail = para.add_run(f" r{r}c{c} tail")
            if r == 1:  # row 2 runs onto the next page: Word breaks it in every cell
                tail._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    d.add_paragraph("after the table")
    d.save(tmp_path / "t.docx")
    doc = load_document(tmp_path / "t.docx")
    got = [(doc.text[e.start : e.end].split("\t")[0], e.page) for e in doc.elements]
    assert got == [
        ("before the table", 1),
        ("r0c0 head r0c0 tail", 1),
        ("r1c0 head r1c0 tail", 1),
        ("r2c0 head r2c0 tail", 2),
        ("after the table", 2),
    ]


def test_rendered_breaks_count_columns_in_a_two_column_section(tmp_path):
    d = docx.Document()
    sect = d.sections[0]._sectPr
    cols = sect.find(qn("w:cols"))
    if cols is None:
        cols = OxmlElement("w:cols")
        sect.append(cols)
    cols.set(qn("w:num"), "2")
    for k in range(5):  # each new column begins with a rendered break, as Word writes them
        run = d.add_paragraph().add_run()
        if k:
            run._r.append(OxmlElement("w:lastRenderedPageBreak"))
        run.add_text(f"column {k + 1}")
    run.add_break(WD_BREAK.PAGE)
    d.add_paragraph("after a hard break")
    d.save(tmp_path / "c.docx")
    doc = load_document(tmp_path / "c.docx")
    got = [(doc.text[e.start : e.end], e.page) for e in doc.elements]
    assert got == [
        ("column 1", 1),
        ("column 2", 1),
        ("column 3", 2),
        ("column 4", 2),
        ("column 5", 3),
        ("after a hard break", 4),
    ]
