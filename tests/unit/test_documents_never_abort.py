"""Issue 36, Found-1 / Deliver-1: no document aborts a run.

Surrogate pairs are made whole, lone halves replaced (and counted), a loader's crash is one
problem naming the file, and a document whose rows cannot be stored fails alone.
"""

from __future__ import annotations

import json
import struct
import zipfile

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from chunklab.chunkers.catalog import StrategySpec
from chunklab.documents import Document, DocumentError, load_document
from chunklab.documents.characters import REPLACEMENT, combine_surrogates, replace_lone_surrogates
from chunklab.ingest import stages
from chunklab.ingest.plan import WorkItem
from chunklab.ingest.report import IngestReport, document_notes, report_lines
from tests.support import docgen

MATH = "Let \U0001d465 be the count of \U0001d441 items, with \U0001d44e the rate."
NO_SURROGATES = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)


def utf16_halves(text: str) -> str:
    """``text`` as PDFium returns it: every character outside the BMP as two UTF-16 halves."""
    units = text.encode("utf-16-le")
    return "".join(chr(u) for u in struct.unpack(f"<{len(units) // 2}H", units))


@given(NO_SURROGATES)
def test_combining_the_halves_of_any_text_gives_the_text_back(text):
    assert combine_surrogates(utf16_halves(text)) == text


@given(NO_SURROGATES, st.lists(st.integers(0xD800, 0xDFFF), max_size=4), st.randoms())
def test_lone_surrogates_are_replaced_one_for_one_and_counted(text, lone, rnd):
    chars = list(text)
    for code in lone:
        chars.insert(rnd.randint(0, len(chars)), chr(code))
    mixed = "".join(chars)
    fixed, count = replace_lone_surrogates(combine_surrogates(mixed))
    fixed.encode("utf-8")  # raises on anything UTF-8 cannot take
    assert count <= len(lone) and fixed.count(REPLACEMENT) == text.count(REPLACEMENT) + count
    same_length, all_halves = replace_lone_surrogates(mixed)
    assert (len(same_length), all_halves) == (len(mixed), len(lone))  # offsets into the text stay valid


def test_pdf_characters_outside_the_bmp_come_out_whole(tmp_path):
    doc = load_document(docgen.pdf_serif(tmp_path / "math.pdf", [MATH]))
    assert MATH in doc.text
    assert "lone_surrogates" not in doc.metadata and doc.metadata["surrogate_pairs"] == 3
    doc.text.encode("utf-8")
    (element,) = doc.elements
    assert doc.text[element.start : element.end] == MATH  # the element map counts whole characters


def test_a_notebook_with_a_lone_surrogate_is_read_with_it_replaced_and_counted(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# Title\nLet \\ud835 be x."}
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "lone.ipynb"
    path.write_text(json.dumps(nb).replace("\\\\ud835", "\\ud835"))
    doc = load_document(path)
    assert f"Let {REPLACEMENT} be x." in doc.text
    assert doc.metadata["lone_surrogates"] == 1
    assert document_notes(doc.metadata) == ["1 broken character (lone UTF-16 surrogates) replaced by U+FFFD"]


def test_a_loader_crash_is_a_document_error_naming_the_file(tmp_path):
    path = tmp_path / "bad.docx"
    with zipfile.ZipFile(path, "w") as z:  # a zip python-docx opens and then trips over
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", "<x>")
    try:
        load_document(path)
    except DocumentError as exc:
        assert exc.reason == "unreadable" and exc.path == str(path)
        assert str(exc).startswith(f"{path}: the docx loader failed: ")
    else:
        raise AssertionError("a broken Word file must raise DocumentError")


def test_a_document_whose_rows_cannot_be_stored_fails_alone(tmp_path, monkeypatch):
    good, bad = tmp_path / "good.md", tmp_path / "bad.md"
    good.write_text("# Good\n\nThis document is stored.\n")
    bad.write_text("# Bad\n\nThis one is not.\n")
    real_load = stages.load

    def load(item: WorkItem, strict: bool = False) -> Document:
        if item.source.endswith("bad.md"):  # text no loader gives any more: a lone half
            return Document.from_text("# Bad\n\nHalf a character \ud835 here.\n", "bad.md", "markdown")
        return real_load(item, strict)

    monkeypatch.setattr(stages, "load", load)
    items = [WorkItem(str(p), str(tmp_path)) for p in (bad, good)]
    config = stages.ChunkConfig(StrategySpec.of("recursive"))
    table = stages.chunk_items(stages.encode_items(items), config)
    assert isinstance(table, pa.Table)
    rows = table.to_pylist()
    assert [r["status"] for r in rows if r["source"] == str(bad)] == ["failed"]  # no chunk row of it
    (failed,) = [r for r in rows if r["status"] == "failed"]
    assert failed["error"].startswith("chunker: UnicodeEncodeError")
    assert any(r["status"] == "embed" and "stored" in r["text"] for r in rows)


def test_the_summary_names_a_partly_scanned_pdf_and_its_pages(tmp_path, monkeypatch):
    """Found-8: the run summary says which pages of which file have no text, not only metadata.

    With OCR off (``--ocr never``); with OCR on, the pages are read and the summary says so
    (tests/unit/test_ocr.py::test_the_run_summary_names_the_pages_read_by_ocr).
    """
    monkeypatch.setenv("CHUNKLAB_OCR", "never")
    path = docgen.pdf_partly_scanned(
        tmp_path / "part.pdf", [["First page text."], ["Second page text."], None, ["Fourth page."], None]
    )
    doc = load_document(path)
    assert doc.metadata["pages_without_text"] == [3, 5]
    report = IngestReport()
    report.document(doc)
    lines = report_lines(report.files_dict())
    assert f"    noted: {path}: no text layer: pages 3, 5" in lines
    assert report.files_dict()["noted"] == [[str(path), "no text layer: pages 3, 5"]]
