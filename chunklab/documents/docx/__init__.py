"""Word files (.docx) to one canonical text with a paragraph-and-style map, read with python-docx.

:func:`extract_docx` walks the body in order: each non-empty paragraph becomes one block (its
style says heading and level, list item, caption or paragraph), each table one ``table_row``
block per row with its cells separated by tabs (the first row is the header). Section headers
and footers are not body text: they are left out of ``text`` and recorded in
``metadata["removed"]``. A file that is not a Word document raises
:class:`~chunklab.decoding.DocumentError`. A Strict Open XML file is read through its
transitional namespaces, or refused in one line when that fails.

Nothing in the body is lost or doubled: what content controls (``w:sdt``) hold, paragraphs, rows,
cells or runs, is read in place; a text box's paragraphs (``w:txbxContent``) and the footnotes and
endnotes a paragraph cites follow that paragraph, as blocks of their own (style "Text Box",
"Footnote", "Endnote"); a nested table's text is part of its cell's text; a vertically merged cell's
text is written once, in the row it starts in (the rows below get an empty cell).

Pages come from the breaks the file records (:mod:`chunklab.documents.docx.pages`): every
element gets its ``page`` and a paragraph that runs onto the next page becomes one element per
page (same paragraph number and style), so a chunk cites "p. 12". A heading keeps the page it
starts on, a table row the page its first cell's text is on. A file without page breaks of
either kind has no pages: its elements keep ``page=None`` and ``metadata["pages_note"]`` says
"pages not recorded in this file".
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypedDict

from chunklab.decoding import DocumentError
from chunklab.documents.docx.pages import (
    PageTracker,
    page_notes,
    paragraph_pieces,
    qn,
    row_pages,
    section_layout,
    style_breaks_page,
)
from chunklab.documents.layout import Element, Extracted

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from docx.table import _Cell
    from docx.text.paragraph import Paragraph

__all__ = ["extract_docx"]

_RENDERED = qn("w:lastRenderedPageBreak")
_HEADING = re.compile(r"^(?:heading|título|titulo)\s*(\d)$", re.I)


def extract_docx(raw: bytes, name: str = "<docx>") -> Extracted:
    """The canonical text of a Word file's body, its elements (style, paragraph number), what was left out.

    A Strict Open XML file is read with its namespaces mapped to the transitional ones python-docx
    knows (``metadata["strict_ooxml"]``); one that still cannot be read is refused in one line.
    """
    if not _is_strict(raw):
        return _extract(raw, name)
    try:
        got = _extract(_transitional(raw), name)
    except Exception as exc:
        raise DocumentError(
            name,
            "unreadable",
            f"Strict Open XML Word file that could not be read ({type(exc).__name__}); "
            "save it as a standard Word document (.docx)",
        ) from None
    return Extracted(got.text, got.elements, got.title, {**(got.metadata or {}), "strict_ooxml": True})


def _extract(raw: bytes, name: str) -> Extracted:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(raw))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        if raw[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
            raise DocumentError(name, "encrypted", "encrypted or legacy Word file (OLE container)") from None
        raise DocumentError(name, "unreadable", f"not a readable Word file ({exc})") from None
    parts: list[str] = []
    elements: list[Element] = []
    title: str | None = None
    pos, number, tables = 0, 0, 0
    layouts = [section_layout(sec) for sec in document.sections] or [("nextPage", 1)]
    pages = PageTracker(columns=layouts[0][1])
    section = 0
    breaks_style: dict[str, bool] = {}  # style name -> whether it starts a new page

    def add(piece: str, sep: str, spans: list[tuple[int, int, int]], **fields: Any) -> None:
        nonlocal pos, number
        if parts:
            parts.append(sep)
            pos += len(sep)
        number += 1
        for s, e, page in spans:
            elements.append(Element(pos + s, pos + e, page=page, index=number, **fields))
        parts.append(piece)
        pos += len(piece)

    notes = _notes(document)
    _unwrap_content_controls(document.element.body)
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            style = block.style.name if block.style is not None else "Normal"
            ppr = block._p.pPr
            direct = ppr.pageBreakBefore_val if ppr is not None else None
            if style not in breaks_style:
                breaks_style[style] = style_breaks_page(block.style)
            if direct if direct is not None else breaks_style[style]:
                pages.new_page()
            raw_text = block.text
            spans = paragraph_pieces(block._p, raw_text, pages)
            piece = raw_text.strip()
            if piece:
                lead = len(raw_text) - len(raw_text.lstrip())
                kind, level = _paragraph_type(block, style or "Normal")
                if kind == "heading" and title is None and (style == "Title" or level == 1):
                    title = " ".join(piece.split())
                cut = [(s - lead, e - lead, page) for s, e, page in spans]
                if kind == "heading":  # one element: a heading's path must not be split
                    cut = [(0, len(piece), cut[0][2])]
                add(piece, "\n\n", cut, type=kind, level=level, style=style)
            for extra, extra_style in _anchored(block._p, notes):  # text boxes, cited notes
                at = spans[-1][2] if spans else pages.page
                add(extra, "\n\n", [(0, len(extra), at)], type="paragraph", style=extra_style)
            if ppr is not None and ppr.sectPr is not None and section + 1 < len(layouts):
                section += 1  # this paragraph ends a section; the next starts as its type says
                pages.columns = layouts[section][1]
                pages.new_page(layouts[section][0])
        elif isinstance(block, Table):
            tables += 1
            for r, row in enumerate(block.rows):
                cells = _unique_cells(row.cells)
                piece = "\t".join(_cell_text(c, row._tr) for c in cells).strip()
                page = row_pages(row._tr, pages)
                if piece:
                    sep = "\n" if r and elements and elements[-1].table == tables else "\n\n"
                    add(
                        piece,
                        sep,
                        [(0, len(piece), page)],
                        type="table_row",
                        style="Table",
                        table=tables,
                        header=r == 0,
                    )
    recorded = pages.page > 1 or any(True for _ in document.element.body.iter(_RENDERED))
    if not recorded:
        elements = [replace(e, page=None) for e in elements]
    meta = {"paragraphs": number, "removed": _margins(document)}
    meta.update(page_notes(raw, document.element.body, pages.page if recorded else None))
    return Extracted("".join(parts), tuple(elements), title, meta)


def _paragraph_type(paragraph: Paragraph, style: str) -> tuple[str, int | None]:
    m = _HEADING.match(style)
    if m:
        return "heading", int(m.group(1))
    if style == "Title":
        return "heading", 1
    if style.lower().startswith("caption"):
        return "caption", None
    ppr = paragraph._p.pPr
    if style.lower().startswith("list") or (ppr is not None and ppr.numPr is not None):
        return "list_item", None
    return "paragraph", None


def _unique_cells(cells: list[_Cell]) -> list[_Cell]:
    """A row's cells with horizontally merged cells given once."""
    out: list[_Cell] = []
    for c in cells:
        if not out or c._tc is not out[-1]._tc:
            out.append(c)
    return out


