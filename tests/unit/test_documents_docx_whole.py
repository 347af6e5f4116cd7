"""Issue 36, Found-7: a Word file read whole: content controls, text boxes, notes, nested and merged cells."""

from __future__ import annotations

import pytest

from chunklab.documents import DocumentError, load_document
from tests.support import docgen


def p(text: str, extra: str = "") -> str:
    return f'<w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r>{extra}</w:p>'


def box(text: str) -> str:
    """A text box as Word saves it: the drawing, and a VML copy for old readers (read once)."""
    inner = f"<w:txbxContent>{p(text)}</w:txbxContent>"
    return (
        '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx>'
        f"{inner}</wps:txbx></w:drawing></mc:Choice><mc:Fallback><w:pict><v:textbox>{inner}"
        "</v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
    )


def test_content_controls_text_boxes_and_notes_are_read_in_reading_order(tmp_path):
    body = (
        p("Opening paragraph.")
        + "<w:sdt><w:sdtPr/><w:sdtContent>"
        + p("Inside a content control.")
        + "</w:sdtContent></w:sdt>"
        + p("The pump restarts.", '<w:r><w:footnoteReference w:id="1"/></w:r>')
        + p("Anchor paragraph.", box("Boxed warning text."))
        + p("Closing.", '<w:r><w:endnoteReference w:id="2"/></w:r>')
    )
    path = docgen.docx_xml(
        tmp_path / "rich.docx", body, footnotes={1: "After ninety seconds."}, endnotes={2: "See the manual."}
    )
    doc = load_document(path)
    assert doc.text.split("\n\n") == [
        "Opening paragraph.",
        "Inside a content control.",
        "The pump restarts.",
        "After ninety seconds.",
        "Anchor paragraph.",
        "Boxed warning text.",
        "Closing.",
        "See the manual.",
    ]
    styles = {doc.text[e.start : e.end]: e.style for e in doc.elements}
    assert styles["After ninety seconds."] == "Footnote" and styles["See the manual."] == "Endnote"
    assert styles["Boxed warning text."] == "Text Box"


def test_content_controls_around_runs_rows_and_cells_are_read(tmp_path):
    def run(text: str) -> str:
        return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'

    def sdt(inner: str) -> str:
        return f"<w:sdt><w:sdtPr/><w:sdtContent>{inner}</w:sdtContent></w:sdt>"

    cell = "<w:tc><w:p>{}</w:p></w:tc>"
    body = (
        "<w:p>"
        + run("Name: ")
        + sdt(run("Ada Lovelace"))
        + run(" signed.")
        + "</w:p>"
        + "<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/></w:tblGrid>"
        + "<w:tr>"
        + cell.format(run("Pump"))
        + sdt(cell.format(run("40 rpm")))
        + "</w:tr>"
        + sdt("<w:tr>" + cell.format(run("Valve")) + cell.format(run("shut")) + "</w:tr>")
        + "</w:tbl>"
    )
    doc = load_document(docgen.docx_xml(tmp_path / "controls.docx", body))
    assert doc.text == "Name: Ada Lovelace signed.\n\nPump\t40 rpm\nValve\tshut"


def test_a_file_whose_only_text_is_in_a_text_box_is_read(tmp_path):
    doc = load_document(docgen.docx_xml(tmp_path / "box.docx", p("", box("Only the box has text."))))
    assert doc.text == "Only the box has text."


def test_nested_table_text_is_kept_and_a_vertically_merged_cell_is_written_once(tmp_path):
    import docx

    d = docx.Document()
    t = d.add_table(rows=3, cols=2)
    t.cell(0, 0).text, t.cell(0, 1).text = "Name", "Notes"
    t.cell(1, 0).text = "Merged down"
    t.cell(1, 0).merge(t.cell(2, 0))
    t.cell(1, 1).text, t.cell(2, 1).text = "first", "second"
    inner = t.cell(2, 1).add_table(rows=1, cols=2)
    inner.cell(0, 0).text, inner.cell(0, 1).text = "nested A", "nested B"
    d.save(tmp_path / "t.docx")
    text = load_document(tmp_path / "t.docx").text
    assert text.count("Merged down") == 1
    assert "second nested A nested B" in text


def test_a_strict_open_xml_file_is_read_through_its_transitional_namespaces(tmp_path):
    body = p("Strict text.", '<w:r><w:footnoteReference w:id="1"/></w:r>')
    doc = load_document(
        docgen.docx_xml(tmp_path / "strict.docx", body, footnotes={1: "A note."}, strict=True)
    )
    assert doc.text == "Strict text.\n\nA note."
    assert doc.metadata["strict_ooxml"] is True


def test_a_strict_file_that_still_cannot_be_read_is_refused_in_one_line(tmp_path):
    path = docgen.docx_xml(tmp_path / "bad.docx", "<w:p><w:r><w:t>Text", strict=True)  # not well-formed
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert str(info.value) == (
        f"{path}: Strict Open XML Word file that could not be read (XMLSyntaxError); "
        "save it as a standard Word document (.docx)"
    )
