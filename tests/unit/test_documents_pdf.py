"""The PDF loader on PDFs generated at test time with known text (tests/support/docgen.py)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.documents import DocumentError, iter_documents, load_document, locate, where
from chunklab.ingest.report import problem_of
from tests.support import docgen

WORD = st.text(
    alphabet=st.sampled_from(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789éüßñçøå,.;:!?()'\"\ufb01\ufb02"
    ),
    min_size=1,
    max_size=12,
)
PARAGRAPH = st.lists(WORD, min_size=1, max_size=35).map(" ".join)
PAGES = st.lists(st.lists(PARAGRAPH, min_size=1, max_size=3), min_size=1, max_size=3)


def _norm(text: str) -> str:
    text = "".join(unicodedata.normalize("NFKC", c) if 0xFB00 <= ord(c) <= 0xFB06 else c for c in text)
    return " ".join(text.split())


@settings(max_examples=12)
@given(pages=PAGES)
def test_extraction_keeps_every_character_once_in_order_and_on_its_page(tmp_path_factory, pages):
    path = docgen.pdf_pages(tmp_path_factory.mktemp("p") / "known.pdf", pages)
    doc = load_document(path)
    assert _norm(doc.text) == _norm(" ".join(p for page in pages for p in page))
    assert doc.metadata["pages"] == len(pages)
    for e in doc.elements:
        assert doc.text[e.start : e.end].strip() == doc.text[e.start : e.end]
        page_words = set(_norm(" ".join(pages[e.page - 1])).split())
        assert set(_norm(doc.text[e.start : e.end]).split()) <= page_words
        assert locate(doc.elements, e.start, e.end)["page"] == e.page


def test_offsets_of_each_page_map_to_that_page(tmp_path):
    pages = [[f"Marker{k} opens page {k}. Then some filler text follows here."] for k in range(1, 5)]
    doc = load_document(docgen.pdf_pages(tmp_path / "m.pdf", pages))
    for k in range(1, 5):
        at = doc.text.index(f"Marker{k}")
        assert locate(doc.elements, at, at + 7) == {"page": k, "page_end": k}
    span = locate(doc.elements, 0, len(doc.text))
    assert (span["page"], span["page_end"]) == (1, 4)
    assert where(span) == "pp. 1-4"


def test_two_column_page_reads_the_left_column_before_the_right(tmp_path):
    left = ["Leftword " * 40, "Leftsecond " * 15]
    right = ["Rightword " * 40]
    doc = load_document(docgen.pdf_two_columns(tmp_path / "two.pdf", left, right, title="A wide title"))
    words = doc.text.split()
    assert words[:3] == ["A", "wide", "title"]
    last_left = max(i for i, w in enumerate(words) if w.startswith("Left"))
    first_right = min(i for i, w in enumerate(words) if w.startswith("Right"))
    assert last_left < first_right
    assert words.count("Leftword") == 40 and words.count("Rightword") == 40


def test_repeated_headers_footers_and_page_numbers_are_left_out_and_recorded(tmp_path):
    pages = [[f"Body text of page {k} with enough words to read."] for k in range(1, 4)]
    path = docgen.pdf_pages(
        tmp_path / "hf.pdf", pages, header="ACME Manual v2", footer="Confidential", numbers=True
    )
    doc = load_document(path)
    assert "ACME" not in doc.text and "Confidential" not in doc.text
    assert _norm(doc.text) == _norm(" ".join(p for page in pages for p in page))
    removed = {(r["page"], r["role"], r["text"]) for r in doc.metadata["removed"]}
    for k in range(1, 4):
        assert {
            (k, "header", "ACME Manual v2"),
            (k, "footer", "Confidential"),
            (k, "page_number", str(k)),
        } <= removed


def test_a_line_at_the_top_of_one_page_only_is_kept(tmp_path):
    path = docgen.pdf_pages(tmp_path / "one.pdf", [["Body one."], ["Body two."]], header=None)
    doc = load_document(path)
    assert doc.metadata["removed"] == []


def test_words_hyphenated_across_a_line_break_are_joined(tmp_path):
    doc = load_document(
        docgen.pdf_lines(tmp_path / "h.pdf", ["The experi-", "ment worked, a well-", "Known case."])
    )
    assert "experiment worked" in doc.text
    assert "well-\nKnown" in doc.text  # a capital after the hyphen: a real hyphen, kept


def test_ligature_code_points_are_normalized(tmp_path):
    doc = load_document(docgen.pdf_lines(tmp_path / "l.pdf", ["e\ufb03cient \ufb02ow of \ufb01les"]))
    assert "efficient flow of files" in doc.text
    assert not any(0xFB00 <= ord(c) <= 0xFB06 for c in doc.text)


def test_headings_are_found_by_font_size_and_weight(tmp_path):
    pages = [["First body paragraph."], ["Second body paragraph."]]
    doc = load_document(
        docgen.pdf_pages(tmp_path / "h.pdf", pages, headings=["Getting started", "Next steps"])
    )
    heads = [(doc.text[e.start : e.end], e.page, e.level) for e in doc.elements if e.type == "heading"]
    assert heads == [("Getting started", 1, 1), ("Next steps", 2, 1)]
    assert doc.title == "Getting started"


def test_table_rows_and_caption_are_elements(tmp_path):
    rows = [["Name", "Speed", "Cost"], ["alpha", "10", "3"], ["beta", "20", "4"]]
    doc = load_document(docgen.pdf_table(tmp_path / "t.pdf", "Lead-in:", rows, "Table 1: Speeds", "After."))
    table = [e for e in doc.elements if e.type == "table_row"]
    assert [doc.text[e.start : e.end].split("\t") for e in table] == rows
    assert [e.header for e in table] == [True, False, False] and len({e.table for e in table}) == 1
    caption = [doc.text[e.start : e.end] for e in doc.elements if e.type == "caption"]
    assert caption == ["Table 1: Speeds"]


@pytest.mark.parametrize(
    ("make", "reason"), [(docgen.pdf_scanned, "no-text-layer"), (docgen.pdf_encrypted, "encrypted")]
)
def test_scanned_and_encrypted_pdfs_give_their_reason_and_are_skipped(tmp_path, make, reason, monkeypatch):
    monkeypatch.setenv("CHUNKLAB_OCR", "never")  # with OCR on, a scanned page is read (test_ocr.py)
    path = make(tmp_path / "bad.pdf")
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert info.value.reason == reason
    errors: list[DocumentError] = []
    assert list(iter_documents([tmp_path], errors=errors)) == []
    assert [e.reason for e in errors] == [reason]
    assert problem_of(errors[0])[0] == "skipped"


def test_a_file_that_is_not_a_pdf_is_unreadable(tmp_path):
    path = tmp_path / "fake.pdf"
    path.write_bytes(b"%PDF-1.4 nothing else")
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert info.value.reason == "unreadable"


def test_a_pdf_without_its_extension_is_still_read_as_a_pdf(tmp_path):
    path = docgen.pdf_pages(tmp_path / "known.pdf", [["Some words on a page."]])
    bare = tmp_path / "download"
    bare.write_bytes(path.read_bytes())
    doc = load_document(bare)
    assert doc.format == "pdf" and _norm(doc.text) == "Some words on a page."


@settings(max_examples=5)
@given(left=st.lists(PARAGRAPH, min_size=1, max_size=3), right=st.lists(PARAGRAPH, min_size=1, max_size=3))
def test_two_columns_of_any_text_read_left_then_right(tmp_path_factory, left, right):
    left, right = (
        [f"{p} {'filler words ' * 12}" for p in left],
        [f"{p} {'filler words ' * 12}" for p in right],
    )
    path = docgen.pdf_two_columns(tmp_path_factory.mktemp("c") / "two.pdf", left, right)
    assert _norm(load_document(path).text) == _norm(" ".join(left + right))


def test_a_number_in_the_margin_that_does_not_follow_the_pages_stays_text(tmp_path):
    pdf = docgen._pdf()
    for k in range(3):
        pdf.add_page()
        pdf.set_font("dv", "", 11)
        if k == 1:
            pdf.set_xy(20, 8)
            pdf.cell(20, 5, "42")
        pdf.set_xy(20, 40)
        pdf.multi_cell(0, 5.5, f"Body of page {k + 1}.")
        pdf.set_xy(180, 282)
        pdf.cell(10, 5, str(k + 1))
    pdf.output(str(tmp_path / "n.pdf"))
    doc = load_document(tmp_path / "n.pdf")
    assert "42" in doc.text.split()
    assert [r["text"] for r in doc.metadata["removed"]] == ["1", "2", "3"]


def test_the_fast_pdfium_calls_read_what_pypdfium2s_bindings_read(tmp_path):
    """The extraction's address-prototyped calls (``pdf.pdfium.fast_calls``) against pypdfium2's own
    bindings, character by character: a wrong result type or argument would change every box."""
    import ctypes

    import pypdfium2 as pdfium
    import pypdfium2.raw as pr

    from chunklab.documents.pdf.pdfium import fast_calls

    path = docgen.pdf_pages(
        tmp_path / "h.pdf",
        [["Body text \ufb01ne, with é and ß."], ["More body."]],
        headings=["A heading", "Two"],
    )
    fast = fast_calls(pr)
    doc = pdfium.PdfDocument(path)
    seen = 0
    for page in doc:
        tp = page.get_textpage()
        raw, address = tp.raw, ctypes.cast(tp.raw, ctypes.c_void_p).value
        for i in range(tp.count_chars()):
            assert fast.unicode(address, i) == pr.FPDFText_GetUnicode(raw, i)
            slow = [ctypes.c_double() for _ in range(4)]
            quick = [ctypes.c_double() for _ in range(4)]
            assert fast.char_box(address, i, *map(ctypes.addressof, quick)) == pr.FPDFText_GetCharBox(
                raw, i, *map(ctypes.byref, slow)
            )
            assert [v.value for v in quick] == [v.value for v in slow]
            a, b = pr.FS_RECTF(), pr.FS_RECTF()
            fast.loose_box(address, i, ctypes.addressof(a))
            pr.FPDFText_GetLooseCharBox(raw, i, ctypes.byref(b))
            assert (a.left, a.right, a.bottom, a.top) == (b.left, b.right, b.bottom, b.top)
            assert fast.font_size(address, i) == pr.FPDFText_GetFontSize(raw, i)
            m, n = pr.FS_MATRIX(), pr.FS_MATRIX()
            assert fast.matrix(address, i, ctypes.addressof(m)) == pr.FPDFText_GetMatrix(
                raw, i, ctypes.byref(n)
            )
            assert (m.a, m.b, m.c, m.d, m.e, m.f) == (n.a, n.b, n.c, n.d, n.e, n.f)
            obj = ctypes.cast(pr.FPDFText_GetTextObject(raw, i), ctypes.c_void_p).value
            assert fast.text_object(address, i) == obj
            seen += obj is not None
        tp.close()
    assert seen > 30  # the pages' characters were read, not only generated spaces
