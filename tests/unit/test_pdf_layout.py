"""Layout from the page itself (issue 36, Deliver 2), on PDFs generated at test time (tests/support/docgen).

Columns are found below and between full-width blocks, running headers and footers are learned
from what repeats across pages (per chapter, with page numbers in them, outside a fixed band),
and font sizes and weights are checked against the glyphs' own boxes and the document's
distribution instead of being taken from the font's claims.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chunklab.documents import load_document
from tests.support import docgen

PARA = (
    "Operators check the coolant level every morning before the first shift begins, and they "
    "write the reading in the log book kept beside the main control panel of the plant."
)


def _words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize("gutter", [4.0, 6.0, 10.0])
def test_columns_under_a_full_width_title_and_abstract_and_around_a_wide_caption_read_in_order(
    tmp_path, gutter
):
    """Old: a many-line full-width abstract hid the gutter (the page read as a table of interleaved
    lines), and a gutter narrower than 1.5 font sizes joined the two columns' lines into one."""
    abstract = f"Abstract. {PARA} {PARA} {PARA} {PARA}"
    caption = "Figure 1: A caption set across the whole page, under a figure that spans both columns."
    blocks = [
        abstract,
        ([f"Alpha {PARA}"], [f"Beta {PARA}"]),
        caption,
        ([f"Gamma {PARA}"], [f"Delta {PARA}"]),
    ]
    doc = load_document(
        docgen.pdf_column_blocks(tmp_path / "c.pdf", blocks, title="A wide title", gutter=gutter)
    )
    expected = " ".join(["A wide title", abstract, f"Alpha {PARA}", f"Beta {PARA}", caption])
    expected += f" Gamma {PARA} Delta {PARA}"
    assert _words(doc.text) == _words(expected)
    kinds = [(doc.text[e.start : e.end].split()[0], e.type) for e in doc.elements]
    assert kinds == [
        ("A", "heading"),
        ("Abstract.", "paragraph"),
        ("Alpha", "paragraph"),
        ("Beta", "paragraph"),
        ("Figure", "caption"),
        ("Gamma", "paragraph"),
        ("Delta", "paragraph"),
    ]


CHAPTERS = [
    ("Getting started", [f"Opening {k} {PARA}" for k in range(4)]),
    ("The Why3 API", [f"Middle {k} {PARA}" for k in range(5)]),
    ("Proof sessions", [f"Closing {k} {PARA}" for k in range(4)]),
]


def test_running_headers_that_change_per_chapter_and_carry_the_page_number_are_removed(tmp_path):
    """Old: a header repeated on fewer than half the pages (one chapter's), or lying just outside the
    fixed 9 % band, and page numbers at 0.88 of the page height were all kept as body text."""
    doc = load_document(docgen.pdf_chapters(tmp_path / "book.pdf", CHAPTERS))
    headings = [f"Chapter {c}. {t}" for c, (t, _) in enumerate(CHAPTERS, 1)]
    expected = [
        text for heading, (_, pages) in zip(headings, CHAPTERS, strict=True) for text in (heading, *pages)
    ]
    assert _words(doc.text) == _words(" ".join(expected))
    removed = doc.metadata["removed"]
    assert sorted(r["page"] for r in removed if r["role"] == "page_number") == list(range(1, 14))
    running = [(r["page"], r["text"]) for r in removed if r["role"] == "header"]
    opening = {1, 5, 10}  # a chapter's first page has no running header
    assert [p for p, _ in running] == [p for p in range(1, 14) if p not in opening]
    assert all(text.startswith(f"{page} Chapter ") for page, text in running)
    heads = [doc.text[e.start : e.end] for e in doc.elements if e.type == "heading"]
    assert heads == headings


def _lines(text: str, width: int = 70) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width)


BODY = _lines(f"{PARA} {PARA} All levels are logged in full, and the log is filed each Friday.")


def test_sizes_come_from_the_drawn_glyphs_when_every_font_claims_size_one(tmp_path):
    """Old: a PDF that sets every glyph at size 1 and scales it by the text matrix (as Distiller
    writes) had no headings, since every run claimed the same size."""
    lines = [("R", "Measuring the coolant", 18.0, 1.0)]
    lines += [("R", line, 10.0, 1.0) for line in BODY]
    lines += [("R", "Reading the log", 18.0, 1.0)]
    lines += [("R", line, 10.0, 1.0) for line in BODY]
    doc = load_document(docgen.pdf_font_claims(tmp_path / "d.pdf", lines))
    assert _words(doc.text) == _words(" ".join(text for _, text, _, _ in lines))
    heads = [(doc.text[e.start : e.end], e.level) for e in doc.elements if e.type == "heading"]
    assert heads == [("Measuring the coolant", 1), ("Reading the log", 1)]
    assert {e.style for e in doc.elements if e.type == "paragraph"} == {"10.0pt"}


