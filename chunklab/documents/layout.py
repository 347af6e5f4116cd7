"""The one map from a document's text offsets back to where the text came from.

A PDF, Word file or notebook becomes one canonical ``text`` (see :mod:`chunklab.documents`)
plus a tuple of :class:`Element`: each names a span ``text[start:end]``, what it is (heading,
paragraph, list item, table row, caption, code, output) and where it lies in the original file:
the page and bounding box (PDF), the paragraph style (Word) or the cell (notebook). Chunkers
read the elements to cut by structure; :func:`locate` turns any chunk's span into the page
span or cell span it cites.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

__all__ = ["ELEMENT_TYPES", "Element", "Location", "locate", "where"]

#: what an element can be
ELEMENT_TYPES = ("heading", "paragraph", "list_item", "table_row", "caption", "code", "output", "markdown")


@dataclass(frozen=True)
class Element:
    """One block of the extraction: ``text[start:end]``, its type and its origin in the file.

    ``page`` is 1-based; ``bbox`` is ``(x0, top, x1, bottom)`` in PDF points from the page's
    top-left corner; ``level`` is a heading's level (1 = largest); ``style`` the Word style or
    font description; ``cell`` the notebook cell's 1-based number and ``cell_id`` its id;
    ``table`` numbers the table a ``table_row`` belongs to and ``header`` marks its header row;
    ``index`` is the block's 1-based number in the file (a Word file's paragraph number).
    """

    start: int
    end: int
    type: str = "paragraph"
    page: int | None = None
    bbox: tuple[float, float, float, float] | None = None
    level: int | None = None
    style: str | None = None
    cell: int | None = None
    cell_id: str | None = None
    cell_type: str | None = None
    table: int | None = None
    header: bool = False
    index: int | None = None


class Location(TypedDict, total=False):
    """Where a span comes from (:func:`locate`): its pages, notebook cells or Word paragraphs."""

    page: int
    page_end: int
    cell: int
    cell_end: int
    cell_id: str
    cell_type: str
    paragraph: int
    paragraph_end: int
    style: str


def locate(elements: Sequence[Element], start: int, end: int) -> Location:
    """Where ``text[start:end]`` comes from: ``page``/``page_end``, ``cell``/``cell_end``/``cell_type``,
    and (Word) ``paragraph``/``paragraph_end`` and the first block's ``style``, beside the
    pages when the file records them.

    ``elements`` must be sorted by ``start`` (as loaders give them). Empty when no element
    overlaps the span or the elements carry neither page nor cell.
    """
    hit = overlapping(elements, start, end)
    out: Location = {}
    pages = [e.page for e in hit if e.page is not None]
    if pages:
        out["page"], out["page_end"] = min(pages), max(pages)
    cells = [(e.cell, e) for e in hit if e.cell is not None]
    if cells:
        first = cells[0][1]
        out["cell"], out["cell_end"] = cells[0][0], cells[-1][0]
        if first.cell_id:
            out["cell_id"] = first.cell_id
        if first.cell_type:
            out["cell_type"] = first.cell_type
    numbered = [(e.index, e) for e in hit if e.index is not None]
    if numbered and not cells:
        first = numbered[0][1]
        out["paragraph"], out["paragraph_end"] = numbered[0][0], numbered[-1][0]
        if first.style:
            out["style"] = first.style
    return out


def overlapping(elements: Sequence[Element], start: int, end: int) -> list[Element]:
    """The elements whose span overlaps ``[start, end)`` (an empty span: the element holding it)."""
    starts = [e.start for e in elements]
    i = max(0, bisect.bisect_right(starts, start) - 1)
    out = []
    for e in elements[i:]:
        if e.start >= max(end, start + 1):
            break
        if e.end > start or (e.start <= start < e.end):
            out.append(e)
    return out


def where(metadata: Mapping[str, object]) -> str:
    """A chunk's origin for display: ``"p. 12"``, ``"pp. 12-13"``, ``"cell 7"``, ``"¶ 4"``, else ``""``."""
    page, page_end = metadata.get("page"), metadata.get("page_end")
    if page is not None:
        return f"pp. {page}-{page_end}" if page_end not in (None, page) else f"p. {page}"
    cell, cell_end = metadata.get("cell"), metadata.get("cell_end")
    if cell is not None:
        return f"cells {cell}-{cell_end}" if cell_end not in (None, cell) else f"cell {cell}"
    par, par_end = metadata.get("paragraph"), metadata.get("paragraph_end")
    if par is not None:
        return f"¶ {par}-{par_end}" if par_end not in (None, par) else f"¶ {par}"
    return ""


@dataclass(frozen=True)
class Extracted:
    """What a loader of a laid-out format gives: the canonical text, its elements, and notes.

    ``metadata`` holds what was read and what was left out of ``text`` on purpose (for a PDF:
    ``pages``, ``removed`` headers, footers and page numbers with their page and box).
    """

    text: str
    elements: tuple[Element, ...]
    title: str | None = None
    metadata: dict[str, object] | None = None
