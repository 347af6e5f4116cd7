"""Structural chunking of HTML: sections from semantic elements, headings and classed divs.

The page is read once by Python's ``html.parser`` (the parser that BeautifulSoup's
``"html.parser"`` builder drives; BeautifulSoup's ``EncodingDetector`` decodes bytes).
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

import bisect
import html as html_lib
import re
from html.parser import HTMLParser
from typing import Any

from chunklab.chunk import Chunk, LineIndex, trim_span
from chunklab.recursive import DEFAULT_SEPARATORS, recursive_spans
from chunklab.structural._common import check_max_chars, check_source, resolve_doc_id

__all__ = ["chunk_html", "decode_html"]

SEMANTIC = frozenset({"section", "article", "main", "aside", "nav"})
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
SKIP = frozenset({"script", "style", "template", "noscript", "head"})
VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
     "track", "wbr", "keygen", "command", "basefont", "frame", "isindex"}
)
BLOCK = frozenset(
    {"address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
     "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
     "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li",
     "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody",
     "tfoot", "thead", "tr", "ul", "title", "listing", "xmp", "plaintext", "frameset",
     "option", "select", "textarea", "button"}
)
CELLS = frozenset({"td", "th"})
TRACKED = BLOCK | CELLS  # the elements kept on the stack of open elements
NOTICED = TRACKED | SKIP | {"title", "br"}  # the start tags the scanner acts on
HEAD_ONLY = frozenset({"title", "meta", "link", "style", "script", "base", "noscript", "template", "head"})
_LEVELS = [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS]
_WS = re.compile(r"\s+")
# the character references html.unescape replaces (same pattern as the standard library's)
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")


def decode_html(raw: bytes) -> str:
    """Decode HTML bytes: BOM, else the XML declaration or ``<meta charset>``, else UTF-8.

    Uses BeautifulSoup's ``EncodingDetector`` for the BOM and the declarations, but never
    guesses statistically (slow, and wrong on short pages): bytes that are not valid in the
    declared encoding or UTF-8 are read as windows-1252, which decodes any byte.
    """
    from bs4.dammit import EncodingDetector

    data, bom_encoding = EncodingDetector.strip_byte_order_mark(bytes(raw))
    candidates = [bom_encoding] if bom_encoding else []
    declared = EncodingDetector.find_declared_encoding(data, is_html=True)
    if declared:
        candidates.append(declared)
    candidates += ["utf-8", "windows-1252"]
    for encoding in candidates:
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("utf-8", errors="replace")


def chunk_html(
    html: str | bytes,
    max_chars: int = 1500,
    *,
    doc_id: str | None = None,
    path: str | None = None,
) -> list[Chunk]:
    """Chunk an HTML page into sections of at most ``max_chars`` characters of visible text.

    ``start``/``end`` locate each chunk's markup in the (decoded) HTML exactly and the
    chunks' spans together cover the whole page; ``text`` is the visible text, one line per
    block. Metadata: ``headings`` (path of heading texts), ``tag`` and ``id`` of the element
    that opens the section, ``kind`` (section, section_part, split), ``title`` of the page
    when it has one. A page with no visible text gives no chunks.
    """
    check_source(html, "html")
    max_chars = check_max_chars(max_chars)
    if path is not None and not isinstance(path, str):
        path = str(path)
    doc_id = resolve_doc_id(doc_id, path)
    text = decode_html(bytes(html)) if isinstance(html, (bytes, bytearray)) else html
    params = {"format": "html", "max_chars": max_chars}
    try:
        scanner = _BlockScanner(text)
        scanner.run()
        return _Sectioner(text, scanner, max_chars, doc_id, params, path).run()
    except Exception as exc:  # html.parser is lenient; this is a last line of defence
        return _fallback(text, max_chars, doc_id, params, path, f"{type(exc).__name__}: {exc}")


class _Block:
    __slots__ = ("start", "end", "text", "tag", "id", "strength", "opener", "heading", "headings", "pre",
                 "parts", "where")

    def __init__(self, start, end, text, tag, id_, strength, opener, heading, headings, pre, parts, where):
        self.start = start
        self.end = end
        self.text = text
        self.tag = tag
        self.id = id_
        self.strength = strength
        self.opener = opener
        self.heading = heading
        self.headings = headings
        self.pre = pre
        self.parts = parts  # the strings that make up the text, before normalization
        self.where = where  # per part: its raw offset, or ~offset (negative) for an inserted separator


class _BlockScanner(HTMLParser):
    """Drives ``html.parser`` once and records blocks of visible text with exact raw offsets.

    Tag starts come from ``getpos()`` through a :class:`LineIndex` (both count lines at
    ``\\n``; the column counts characters of the decoded string, ``\\r`` included); an end
    tag ends where the next token starts (where the parser resumed after it).
    """

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.src = text
        self.starts = LineIndex(text).starts
        self.stack: list[tuple[str, str | None, str | None, int]] = []  # (tag, id, class, offset)
        self.blocks: list[_Block] = []
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
        if tag in NOTICED or self.skip:  # any other element outside skipped content changes nothing
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
        if tag in TRACKED or self.skip or self.title_parts is not None:
            # handled when the next token starts: that is where the parser resumed after this tag
            self._pending_end = (tag, at)

    def _finish_end(self, end: int) -> None:
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
        elif not self.skip:
            self.parts.append(data)
            self.where.append(at)

    def handle_comment(self, data: str) -> None:
        at = self.starts[self.lineno - 1] + self.offset
        if self._pending_end is not None:
            self._finish_end(at)
        self.events.append(at)

    handle_decl = handle_pi = unknown_decl = handle_comment

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
                    _Block(
                        self.cur_start, at, text, tag, id_, self.strength, self.opener, heading,
                        [t for _, t in self.heading_path], bool(self.pre), self.parts, self.where,
                    )
                )
                self.cur_start = at
                self.strength = 0
                self.opener = None
                made = True
            self.parts = []
            self.where = []
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
            self._pop_sibling(("li",), ("ul", "ol", "menu"), at)
        elif tag in ("dt", "dd"):
            self._pop_sibling(("dt", "dd"), ("dl",), at)
        elif tag == "tr":
            self._pop_sibling(("tr",), ("table", "thead", "tbody", "tfoot"), at)
        elif tag in ("td", "th"):
            self._pop_sibling(("td", "th"), ("tr", "table"), at)

    def _pop_sibling(self, same: tuple[str, ...], scope: tuple[str, ...], at: int) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            t = self.stack[i][0]
            if t in same:
                self._pop_to(i, at)
                return
            if t in scope:
                return

    def _pop_to(self, index: int, at: int) -> None:
        """Close the elements from ``index`` up, as if their end tags ended at ``at``."""
        while len(self.stack) > index:
            tag, id_, cls, _at = self.stack[-1]
            if tag in BLOCK:
                self.flush(at, self.boundary_strength(tag, cls, id_), None, closing=True)
            self.stack.pop()
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
            self.parts.append("\n" if self.pre else " ")
            self.where.append(~at)
            return
        if tag not in TRACKED:
            return  # inline elements neither open blocks nor end them
        id_ = cls = None
        for name, value in attrs:
            if name == "id":
                id_ = value
            elif name == "class":
                cls = value
        self._close_implied(tag, at)
        if tag in CELLS:
            if self.parts:
                self.parts.append(" | ")
                self.where.append(~at)
        else:
            self.flush(at, self.boundary_strength(tag, cls, id_), (tag, id_, at))
        if not void:
            self.stack.append((tag, id_, cls, at))
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
        if tag not in TRACKED:
            return
        stack = self.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == tag:
                self._pop_to(i, end)
                return

    def _end_title(self) -> None:
        self.title = _WS.sub(" ", "".join(self.title_parts or [])).strip()
        self.title_parts = None


def _normalize(raw: str, pre: bool) -> str:
    """A block's visible text: whitespace runs collapsed (kept in ``pre``), BOMs dropped."""
    text = raw.strip() if pre else _WS.sub(" ", raw).strip()
    return text.replace("\ufeff", "").strip() if "\ufeff" in text else text


