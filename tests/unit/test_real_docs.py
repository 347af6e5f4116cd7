"""The real-docs corpus: its registry entry and pins (no fetch), and a slice read when it is cached."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from chunklab.datasets.corpora.pdfdocs import load_manifest, manifest_path
from chunklab.datasets.corpora.pinned import corpus_dir, pin_status
from chunklab.datasets.model import locate_quote
from chunklab.datasets.questions.pdf import read_question_rows
from chunklab.datasets.registry import corpora

NAME = "real-docs"
QUESTIONS = manifest_path(NAME).with_name(f"{NAME}-questions.jsonl")


def test_real_docs_is_a_pinned_corpus_of_the_registry():
    entry = corpora()[NAME]
    assert entry.pinned and entry.fetch is not None
    assert [p.name for p in entry.pins()] == [f.path for f in load_manifest(manifest_path(NAME)).files]


def test_every_real_docs_pin_is_well_formed():
    manifest = load_manifest(manifest_path(NAME))
    sources = {s.name: s for s in manifest.sources}
    assert {s.kind for s in manifest.sources} == {"deb", "sdist", "npm"}
    for s in manifest.sources:
        assert re.fullmatch(r"[0-9a-f]{64}", s.sha256) and s.size > 0 and s.version in s.filename
    kinds = Counter(Path(f.path).suffix for f in manifest.files)
    assert kinds == {".pdf": 13, ".docx": 16, ".ipynb": 10}
    for f in manifest.files:
        assert re.fullmatch(r"[0-9a-f]{64}", f.sha256) and f.size > 0
        assert f.path == f"{f.source}/{f.member.rsplit('/', 1)[1]}"
        assert sources[f.source].kind in {"deb", "sdist", "npm"}
        assert (f.pages > 0) == f.path.endswith(".pdf")
    assert len({f.path for f in manifest.files}) == len(manifest.files)


def test_the_52_typed_quotes_name_files_of_the_corpus():
    rows = read_question_rows(QUESTIONS)
    paths = {f.path for f in load_manifest(manifest_path(NAME)).files}
    assert len(rows) == 52 and all(r["path"] in paths and r["kind"] == "typed" for r in rows)
    assert {Path(r["path"]).suffix for r in rows} == {".pdf", ".docx", ".ipynb"}


SLICE = (
    "texlive-publishers-doc/sample-sigconf.pdf",  # characters outside the BMP, as surrogate pairs
    "texlive-latex-recommended-doc/float.pdf",  # Distiller's control codes between words
    "mammoth/footnotes.docx",
    "mammoth/text-box.docx",
    "nbsphinx/custom-css.ipynb",
)


def test_a_cached_slice_loads_without_lone_surrogates_or_control_codes_and_its_quotes_are_found():
    manifest = load_manifest(manifest_path(NAME))
    folder = corpus_dir(NAME)
    pins = [f.pin for f in manifest.files if f.path in SLICE]
    if any(pin_status(p, folder) != "ok" for p in pins):
        pytest.skip(
            f"real-docs is not fetched in {folder} (`chunklab corpus fetch real-docs`, 270 MB of archives)"
        )
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.documents import load_document
    from chunklab.ingest.stages import chunk_document

    rows = [r for r in read_question_rows(QUESTIONS) if r["path"] in SLICE]
    for path in SLICE:
        doc = load_document(folder / path, root=folder)
        chunks = chunk_document(doc, get_strategy("structural"))
        assert chunks and not any(re.search("[\ud800-\udfff]", c.text) for c in chunks), path
        assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", doc.text), path
        for row in rows:
            if row["path"] == path:
                start, end = locate_quote(doc.text, row["answer"])
                assert end > start


def _two_columns_with_an_equation(path: Path, rows: int) -> Path:
    """A two-column page whose right column holds an equation set as many short pieces (as TeX sets one)."""
    from tests.support import docgen

    pdf = docgen._pdf()
    pdf.add_page()
    pdf.set_font("dv", "", 10)
    left = [f"Leftword {k} of the column on the left." for k in range(30)]
    right = [f"Rightword {k} of the column on the right." for k in range(12)]
    for k, line in enumerate(left):
        pdf.set_xy(20, 20 + k * 5)
        pdf.cell(80, 5, line)
    for k, line in enumerate(right):
        pdf.set_xy(110, 20 + k * 5)
        pdf.cell(80, 5, line)
    for r in range(rows):  # below the right column's prose: symbols far apart, each its own piece
        for c, symbol in enumerate("x+y=z2"):
            pdf.set_xy(112 + c * 13, 85 + r * 5)
            pdf.cell(4, 5, symbol)
    pdf.output(str(path))
    return path


def test_a_column_holding_an_equation_of_many_short_pieces_is_still_a_column(tmp_path):
    from chunklab.documents import load_document

    doc = load_document(_two_columns_with_an_equation(tmp_path / "eq.pdf", rows=6))
    words = doc.text.split()
    last_left = max(i for i, w in enumerate(words) if w == "Leftword")
    first_right = min(i for i, w in enumerate(words) if w == "Rightword")
    assert last_left < first_right  # the left column whole, then the right one


def test_control_codes_a_pdf_shows_as_nothing_are_left_out_of_the_text(tmp_path):
    from chunklab.documents import load_document
    from tests.support import docgen

    line = (
        "R",
        "ignored when\x03 \x04within is not present,",
        11.0,
        11.0,
    )  # written by hand, as Distiller does
    doc = load_document(docgen.pdf_font_claims(tmp_path / "codes.pdf", [line]))
    assert "ignored when within is not present," in " ".join(doc.text.split())
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", doc.text)
