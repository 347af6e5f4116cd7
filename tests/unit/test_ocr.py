"""OCR (chunklab.documents.ocr): image-only PDF pages and image files read offline, laid out as digital pages.

A page's text layer is the truth: the same generated page is read digitally and from a picture
of itself. OCR of a page costs seconds on this machine, so the pages are few and shared.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks
from chunklab.chunkers.structural.dispatch import chunk_document
from chunklab.documents import FORMATS, DocumentError, load_document
from chunklab.documents.ocr import (
    INSTALL,
    OcrLine,
    OcrUnavailable,
    OcrWord,
    PageOcr,
    get_engine,
    lines_to_segs,
    set_ocr,
)
from tests.support import docgen

TESSERACT = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="Debian's tesseract-ocr is not installed (make sysdeps installs it where apt-get can run)",
)
FACT = (
    "Pumps are checked every morning by the operator on duty. The coolant pump restarts at 06:00 "
    "when the plant starts its first shift, and the log records each restart."
)
OTHER = "Valves are replaced every eighteen months, and the replacement is entered in the maintenance plan."


@pytest.fixture(autouse=True)
def _ocr_on(monkeypatch):
    """Each test starts from the default OCR settings (a CLI test may have set them for its process)."""
    monkeypatch.setenv("CHUNKLAB_OCR", "auto")  # set (not deleted), so that the test's own setting is undone
    monkeypatch.setenv("CHUNKLAB_OCR_ENGINE", "")


@pytest.fixture(scope="module")
def manual(tmp_path_factory):
    """A two-page manual (heading, running header, page numbers) and the same with page 2 scanned."""
    root = tmp_path_factory.mktemp("ocr")
    digital = docgen.pdf_pages(
        root / "digital.pdf",
        [["An opening page about the plant and its staff."], [FACT, OTHER]],
        header="Plant manual",
        numbers=True,
        headings=["Plant", "Coolant pumps"],
    )
    return digital, docgen.pdf_with_image_pages(root / "scanned.pdf", digital, {2})


@TESSERACT
def test_an_image_only_page_is_read_by_ocr_into_paragraphs_with_pages_and_no_print_furniture(manual):
    digital, scanned = load_document(manual[0]), load_document(manual[1])
    assert scanned.metadata["ocr_pages"] == [2] and scanned.metadata["ocr_engine"] == "tesseract"
    assert scanned.metadata["ocr"][0]["confidence"] > 0.8 and scanned.metadata["pages_without_text"] == []
    assert scanned.text == digital.text  # the page's paragraphs, in order, as its text layer has them
    page2 = [(e.type, scanned.text[e.start : e.end]) for e in scanned.elements if e.page == 2]
    assert [t for t, _ in page2] == ["heading", "paragraph", "paragraph"]
    assert " ".join(page2[1][1].split()) == FACT
    removed = {(r["page"], r["role"], r["text"]) for r in scanned.metadata["removed"]}
    assert {(2, "header", "Plant manual"), (2, "page_number", "2")} <= removed  # as on the digital page 1
    chunks = chunk_document(scanned, max_size=200)
    assert check_chunks(chunks, scanned.text, max_size=200) == []
    assert all(scanned.text[c.start : c.end] == c.text for c in chunks)
    fact = next(c for c in chunks if "coolant pump restarts" in " ".join(c.text.split()))
    assert (fact.metadata["page"], fact.metadata["headings"]) == (2, ["Coolant pumps"])


@TESSERACT
def test_a_png_file_is_read_as_a_document(manual, tmp_path):
    png = tmp_path / "page.png"
    docgen.page_image(manual[0], 2, 200).save(png, dpi=(200, 200))
    doc = load_document(png)
    assert doc.format == "png" and "png" in FORMATS
    # one page cannot repeat its running header, so it stays (as on a one-page PDF); the page number goes
    assert " ".join(doc.text.split()) == f"Plant manual Coolant pumps {FACT} {OTHER}"
    assert doc.metadata["ocr_pages"] == [1] and doc.metadata["extractor"] == "ocr:tesseract"
    assert {e.page for e in doc.elements} == {1}
    assert [r["role"] for r in doc.metadata["removed"]] == ["page_number"]


def test_an_image_with_ocr_off_is_refused_with_its_reason(manual, tmp_path, monkeypatch):
    png = tmp_path / "page.png"
    docgen.page_image(manual[0], 1, 50).save(png)
    monkeypatch.setenv("CHUNKLAB_OCR", "never")
    with pytest.raises(DocumentError) as info:
        load_document(png)
    assert info.value.reason == "no-text-layer" and "--ocr never" in info.value.detail


def test_a_missing_engine_is_one_error_naming_its_install_line(manual, monkeypatch):
    get_engine.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")  # no tesseract program
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # and no rapidocr package
    try:
        with pytest.raises(OcrUnavailable, match="apt-get install tesseract-ocr tesseract-ocr-eng"):
            get_engine("tesseract")
        with pytest.raises(OcrUnavailable, match="pip install rapidocr-onnxruntime==1.4.4"):
            get_engine("rapidocr")
        with pytest.raises(DocumentError) as info:  # a wholly scanned PDF: refused, naming both installs
            load_document(
                docgen.pdf_with_image_pages(manual[1].parent / "all.pdf", manual[0], {1, 2}, dpi=50)
            )
        assert info.value.reason == "no-text-layer"
        assert INSTALL["tesseract"] in info.value.detail and INSTALL["rapidocr"] in info.value.detail
    finally:
        get_engine.cache_clear()


def test_ocr_settings_refuse_unknown_modes_and_engines():
    with pytest.raises(ValueError, match="mode must be one of"):
        set_ocr("sometimes")
    with pytest.raises(ValueError, match="engine must be one of"):
        PageOcr("auto", "easyocr")
    with pytest.raises(ValueError, match="mode must be one of"):
        PageOcr("maybe")


def test_rapidocr_reads_a_page_corner_offline_with_its_confidence(manual):
    pytest.importorskip("rapidocr_onnxruntime")
    image = docgen.page_image(manual[0], 2, 150)
    k = 150 / 72
    corner = image.crop((int(50 * k), int(60 * k), int(300 * k), int(300 * k)))  # heading, paragraph starts
    lines = get_engine("rapidocr").read(corner, 150)
    words = " ".join(w.text for ln in lines for w in ln.words)
    assert all(w in words for w in ("Coolant", "Pumps", "checked", "restarts", "Valves"))
    assert all(0.5 < w.confidence <= 1 for ln in lines for w in ln.words)


@TESSERACT
def test_ocr_always_reads_digital_pages_too_and_the_cli_flag_sets_the_mode(manual, tmp_path):
    from chunklab.cli import main

    digital = load_document(manual[0])
    set_ocr("always")
    doc = load_document(manual[0])
    assert doc.metadata["ocr_pages"] == [1, 2] and doc.text == digital.text
    out = tmp_path / "c.jsonl"
    assert main(["chunk", str(manual[1]), "--out", str(out), "--no-progress", "--ocr", "never"]) == 0
    assert os.environ["CHUNKLAB_OCR"] == "never"  # for this process and the workers it starts
    assert {json.loads(line)["metadata"]["page"] for line in out.read_text().splitlines()} == {1}


@TESSERACT
def test_a_tiff_is_read_page_by_page_and_a_transparent_png_on_white(manual, tmp_path):
    from PIL import Image

    image = docgen.page_image(manual[0], 2, 150)
    k = 150 / 72
    heading = image.crop((0, int(60 * k), image.width, int(100 * k)))  # "Coolant pumps"
    line = image.crop((0, int(100 * k), image.width, int(125 * k)))  # the first line of the paragraph
    tiff = tmp_path / "two.tiff"
    heading.save(tiff, save_all=True, append_images=[line], dpi=(150, 150))
    doc = load_document(tiff)
    assert doc.format == "tiff" and doc.metadata["ocr_pages"] == [1, 2]
    assert [(e.page, doc.text[e.start : e.end]) for e in doc.elements][0] == (1, "Coolant pumps")
    assert doc.elements[-1].page == 2 and doc.text.endswith("The coolant pump")
    ink = Image.new("LA", heading.size, (0, 0))  # black where the heading's ink is, transparent elsewhere
    ink.putalpha(heading.point(lambda v: 255 - v))
    png = tmp_path / "ink.png"
    ink.save(png, dpi=(150, 150))
    assert load_document(png).text == "Coolant pumps"


@TESSERACT
def test_a_scanned_page_with_a_stamped_line_of_text_is_still_read_by_ocr(manual):
    stamped = docgen.pdf_with_image_pages(
        manual[1].parent / "stamped.pdf", manual[0], {2}, stamp="Archive copy"
    )
    doc = load_document(stamped)
    assert doc.metadata["ocr_pages"] == [2]  # 12 characters of text layer: under MIN_TEXT, so a scan
    assert FACT in " ".join(doc.text.split()) and doc.text.count("Archive copy") == 1


@TESSERACT
def test_the_run_summary_names_the_pages_read_by_ocr(manual, tmp_path, capsys):
    from chunklab.cli import main
    from chunklab.ingest.report import document_notes

    assert document_notes(load_document(manual[1]).metadata) == ["read by OCR (tesseract): page 2"]
    out = tmp_path / "c.jsonl"
    assert main(["chunk", str(manual[1]), "--out", str(out), "--no-progress"]) == 0
    said = capsys.readouterr()
    assert "read by OCR (tesseract): page 2" in said.out + said.err
    assert document_notes({"pages_without_text": [4], "ocr_error": "tesseract is missing"}) == [
        "no text layer: page 4",
        "not read by OCR: tesseract is missing",
    ]


@TESSERACT
def test_a_rendered_table_reads_row_by_row_with_its_cells_left_to_right(tmp_path):
    """Old: tesseract found a row's cells at slightly different heights (or as lines of their own),
    so the loader read "Pressure Restarts" before "Pump" and each name after its numbers; rows are
    now the words whose boxes overlap vertically, and each row's cells are read left to right."""
    rows = [
        ["Pump", "Pressure", "Restarts"],
        ["Coolant pump", "42", "12"],
        ["Feed pump", "38", "7"],
        ["Drain pump", "16", "30"],
    ]
    pdf = docgen.pdf_table(
        tmp_path / "t.pdf",
        "The pumps were measured over one week of operation at the plant.",
        rows,
        "Table 1: Pumps and their restarts.",
        "The drain pump restarts most often.",
    )
    doc = load_document(docgen.pdf_with_image_pages(tmp_path / "scan.pdf", pdf, {1}))
    assert doc.metadata["ocr_pages"] == [1]
    read = [doc.text[e.start : e.end].split("\t") for e in doc.elements if e.type == "table_row"]
    assert read == rows


def _word(text: str, x: float, top: float, height: float = 20.0) -> OcrWord:
    return OcrWord(text, (x, top, x + 10.0 * len(text), top + height), 0.9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(-4, 4), min_size=2, max_size=4), min_size=1, max_size=6),
    st.booleans(),
)
def test_cells_set_a_little_higher_or_lower_share_their_row(jitters, own_lines):
    """Invariant: cells whose boxes are shifted by up to a fifth of their height stay in their row
    (one middle, so one base), rows come top to bottom and each row's cells left to right, whether
    the engine gave a row as one line or each cell as a line of its own."""
    cells = [
        [_word(f"r{r}c{c}", 200.0 * c, 40.0 * r + dy) for c, dy in enumerate(row)]
        for r, row in enumerate(jitters)
    ]
    lines = [OcrLine((w,)) for row in cells for w in row] if own_lines else [OcrLine(tuple(r)) for r in cells]
    segs = lines_to_segs(lines[::-1], 1, 72 / 150, 0.95)
    by_base: dict[float, list[str]] = {}
    for s in sorted(segs, key=lambda s: (s.base, s.x0)):
        by_base.setdefault(s.base, []).append(s.text)
    assert list(by_base.values()) == [[w.text for w in row] for row in cells]
