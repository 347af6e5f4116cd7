"""Structural chunking of Markdown: sections by headings, blocks that are never cut in the middle.

A single pass over the lines finds the blocks: ATX and setext headings, fenced code (where
a ``#`` line is code, not a heading), GFM tables, front matter and paragraphs. Headings up
to ``max_level`` open sections; a section over budget is packed block by block, and only
a block that alone is over budget is split (a table repeats its header row through
``metadata["table_header"]``, so ``text`` stays an exact slice of the source).
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from chunklab._validate import check_text
from chunklab.chunk import Chunk
from chunklab.recursive import DEFAULT_SEPARATORS, recursive_spans
from chunklab.structural._common import check_max_chars, check_source, line_starts, resolve_doc_id

__all__ = ["chunk_markdown"]

_NONSPACE = re.compile(r"\S")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_TABLE_DELIM = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
_LEVELS = [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS]
_ROW_LEVELS = [("\n",), (" | ", "|"), (" ",), ("",)]


def chunk_markdown(
    md: str | bytes,
    max_chars: int = 1500,
    max_level: int = 3,
    *,
    doc_id: str | None = None,
    path: str | None = None,
) -> list[Chunk]:
    """Chunk Markdown by its headings, each chunk at most ``max_chars`` characters.

    Headings of level 1..``max_level`` (ATX ``#`` and setext underlines) open sections;
    ``metadata["headings"]`` is the path of section titles. A section over budget is split
    between blocks (paragraphs, fenced code, tables), never inside a code fence or a table
    unless that block alone is over budget; a split table's pieces carry the header row in
    ``metadata["table_header"]``. A heading with nothing under it joins the section after it.
    """
    check_source(md, "md")
    max_chars = check_max_chars(max_chars)
    if isinstance(max_level, bool) or not isinstance(max_level, int) or not 1 <= max_level <= 6:
        raise ValueError(f"max_level must be an integer from 1 to 6, got {max_level!r}")
    text = check_text(md, "md")
    if path is not None and not isinstance(path, str):
        path = str(path)
    doc_id = resolve_doc_id(doc_id, path)
    params = {"format": "markdown", "max_chars": max_chars, "max_level": max_level}
    if _NONSPACE.search(text) is None:
        return []
    return _MarkdownChunker(text, max_chars, max_level, doc_id, params, path).run()


class _MarkdownChunker:
    def __init__(self, text, max_chars, max_level, doc_id, params, path):
        self.text = text
        self.starts = line_starts(text)
        self.n = len(self.starts) - 1
        self.max = max_chars
        self.max_level = max_level
        self.doc_id = doc_id
        self.params = params
        self.path = path
        self.chunks: list[Chunk] = []

    def span(self, lo: int, hi: int) -> tuple[int, int]:
        """Offsets of 0-based lines ``lo..hi``: from the first non-blank line, right-trimmed."""
        text = self.text
        s = self.starts[lo]
        e = self.starts[hi + 1]
        m = _NONSPACE.search(text, s, e)
        if m is None:
            return s, s
        p = m.start()
        if p > s:
            s = max(s, text.rfind("\n", s, p) + 1, text.rfind("\r", s, p) + 1)
        while e > p and text[e - 1].isspace():
            e -= 1
        return s, e

    # -- blocks -----------------------------------------------------------------------
    def blocks(self) -> list[tuple[str, int, int, Any]]:
        """``(kind, first line, last line, extra)`` for every block, in order (0-based lines)."""
        text, starts, n = self.text, self.starts, self.n
        lines = [text[starts[i] : starts[i + 1]].rstrip("\r\n") for i in range(n)]
        if lines and lines[0].startswith("\ufeff"):
            lines[0] = lines[0][1:]
        out: list[tuple[str, int, int, Any]] = []
        i = 0
        if lines and lines[0].rstrip() == "---":
            for j in range(1, n):
                if lines[j].rstrip() in ("---", "..."):
                    out.append(("frontmatter", 0, j, None))
                    i = j + 1
                    break
        if n and text.startswith("\ufeff") and not lines[0].strip():
            out.append(("para", 0, 0, None))  # a lone byte-order mark: not whitespace, keep it
            i = 1
        para = -1  # first line of the open paragraph
        while i < n:
            line = lines[i]
            head = line.lstrip(" ")
            if not head.strip():
                if para >= 0:
                    out.append(("para", para, i - 1, None))
                    para = -1
                i += 1
                continue
            c = head[0]
            indent = len(line) - len(head)
            if indent <= 3 and c in "`~":
                m = _FENCE.fullmatch(line)
                if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                    if para >= 0:
                        out.append(("para", para, i - 1, None))
                        para = -1
                    fence = m.group(1)
                    j = i + 1
                    while j < n:
                        cl = lines[j].strip(" \t")
                        if cl.startswith(fence[0] * len(fence)) and not cl.strip(fence[0]) and (
                            len(lines[j]) - len(lines[j].lstrip(" ")) <= 3
                        ):
                            break
                        j += 1
                    end = min(j, n - 1)
                    out.append(("code", i, end, m.group(2).strip()))
                    i = end + 1
                    continue
            if indent <= 3 and c == "#":
                m = _ATX.fullmatch(line)
                if m:
                    if para >= 0:
                        out.append(("para", para, i - 1, None))
                        para = -1
                    out.append(("heading", i, i, (len(m.group(1)), (m.group(2) or "").strip())))
                    i += 1
                    continue
            if para >= 0 and indent <= 3 and c in "=-" and _SETEXT.fullmatch(line):
                title = " ".join(lines[k].strip() for k in range(para, i))
                if c == "=" or not title.lstrip().startswith(("- ", "* ", "+ ")):
                    out.append(("heading", para, i, (1 if c == "=" else 2, title)))
                    para = -1
                    i += 1
                    continue
            if "|" in line and i + 1 < n and "-" in lines[i + 1] and _TABLE_DELIM.fullmatch(lines[i + 1]):
                if "|" in lines[i + 1] or line.strip().startswith("|"):
                    if para >= 0:
                        out.append(("para", para, i - 1, None))
                        para = -1
                    j = i + 2
                    while j < n and lines[j].strip() and "|" in lines[j]:
                        j += 1
                    out.append(("table", i, j - 1, None))
                    i = j
                    continue
            if para < 0:
                para = i
            i += 1
        if para >= 0:
            out.append(("para", para, n - 1, None))
        return out

    # -- sections -----------------------------------------------------------------------
    def run(self) -> list[Chunk]:
        sections: list[tuple[list[str], int, list[tuple[str, int, int, Any]]]] = []
        path: list[tuple[int, str]] = []
        cur: list[tuple[str, int, int, Any]] = []
        cur_path: list[str] = []
        cur_level = 0
        for block in self.blocks():
            if block[0] == "heading" and block[3][0] <= self.max_level:
                if cur:
                    sections.append((cur_path, cur_level, cur))
                level, title = block[3]
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, title))
                cur, cur_path, cur_level = [block], [t for _, t in path], level
            else:
                cur.append(block)
        if cur:
            sections.append((cur_path, cur_level, cur))
        carry: tuple[int, int] | None = None  # a heading-only section waiting for its child
        for k, (headings, level, blocks) in enumerate(sections):
            s, e = self.span(blocks[0][1], blocks[-1][2])
            if carry is not None:
                s = carry[0]
                carry = None
            if e <= s:
                continue
            heading_only = len(blocks) == 1 and blocks[0][0] == "heading"
            if heading_only and k + 1 < len(sections):
                nxt_headings, _lvl, nxt_blocks = sections[k + 1]
                ns, ne = self.span(nxt_blocks[0][1], nxt_blocks[-1][2])
                if nxt_headings[: len(headings)] == headings and ne - s <= self.max:
                    carry = (s, e)
                    continue
            if e - s <= self.max:
                self.add(s, e, "section", headings, level)
            else:
                self.split_section(blocks, headings, level, s)
        if not self.chunks:  # nothing but a byte-order mark (not whitespace, so still kept)
            s, e = self.span(0, self.n - 1)
            self.add(s, e, "section", [], 0)
        return self.chunks

    def split_section(self, blocks, headings, level, first_start: int) -> None:
        """Pack the section's blocks up to the budget; split only blocks over it alone."""
        group_s = group_e = -1
        kinds: set[str] = set()
        for bi, (kind, lo, hi, _extra) in enumerate(blocks):
            s, e = self.span(lo, hi)
            if bi == 0:
                s = min(s, first_start)
            if e <= s:
                continue
            if group_s >= 0 and e - group_s <= self.max:
                group_e = e
                kinds.add(kind)
                continue
            lead = -1  # a lone heading waiting to open the first piece of a split block
            if group_s >= 0:
                if kinds == {"heading"} and e - s > self.max:
                    lead = group_s
                else:
                    self.add(group_s, group_e, _group_kind(kinds), headings, level)
                group_s = -1
            if e - s <= self.max:
                group_s, group_e, kinds = s, e, {kind}
                continue
            if kind == "table":
                pieces = self.table_pieces(lo, hi, s, e)
            else:
                piece_kind = "code" if kind == "code" else "section"
                pieces = [
                    (s + a, s + b, piece_kind, None)
                    for a, b, _lv, _sh in recursive_spans(self.text[s:e], self.max, 0, "chars", _LEVELS)
                ]
            if lead >= 0:
                if pieces and pieces[0][1] - lead <= self.max:
                    pieces[0] = (lead, *pieces[0][1:])
                else:
                    self.add(lead, group_e, "section", headings, level)
            for ps, pe, pkind, extra in pieces:
                self.add(ps, pe, pkind, headings, level, split=True, extra=extra)
        if group_s >= 0:
            self.add(group_s, group_e, _group_kind(kinds), headings, level)

    def table_pieces(self, lo, hi, s, e) -> list[tuple[int, int, str, dict | None]]:
        """Rows packed up to the budget; every piece after the first carries the header row."""
        header_end = self.span(lo, min(lo + 1, hi))[1]
        header = self.text[s:header_end]
        budget = self.max - len(header) - 1 if len(header) < self.max // 2 else self.max
        out: list[tuple[int, int, str, dict | None]] = []
        for a, b, _lv, _sh in recursive_spans(self.text[s:e], budget, 0, "chars", _ROW_LEVELS):
            extra = None if not out or s + a < header_end else {"table_header": header}
            out.append((s + a, s + b, "table", extra))
        return out

    def add(self, s, e, kind, headings, level, split=False, extra=None) -> None:
        meta: dict[str, Any] = {
            "strategy": "structural",
            "params": self.params,
            "index": len(self.chunks),
            "kind": kind,
            "headings": headings,
            "heading_level": level,
            "line_start": _line(self.starts, s),
            "line_end": _line(self.starts, e - 1),
            "path": self.path,
        }
        if split:
            meta["split"] = True
        if extra:
            meta.update(extra)
        self.chunks.append(Chunk(self.text[s:e], s, e, self.doc_id, meta))


def _group_kind(kinds: set[str]) -> str:
    if len(kinds) == 1:
        (k,) = kinds
        if k in ("table", "code"):
            return k
    return "section"


def _line(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)