def test_justified_lines_at_claimed_size_one_stay_prose_not_a_table(tmp_path):
    """Old: in a Distiller PDF (every glyph claims size 1) the wide spaces of justified lines read
    as column gaps: words split ("Pro ceedings") and lines came out as tab-separated table rows.
    Here each body line's spaces are widened by 1.5 to 4.5 points (Tw), as justification does."""
    lines = [("R", "Measuring the coolant", 18.0, 1.0)]
    lines += [("R", line, 10.0, 1.0) for line in BODY]
    spacing = [0.0] + [1.5 + 3.0 * ((7 * k) % 5) / 4 for k in range(len(BODY))]
    spacing[-1] = 0.0  # a paragraph's last line is set at its natural width
    doc = load_document(docgen.pdf_font_claims(tmp_path / "j.pdf", lines, word_spacing=spacing))
    assert _words(doc.text) == _words(" ".join(text for _, text, _, _ in lines))
    assert "\t" not in doc.text
    kinds = [e.type for e in doc.elements]
    assert "table_row" not in kinds and "table" not in kinds, kinds
    heads = [doc.text[e.start : e.end] for e in doc.elements if e.type == "heading"]
    assert heads == ["Measuring the coolant"]


def test_a_weight_the_glyphs_do_not_bear_out_makes_no_headings(tmp_path):
    """Old: body text in a font whose descriptor claims weight 744 (Ghostscript's CMR10) was bold,
    so every short line of it became a heading; a heading in a really bold face stays one."""
    lines = [("B", "Measuring the coolant", 10.0, 10.0)]
    lines += [("W", line, 10.0, 10.0) for line in BODY]
    lines += [("B", "Reading the log", 10.0, 10.0)]
    lines += [("W", line, 10.0, 10.0) for line in BODY[:3]]
    doc = load_document(docgen.pdf_font_claims(tmp_path / "w.pdf", lines))
    assert _words(doc.text) == _words(" ".join(text for _, text, _, _ in lines))
    heads = [doc.text[e.start : e.end] for e in doc.elements if e.type == "heading"]
    assert heads == ["Measuring the coolant", "Reading the log"]
    assert [e.type for e in doc.elements].count("paragraph") == 2


def test_a_superscript_footnote_mark_stays_in_its_sentence(tmp_path):
    """Old: a raised footnote mark got a baseline of its own, so it was read before its line as a
    paragraph of its own ("12"), splitting the sentence from its mark."""
    runs = [
        ("LINE", "The pump was replaced in May"),
        ("SUP", "12"),
        ("LINE", f" and the valve later. {PARA}"),
    ]
    doc = load_document(docgen.pdf_marked(tmp_path / "s.pdf", runs))
    assert " ".join(doc.text.split()) == f"The pump was replaced in May12 and the valve later. {PARA}"
    assert [e.type for e in doc.elements] == ["paragraph"]


def test_a_line_of_running_text_that_starts_like_a_caption_is_not_one(tmp_path):
    """Old: any line opening "table 1)" or "Figure 2," (case aside) was a caption, cutting the
    paragraph it belongs to; a caption is written "Table 1:", "FIGURE 2.", "Fig. 3 —"."""
    lines = [
        "The pumps are listed in the appendix, as",
        "table 1) of the report, and as Figure 2, which",
        "plots them.",
    ]
    doc = load_document(docgen.pdf_lines(tmp_path / "t.pdf", lines))
    assert [e.type for e in doc.elements] == ["paragraph"]
    assert " ".join(doc.text.split()) == " ".join(lines)