def _char_map(block: _Block, src: str, events: list[int]) -> tuple[str, list[int], list[bool]]:
    """The block's text with, per character, the raw offset it comes from and whether a cut may fall before it.

    Character data is matched against its raw slice (which ends where the next token
    starts): literal characters map one to one, a character reference maps to its ``&``
    and only its first character may start a piece. Whitespace is then collapsed and
    stripped exactly as :func:`_normalize` does.
    """
    chars: list[str] = []
    pos: list[int] = []
    ok: list[bool] = []
    n = len(src)
    for part, where in zip(block.parts, block.where):
        is_data = where >= 0
        at = where if is_data else ~where
        if is_data:
            k = bisect.bisect_right(events, at)
            raw = src[at : events[k] if k < len(events) else n]
            if raw == part:
                chars.extend(part)
                pos.extend(range(at, at + len(part)))
                ok.extend([True] * len(part))
                continue
            if html_lib.unescape(raw) == part:
                p = 0
                for m in _CHARREF.finditer(raw):
                    lit = raw[p : m.start()]
                    chars.extend(lit)
                    pos.extend(range(at + p, at + m.start()))
                    ok.extend([True] * len(lit))
                    ref = m.group()
                    rep = html_lib.unescape(ref)
                    # an unknown name stays as it is, and "&notit" gives "\u00acit": characters
                    # that unescape kept map to themselves, the expansion to the "&"
                    keep = 0
                    if rep == ref:
                        keep = len(ref)
                    else:
                        while keep < len(rep) - 1 and keep < len(ref) - 1 and rep[-1 - keep] == ref[-1 - keep]:
                            keep += 1
                    grown = len(rep) - keep
                    chars.extend(rep)
                    pos.extend([at + m.start()] * grown)
                    pos.extend(range(at + m.end() - keep, at + m.end()))
                    ok.extend([True] + [False] * (grown - 1) if grown else [])
                    ok.extend([True] * keep)
                    p = m.end()
                lit = raw[p:]
                chars.extend(lit)
                pos.extend(range(at + p, at + len(raw)))
                ok.extend([True] * len(lit))
                continue
        # synthetic separators (cells, <br>) and data the parser passed through otherwise
        chars.extend(part)
        pos.extend([at] * len(part))
        ok.extend([True] + [False] * (len(part) - 1) if is_data else [True] * len(part))
    triples = list(zip(chars, pos, ok))
    if not block.pre:
        collapsed = []
        in_ws = False
        for t in triples:
            if t[0].isspace():
                if not in_ws:
                    collapsed.append((" ", t[1], t[2]))
                in_ws = True
            else:
                collapsed.append(t)
                in_ws = False
        triples = collapsed
    triples = _strip(triples)
    if any(t[0] == "\ufeff" for t in triples):
        triples = _strip([t for t in triples if t[0] != "\ufeff"])
    text = "".join(t[0] for t in triples)
    if text != block.text:
        raise RuntimeError("internal error: character map disagrees with the block text")
    return text, [t[1] for t in triples], [t[2] for t in triples]


