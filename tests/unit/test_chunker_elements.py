"""The element chunker (PDF, Word, notebooks): contract, headings, lists, tables, captions, cells."""

from __future__ import annotations

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks, embedding_text
from chunklab.chunkers.structural import chunk_document
from chunklab.chunkers.structural.elements import chunk_elements
from chunklab.documents import Document, Element, load_document, locate
from chunklab.units import length_function
from tests.support import docgen

WORDS = st.lists(
    st.sampled_from("alpha beta gamma delta épsilon zeta eta theta".split()), min_size=1, max_size=30
)
ELEMENT = st.tuples(
    st.sampled_from(["heading", "paragraph", "paragraph", "list_item", "table_row", "caption"]),
    WORDS.map(" ".join),
    st.integers(1, 3),
)


def _document(items: list[tuple[str, str, int]]) -> Document:
    """A laid-out document from (type, text, page step) triples; table rows of a run share a table."""
    parts, elements, pos, page, table = [], [], 0, 1, 0
    for k, (kind, body, step) in enumerate(items):
        page += step == 3
        if kind == "table_row" and (k == 0 or items[k - 1][0] != "table_row"):
            table += 1
        text = body.replace(" ", "\t", 2) if kind == "table_row" else body
        if parts:
            parts.append("\n\n")
            pos += 2
        first_row = kind == "table_row" and (k == 0 or items[k - 1][0] != "table_row")
        elements.append(
            Element(
                pos,
                pos + len(text),
                kind,
                page=page,
                level=step if kind == "heading" else None,
                table=table if kind == "table_row" else None,
                header=first_row,
            )
        )
        parts.append(text)
        pos += len(text)
    return Document("doc.pdf", "".join(parts), format="pdf", elements=tuple(elements))


@settings(max_examples=150)
@given(
    items=st.lists(ELEMENT, min_size=1, max_size=25),
    budget=st.integers(20, 400),
    unit=st.sampled_from(["chars", "words"]),
)
def test_element_chunks_keep_the_contract_and_cite_their_pages(items, budget, unit):
    doc = _document(items)
    chunks = chunk_elements(doc, budget, unit=unit)
    assert check_chunks(chunks, doc.text, max_size=budget, length=length_function(unit)) == []
    for c in chunks:
        where = locate(doc.elements, c.start, c.end)
        assert (c.metadata["page"], c.metadata["page_end"]) == (where["page"], where["page_end"])
    assert [c.id for c in chunk_elements(doc, budget, unit=unit)] == [c.id for c in chunks]


def test_a_heading_joins_the_content_it_heads_and_names_the_section():
    doc = _document(
        [
            ("heading", "Install", 1),
            ("paragraph", "Run the installer.", 1),
            ("heading", "Use", 1),
            ("paragraph", "Call it.", 1),
        ]
    )
    chunks = chunk_elements(doc, 1000)
    assert [c.text for c in chunks] == ["Install\n\nRun the installer.", "Use\n\nCall it."]
    assert [c.metadata["headings"] for c in chunks] == [["Install"], ["Use"]]


def test_a_list_stays_with_its_lead_in():
    items = [("paragraph", "Some words before here.", 1), ("paragraph", "You need these:", 1)]
    items += [("list_item", f"- item {k}", 1) for k in range(3)]
    doc = _document(items)
    chunks = chunk_elements(doc, 60)
    lead = next(c for c in chunks if "You need these:" in c.text)
    assert lead.text.endswith("- item 2") and lead.metadata["kind"] == "list"


def test_a_table_that_fits_stays_whole_with_its_caption():
    items = [("caption", "Table 1 speeds", 1)] + [
        ("table_row", f"name speed cost row{k}", 1) for k in range(4)
    ]
    doc = _document(items + [("paragraph", "after", 1)])
    chunks = chunk_elements(doc, 200)
    assert chunks[0].text.startswith("Table 1 speeds") and all(f"row{k}" in chunks[0].text for k in range(4))
    assert chunks[0].metadata["kind"] == "table"


def test_a_long_table_is_split_by_rows_with_the_header_row_in_the_embedded_text():
    rows = [("table_row", "Name Speed Cost", 1)] + [("table_row", f"item{k} {k}0 {k}", 1) for k in range(30)]
    doc = _document(rows)
    chunks = chunk_elements(doc, 80)
    assert len(chunks) > 3 and check_chunks(chunks, doc.text, max_size=80) == []
    header = "Name\tSpeed\tCost"
    assert chunks[0].text.startswith(header)
    for c in chunks[1:]:
        assert not c.text.startswith(header) and c.metadata["table_header"] == header
        assert embedding_text(c).startswith(header + "\n")
        assert all(line.startswith("item") for line in c.text.split("\n") if line)  # cut between rows only