def _two_sides(path, left: list[tuple[float, str]], right: list[tuple[float, str, str]]):
    """One page, line k of each side on one baseline: ``left`` as (x, text), ``right`` as (x, text,
    align): "L" sets the text from x, "R" ends it at x (a flush-right label)."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_font("dv", "", docgen.TTF)
    pdf.add_page()
    pdf.set_font("dv", "", 9)
    for k in range(max(len(left), len(right))):
        y = 30 + 4.5 * k
        if k < len(left):
            pdf.set_xy(left[k][0], y)
            pdf.cell(0, 4.5, left[k][1])
        if k < len(right):
            x, text, align = right[k]
            width = pdf.get_string_width(text)
            pdf.set_xy(x if align == "L" else x - width, y)
            pdf.cell(width, 4.5, text)
    pdf.output(str(path))
    return path


def test_a_column_of_indented_code_beside_prose_is_read_after_the_prose(tmp_path):
    """Old: a right column of code (lines starting at several indents, ending ragged) was taken
    for flush-right labels, so a TUGboat page read its prose and its code interleaved line by line."""
    from fpdf import FPDF

    measure = FPDF()
    measure.add_font("dv", "", docgen.TTF)
    measure.add_page()
    measure.set_font("dv", "", 9)
    prose = measure.multi_cell(78, 4.5, " ".join([PARA] * 4), dry_run=True, output="LINES")
    code = [
        (0, "\\def\\btxlanguagenameaustrian{%"),
        (6, "\\foreignlanguage{#1}{german}}%"),
        (0, "\\def\\btxlanguagenamefrench{%"),
        (6, "\\foreignlanguage{#1}{french}}%"),
        (2, "."),
        (2, "."),
        (0, "\\def\\btxeditorshort##1{%"),
        (6, "\\foreignlanguage{#1}{ed##1{}}}%"),
        (0, "\\ifbbbblanguagenames"),
        (3, "\\def\\btxlanguagenameUKenglish{%"),
        (9, "\\foreignlanguage{#1}{english}}%"),
        (3, "\\fi"),
    ] * 2
    doc = load_document(
        _two_sides(tmp_path / "t.pdf", [(20, t) for t in prose], [(112 + dx, t, "L") for dx, t in code])
    )
    assert _words(doc.text) == _words(" ".join(prose) + " " + " ".join(t for _, t in code))


def test_flush_right_labels_stay_on_the_line_they_label(tmp_path):
    """Texinfo's '[Method on ...]' labels end at one x and start wherever their length puts them:
    they are no column, each stays after the signature it labels."""
    rows = [
        ("int dim1 (void) const, the rows of the array", "[Method on Array2<T>]"),
        ("Array2<T> (int n, int m, const T &val = T ())", "[Constructor]"),
        ("T& elem (int i, int j), the element at row i", "[Method on DiagArray<T>]"),
        ("T& operator () (int i, int j), checked or not", "[Indexing on Array2<T>]"),
        ("void resize (int n, int m, const T &val = T ())", "[Method on Array<T>]"),
        ("Array2<T>& operator = (const Array2<T> &a)", "[Assignment on Array2<T>]"),
        ("DiagArray<T> (int r, int c, const T &val = T ())", "[Constructor]"),
        ("int rows (void) const, the number of rows held", "[Method on Array2<T>]"),
        ("const T* data (void) const, the first element", "[Method on Array<T>]"),
        ("T& checkelem (int i, int j, int k) with checks", "[Method on Array3<T>]"),
        ("DiagArray<T> (const Array<T> &a), its diagonal", "[Constructor]"),
        ("void fill (const T &val), every element set", "[Method on DiagArray<T>]"),
    ]
    doc = load_document(
        _two_sides(tmp_path / "l.pdf", [(25, s) for s, _ in rows], [(190, label, "R") for _, label in rows])
    )
    assert _words(doc.text) == _words(" ".join(f"{s} {label}" for s, label in rows))


SLIDE_TITLES = ["Why chunk at all"] * 3 + [
    "Fixed windows",
    "Recursive splits",
    "Overlap",
    "Sizes",
    "Costs",
    "End",
]


def _deck(path: Path) -> Path:
    """A Beamer-like deck: a frame title (14 pt) over one to three points (9 pt) and a page number
    ("k / n", 6 pt) per slide; the first title is kept over three overlay slides."""
    from fpdf import FPDF

    pdf = FPDF(orientation="L", format=(96, 128))
    pdf.set_auto_page_break(False)
    pdf.add_font("dv", "", docgen.TTF)
    for k, title in enumerate(SLIDE_TITLES):
        pdf.add_page()
        pdf.set_font("dv", "", 14)
        pdf.set_xy(5, 5)
        pdf.cell(0, 8, title)
        pdf.set_font("dv", "", 9)
        for j in range(min(k, 2) + 1):
            pdf.set_xy(8, 22 + 8 * j)
            pdf.cell(0, 6, f"Point {j} of slide {k + 1}: the text a slide holds.")
        pdf.set_font("dv", "", 6)
        pdf.set_xy(100, 90)
        pdf.cell(0, 4, f"{k + 1} / {len(SLIDE_TITLES)}")
    pdf.output(str(path))
    return path


def test_a_slide_title_kept_over_its_overlays_is_a_heading_not_a_running_header(tmp_path):
    """A Beamer frame title repeated on three overlay slides in a row is a run, as a chapter's
    running header is; set in a heading's size it stays in the text, a heading on each slide."""
    doc = load_document(_deck(tmp_path / "deck.pdf"))
    titles = SLIDE_TITLES
    headings = [doc.text[e.start : e.end] for e in doc.elements if e.type == "heading"]
    assert headings == titles
    assert {r["role"] for r in doc.metadata["removed"]} == {"page_number"}


def test_a_deck_chunks_one_slide_at_a_time_even_when_the_budget_holds_several(tmp_path):
    """Each frame title is a heading, so the structural chunker starts a chunk at every slide: with
    a budget that would hold the whole deck, no chunk spans two slides (issue 36: chunks used to
    span 4-6 slides) and each chunk opens with its slide's title."""
    from chunklab.chunk import check_chunks
    from chunklab.chunkers.catalog import get_strategy

    doc = load_document(_deck(tmp_path / "deck.pdf"))
    assert len(doc.text) < 1500  # the budget below holds every slide at once
    chunks = get_strategy("structural", max_chars=1500)(doc)
    assert check_chunks(chunks, doc.text) == []
    assert [(c.metadata["page"], c.metadata["page_end"]) for c in chunks] == [
        (k, k) for k in range(1, len(SLIDE_TITLES) + 1)
    ]
    assert [c.text.split("\n", 1)[0] for c in chunks] == SLIDE_TITLES
