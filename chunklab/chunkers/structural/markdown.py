"""Structural chunking of Markdown: sections by headings, blocks that are never cut in the middle.

:func:`chunklab.text.markdown_blocks` (the one Markdown scanner) finds the blocks: ATX and
setext headings, fenced code (where a ``#`` line is code, not a heading), GFM tables, front
matter and paragraphs. Headings up to ``max_level`` open sections; a section over budget is
packed block by block, and only a block that alone is over budget is split (a table repeats
its header row through ``metadata["table_header"]``, so ``text`` stays an exact slice of the
source). A heading never becomes a chunk alone, as in :mod:`chunklab.chunkers.structural.html`:
it leads the first piece of what it heads. :func:`pack_blocks` does the packing for any
format that yields the same blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from chunklab._validate import check_int_range, check_text, renamed_keyword
from chunklab.chunk import Chunk
from chunklab.chunkers.recursive import DEFAULT_SEPARATORS, recursive_spans
from chunklab.chunkers.structural._common import (
    check_max_size,
    check_source,
    resolve_doc_id,
    retokenized_oversize,
)
from chunklab.text import NONSPACE, Block, LineIndex, line_span, markdown_blocks
from chunklab.units import UnitIndex, check_unit, unit_params

__all__ = ["chunk_markdown", "pack_blocks"]

_LEVELS = [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS]
#: blocks never cut when they fit the budget alone, not even to make room for their heading
_WHOLE = frozenset({"code", "table", "directive", "frontmatter"})
_ROW_LEVELS = [("\n",), (" | ", "|"), (" ",), ("",)]


@renamed_keyword("max_chars", "max_size")
def chunk_markdown(
    md: str | bytes,
    max_size: int = 1500,
    max_level: int = 3,
    *,
    doc_id: str | None = None,
    path: str | None = None,
    unit: str = "chars",
) -> list[Chunk]:
    """Chunk Markdown by its headings, each chunk at most ``max_size`` (in ``unit``).

    Headings of level 1..``max_level`` (ATX ``#`` and setext underlines) open sections;
    ``metadata["headings"]`` is the path of section titles. A section over budget is
    split between blocks (paragraphs, fenced code, tables), never inside a code fence or
    a table unless that block alone is over budget; a split table's pieces carry the
    header row in ``metadata["table_header"]``. A heading never becomes a chunk alone:
    it joins the content it heads (a paragraph that must be split leaves it room in its
    first piece), and headings at the end join the chunk before them; it stays alone
    only before a fence or table that fits the budget but not beside it. ``unit`` is
    any unit of :mod:`chunklab.units` (``"tokens"``, ``"tokenizer:PATH"``, ...).
    """
    return chunk_sections(
        md,
        "md",
        markdown_blocks,
        "markdown",
        max_size,
        max_level,
        doc_id,
        path,
        unit,
    )


def chunk_sections(
    source: object,
    name: str,
    blocks_of: Callable[[str, LineIndex], Sequence[Block]],
    fmt: str,
    max_size: int,
    max_level: int,
    doc_id: str | None,
    path: str | None,
    unit: str,
) -> list[Chunk]:
    """Chunks of ``source`` in a sectioned format (``fmt``: Markdown, rst) from its blocks.

    The arguments are checked here for every such format (a ValueError names the parameter;
    ``name`` is the source's). ``blocks_of(text, lines)`` is the format's block scanner; the
    sections, budgets and the recorded parameters are the same for every such format
    (:func:`pack_blocks`).
    """
    check_source(source, name)
    max_size = check_max_size(max_size)
    check_unit(unit)
    check_int_range(max_level, "max_level", 1, 6)
    text = check_text(source, name)
    if path is not None and not isinstance(path, str):
        path = str(path)
    doc_id = resolve_doc_id(doc_id, path)
    params: dict[str, object] = {
        "format": fmt,
        "max_chars": max_size,
        "max_level": max_level,
        **unit_params(unit),
    }
    if NONSPACE.search(text) is None:
        return []
    lines = LineIndex(text, universal=True)
    return pack_blocks(
        text,
        blocks_of(text, lines),
        max_size,
        max_level,
        doc_id=doc_id,
        params=params,
        path=path,
        lines=lines,
        unit=unit,
    )


@renamed_keyword("max_chars", "max_size")
def pack_blocks(
    text: str,
    blocks: Sequence[Block],
    max_size: int,
    max_level: int = 3,
    *,
    doc_id: str,
    params: Mapping[str, object],
    path: str | None = None,
    lines: LineIndex | None = None,
    unit: str = "chars",
) -> list[Chunk]:
    """Structural chunks of ``text`` from its blocks: sections by heading, within ``max_size`` (in ``unit``).

    ``blocks`` are :class:`chunklab.text.Block` in order, numbered by the lines of
    ``LineIndex(text, universal=True)`` (``lines``, when the caller has it). Any kind works:
    ``heading`` blocks up to ``max_level`` open sections, ``blank`` ones are skipped, a
    ``table`` over budget is split by rows, any other block (code, paragraphs, directives)
    only when it alone is over budget. Chunks carry ``strategy="structural"`` and ``params``.
    Spans are measured on one :class:`chunklab.units.UnitIndex` of ``text``.
    """
    if NONSPACE.search(text) is None:
        return []
    chunker = _MarkdownChunker(text, max_size, max_level, doc_id, params, path, lines, unit)
    return chunker.run([b for b in blocks if b.kind != "blank"])


class _MarkdownChunker:
    def __init__(self, text, max_size, max_level, doc_id, params, path, lines=None, unit="chars"):
        self.text = text
        self.unit = unit
        self.index = UnitIndex(text, unit)
        self.size = self.index.count
        self.lines = lines or LineIndex(text, universal=True)
        self.starts = self.lines.edges
        self.n = len(self.starts) - 1
        self.max = max_size
        self.max_level = max_level
        self.doc_id = doc_id
        self.params = params
        self.path = path
        self.pieces: list[tuple] = []  # (start, end, kind, headings, level, split, extra)

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
        pending: list[Block] = []  # bare headings waiting for the content they head
        at = -1  # where the pending headings start (inside the first, for the tail of a cut one)
        for k, (headings, level, blocks) in enumerate(sections):
            last = k + 1 == len(sections)
            blocks = pending + blocks
            if not last and all(b.kind == "heading" for b in blocks):
                pending = blocks  # a heading alone never becomes a chunk: it joins what it heads
                continue
            s, e = self.span(blocks[0].first, blocks[-1].last)
            s, first_start, pending, at = max(s, at), at, [], -1
            if e <= s:
                continue
            if last and all(b.kind == "heading" for b in blocks) and self.join_previous(e):
                continue  # headings at the end of the document join the chunk before them
            if self.size(s, e) <= self.max:
                self.add(s, e, "section", headings, level)
            else:
                pending, at = self.split_section(blocks, headings, level, last, first_start)
        if not self.pieces:  # nothing but a byte-order mark (not whitespace, so still kept)
            s, e = self.span(0, self.n - 1)
            self.add(s, e, "section", [], 0)
        return [self.chunk(i, *piece) for i, piece in enumerate(self.pieces)]

    def split_section(self, blocks, headings, level, last: bool, first_start: int = -1):
        """Pack the section's blocks up to the budget; split only blocks over it alone.

        Bare headings lead the first piece of the block after them, which is cut to leave
        them room if it must be. Bare headings at the section's end join the piece before
        them when it has room; else they are returned with their start, to lead the next
        section (the last section keeps them as a chunk). ``first_start``: where the first
        block starts when only its tail is left.
        """
        group_s = group_e = -1
        kinds: set[str] = set()
        group: list[Block] = []
        for bi, block in enumerate(blocks):
            kind = block.kind
            s, e = self.span(block.first, block.last)
            if bi == 0:
                s = max(s, first_start)
            if e <= s:
                continue
            if group_s >= 0 and self.size(group_s, e) <= self.max:
                group_e = e
                kinds.add(kind)
                group.append(block)
                continue
            lead = -1  # bare headings waiting to open the first piece of this block
            if group_s >= 0:
                fits = self.size(s, e) <= self.max
                room = self.size(group_s, _first_char(self.text, s, e)) < self.max
                if kinds == {"heading"} and room and not (fits and kind in _WHOLE):
                    lead = group_s
                else:  # (a fence or a table that fits is never cut: its heading stays alone)
                    self.add(group_s, group_e, _group_kind(kinds), headings, level)
                group_s = -1
            if lead < 0 and self.size(s, e) <= self.max:
                group_s, group_e, kinds, group = s, e, {kind}, [block]
                continue
            pieces = self.block_pieces(block, s, e, lead)
            if pieces is None:  # no room at all beside the headings (tokens measured apart)
                self.add(lead, group_e, "section", headings, level)
                pieces = self.block_pieces(block, s, e, -1) or []
            if kind == "heading" and pieces:  # the tail of a cut heading still heads what follows
                *pieces, (group_s, group_e, _k, _x) = pieces
                kinds, group = {"heading"}, [block]
            for ps, pe, pkind, extra in pieces:
                self.add(ps, pe, pkind, headings, level, split=True, extra=extra)
        if group_s < 0:
            return [], -1
        if kinds == {"heading"}:
            if self.join_previous(group_e):
                return [], -1
            if not last:
                return group, group_s
        self.add(group_s, group_e, _group_kind(kinds), headings, level)
        return [], -1

    def join_previous(self, e: int) -> bool:
        """Extend the last piece to ``e`` when it stays within budget; whether it did."""
        if not self.pieces or self.size(self.pieces[-1][0], e) > self.max:
            return False
        self.pieces[-1] = (self.pieces[-1][0], e, *self.pieces[-1][2:])
        return True

    def block_pieces(self, block: Block, s: int, e: int, lead: int) -> list[tuple] | None:
        """``text[s:e]`` of one block cut to the budget; with ``lead``, the first piece opens there.

        The first piece is cut to the room the leading headings leave (None when there is
        none); a table's pieces after its header row carry that row.
        """
        kind = block.kind
        levels = _ROW_LEVELS if kind == "table" else _LEVELS
        budget = self.max
        header: str | None = None
        header_end = e
        if kind == "table":
            header_end = self.span(block.first, min(block.first + 1, block.last))[1]
            header = self.text[s:header_end]
            header_size = self.size(s, header_end)
            budget = self.max - header_size - 1 if header_size < self.max // 2 else self.max
        spans = self.spans(s, e, budget, levels) if lead < 0 else self.led_spans(lead, s, e, budget, levels)
        if spans is None:
            return None
        out: list[tuple[int, int, str, dict | None]] = []
        piece_kind = kind if kind in ("code", "table") else "section"
        for ps, pe in spans:
            extra = None
            if header is not None and out and ps >= header_end:
                extra = {"table_header": header}
            out.append((ps, pe, piece_kind, extra))
        return out

    def led_spans(self, lead: int, s: int, e: int, budget: int, levels) -> list[tuple[int, int]] | None:
        """Pieces of ``text[s:e]``, the first opening at ``lead`` within the budget (None: no room)."""
        room = self.max - self.size(lead, _first_char(self.text, s, e))
        for _try in range(4):  # in tokens a piece may count more beside its headings than alone
            first = self.spans(s, e, room, levels)[:1] if room > 0 else []
            if not first:
                return None
            over = self.size(lead, first[0][1]) - self.max
            if over <= 0:
                return [(lead, first[0][1]), *self.spans(first[0][1], e, budget, levels)]
            room -= over
        return None

    def spans(self, s: int, e: int, budget: int, levels) -> list[tuple[int, int]]:
        """Offsets of the pieces of ``text[s:e]`` cut by the recursive separators ``levels``."""
        return [(s + a, s + b) for a, b in self.cut(s, e, budget, levels)]

    def cut(self, s: int, e: int, budget: int, levels) -> list[tuple[int, int]]:
        """``text[s:e]`` cut by the recursive separators ``levels``, measured as it lies in the document."""
        index = None if self.unit == "chars" else self.index.slice(s, e)
        return [
            (a, b) for a, b, _lv, _sh in recursive_spans(self.text[s:e], budget, 0, self.unit, levels, index)
        ]

    def add(self, s, e, kind, headings, level, split=False, extra=None) -> None:
        """Record a piece; chunks are built once every piece is final (a bare heading may join one)."""
        self.pieces.append((s, e, kind, headings, level, split, extra))

    def chunk(self, index, s, e, kind, headings, level, split, extra) -> Chunk:
        meta: dict[str, object] = {
            "strategy": "structural",
            "params": self.params,
            "index": index,
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
        return Chunk(self.text[s:e], s, e, self.doc_id, meta)


def _first_char(text: str, s: int, e: int) -> int:
    """The offset of the first non-whitespace character of ``text[s:e]`` (``e`` when none)."""
    m = NONSPACE.search(text, s, e)
    return e if m is None else m.start()


def _group_kind(kinds: set[str]) -> str:
    if len(kinds) == 1:
        (k,) = kinds
        if k in ("table", "code"):
            return k
    return "section"