_P, _SDT, _SDT_CONTENT = qn("w:p"), qn("w:sdt"), qn("w:sdtContent")
_TXBX, _T = qn("w:txbxContent"), qn("w:t")
_NOTE_REFS = {qn("w:footnoteReference"): "Footnote", qn("w:endnoteReference"): "Endnote"}
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_STRICT_W = b"http://purl.oclc.org/ooxml/wordprocessingml/main"
#: Strict Open XML namespaces (ISO/IEC 29500-1) -> the transitional ones of the same vocabulary
_STRICT_NAMESPACES = {
    _STRICT_W: b"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    b"http://purl.oclc.org/ooxml/officeDocument/relationships": (
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    ),
    b"http://purl.oclc.org/ooxml/officeDocument/math": b"http://schemas.openxmlformats.org/officeDocument/2006/math",
    b"http://purl.oclc.org/ooxml/drawingml/main": b"http://schemas.openxmlformats.org/drawingml/2006/main",
    b"http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing": (
        b"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
    ),
    b"http://purl.oclc.org/ooxml/drawingml/picture": b"http://schemas.openxmlformats.org/drawingml/2006/picture",
}


def _is_strict(raw: bytes) -> bool:
    """Whether the file is Strict Open XML (python-docx reads only the transitional namespace)."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            with z.open("word/document.xml") as fh:
                return _STRICT_W in fh.read(4096)
    except (zipfile.BadZipFile, KeyError, OSError):
        return False


def _unwrap_content_controls(body: Any) -> None:
    """Replace every content control (``w:sdt``) in ``body`` by its content, in place.

    Controls wrap paragraphs and tables, rows, cells and runs; python-docx reads none of what is
    inside them, so the file's own content, unwrapped, is read as the rest is (page breaks too).
    """
    for sdt in list(body.iter(_SDT)):
        parent = sdt.getparent()
        at = parent.index(sdt)
        for content in sdt.iterchildren(_SDT_CONTENT):
            for child in list(content):
                parent.insert(at, child)
                at += 1
        parent.remove(sdt)


def _transitional(raw: bytes) -> bytes:
    """A Strict Open XML package rewritten with transitional namespaces (relationship types included)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith((".xml", ".rels")):
                for strict, transitional in _STRICT_NAMESPACES.items():
                    data = data.replace(strict, transitional)
            dst.writestr(info.filename, data)
    return out.getvalue()


