"""Word files (.docx) to one canonical text with a paragraph-and-style map, read with python-docx.

:func:`extract_docx` walks the body in order: each non-empty paragraph becomes one block (its
style says heading and level, list item, caption or paragraph), each table one ``table_row``
block per row with its cells separated by tabs (the first row is the header). Section headers
and footers are not body text: they are left out of ``text`` and recorded in
``metadata["removed"]``. A file that is not a Word document raises
:class:`~chunklab.decoding.DocumentError`.

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
    """The canonical text of a Word file's body, its elements (style, paragraph number), what was left out."""
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
            if ppr is not None and ppr.sectPr is not None and section + 1 < len(layouts):
                section += 1  # this paragraph ends a section; the next starts as its type says
                pages.columns = layouts[section][1]
                pages.new_page(layouts[section][0])
        elif isinstance(block, Table):
            tables += 1
            for r, row in enumerate(block.rows):
                cells = _unique_cells(row.cells)
                piece = "\t".join(" ".join(c.text.split()) for c in cells).strip()
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