def _strip(triples: list[tuple[str, int, bool]]) -> list[tuple[str, int, bool]]:
    a, b = 0, len(triples)
    while a < b and triples[a][0].isspace():
        a += 1
    while b > a and triples[b - 1][0].isspace():
        b -= 1
    return triples[a:b]


class _Sectioner:
    """Groups blocks into sections and packs them into chunks within the budget."""

    def __init__(self, text, scanner: _BlockScanner, max_chars, doc_id, params, path):
        self.text = text
        self.blocks = scanner.blocks
        self.events = scanner.events
        self.title = scanner.title
        self.line_starts = scanner.starts
        self.max = max_chars
        self.doc_id = doc_id
        self.params = params
        self.path = path
        self.chunks: list[Chunk] = []

    def run(self) -> list[Chunk]:
        blocks = self.blocks
        if not blocks:
            return []
        blocks[0].start = 0
        sections: list[list[_Block]] = []
        for b in blocks:
            if not sections or b.strength >= 3:
                sections.append([b])
            else:
                sections[-1].append(b)
        pending: list[_Block] = []  # a heading-only section waiting for its subsection
        for k, sec in enumerate(sections):
            if pending:
                sec = pending + sec
                pending = []
            if (
                len(sec) == 1
                and sec[0].heading
                and k + 1 < len(sections)
                and _size(sec + sections[k + 1]) <= self.max
            ):
                pending = sec
                continue
            if _size(sec) <= self.max:
                self.add(sec, "section")
            else:
                self.split_section(sec)
        if pending:
            self.add(pending, "section")
        return self.chunks

    def split_section(self, sec: list[_Block]) -> None:
        groups: list[list[_Block]] = []
        for b in sec:
            if not groups or b.strength >= 2:
                groups.append([b])
            else:
                groups[-1].append(b)
        units: list[list[_Block]] = []
        for g in groups:
            if _size(g) <= self.max:
                units.append(g)
            else:
                units.extend([b] for b in g)
        cur: list[_Block] = []
        for u in units:
            if cur and _size(cur + u) <= self.max:
                cur.extend(u)
                continue
            if cur:
                self.add(cur, "section_part")
                cur = []
            if _size(u) <= self.max:
                cur = list(u)
            else:
                self.split_block(u[0])
        if cur:
            self.add(cur, "section_part")

    def split_block(self, b: _Block) -> None:
        """A block over budget: its text cut by recursive separators, each cut mapped to its raw offset."""
        text, pos, ok = _char_map(b, self.text, self.events)
        spans = _spans(text, 0, self.max)
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
                spans[i:] = _spans(text, a, self.max)
            else:  # a budget smaller than one reference's expansion: keep it whole (oversize)
                spans[i - 1][1] = spans[i][1]
                del spans[i]
                i -= 1
        cuts = [b.start] + [pos[a] for a, _e in spans[1:]] + [b.end]
        for i, (a, e) in enumerate(spans):
            piece = text[a:e].rstrip()
            extra = {"oversize": True} if len(piece) > self.max else None
            self.emit(piece, cuts[i], max(cuts[i], cuts[i + 1]), b, "split", extra)

    def add(self, blocks: list[_Block], kind: str) -> None:
        text = "\n".join(b.text for b in blocks)
        self.emit(text, blocks[0].start, blocks[-1].end, blocks[0], kind, None)

    def emit(self, text: str, s: int, e: int, first: _Block, kind: str, extra: dict | None) -> None:
        s, e = trim_span(self.text, s, e)
        tag, id_, element_start = first.opener if first.opener else (first.tag, first.id, None)
        meta: dict[str, Any] = {
            "strategy": "structural",
            "params": self.params,
            "index": len(self.chunks),
            "kind": kind,
            "headings": first.headings,
            "tag": tag,
            "id": id_,
            "element_start": element_start if element_start is not None and element_start >= s else s,
            "line_start": bisect.bisect_right(self.line_starts, s),
            "line_end": bisect.bisect_right(self.line_starts, max(s, e - 1)),
            "path": self.path,
        }
        if self.title:
            meta["title"] = self.title
        if extra:
            meta.update(extra)
        self.chunks.append(Chunk(text, s, e, self.doc_id, meta))


def _spans(text: str, start: int, size: int) -> list[list[int]]:
    """Recursive-separator pieces of ``text[start:]`` as ``[start, end]`` offsets into ``text``."""
    rest = text[start:] if start else text
    return [[start + a, start + e] for a, e, _lv, _sh in recursive_spans(rest, size, 0, "chars", _LEVELS)]


def _size(blocks: list[_Block]) -> int:
    return sum(len(b.text) for b in blocks) + len(blocks) - 1


def _fallback(text, max_chars, doc_id, params, path, reason) -> list[Chunk]:
    from chunklab.structural._common import fallback_chunks

    return fallback_chunks(text, max_chars, doc_id, params, reason, {"path": path})