def test_structural_picks_the_element_chunker_for_a_generated_pdf(tmp_path):
    pages = [["Intro words on the first page."], ["Body words on the second page."]]
    doc = load_document(docgen.pdf_pages(tmp_path / "d.pdf", pages, headings=["Start", "Second part"]))
    chunks = chunk_document(doc, max_chars=500)
    assert check_chunks(chunks, doc.text, max_size=500) == []
    assert [(c.metadata["headings"], c.metadata["page"]) for c in chunks] == [
        (["Start"], 1),
        (["Second part"], 2),
    ]


def test_word_headings_tables_and_styles(tmp_path):
    import docx

    d = docx.Document()
    d.add_heading("Guide", 1)
    d.add_paragraph("Intro paragraph.")
    d.add_heading("Prices", 2)
    t = d.add_table(rows=1, cols=2)
    t.rows[0].cells[0].text, t.rows[0].cells[1].text = "Item", "Price"
    for k in range(20):
        row = t.add_row().cells
        row[0].text, row[1].text = f"thing{k}", f"{k}.00"
    d.sections[0].footer.paragraphs[0].text = "Company confidential"
    d.save(tmp_path / "g.docx")
    doc = load_document(tmp_path / "g.docx")
    assert "Company confidential" not in doc.text
    assert doc.metadata["removed"] == [{"section": 1, "role": "footer", "text": "Company confidential"}]
    chunks = chunk_document(doc, max_chars=80)
    assert check_chunks(chunks, doc.text, max_size=80) == []
    table = [c for c in chunks if c.metadata["kind"] == "table"]
    assert table[0].metadata["headings"] == ["Guide", "Prices"]
    assert all(c.metadata.get("table_header") == "Item\tPrice" for c in table[1:]) and len(table) > 1
    assert chunks[0].metadata["paragraph"] == 1 and chunks[0].metadata["style"] == "Heading 1"


def test_notebook_cells_markdown_by_heading_code_by_python(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Loading data"),
        nbformat.v4.new_markdown_cell("We read the file.\n\n## Details\n\nMore words here."),
        nbformat.v4.new_code_cell(
            "def load(path):\n    return open(path).read()\n\n\ndef save(x):\n    pass\n"
        ),
    ]
    nbformat.write(nb, tmp_path / "n.ipynb")
    doc = load_document(tmp_path / "n.ipynb")
    chunks = chunk_document(doc, max_chars=60)
    assert check_chunks(chunks, doc.text, max_size=60) == []
    assert chunks[0].text.startswith(
        "# Loading data\n\nWe read the file."
    )  # the heading cell joins its content
    assert all(c.text.strip() != "# Loading data" for c in chunks)
    code = [c for c in chunks if c.metadata["cell"] == 3]
    assert [c.text.split("(")[0] for c in code] == ["def load", "def save"]
    assert {c.metadata["cell_type"] for c in code} == {"code"}
    assert code[0].metadata["cell_id"] == nb.cells[2].id


def test_a_pdf_kind_string_without_elements_falls_back_and_says_why():
    text = "words " * 200
    chunks = chunk_document(Document.from_text(text, "x.pdf", "pdf"), max_chars=300)
    assert check_chunks(chunks, text, max_size=300) == []
    assert all(c.metadata["fallback_reason"] == "no element map" for c in chunks)


def test_element_chunks_in_model_tokens():
    items = [("heading", "Intro", 1)] + [("paragraph", "alpha beta gamma delta " * 8, 1) for _ in range(6)]
    doc = _document(items)
    chunks = chunk_elements(doc, 64, unit="tokens")
    assert check_chunks(chunks, doc.text, max_size=64, length=length_function("tokens")) == []
    assert len(chunks) > 1 and chunks[0].metadata["params"]["unit"] == "tokens"


def test_notebook_heading_paths_carry_across_cells_by_level(tmp_path):
    """Old: a cell's own headings replaced the path ("## Details" lost the "# Loading data" of the
    cell before it) and heading-only cells were appended whatever their level."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Loading data"),
        nbformat.v4.new_markdown_cell("We read the file.\n\n## Details\n\nMore words here."),
        nbformat.v4.new_code_cell("def load(path):\n    return open(path).read()\n"),
        nbformat.v4.new_markdown_cell("## Saving"),
        nbformat.v4.new_markdown_cell("### Format\n\nThe format is CSV with a header row."),
        nbformat.v4.new_markdown_cell("## Cleaning"),
        nbformat.v4.new_code_cell("def clean(x):\n    return x\n"),
    ]
    nbformat.write(nb, tmp_path / "n.ipynb")
    doc = load_document(tmp_path / "n.ipynb")
    chunks = chunk_document(doc, max_chars=60)
    assert check_chunks(chunks, doc.text, max_size=60) == []
    assert [c.metadata["headings"] for c in chunks] == [
        ["Loading data"],
        ["Loading data", "Details"],
        ["Loading data", "Details"],
        ["Loading data", "Saving", "Format"],
        ["Loading data", "Cleaning"],
    ]
