"""Page numbers of a Word file's text, from the page breaks the file records.

A .docx has no pages of its own: Word lays it out when it opens it. What the file may keep is
where the pages fell: ``w:lastRenderedPageBreak`` where a page (or column) began when Word last
saved it, and the author's explicit breaks: ``w:br w:type="page"``, a paragraph's
``w:pageBreakBefore`` (set on it or on its style) and sections that start on a new page.
:class:`PageTracker` walks them in body order; :func:`paragraph_pieces` gives a paragraph's
text cut where its pages change. Word also writes a rendered break at the top of the page an
explicit break starts, so a rendered break with no text since the last break is the same page,
not a new one. A file with neither kind of break says so (:func:`page_notes`) instead of
calling everything page 1.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from docx.oxml.table import CT_Row
    from docx.oxml.text.paragraph import CT_P
    from docx.oxml.xmlchemy import BaseOxmlElement
    from docx.section import Section
    from docx.styles.style import ParagraphStyle

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def qn(name: str) -> str:
    """The Clark name of a WordprocessingML tag or attribute (``"w:p"``)."""
    return _W + name.removeprefix("w:")


__all__ = [
    "PageTracker",
    "page_notes",
    "paragraph_pieces",
    "qn",
    "row_pages",
    "section_layout",
    "style_breaks_page",
]

#: run children whose text python-docx's ``Run.text`` gives (``str(element)``)
_TEXT_TAGS = frozenset(qn(t) for t in ("w:br", "w:cr", "w:noBreakHyphen", "w:ptab", "w:t", "w:tab"))
_P, _R, _LINK = qn("w:p"), qn("w:r"), qn("w:hyperlink")
_RENDERED, _BR, _TYPE = qn("w:lastRenderedPageBreak"), qn("w:br"), qn("w:type")
NOT_RECORDED = "pages not recorded in this file"


@dataclass
class PageTracker:
    """The page (and column) the body has reached; ``fresh`` while nothing was written on it."""

    page: int = 1
    column: int = 0
    columns: int = 1
    fresh: bool = True

    def text(self) -> None:
        """Some visible text was placed here."""
        self.fresh = False

    def rendered(self) -> None:
        """``w:lastRenderedPageBreak``: a new page or column began, unless one just did."""
        if not self.fresh:
            self._next_column()
        self.fresh = True

    def page_break(self) -> None:
        """``w:br w:type="page"``: always a new page (two in a row leave a blank page)."""
        self.page += 1
        self.column, self.fresh = 0, True

    def column_break(self) -> None:
        """``w:br w:type="column"``: the next column, or the next page after the last column."""
        self._next_column()
        self.fresh = True

    def new_page(self, start: str = "nextPage") -> None:
        """Start a page unless at the top of one (``pageBreakBefore``, a section's start)."""
        if start == "continuous":
            self.column = 0
            return
        if start == "nextColumn":
            if not self.fresh:
                self._next_column()
            self.fresh = True
            return
        if not (self.fresh and self.column == 0):
            self.page += 1
        if (start == "oddPage" and self.page % 2 == 0) or (start == "evenPage" and self.page % 2):
            self.page += 1  # Word leaves a blank page to reach the parity
        self.column, self.fresh = 0, True

    def _next_column(self) -> None:
        self.column += 1
        if self.column >= self.columns:
            self.page += 1
            self.column = 0

    def copy(self) -> PageTracker:
        """An independent tracker in the same place (one per table cell)."""
        return PageTracker(self.page, self.column, self.columns, self.fresh)


def paragraph_pieces(p: CT_P, text: str, tracker: PageTracker) -> list[tuple[int, int, int]]:
    """``(start, end, page)`` of the non-blank stretches of ``text`` (the paragraph's text as
    python-docx gives it) between its page breaks, moving ``tracker`` past them."""
    marks: list[tuple[int, str]] = []
    pos = 0
    for e in p.iter():
        if e.tag in _TEXT_TAGS and _is_paragraph_run(e.getparent(), p):
            pos += len(str(e))
        if e.tag == _RENDERED or (e.tag == _BR and e.get(_TYPE) in ("page", "column")):
            if _owner(e) is p:  # not a break inside a text box's own paragraphs
                marks.append((min(pos, len(text)), e.get(_TYPE) or "rendered"))
    pieces: list[tuple[int, int, int]] = []
    at = 0
    for cut, what in [*marks, (len(text), "")]:
        m = re.search(r"\S(?:.*\S)?", text[at:cut], re.S)
        if m:
            pieces.append((at + m.start(), at + m.end(), tracker.page))
            tracker.text()
        at = max(at, cut)
        if what == "rendered":
            tracker.rendered()
        elif what == "page":
            tracker.page_break()
        elif what == "column":
            tracker.column_break()
    return pieces


def row_pages(tr: CT_Row, pages: PageTracker) -> int:
    """Move ``pages`` past one table row (``w:tr``); the page its text starts on.

    Each cell is walked from the row's start, since a row that runs onto the next page has a
    break in every cell that does: the row ends where its longest cell ends.
    """
    cells: list[PageTracker] = []
    starts: list[int] = []
    for tc in tr.iterchildren(qn("w:tc")):
        cell = pages.copy()
        for p in tc.iter(_P):
            spans = paragraph_pieces(p, p.text, cell)
            starts.extend(page for _, _, page in spans[:1])
        cells.append(cell)
    if cells:
        last = max(c.page for c in cells)
        ending = [c for c in cells if c.page == last]
        pages.page, pages.column = last, max(c.column for c in ending)
        pages.fresh = all(c.fresh for c in ending)
    return min(starts) if starts else pages.page


def style_breaks_page(style: ParagraphStyle | None) -> bool:
    """Whether a paragraph style (or a style it is based on) sets "page break before"."""
    seen = 0
    while style is not None and seen < 32:
        value = style.paragraph_format.page_break_before
        if value is not None:
            return bool(value)
        style, seen = style.base_style, seen + 1
    return False


def section_layout(section: Section) -> tuple[str, int]:
    """How a section starts (``nextPage``, ``continuous``, ...) and its number of columns."""
    sect = section._sectPr
    kind = sect.find(qn("w:type"))
    start = kind.get(qn("w:val")) if kind is not None else "nextPage"
    cols = sect.find(qn("w:cols"))
    try:
        n = int(cols.get(qn("w:num"), "1")) if cols is not None else 1
    except ValueError:
        n = 1
    return start or "nextPage", max(1, n)


class PageBreaks(TypedDict):
    """How many page breaks a Word file holds: where Word's layout broke pages, and explicit ones."""

    rendered: int
    explicit: int


class PageNotes(TypedDict, total=False):
    """What :func:`page_notes` records about a Word file's pages (``pages`` only when it has them)."""

    page_breaks: PageBreaks
    pages_in_properties: int
    pages: int
    pages_source: str
    pages_note: str


def page_notes(raw: bytes, body: BaseOxmlElement, pages: int | None) -> PageNotes:
    """The document metadata about pages: how many, from which breaks, or that there are none."""
    rendered = sum(1 for _ in body.iter(_RENDERED))
    explicit = sum(1 for e in body.iter(_BR) if e.get(_TYPE) == "page")
    out: PageNotes = {"page_breaks": {"rendered": rendered, "explicit": explicit}}
    stated = _pages_in_properties(raw)
    if stated is not None:
        out["pages_in_properties"] = stated
    if pages is None:
        out["pages_note"] = NOT_RECORDED
        return out
    out["pages"] = pages
    if rendered:
        out["pages_source"] = "where Word's layout broke the pages when it last saved the file"
    else:
        out["pages_source"] = "explicit page and section breaks only"
        if stated is not None and stated > pages:
            out["pages_note"] = (
                f"the file's properties say {stated} pages; pages that filled up and flowed on "
                "are not recorded, so page numbers are a lower bound"
            )
    return out


def _is_paragraph_run(run: BaseOxmlElement | None, p: CT_P) -> bool:
    """A run python-docx reads for ``Paragraph.text``: a child of the paragraph or of its link."""
    if run is None or run.tag != _R:
        return False
    parent = run.getparent()
    return parent is p or (parent is not None and parent.tag == _LINK and parent.getparent() is p)


def _owner(e: BaseOxmlElement | None) -> BaseOxmlElement | None:
    while e is not None and e.tag != _P:
        e = e.getparent()
    return e


def _pages_in_properties(raw: bytes) -> int | None:
    """``<Pages>`` of docProps/app.xml (Word's count when it saved), if the file has it."""
    try:
        with zipfile.ZipFile(BytesIO(raw)) as z:
            xml = z.read("docProps/app.xml").decode("utf-8", "replace")
    except (KeyError, zipfile.BadZipFile, OSError):
        return None
    m = re.search(r"<(?:\w+:)?Pages>\s*(\d+)\s*<", xml)
    return int(m.group(1)) if m else None