def _anchored(p: Any, notes: dict[tuple[str, str], list[str]]) -> Iterator[tuple[str, str]]:
    """The text of the text boxes anchored in paragraph ``p`` and of the notes it cites, with a style.

    A text box saved twice (a drawing and its VML fallback) is read once, from the drawing.
    """
    for e in p.iter(_TXBX, *_NOTE_REFS):
        if e.tag == _TXBX:
            if any(a.tag in (_MC_FALLBACK, _TXBX) for a in e.iterancestors()):
                continue
            for q in e.iter(_P):
                text = " ".join(_text_of(q).split())
                if text:
                    yield text, "Text Box"
        else:
            kind = _NOTE_REFS[e.tag]
            for text in notes.get((kind, e.get(qn("w:id")) or ""), []):
                yield text, kind


def _notes(document: DocxDocument) -> dict[tuple[str, str], list[str]]:
    """Footnotes and endnotes by ``(kind, id)``: each note's non-empty paragraphs."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from lxml import etree

    out: dict[tuple[str, str], list[str]] = {}
    for kind, reltype, tag in (
        ("Footnote", RT.FOOTNOTES, qn("w:footnote")),
        ("Endnote", RT.ENDNOTES, qn("w:endnote")),
    ):
        for rel in document.part.rels.values():
            if rel.reltype != reltype or rel.is_external:
                continue
            root = etree.fromstring(rel.target_part.blob)
            for note in root.iter(tag):
                paragraphs = [" ".join(_text_of(q).split()) for q in note.iter(_P)]
                out[(kind, note.get(qn("w:id")) or "")] = [t for t in paragraphs if t]
    return out


def _text_of(p: Any) -> str:
    """A paragraph element's text: its ``w:t`` and tabs, outside nested text boxes."""
    return "".join(
        (e.text or "") if e.tag == _T else "\t" for e in p.iter(_T, qn("w:tab")) if not _inside_box(e, p)
    )


def _inside_box(e: Any, p: Any) -> bool:
    """Whether ``e`` lies in a text box nested inside paragraph ``p`` (not ``p``'s own text)."""
    for a in e.iterancestors():
        if a is p:
            return False
        if a.tag == _TXBX:
            return True
    return False


def _cell_text(cell: _Cell, tr: Any) -> str:
    """A cell's text on one line, nested tables included; "" for a cell merged down from a row above."""
    from docx.table import Table

    if cell._tc.getparent() is not tr:  # python-docx repeats the top cell of a vertical merge
        return ""
    words: list[str] = []
    for block in cell.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                words.extend(_cell_text(c, row._tr) for c in _unique_cells(row.cells))
        else:
            words.append(block.text)
    return " ".join(" ".join(words).split())


class RemovedMargin(TypedDict):
    """A section's header or footer text, left out of the document's text (``metadata["removed"]``)."""

    section: int
    role: str
    text: str


def _margins(document: DocxDocument) -> list[RemovedMargin]:
    removed: list[RemovedMargin] = []
    for k, section in enumerate(document.sections, 1):
        for role, part in (("header", section.header), ("footer", section.footer)):
            if part.is_linked_to_previous and k > 1:
                continue
            text = "\n".join(p.text for p in part.paragraphs if p.text.strip())
            if text:
                removed.append({"section": k, "role": role, "text": text})
    return removed
