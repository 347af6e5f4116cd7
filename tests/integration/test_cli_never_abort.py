"""Issue 36, Found-1 and Found-8 through the commands: one bad file is one line, the run goes on."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from tests.support import docgen

os.environ.setdefault("CHUNKLAB_TORCH_THREADS", "1")

from chunklab.cli import main  # noqa: E402

MATH = "Let \U0001d465 be the count of \U0001d441 items in the pump log."

pytestmark = pytest.mark.usefixtures("module_cache")  # index embeds into a fresh cache


@pytest.fixture(autouse=True)
def _ocr_off(monkeypatch):
    """OCR off: the scanned page stays a page without text, the gap these tests look for (with OCR on
    it is read, and the summary says so: tests/unit/test_ocr.py)."""
    monkeypatch.setenv("CHUNKLAB_OCR", "never")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    docgen.pdf_serif(root / "math.pdf", [MATH])
    docgen.pdf_partly_scanned(root / "part.pdf", [["The valve closes at dusk."], None])
    with zipfile.ZipFile(root / "broken.docx", "w") as z:  # python-docx opens it, then trips over it
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", "<x>")
    return root


def test_chunk_goes_on_past_a_broken_file_and_names_gaps(folder, tmp_path, capsys):
    out = tmp_path / "c.jsonl"
    assert main(["chunk", str(folder), "--out", str(out), "--no-progress"]) == 1  # a file failed
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["doc_id"] for r in rows} == {"math.pdf", "part.pdf"}
    assert any(MATH in r["text"] for r in rows)
    text = capsys.readouterr().out
    assert "ok 2, skipped 0, failed 1" in text
    assert f"failed: {folder / 'broken.docx'}: the docx loader failed: " in text
    assert f"noted: {folder / 'part.pdf'}: no text layer: page 2" in text


def test_index_stores_the_good_documents_and_reports_the_rest(folder, tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["index", str(folder), "--store", str(store), "--no-progress"]) == 1
    text = capsys.readouterr().out
    assert "ok 2, skipped 0, failed 1" in text and "broken.docx" in text
    assert f"noted: {folder / 'part.pdf'}: no text layer: page 2" in text
    assert main(["search", str(store), "count of items in the pump log", "--k", "1", "--json"]) == 0
    hit = json.loads(capsys.readouterr().out.splitlines()[0])
    assert MATH in hit["text"]


def test_evaluate_goes_on_past_a_broken_file_and_finds_typed_quotes(folder, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "count",
            "question": "What is x?",
            "doc": "math.pdf",
            "answer": "the count of  \U0001d441 items",
        },
        {
            "id": "valve",
            "question": "When does the valve close?",
            "doc": "part.pdf",
            "answer": "closes at dusk",
        },
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["evaluate", "--corpus", str(folder), "--questions", str(questions), "--format", "quotes"]
    argv += ["--strategies", "recursive", "--k", "1", "--resamples", "50", "--no-progress"]
    assert main(argv) == 0  # no --on-error skip needed: a file its loader fails on is one line
    err = capsys.readouterr().err
    assert f"skipped: corpus file {folder / 'broken.docx'}: the docx loader failed: " in err
    assert f"noted: {folder / 'part.pdf'}: no text layer: page 2" in err
