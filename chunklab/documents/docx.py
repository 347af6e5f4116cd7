"""Word files (.docx) to one canonical text with a paragraph-and-style map, read with python-docx.

:func:`extract_docx` walks the body in order: each non-empty paragraph becomes one block (its
style says heading and level, list item, caption or paragraph), each table one ``table_row``
block per row with its cells separated by tabs (the first row is the header). Section headers
and footers are not body text: they are left out of ``text`` and recorded in
``metadata["removed"]``. A file that is not a Word document raises
:class:`~chunklab.decoding.DocumentError`.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from chunklab.decoding import DocumentError
from chunklab.documents.layout import Element, Extracted

__all__ = ["extract_docx"]

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

    def add(piece: str, sep: str, **fields: Any) -> None:
        nonlocal pos, number
        if parts:
            parts.append(sep)
            pos += len(sep)
        number += 1
        elements.append(Element(pos, pos + len(piece), index=number, **fields))
        parts.append(piece)
        pos += len(piece)

    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            piece = block.text.strip()
            if not piece:
                continue
            style = block.style.name if block.style is not None else "Normal"
            kind, level = _paragraph_type(block, style or "Normal")
            if kind == "heading" and title is None and (style == "Title" or level == 1):
                title = " ".join(piece.split())
            add(piece, "\n\n", type=kind, level=level, style=style)
        elif isinstance(block, Table):
            tables += 1
            for r, row in enumerate(block.rows):
                cells = _unique_cells(row.cells)
                piece = "\t".join(" ".join(c.text.split()) for c in cells).strip()
                if piece:
                    sep = "\n" if r and elements and elements[-1].table == tables else "\n\n"
                    add(piece, sep, type="table_row", style="Table", table=tables, header=r == 0)
    removed = _margins(document)
    return Extracted("".join(parts), tuple(elements), title, {"paragraphs": number, "removed": removed})


def _paragraph_type(paragraph: Any, style: str) -> tuple[str, int | None]:
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


def _unique_cells(cells: list[Any]) -> list[Any]:
    """A row's cells with horizontally merged cells given once."""
    out: list[Any] = []
    for c in cells:
        if not out or c._tc is not out[-1]._tc:
            out.append(c)
    return out


def _margins(document: Any) -> list[dict[str, Any]]:
    removed: list[dict[str, Any]] = []
    for k, section in enumerate(document.sections, 1):
        for role, part in (("header", section.header), ("footer", section.footer)):
            if part.is_linked_to_previous and k > 1:
                continue
            text = "\n".join(p.text for p in part.paragraphs if p.text.strip())
            if text:
                removed.append({"section": k, "role": role, "text": text})
    return removed
