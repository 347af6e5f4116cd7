"""Every command on a folder of generated PDFs, a Word file and a notebook: chunk, index, search, evaluate."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from tests.support import docgen

os.environ.setdefault("CHUNKLAB_TORCH_THREADS", "1")

from chunklab.cli import main  # noqa: E402

FACT = "The reactor coolant pump restarts after ninety seconds of cooling."

pytestmark = pytest.mark.usefixtures("module_cache")  # every command here embeds into a fresh cache


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    import docx

    root = tmp_path_factory.mktemp("docs")
    pages = [["An opening page about the plant and its staff."], [FACT, "Operators log each restart."]]
    docgen.pdf_pages(
        root / "manual.pdf", pages, header="Plant manual", numbers=True, headings=["Plant", "Pumps"]
    )
    docgen.pdf_scanned(root / "scan.pdf")
    docgen.pdf_encrypted(root / "locked.pdf")
    d = docx.Document()
    d.add_heading("Canteen", 1)
    d.add_paragraph("Lunch is served at noon in the east hall.")
    d.save(root / "canteen.docx")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Readings"),
        nbformat.v4.new_code_cell("def read(x):\n    return x\n"),
    ]
    nbformat.write(nb, root / "readings.ipynb")
    return root


def test_chunk_command_cites_pages_and_cells_and_skips_with_reasons(folder, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CHUNKLAB_OCR", "auto")  # --ocr sets it for the process; restored after the test
    out = tmp_path / "c.jsonl"
    args = ["chunk", str(folder), "--out", str(out), "--no-progress", "--size", "400", "--ocr", "never"]
    assert main(args) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_doc = {r["doc_id"] for r in rows}
    assert by_doc == {"manual.pdf", "canteen.docx", "readings.ipynb"}
    fact = next(r for r in rows if FACT in r["text"])
    assert (fact["metadata"]["page"], fact["metadata"]["headings"]) == (2, ["Pumps"])
    assert not any("Plant manual" in r["text"] for r in rows)  # the running header is left out
    cells = [
        (r["metadata"]["cell"], r["metadata"]["cell_end"]) for r in rows if r["doc_id"] == "readings.ipynb"
    ]
    assert cells == [(1, 2)]  # the heading cell joins the code cell it heads
    summary = capsys.readouterr()
    text = summary.out + summary.err
    assert "skipped 2" in text and "no-text-layer" in text and "encrypted" in text


def test_index_and_search_show_the_page(folder, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CHUNKLAB_OCR", "auto")  # --ocr sets it for the process; restored after the test
    store = tmp_path / "store"
    args = ["index", str(folder), "--store", str(store), "--no-progress", "--size", "400", "--ocr", "never"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["search", str(store), "when does the coolant pump restart", "--k", "1"]) == 0
    hit = capsys.readouterr().out
    assert "manual.pdf" in hit and "(p. 2)" in hit and "ninety seconds" in hit
    assert main(["search", str(store), "coolant pump restart", "--k", "1", "--json"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (row["page"], row["where"]) == (2, "p. 2")


def test_evaluate_quotes_on_a_folder_of_pdfs_reports_the_page(folder, tmp_path):
    questions = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "pump",
            "question": "When does the pump restart?",
            "doc": "manual.pdf",
            "answer": "ninety seconds",
        },
        {"id": "lunch", "question": "When is lunch?", "doc": "canteen.docx", "answer": "at noon"},
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = tmp_path / "report.html"
    argv = ["evaluate", "--corpus", str(folder), "--questions", str(questions), "--format", "quotes"]
    argv += ["--strategies", "structural,recursive", "--k", "2", "--resamples", "100", "--no-progress"]
    argv += ["--on-error", "skip", "--report", str(report), "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    page = report.read_text(encoding="utf-8")
    assert "manual.pdf:" in page and '<span class="page">p. 2</span>' in page
