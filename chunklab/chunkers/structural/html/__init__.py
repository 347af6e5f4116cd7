"""Structural chunking of HTML: sections from semantic elements, headings and classed divs.

The page is read once by Python's ``html.parser`` (the parser that BeautifulSoup's
``"html.parser"`` builder drives); bytes are decoded by :func:`chunklab.documents.decode_bytes`
(byte order mark, XML declaration or ``<meta charset>``, found by BeautifulSoup's ``EncodingDetector``).
Each token's start comes from the parser's position (1-based line, 0-based column in
characters of the decoded string; both it and :class:`~chunklab.chunk.LineIndex` count
lines at ``\\n`` only, so ``\\r\\n`` and a lone ``\\r`` are plain characters of a line),
turned into an exact character offset; an end tag ends where the next token starts. The
open block-level elements form a stack (``p``, ``li``, ``dt``/``dd``, ``tr``, cells and
headings close implicitly as in HTML; inline elements are not tracked), and the page is cut
into *blocks*: the visible text between two block-level tag boundaries, each with the exact
raw offsets of its markup. The blocks partition the raw HTML, so ``start``/``end`` of a
chunk locate its markup (wrapper tags opened just before it included;
``metadata["element_start"]`` is the opening tag of the element that starts the section)
and nothing is lost; ``text`` is the visible text (script, style, template, noscript and
head content dropped; the ``<title>`` goes to ``metadata["title"]``).

Sections open at ``section``/``article``/``main``/``aside``/``nav`` elements and at
headings (the ``headings`` path follows h1-h6); a section over budget is packed by classed
``div`` groups, then by blocks, and a block still over budget is split as plain text with
the recursive separators. Those pieces' offsets are exact too: each visible character is
mapped back to the raw characters it came from (character references such as ``&amp;``
included; a cut never falls inside one), so a piece's span starts at its first character's
markup and ends where the next piece starts. BeautifulSoup's tree is not built: building it
is several times slower than the parse alone (``benchmarks/structural_html.py`` times it),
and the chunker needs only the parser's events and positions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from chunklab._validate import check_bool, renamed_keyword
from chunklab.chunk import Chunk
from chunklab.chunkers.recursive import DEFAULT_SEPARATORS, recursive_spans
from chunklab.chunkers.structural._common import (
    check_max_size,
    check_source,
    resolve_doc_id,
    retokenized_oversize,
)
from chunklab.chunkers.structural.html.chars import char_map
from chunklab.chunkers.structural.html.scan import Block, BlockScanner, scan
from chunklab.documents import Document, decode_bytes
from chunklab.protocols import DocumentLike
from chunklab.text import trim_span
from chunklab.units import UnitIndex, check_unit, length_function, unit_params

__all__ = ["chunk_html", "chunk_visible_text", "html_text_map"]

_LEVELS = [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS]


@renamed_keyword("max_chars", "max_size")
def chunk_html(
    html: str | bytes,
    max_size: int = 1500,
    *,
    doc_id: str | None = None,
    path: str | None = None,
    keep_boilerplate: bool = False,
    unit: str = "chars",
) -> list[Chunk]:
    """Chunk an HTML page into sections of at most ``max_size`` of visible text.

    ``unit`` measures the visible text in another unit of :mod:`chunklab.units` instead
    (``"tokens"``, ``"tokenizer:PATH"``, ``"words"``).

    ``start``/``end`` locate each chunk's markup in the (decoded) HTML exactly and the
    chunks' spans together cover the whole page; ``text`` is the visible text, one line
    per block. Metadata: ``headings`` (path of heading texts), ``tag`` and ``id`` of the
    element that opens the section, ``kind`` (section, section_part, split), ``title``
    of the page when it has one. A page with no visible text gives no chunks.

    Page furniture is dropped unless ``keep_boilerplate`` (its markup stays in the
    spans, its text is not chunked): ``nav``, ``aside``, ``header``/``footer`` outside
    a sectioning element, furniture landmark roles (navigation, banner, contentinfo,
    ...), elements whose class or id words name furniture (footer, sidebar,
    breadcrumbs, toc, ...), and on a page with one main landmark everything outside
    it (see :mod:`chunklab.chunkers.structural.html.furniture`). Permalink anchors
    (``<a class="headerlink" href="#x">¶</a>``, a ``#`` in a heading) are never
    text, and a heading never becomes a chunk alone: it joins the content it heads.
    """
    check_source(html, "html")
    max_size = check_max_size(max_size)
    check_unit(unit)
    if path is not None and not isinstance(path, str):
        path = str(path)
    doc_id = resolve_doc_id(doc_id, path)
    if isinstance(html, (bytes, bytearray)):
        html = decode_bytes(bytes(html), "html", name=path or "<bytes>").text
    params: dict[str, object] = {"format": "html", "max_chars": max_size}
    if check_bool(keep_boilerplate, "keep_boilerplate"):
        params["keep_boilerplate"] = True
    params.update(unit_params(unit))
    try:
        scanner = scan(html, keep_boilerplate)
    except AssertionError as exc:  # html.parser's error on an unreadable marked section
        reason = f"html.parser: {exc}"
        return _fallback(html, max_size, doc_id, params, path, reason, unit)
    return _Sectioner(html, scanner, max_size, doc_id, params, path, unit).run()


def html_text_map(html: str, keep_boilerplate: bool = False) -> tuple[str, list[int]]:
    """A page's visible text, one line per block, and the raw offset each of its characters comes from.

    The offsets list has one more entry, ``len(html)``; a newline between two blocks maps to
    where the second block's markup starts. This is what lets the plain-text strategies
    (fixed, recursive, semantic, ...) chunk the visible text of a page while their spans
    still locate its markup. A page ``html.parser`` cannot read is returned as it is.
    """
    try:
        scanner = scan(html, keep_boilerplate)
    except AssertionError:
        return html, list(range(len(html) + 1))
    parts: list[str] = []
    where: list[int] = []
    for k, block in enumerate(scanner.blocks):
        text, pos, _ok = char_map(block, html, scanner.events)
        if k:
            parts.append("\n")
            where.append(block.start)
        parts.append(text)
        where.extend(pos)
    where.append(len(html))
    return "".join(parts), where


def chunk_visible_text(document: DocumentLike, chunk_text: Callable[[Document], list[Chunk]]) -> list[Chunk]:
    """``chunk_text`` run on a page's visible text, each chunk's span mapped back onto the markup.

    ``document`` has the HTML in ``text`` (and ``doc_id``, maybe ``path`` and ``title``);
    ``chunk_text`` gets a plain-text :class:`~chunklab.documents.Document` of the visible
    text and returns its chunks; their ``text`` stays the visible text.

    A chunk spans from where its first visible character's markup starts (the first chunk of
    each level from 0) to where the next visible character after it starts (the last: to the
    end), so together the spans cover the page; ``visible_start``/``visible_end`` keep the
    offsets in the visible text. Parent and child ids are rewritten to the remapped chunks.
    """
    from chunklab.documents import Document

    text, where = html_text_map(document.text)
    visible = Document(
        document.doc_id, text, getattr(document, "path", None), "text", getattr(document, "title", None)
    )
    chunks = chunk_text(visible)
    last_end: dict[int | None, int] = {}
    remapped: list[Chunk] = []
    by_level: dict[int | None, list[int]] = {}
    for i, c in enumerate(chunks):
        by_level.setdefault(c.level, []).append(i)
    bounds: dict[int, tuple[int, int]] = {}
    for level, indices in by_level.items():
        order = sorted(indices, key=lambda i: (chunks[i].start, chunks[i].end))
        for k, i in enumerate(order):
            c = chunks[i]
            start = 0 if k == 0 else min(where[c.start], last_end[level])
            end = len(document.text) if k == len(order) - 1 else max(where[c.end], start)
            last_end[level] = end
            bounds[i] = (start, end)
    for i, c in enumerate(chunks):
        meta = {**c.metadata, "format": "html", "visible_start": c.start, "visible_end": c.end}
        remapped.append(dataclasses.replace(c, start=bounds[i][0], end=bounds[i][1], metadata=meta))
    ids = {old.id: new.id for old, new in zip(chunks, remapped, strict=True)}
    if not any(c.metadata.get("parent_id") or c.metadata.get("child_ids") for c in remapped):
        return remapped
    return [
        dataclasses.replace(
            c,
            metadata={
                **c.metadata,
                **({"parent_id": ids.get(c.metadata["parent_id"])} if c.metadata.get("parent_id") else {}),
                **(
                    {"child_ids": [ids.get(x, x) for x in c.metadata["child_ids"]]}
                    if c.metadata.get("child_ids")
                    else {}
                ),
            },
        )
        for c in remapped
    ]


class _Sectioner:
    """Groups blocks into sections and packs them into chunks within the budget.

    A run of consecutive blocks becomes the text ``"\\n".join`` of theirs: in characters its
    size is their lengths plus the newlines; in another unit it is counted on one
    :class:`chunklab.units.UnitIndex` of the whole visible text (every block's text joined
    the same way), a bisection per candidate run.
    """

    def __init__(self, text, scanner: BlockScanner, max_size, doc_id, params, path, unit="chars"):
        self.text = text
        self.blocks = scanner.blocks
        self.unit = unit
        self._visible: tuple[dict[int, int], list[int], UnitIndex] | None = None
        if unit != "chars":
            starts, pos = [], 0
            for b in self.blocks:
                starts.append(pos)
                pos += len(b.text) + 1
            visible = "\n".join(b.text for b in self.blocks)
            self._visible = ({id(b): i for i, b in enumerate(self.blocks)}, starts, UnitIndex(visible, unit))
        self.events = scanner.events
        self.title = scanner.title
        self.lines = scanner.lines
        self.max = max_size
        self.doc_id = doc_id
        self.params = params
        self.path = path
        self.chunks: list[Chunk] = []

    def size(self, blocks: list[Block]) -> int:
        """The size of consecutive ``blocks`` joined by newlines, in the chunker's unit."""
        if self._visible is None:
            return _char_size(blocks)
        where, starts, index = self._visible
        return index.count(starts[where[id(blocks[0])]], starts[where[id(blocks[-1])]] + len(blocks[-1].text))

    def block_index(self, b: Block, start: int) -> UnitIndex | None:
        """The unit index of ``b.text[start:]`` as it lies in the page's visible text (None in characters)."""
        if self._visible is None:
            return None
        where, starts, index = self._visible
        at = starts[where[id(b)]]
        return index.slice(at + start, at + len(b.text))

    def run(self) -> list[Chunk]:
        blocks = self.blocks
        if not blocks:
            return []
        blocks[0].start = 0
        sections: list[list[Block]] = []
        for b in blocks:
            if not sections or b.strength >= 3:
                sections.append([b])
            else:
                sections[-1].append(b)
        pending: list[Block] = []  # bare headings waiting for the content they head
        for k, sec in enumerate(sections):
            if pending:
                sec = pending + sec
                pending = []
            if all(b.heading for b in sec) and k + 1 < len(sections):
                pending = sec  # a heading alone never becomes a chunk: it joins what it heads
                continue
            if self.size(sec) <= self.max:
                self.add(sec, "section")
            else:
                self.split_section(sec)
        if pending:
            self.add(pending, "section")
        return self.chunks

    def split_section(self, sec: list[Block]) -> None:
        groups: list[list[Block]] = []
        for b in sec:
            if not groups or b.strength >= 2:
                groups.append([b])
            else:
                groups[-1].append(b)
        units: list[list[Block]] = []
        for g in groups:
            if self.size(g) <= self.max:
                units.append(g)
            else:
                units.extend([b] for b in g)
        cur: list[Block] = []
        units.reverse()  # a stack: a unit may be put back as its blocks
        while units:
            u = units.pop()
            if cur and self.size(cur + u) <= self.max:
                cur.extend(u)
                continue
            if cur and all(b.heading for b in cur) and self.size(cur) + 1 < self.max:
                if len(u) > 1:  # bare headings stay with the first blocks they head
                    units.extend([b] for b in reversed(u))
                else:
                    self.split_block(u[0], cur)
                    cur = []
                continue
            if cur:
                self.add(cur, "section_part")
                cur = []
            if self.size(u) <= self.max:
                cur = list(u)
            else:
                self.split_block(u[0])
        if cur:
            self.add(cur, "section_part")

    def split_block(self, b: Block, lead: list[Block] | None = None) -> None:
        """A block over budget: its text cut by recursive separators, each cut mapped to its raw offset.

        ``lead``: bare headings that go in front of the first piece (its budget shrinks by theirs).
        """
        text, pos, ok = char_map(b, self.text, self.events)
        spans = _spans(text, 0, self.max, self.unit, self.block_index(b, 0))
        if lead:
            room = self.max - self.size(lead) - 1
            first = _spans(text, 0, room, self.unit, self.block_index(b, 0))[0] if room > 0 else [0, 0]
            spans = ([first] if first[1] > first[0] else []) + (
                _spans(text, first[1], self.max, self.unit, self.block_index(b, first[1]))
                if first[1] < len(text)
                else []
            )
        i = 0
        while i + 1 < len(spans):
            i += 1
            a = spans[i][0]
            if ok[a]:
                continue
            while a > spans[i - 1][0] + 1 and not ok[a]:
                a -= 1  # never start a piece inside the expansion of one character reference
            if ok[a]:  # cut before the reference and re-split the rest from there
                spans[i - 1][1] = min(spans[i - 1][1], a)
                spans[i:] = _spans(text, a, self.max, self.unit, self.block_index(b, a))
            else:  # a budget smaller than one reference's expansion: keep it whole (oversize)
                spans[i - 1][1] = spans[i][1]
                del spans[i]
                i -= 1
        cuts = [lead[0].start if lead else b.start] + [pos[a] for a, _e in spans[1:]] + [b.end]
        for i, (a, e) in enumerate(spans):
            piece = text[a:e].rstrip()
            if i == 0 and lead:
                piece = "\n".join([*(h.text for h in lead), piece])
            extra = {"oversize": True} if length_function(self.unit)(piece) > self.max else None
            self.emit(
                piece, cuts[i], max(cuts[i], cuts[i + 1]), lead[0] if i == 0 and lead else b, "split", extra
            )

    def add(self, blocks: list[Block], kind: str) -> None:
        text = "\n".join(b.text for b in blocks)
        self.emit(text, blocks[0].start, blocks[-1].end, blocks[0], kind, None)

    def emit(self, text: str, s: int, e: int, first: Block, kind: str, extra: dict | None) -> None:
        s, e = trim_span(self.text, s, e)
        tag, id_, element_start = first.opener if first.opener else (first.tag, first.id, None)
        meta: dict[str, object] = {
            "strategy": "structural",
            "params": self.params,
            "index": len(self.chunks),
            "kind": kind,
            "headings": first.headings,
            "tag": tag,
            "id": id_,
            "element_start": element_start if element_start is not None and element_start >= s else s,
            "line_start": self.lines.line_of(s),
            "line_end": self.lines.line_of(max(s, e - 1)),
            "path": self.path,
        }
        if self.title:
            meta["title"] = self.title
        if extra:
            meta.update(extra)
        elif kind != "split":
            meta.update(retokenized_oversize(text, self.max, self.unit))
        self.chunks.append(Chunk(text, s, e, self.doc_id, meta))


def _spans(
    text: str, start: int, size: int, unit: str = "chars", index: UnitIndex | None = None
) -> list[list[int]]:
    """Recursive-separator pieces of ``text[start:]`` as ``[start, end]`` offsets into ``text``."""
    rest = text[start:] if start else text
    return [[start + a, start + e] for a, e, _lv, _sh in recursive_spans(rest, size, 0, unit, _LEVELS, index)]


def _char_size(blocks: list[Block]) -> int:
    return sum(len(b.text) for b in blocks) + len(blocks) - 1


def _fallback(text, max_size, doc_id, params, path, reason, unit="chars") -> list[Chunk]:
    from chunklab.chunkers.structural._common import fallback_chunks

    return fallback_chunks(text, max_size, doc_id, params, reason, {"path": path}, unit)
