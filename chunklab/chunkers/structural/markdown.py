"""Structural chunking of Markdown: sections by headings, blocks that are never cut in the middle.

:func:`chunklab.text.markdown_blocks` (the one Markdown scanner) finds the blocks: ATX and
setext headings, fenced code (where a ``#`` line is code, not a heading), GFM tables, front
matter and paragraphs. Headings up to ``max_level`` open sections; a section over budget is
packed block by block, and only a block that alone is over budget is split (a table repeats
its header row through ``metadata["table_header"]``, so ``text`` stays an exact slice of the
source). :func:`pack_blocks` does the packing for any format that yields the same blocks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from chunklab._validate import check_int_range, check_text
from chunklab.chunk import Chunk
from chunklab.chunkers.recursive import DEFAULT_SEPARATORS, recursive_spans
from chunklab.chunkers.structural._common import (
    check_max_chars,
    check_source,
    resolve_doc_id,
    retokenized_oversize,
)
from chunklab.text import Block, LineIndex, line_span, markdown_blocks
from chunklab.units import UnitIndex, check_unit, unit_params

__all__ = ["chunk_markdown", "pack_blocks"]

_NONSPACE = re.compile(r"\S")
_LEVELS = [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS]
_ROW_LEVELS = [("\n",), (" | ", "|"), (" ",), ("",)]


def chunk_markdown(
    md: str | bytes,
    max_chars: int = 1500,
    max_level: int = 3,
    *,
    doc_id: str | None = None,
    path: str | None = None,
    unit: str = "chars",
) -> list[Chunk]:
    """Chunk Markdown by its headings, each chunk at most ``max_chars`` (in ``unit``).

    Headings of level 1..``max_level`` (ATX ``#`` and setext underlines) open sections;
    ``metadata["headings"]`` is the path of section titles. A section over budget is
    split between blocks (paragraphs, fenced code, tables), never inside a code fence or
    a table unless that block alone is over budget; a split table's pieces carry the
    header row in ``metadata["table_header"]``. A heading with nothing under it joins
    the section after it. ``unit`` is any unit of :mod:`chunklab.units` (``"tokens"``,
    ``"tokenizer:PATH"``, ...).
    """
    check_source(md, "md")
    max_chars = check_max_chars(max_chars)
    check_unit(unit)
    check_int_range(max_level, "max_level", 1, 6)
    text = check_text(md, "md")
    return chunk_sections(
        text,
        markdown_blocks,
        "markdown",
        max_chars,
        max_level,
        doc_id,
        path,
        unit,
    )


def chunk_sections(
    text: str,
    blocks_of: Callable[[str, LineIndex], Sequence[Block]],
    fmt: str,
    max_chars: int,
    max_level: int,
    doc_id: str | None,
    path: str | None,
    unit: str,
) -> list[Chunk]:
    """Chunks of a checked ``text`` of a sectioned format (``fmt``: Markdown, rst) from its blocks.

    ``blocks_of(text, lines)`` is the format's block scanner; the sections, budgets and the
    recorded parameters are the same for every such format (:func:`pack_blocks`).
    """
    if path is not None and not isinstance(path, str):
        path = str(path)
    doc_id = resolve_doc_id(doc_id, path)
    params: dict[str, Any] = {
        "format": fmt,
        "max_chars": max_chars,
        "max_level": max_level,
        **unit_params(unit),
    }
    if _NONSPACE.search(text) is None:
        return []
    lines = LineIndex(text, universal=True)
    return pack_blocks(
        text,
        blocks_of(text, lines),
        max_chars,
        max_level,
        doc_id=doc_id,
        params=params,
        path=path,
        lines=lines,
        unit=unit,
    )


def pack_blocks(
    text: str,
    blocks: Sequence[Block],
    max_chars: int,
    max_level: int = 3,
    *,
    doc_id: str,
    params: dict[str, Any],
    path: str | None = None,
    lines: LineIndex | None = None,
    unit: str = "chars",
) -> list[Chunk]:
    """Structural chunks of ``text`` from its blocks: sections by heading, within ``max_chars`` (in ``unit``).

    ``blocks`` are :class:`chunklab.text.Block` in order, numbered by the lines of
    ``LineIndex(text, universal=True)`` (``lines``, when the caller has it). Any kind works:
    ``heading`` blocks up to ``max_level`` open sections, ``blank`` ones are skipped, a
    ``table`` over budget is split by rows, any other block (code, paragraphs, directives)
    only when it alone is over budget. Chunks carry ``strategy="structural"`` and ``params``.
    Spans are measured on one :class:`chunklab.units.UnitIndex` of ``text``.
    """
    if _NONSPACE.search(text) is None:
        return []
    chunker = _MarkdownChunker(text, max_chars, max_level, doc_id, params, path, lines, unit)
    return chunker.run([b for b in blocks if b.kind != "blank"])


class _MarkdownChunker:
    def __init__(self, text, max_chars, max_level, doc_id, params, path, lines=None, unit="chars"):
        self.text = text
        self.unit = unit
        self.index = UnitIndex(text, unit)
        self.size = self.index.count
        self.lines = lines or LineIndex(text, universal=True)
        self.starts = self.lines.edges
        self.n = len(self.starts) - 1
        self.max = max_chars
        self.max_level = max_level
        self.doc_id = doc_id
        self.params = params
        self.path = path
        self.chunks: list[Chunk] = []

    def span(self, lo: int, hi: int) -> tuple[int, int]:
        """Offsets of 0-based lines ``lo..hi``: from the first non-blank line, right-trimmed."""
        return line_span(self.text, self.starts, lo, hi)

    # -- sections -----------------------------------------------------------------------
    def run(self, all_blocks: list[Block]) -> list[Chunk]:
        sections: list[tuple[list[str], int, list[Block]]] = []
        path: list[tuple[int, str]] = []
        cur: list[Block] = []
        cur_path: list[str] = []
        cur_level = 0
        for block in all_blocks:
            if block.kind == "heading" and block.level <= self.max_level:
                if cur:
                    sections.append((cur_path, cur_level, cur))
                level, title = block.level, block.title
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
            s, e = self.span(blocks[0].first, blocks[-1].last)
            if carry is not None:
                s = carry[0]
                carry = None
            if e <= s:
                continue
            heading_only = len(blocks) == 1 and blocks[0].kind == "heading"
            if heading_only and k + 1 < len(sections):
                nxt_headings, _lvl, nxt_blocks = sections[k + 1]
                ns, ne = self.span(nxt_blocks[0].first, nxt_blocks[-1].last)
                if nxt_headings[: len(headings)] == headings and self.size(s, ne) <= self.max:
                    carry = (s, e)
                    continue
            if self.size(s, e) <= self.max:
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
        for bi, block in enumerate(blocks):
            kind, lo, hi = block.kind, block.first, block.last
            s, e = self.span(lo, hi)
            if bi == 0:
                s = min(s, first_start)
            if e <= s:
                continue
            if group_s >= 0 and self.size(group_s, e) <= self.max:
                group_e = e
                kinds.add(kind)
                continue
            lead = -1  # a lone heading waiting to open the first piece of a split block
            if group_s >= 0:
                if kinds == {"heading"} and self.size(s, e) > self.max:
                    lead = group_s
                else:
                    self.add(group_s, group_e, _group_kind(kinds), headings, level)
                group_s = -1
            if self.size(s, e) <= self.max:
                group_s, group_e, kinds = s, e, {kind}
                continue
            if kind == "table":
                pieces = self.table_pieces(lo, hi, s, e)
            else:
                piece_kind = "code" if kind == "code" else "section"
                pieces = [(s + a, s + b, piece_kind, None) for a, b in self.cut(s, e, self.max, _LEVELS)]
            if lead >= 0:
                if pieces and self.size(lead, pieces[0][1]) <= self.max:
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
        header_size = self.size(s, header_end)
        budget = self.max - header_size - 1 if header_size < self.max // 2 else self.max
        out: list[tuple[int, int, str, dict | None]] = []
        for a, b in self.cut(s, e, budget, _ROW_LEVELS):
            extra = None if not out or s + a < header_end else {"table_header": header}
            out.append((s + a, s + b, "table", extra))
        return out

    def cut(self, s: int, e: int, budget: int, levels) -> list[tuple[int, int]]:
        """``text[s:e]`` cut by the recursive separators ``levels``, measured as it lies in the document."""
        index = None if self.unit == "chars" else self.index.slice(s, e)
        return [
            (a, b) for a, b, _lv, _sh in recursive_spans(self.text[s:e], budget, 0, self.unit, levels, index)
        ]

    def add(self, s, e, kind, headings, level, split=False, extra=None) -> None:
        meta: dict[str, Any] = {
            "strategy": "structural",
            "params": self.params,
            "index": len(self.chunks),
            "kind": kind,
            "headings": headings,
            "heading_level": level,
            "line_start": self.lines.line_of(s),
            "line_end": self.lines.line_of(e - 1),
            "path": self.path,
        }
        if split:
            meta["split"] = True
        if extra:
            meta.update(extra)
        meta.update(retokenized_oversize(self.text[s:e], self.max, self.unit))
        self.chunks.append(Chunk(self.text[s:e], s, e, self.doc_id, meta))


def _group_kind(kinds: set[str]) -> str:
    if len(kinds) == 1:
        (k,) = kinds
        if k in ("table", "code"):
            return k
    return "section"
