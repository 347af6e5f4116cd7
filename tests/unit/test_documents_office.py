"""The Word and notebook loaders on files generated at test time (python-docx, nbformat)."""

from __future__ import annotations

import docx
import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.documents import DocumentError, load_document, locate, where

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=60)
STYLES = st.sampled_from(["Normal", "Heading 1", "Heading 2", "List Bullet", "Caption", "Title"])


@settings(max_examples=15)
@given(paragraphs=st.lists(st.tuples(TEXT, STYLES), min_size=1, max_size=8))
def test_word_paragraphs_are_found_once_in_order_with_their_style(tmp_path_factory, paragraphs):
    d = docx.Document()
    for text, style in paragraphs:
        d.add_paragraph(text, style=style)
    path = tmp_path_factory.mktemp("w") / "p.docx"
    d.save(path)
    kept = [(t.strip(), s) for t, s in paragraphs if t.strip()]
    if not kept:
        with pytest.raises(DocumentError):
            load_document(path)
        return
    doc = load_document(path)
    got = [(doc.text[e.start : e.end], e.style) for e in doc.elements]
    assert got == kept
    for k, e in enumerate(doc.elements, 1):
        assert locate(doc.elements, e.start, e.end) == {"paragraph": k, "paragraph_end": k, "style": e.style}


def test_notebook_cells_map_to_number_id_and_type(tmp_path):
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("print('hi')")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title\n\nIntro."),
        nbformat.v4.new_markdown_cell("   "),
        code,
    ]
    nbformat.write(nb, tmp_path / "n.ipynb")
    doc = load_document(tmp_path / "n.ipynb")
    assert doc.title == "Title" and "hi\n" not in doc.text  # outputs are left out by default
    cells = [(e.cell, e.cell_type, e.cell_id, doc.text[e.start : e.end]) for e in doc.elements]
    assert cells == [
        (1, "markdown", nb.cells[0].id, "# Title\n\nIntro."),
        (3, "code", code.id, "print('hi')"),
    ]
    at = doc.text.index("print")
    assert where(locate(doc.elements, at, at + 5)) == "cell 3"


def test_notebook_outputs_when_asked(tmp_path):
    from chunklab.documents.notebook import extract_notebook

    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("1 + 1")
    code.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1)]
    nb.cells = [code]
    got = extract_notebook(nbformat.writes(nb).encode(), outputs=True)
    assert [(e.type, e.cell, got.text[e.start : e.end]) for e in got.elements] == [
        ("code", 1, "1 + 1"),
        ("output", 1, "2"),
    ]


@pytest.mark.parametrize(
    ("name", "data"), [("bad.docx", b"PK\x03\x04 not a zip"), ("bad.ipynb", b"{not json")]
)
def test_broken_word_files_and_notebooks_are_unreadable(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(DocumentError) as info:
        load_document(tmp_path / name)
    assert info.value.reason == "unreadable"
