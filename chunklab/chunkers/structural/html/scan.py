"""The HTML scanner behind :func:`chunklab.chunkers.structural.html.chunk_html`: parser events to blocks.

:class:`BlockScanner` drives ``html.parser`` once and cuts the page into blocks of visible
text, each with the exact raw offsets of its markup; it drops page furniture (unless told to
keep it) and permalink anchors in headings. See the module docstring of
:mod:`chunklab.chunkers.structural.html` for the whole design.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from chunklab.chunkers.structural.html.furniture import (
    has_one_main_landmark,
    is_furniture,
    is_main_landmark,
)
from chunklab.chunkers.structural.html.tags import (
    BLOCK,
    CELLS,
    HEAD_ONLY,
    HEADINGS,
    LIST_ITEM_BARRIERS,
    NOTICED,
    PERMALINK_MARKS,
    SECTIONING,
    SEMANTIC,
    SKIP,
    TRACKED,
    VOID,
    Block,
)
from chunklab.text import LineIndex

__all__ = ["Block", "BlockScanner", "scan"]

_PERMALINK_CLASS = re.compile(
    r"\b(?:headerlink|anchor|permalink|heading-anchor|hash-link|anchorjs-link)\b", re.I
)
_WS = re.compile(r"\s+")


def scan(text: str, keep_boilerplate: bool = False) -> BlockScanner:
    """The page's blocks; the main-landmark rule is dropped when the one landmark is never opened.

    (A ``<main>`` inside a ``<template>`` or ``<script>`` counts in the pre-scan only.)
    """
    scanner = BlockScanner(text, keep_boilerplate)
    scanner.run()
    if scanner.main_only and not scanner.saw_main:
        scanner = BlockScanner(text, keep_boilerplate, main_rule=False)
        scanner.run()
    return scanner


class BlockScanner(HTMLParser):
    """Drives ``html.parser`` once and records blocks of visible text with exact raw offsets.

    Tag starts come from ``getpos()`` through a :class:`LineIndex` (both count lines at
    ``\\n``; the column counts characters of the decoded string, ``\\r`` included); an end
    tag ends where the next token starts (where the parser resumed after it).
    """

    def __init__(self, text: str, keep_boilerplate: bool = False, main_rule: bool = True) -> None:
        super().__init__(convert_charrefs=True)
        self.src = text
        self.keep = keep_boilerplate
        self.drop_at: int | None = None  # stack index of the boilerplate element being dropped
        # a page with one main landmark keeps only its content: outside it drop_at is -1
        self.main_only = main_rule and not keep_boilerplate and has_one_main_landmark(text)
        self.saw_main = False
        self.main_at: int | None = None  # stack index of the open main landmark
        if self.main_only:
            self.drop_at = -1
        self.headings_open = 0
        self.link: tuple[int, bool] | None = None  # an anchor in a heading: (first part, permalink class)
        self.lines = LineIndex(text)
        self.starts = self.lines.starts
        self.stack: list[tuple[str, str | None, str | None, int]] = []  # (tag, id, class, offset)
        self.blocks: list[Block] = []
        self.parts: list[str] = []
        self.where: list[int] = []
        self.events: list[int] = []  # raw offset of every token, to find where character data ends
        self.cur_start = 0
        self.strength = 0
        self.opener: tuple[str, str | None, int] | None = None  # (tag, id, offset)
        self.skip: list[str] = []
        self.pre = 0
        self.heading_path: list[tuple[int, str]] = []
        self.marks: list[int] = []  # heading depth when each open semantic element began
        self.title_parts: list[str] | None = None
        self.title = ""
        self._pending_end: tuple[str, int] | None = None  # an end tag whose end is not known yet

    def run(self) -> None:
        self.feed(self.src)
        self.close()
        n = len(self.src)
        if self._pending_end is not None:
            self._finish_end(n)
        self.flush(n, 0)
        if self.blocks:
            self.blocks[-1].end = n

    # -- html.parser callbacks ----------------------------------------------------------
    # getpos() is inlined (self.lineno, self.offset): these run once per token.
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        at = self.starts[self.lineno - 1] + self.offset
        if self._pending_end is not None:
            self._finish_end(at)
        self.events.append(at)
        if tag in NOTICED or self.skip or tag == "a":
            # any other element outside skipped content changes nothing
            self.start_tag(tag, attrs, tag in VOID, at)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        at = self.starts[self.lineno - 1] + self.offset
        if self._pending_end is not None:
            self._finish_end(at)
        self.events.append(at)
        self.start_tag(tag, attrs, True, at)

    def handle_endtag(self, tag: str) -> None:
        at = self.starts[self.lineno - 1] + self.offset
        if self._pending_end is not None:
            self._finish_end(at)
        self.events.append(at)
        if (
            tag in TRACKED
            or self.skip
            or self.title_parts is not None
            or (tag == "a" and self.link is not None)
        ):
            # handled when the next token starts: that is where the parser resumed after this tag
            self._pending_end = (tag, at)

    def _finish_end(self, end: int) -> None:
        assert self._pending_end is not None  # called only while an end tag waits
        tag, at = self._pending_end
        self._pending_end = None
        self.end_tag(tag, at, end)

    def handle_data(self, data: str) -> None:
        at = self.starts[self.lineno - 1] + self.offset
        if self._pending_end is not None:
            self._finish_end(at)
        self.events.append(at)
        if self.title_parts is not None:
            self.title_parts.append(data)
        elif not self.skip and self.drop_at is None:
            self.parts.append(data)
            self.where.append(at)

    def handle_comment(self, data: str) -> None:
        at = self.starts[self.lineno - 1] + self.offset
        if self._pending_end is not None:
            self._finish_end(at)
        self.events.append(at)

    def handle_decl(self, decl: str) -> None:
        self.handle_comment(decl)

    def handle_pi(self, data: str) -> None:
        self.handle_comment(data)

    def unknown_decl(self, data: str) -> None:
        self.handle_comment(data)

    # -- block boundaries ---------------------------------------------------------------
    def flush(
        self, at: int, strength: int, opener: tuple[str, str | None, int] | None = None, closing: bool = False
    ) -> None:
        """End the current block at offset ``at`` if it holds text; note the boundary strength."""
        made = False
        if self.parts:
            raw = "".join(self.parts)
            text = "" if raw.isspace() else _normalize(raw, bool(self.pre))
            if text:
                tag, id_, tag_at = self._innermost_block()
                heading = HEADINGS.get(tag, 0)
                if heading:
                    path = self.heading_path
                    while path and path[-1][0] >= heading:
                        path.pop()
                    path.append((heading, text))
                    if self.strength < 3 or self.opener is None:  # else a <section> opened it
                        self.opener = (tag, id_, tag_at)
                    self.strength = 3
                self.blocks.append(
                    Block(
                        self.cur_start,
                        at,
                        text,
                        tag,
                        id_,
                        self.strength,
                        self.opener,
                        heading,
                        [t for _, t in self.heading_path],
                        bool(self.pre),
                        self.parts,
                        self.where,
                    )
                )
                self.cur_start = at
                self.strength = 0
                self.opener = None
                made = True
            self.parts = []
            self.where = []
            self.link = None  # an anchor around a block boundary is no permalink marker
        if not made and closing and self.blocks and self.blocks[-1].end == self.cur_start:
            # an end tag right after a block belongs to that block's markup
            self.blocks[-1].end = at
            self.cur_start = at
        if strength > self.strength or (strength and strength == self.strength and opener is not None):
            self.strength = strength
            self.opener = opener

    def _innermost_block(self) -> tuple[str, str | None, int]:
        for tag, id_, _cls, tag_at in reversed(self.stack):
            if tag in BLOCK:
                return tag, id_, tag_at
        return "body", None, self.cur_start

    def boundary_strength(self, tag: str, cls: str | None, id_: str | None) -> int:
        if tag in SEMANTIC:
            return 3
        if tag == "div" and (cls or id_):
            return 2
        return 1

    def _close_implied(self, tag: str, at: int) -> None:
        stack = self.stack
        if not stack:
            return
        top = stack[-1][0]
        if top == "p" or (top in HEADINGS and tag in HEADINGS):
            self._pop_to(len(stack) - 1, at)
        elif tag == "li":
            self._pop_sibling(("li",), ("ul", "ol", "menu"), at, LIST_ITEM_BARRIERS)
        elif tag in ("dt", "dd"):
            self._pop_sibling(("dt", "dd"), ("dl",), at, LIST_ITEM_BARRIERS)
        elif tag == "tr":
            self._pop_sibling(("tr",), ("table", "thead", "tbody", "tfoot"), at)
        elif tag in ("td", "th"):
            self._pop_sibling(("td", "th"), ("tr", "table"), at)

    def _pop_sibling(
        self, same: tuple[str, ...], scope: tuple[str, ...], at: int, barriers: frozenset[str] = frozenset()
    ) -> None:
        """Close the open ``same`` element a new sibling implies, searching no further than ``scope``.

        Nor past a ``barriers`` element, nor past the element whose content is being dropped
        as boilerplate: ``<li><aside><li>`` nests the second item in the aside, as HTML5 does.
        """
        for i in range(len(self.stack) - 1, -1, -1):
            t = self.stack[i][0]
            if t in same:
                self._pop_to(i, at)
                return
            if t in scope or t in barriers or i == self.drop_at:
                return

    def _pop_to(self, index: int, at: int) -> None:
        """Close the elements from ``index`` up, as if their end tags ended at ``at``."""
        while len(self.stack) > index:
            tag, id_, cls, _at = self.stack[-1]
            if tag in HEADINGS:
                self.headings_open -= 1
                if self.link is not None:
                    self._close_link()
            if tag in BLOCK:
                self.flush(at, self.boundary_strength(tag, cls, id_), None, closing=True)
            self.stack.pop()
            if self.drop_at is not None and len(self.stack) <= self.drop_at:
                self.drop_at = None
            if self.main_at is not None and len(self.stack) <= self.main_at:
                self.main_at = None
                self.drop_at = -1  # what follows the main landmark is furniture too
            if tag in SEMANTIC and self.marks:
                del self.heading_path[self.marks.pop() :]
            if tag == "pre":
                self.pre -= 1

    # -- element events -------------------------------------------------------------------
    def start_tag(self, tag: str, attrs: list[tuple[str, str | None]], void: bool, at: int) -> None:
        if self.skip:
            if tag == self.skip[-1] and not void:
                self.skip.append(tag)
                return
            if self.skip[0] == "head" and tag not in HEAD_ONLY:
                self.skip.clear()  # a page that never closes <head>
            elif tag == "title" and self.skip[0] == "head" and not void:
                self.title_parts = []
                return
            else:
                return
        if tag in SKIP and not void:
            self.skip.append(tag)
            return
        if tag == "title" and not void:
            self.title_parts = []
            return
        if tag == "br":
            if self.drop_at is None:
                self.parts.append("\n" if self.pre else " ")
                self.where.append(~at)
            return
        if tag == "a":
            if not void and self.link is None:
                self._open_link(attrs)
            return
        if tag not in TRACKED:
            return  # inline elements neither open blocks nor end them
        id_ = cls = role = None
        for name, value in attrs:
            if name == "id":
                id_ = value
            elif name == "class":
                cls = value
            elif name == "role":
                role = value
        self._close_implied(tag, at)
        if tag in CELLS:
            if self.parts and self.drop_at is None:
                self.parts.append(" | ")
                self.where.append(~at)
        else:
            self.flush(at, self.boundary_strength(tag, cls, id_), (tag, id_, at))
        if not void:
            self.stack.append((tag, id_, cls, at))
            if self.main_only and self.main_at is None and is_main_landmark(tag, role):
                self.main_at = len(self.stack) - 1
                self.drop_at = None
                self.saw_main = True
            elif self.drop_at is None and not self.keep and self._is_boilerplate(tag, role, cls, id_):
                self.drop_at = len(self.stack) - 1
            if tag in HEADINGS:
                self.headings_open += 1
            if tag in SEMANTIC:
                self.marks.append(len(self.heading_path))
            if tag == "pre":
                self.pre += 1

    def end_tag(self, tag: str, at: int, end: int) -> None:
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.pop()
            elif tag == "title" and self.title_parts is not None:
                self._end_title()
            return
        if tag == "title" and self.title_parts is not None:
            self._end_title()
            return
        if tag == "a":
            if self.link is not None:
                self._close_link()
            return
        if tag not in TRACKED:
            return
        stack = self.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == tag:
                self._pop_to(i, end)
                return

    def _is_boilerplate(self, tag: str, role: str | None, cls: str | None, id_: str | None) -> bool:
        in_section = self.main_at is not None or any(t[0] in SECTIONING for t in self.stack[:-1])
        return is_furniture(tag, role, cls, id_, in_section)

    def _open_link(self, attrs: list[tuple[str, str | None]]) -> None:
        href = cls = ""
        for name, value in attrs:
            if name == "href":
                href = value or ""
            elif name == "class":
                cls = value or ""
        marked = bool(_PERMALINK_CLASS.search(cls))
        # a permalink class marks an anchor anywhere (Sphinx puts them after definitions too)
        if marked or (href.startswith("#") and self.headings_open):
            self.link = (len(self.parts), marked)

    def _close_link(self) -> None:
        """Drop the anchor's text when it is a permalink marker (a pilcrow, '#', a link icon)."""
        assert self.link is not None  # called only inside an anchor
        first, marked = self.link
        self.link = None
        text = "".join(self.parts[first:]).strip()
        if text in PERMALINK_MARKS or (marked and len(text) <= 2):
            del self.parts[first:]
            del self.where[first:]

    def _end_title(self) -> None:
        self.title = _WS.sub(" ", "".join(self.title_parts or [])).strip()
        self.title_parts = None


def _normalize(raw: str, pre: bool) -> str:
    """A block's visible text: whitespace runs collapsed (kept in ``pre``), BOMs dropped."""
    text = raw.strip() if pre else _WS.sub(" ", raw).strip()
    return text.replace("\ufeff", "").strip() if "\ufeff" in text else text
