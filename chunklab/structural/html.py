"""Structural chunking of HTML: sections from semantic elements, headings and classed divs.

One pass of a regular-expression tokenizer over the raw string (tags with quoted
attributes, comments, declarations; script and style bodies skipped as raw text) cuts the
page into *blocks*: the visible text between two block-level tag boundaries, each with the
exact raw offsets of its markup. The blocks partition the raw HTML, so ``start``/``end``
of a chunk locate its markup (wrapper tags opened just before it included;
``metadata["element_start"]`` is the opening tag of the element that starts the section)
and nothing is lost; ``text`` is the visible text (script, style, template, noscript and
head content dropped). Sections open at ``section``/``article``/``main``/``aside``/``nav``
boundaries and at headings; a section over budget is packed by classed ``div`` groups,
then by blocks, and a block still over budget is split as plain text (recursive
separators; those pieces' offsets are proportional, marked ``split_offsets``). Bytes are
decoded with BeautifulSoup's ``EncodingDetector`` (BOM, XML declaration, ``<meta charset>``).
BeautifulSoup's tree builder is not used for the scan: it is several times slower and
does not keep end offsets.
"""

from __future__ import annotations

import bisect
import html as html_lib
import re
from typing import Any

from chunklab.chunk import Chunk, trim_span
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
HEAD_ONLY = frozenset({"title", "meta", "link", "style", "script", "base", "noscript", "template", "head"})
_LEVELS = [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS]
_WS = re.compile(r"\s+")


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

    ``start``/``end`` locate each chunk's markup in the (decoded) HTML and the chunks'
    spans together cover the whole page; ``text`` is the visible text, one line per block.
    Metadata: ``headings`` (path of heading texts), ``tag`` and ``id`` of the element
    that opens the section, ``title`` of the page when it has one. A page with no visible
    text gives no chunks.
    """
    check_source(html, "html")
    max_chars = check_max_chars(max_chars)
    if path is not None and not isinstance(path, str):
        path = str(path)
    doc_id = resolve_doc_id(doc_id, path)
    text = decode_html(bytes(html)) if isinstance(html, (bytes, bytearray)) else html
    params = {"format": "html", "max_chars": max_chars}
    scanner = _BlockScanner(text)
    try:
        scanner.run()
    except Exception as exc:  # html.parser is lenient; this is a last line of defence
        return _fallback(text, max_chars, doc_id, params, path, f"{type(exc).__name__}: {exc}")
    return _Sectioner(text, scanner, max_chars, doc_id, params, path).run()


class _Block:
    __slots__ = ("start", "end", "text", "tag", "id", "strength", "opener", "heading", "headings", "pre")

    def __init__(self, start, end, text, tag, id_, strength, opener, heading, headings, pre):
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


_TOKEN = re.compile(
    r"""<(?:
        (?P<end>/)?(?P<tag>[a-zA-Z][^\s/>]*)(?P<attrs>(?:[^>"']++|"[^"]*+"|'[^']*+')*+)>
      | !--.*?(?:--!?>|\Z)
      | ![^>]*+>
      | \?[^>]*+>
    )""",
    re.S | re.X,
)
_ATTR = re.compile(r"""(?:^|[\s"'/])(id|class)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.I)
_RAW_END = {
    "script": re.compile(r"</script[\s/>]", re.I),
    "style": re.compile(r"</style[\s/>]", re.I),
}


class _BlockScanner:
    """Tokenizes once and records blocks of visible text with their raw offsets.

    The tokenizer is a regular expression over the raw string (tags with quoted attributes,
    comments, declarations, processing instructions; script and style bodies skipped as
    raw text), so every token's offsets are exact and the scan runs at C speed.
    """

    def __init__(self, text: str) -> None:
        self.src = text
        self.stack: list[tuple[str, str | None, str | None, int]] = []  # (tag, id, class, offset)
        self.blocks: list[_Block] = []
        self.parts: list[str] = []
        self.cur_start = 0
        self.strength = 0
        self.opener: tuple[str, str | None, int] | None = None  # (tag, id, offset)
        self.skip: list[str] = []
        self.pre = 0
        self.heading_path: list[tuple[int, str]] = []
        self.marks: list[int] = []  # heading depth when each open semantic element began
        self.title_parts: list[str] | None = None
        self.title = ""
        starts = [0]
        find = text.find
        p = find("\n")
        while p != -1:
            starts.append(p + 1)
            p = find("\n", p + 1)
        self.starts = starts

    def run(self) -> None:
        text = self.src
        n = len(text)
        search = _TOKEN.search
        pos = 0
        data = self.data
        while pos < n:
            m = search(text, pos)
            if m is None:
                data(text[pos:])
                break
            ms = m.start()
            if ms > pos:
                data(text[pos:ms])
            pos = m.end()
            tag = m.group("tag")
            if tag is None:
                continue  # comment, doctype, processing instruction
            tag = tag.lower()
            if m.group("end"):
                self.end_tag(tag, ms, pos)
                continue
            attrs = m.group("attrs")
            void = tag in VOID or attrs.endswith("/")
            self.start_tag(tag, attrs, void, ms)
            raw_end = _RAW_END.get(tag)
            if raw_end is not None and not void:
                r = raw_end.search(text, pos)
                stop = n if r is None else r.start()
                if not self.skip or self.skip[-1] != tag:
                    data(text[pos:stop])  # only when not skipped (never for script/style)
                pos = stop
        self.flush(n, 0)
        if self.blocks:
            self.blocks[-1].end = n

    # -- block boundaries ---------------------------------------------------------------
    def flush(
        self, at: int, strength: int, opener: tuple[str, str | None, int] | None = None, closing: bool = False
    ) -> None:
        """End the current block at offset ``at`` if it holds text; note the boundary strength."""
        made = False
        if self.parts:
            raw = "".join(self.parts)
            text = raw.strip() if self.pre else _WS.sub(" ", raw).strip()
            text = text.replace("\ufeff", "").strip()
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
                        [t for _, t in self.heading_path], bool(self.pre),
                    )
                )
                self.cur_start = at
                self.strength = 0
                self.opener = None
                made = True
            self.parts = []
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
        """Close the elements from ``index`` up, as if their end tags were at ``at``."""
        while len(self.stack) > index:
            tag, id_, cls, _at = self.stack[-1]
            if tag in BLOCK:
                self.flush(at, self.boundary_strength(tag, cls, id_), None, closing=True)
            self.stack.pop()
            if tag in SEMANTIC and self.marks:
                del self.heading_path[self.marks.pop() :]
            if tag == "pre":
                self.pre -= 1

    # -- token handlers ---------------------------------------------------------------------
    def start_tag(self, tag: str, attrs: str, void: bool, at: int) -> None:
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
            return
        id_ = cls = None
        if attrs and "=" in attrs:
            for am in _ATTR.finditer(attrs):
                value = am.group(2) if am.group(2) is not None else am.group(3) if am.group(3) is not None else am.group(4)
                if am.group(1).lower() == "id":
                    id_ = html_lib.unescape(value) if "&" in value else value
                else:
                    cls = value
        if tag in BLOCK or tag in CELLS:
            self._close_implied(tag, at)
        if tag in CELLS and self.parts:
            self.parts.append(" | ")
        if tag in BLOCK:
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
        stack = self.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == tag:
                self._pop_to(i, end)
                return

    def _end_title(self) -> None:
        self.title = _WS.sub(" ", "".join(self.title_parts or [])).strip()
        self.title_parts = None

    def data(self, data: str) -> None:
        if self.title_parts is not None:
            self.title_parts.append(_unescape(data))
            return
        if self.skip:
            return
        self.parts.append(_unescape(data))


def _unescape(data: str) -> str:
    return html_lib.unescape(data) if "&" in data else data


class _Sectioner:
    """Groups blocks into sections and packs them into chunks within the budget."""

    def __init__(self, text, scanner: _BlockScanner, max_chars, doc_id, params, path):
        self.text = text
        self.blocks = scanner.blocks
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
        """A block over budget: its text cut by recursive separators, offsets by proportion."""
        text = b.text
        spans = recursive_spans(text, self.max, 0, "chars", _LEVELS)
        raw_len = b.end - b.start
        cuts = [b.start]
        for a, _e, _lv, _sh in spans[1:]:
            c = b.start + raw_len * a // len(text)
            cuts.append(max(c, cuts[-1] + 1) if cuts[-1] + 1 < b.end else cuts[-1])
        cuts.append(b.end)
        for i, (a, e, _lv, _sh) in enumerate(spans):
            s, end = cuts[i], cuts[i + 1]
            if end <= s:  # too little markup to give each piece its own span
                s, end = b.start, b.end
            self.emit(text[a:e], s, end, b, "split", {"split_offsets": "approximate"})

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


def _size(blocks: list[_Block]) -> int:
    return sum(len(b.text) for b in blocks) + len(blocks) - 1


def _fallback(text, max_chars, doc_id, params, path, reason) -> list[Chunk]:
    from chunklab.structural._common import fallback_chunks

    return fallback_chunks(text, max_chars, doc_id, params, reason, {"path": path})
