"""Page layout for the PDF loader: segments (runs on one baseline), columns, lines and typed blocks.

:func:`reading_order` reads a page's bands top to bottom and each band column by column (a
gutter that no body line crosses, with lines filling the columns on both sides);
:func:`blocks` groups lines into headings (font size, weight), list items (bullets), table rows
(cells aligned on one baseline, two or more rows alike), captions and paragraphs; and
:func:`block_text` joins a block's lines, mending words hyphenated across a line break.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypdfium2 import PdfPage

from chunklab.documents.characters import compose_accents

__all__ = ["Block", "Seg", "block_text", "blocks", "reading_order"]

_BULLET = re.compile(r"^(?:[•◦▪‣∙·*\-–—]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s")
_CAPTION = re.compile(r"^(?:Table|Figure|Fig\.|Tabla|Figura)\s*\d+", re.I)


@dataclass
class Seg:
    """A run of characters on one baseline (top-left page coordinates); read its text and size once built."""

    page: int
    chars: list[str] = field(default_factory=list)
    x0: float = 1e9
    x1: float = -1e9
    top: float = 1e9
    bottom: float = -1e9
    base: float = 0.0
    sizes: list[float] = field(default_factory=list)
    bold: int = 0
    space: bool = False
    last_left: float = 0.0
    advance: float = 0.0

    @cached_property
    def text(self) -> str:
        return compose_accents("".join(self.chars)).strip()  # TeX's "M´etro" is "Métro"

    @cached_property
    def size(self) -> float:
        return statistics.median(self.sizes) if self.sizes else 0.0

    @property
    def is_bold(self) -> bool:
        return self.bold * 2 > len(self.sizes)


# --------------------------------------------------------------------------- reading order


def reading_order(segs: list[Seg], width: float) -> list[Seg]:
    """The page's segments in reading order: bands top to bottom, each band column by column."""
    segs = sorted(segs, key=lambda s: (round(s.base), s.x0))
    gutter = _gutter(segs, width)
    if gutter is None:
        return segs
    out: list[Seg] = []
    left: list[Seg] = []
    right: list[Seg] = []
    for s in segs:
        if s.x0 < gutter < s.x1:  # a full-width line closes the band above it
            out += left + right + [s]
            left, right = [], []
        elif s.x1 <= gutter:
            left.append(s)
        else:
            right.append(s)
    return out + left + right


def _gutter(segs: list[Seg], width: float) -> float | None:
    """An x that no body line crosses, with full columns (lines that fill them) on both sides."""
    if len(segs) < 6:
        return None
    best: tuple[int, float, float] | None = None
    for step in range(30, 71):
        g = width * step / 100
        crossing = sum(1 for s in segs if s.x0 < g < s.x1)
        lefts = [s for s in segs if s.x1 <= g]
        rights = [s for s in segs if s.x0 >= g]
        if crossing > 0.2 * len(segs) or len(lefts) < 3 or len(rights) < 3:
            continue
        lo, hi = min(s.x0 for s in lefts), max(s.x1 for s in rights)
        if statistics.median(s.x1 - s.x0 for s in lefts) < 0.6 * (g - lo):
            continue  # short pieces on the left: table cells, not a column
        if statistics.median(s.x1 - s.x0 for s in rights) < 0.6 * (hi - g):
            continue
        cand = (crossing, abs(step - 50), g)
        if best is None or cand < best:
            best = cand
    return best[2] if best else None


# --------------------------------------------------------------------------- blocks and text


@dataclass
class _Block:
    type: str
    lines: list[list[Seg]]
    table: int | None = None
    header: bool = False


@dataclass
class Block:
    type: str
    lines: list[list[Seg]]
    table: int | None = None
    header: bool = False


def blocks(segs: list[Seg], body: float, tables: int) -> tuple[list[Block], int]:
    """Lines (segments on one baseline) grouped into typed blocks."""
    lines: list[list[Seg]] = []
    for s in segs:
        if lines and abs(lines[-1][-1].base - s.base) < 0.4 * max(s.size, 1.0) and s.x0 >= lines[-1][-1].x1:
            lines[-1].append(s)
        else:
            lines.append([s])
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and len(lines[j]) >= 2 and len(lines[j]) == len(lines[i]):
            j += 1
        if j - i >= 2:  # two or more lines with the same number of cells: a table
            tables += 1
            for k in range(i, j):
                blocks.append(Block("table_row", [lines[k]], tables, header=k == i))
            i = j
            continue
        line = lines[i]
        kind = _line_type(line, body)
        prev = blocks[-1] if blocks else None
        if prev is not None and _continues(prev, line, kind, body):
            prev.lines.append(line)
        else:
            blocks.append(Block(kind, [line]))
        i += 1
    return blocks, tables


def _line_type(line: list[Seg], body: float) -> str:
    text = " ".join(s.text for s in line)
    size = max(s.size for s in line)
    if _CAPTION.match(text):
        return "caption"
    if _BULLET.match(text):
        return "list_item"
    bold = all(s.is_bold for s in line)
    if size >= 1.15 * body or (bold and len(text) <= 120 and not text.endswith((".", ":", ","))):
        return "heading"
    return "paragraph"


def _continues(prev: Block, line: list[Seg], kind: str, body: float) -> bool:
    last = prev.lines[-1]
    if prev.type == "table_row" or kind in ("list_item", "caption"):
        return False
    size = max(s.size for s in line)
    gap = line[0].top - max(s.bottom for s in last)
    if gap > 0.8 * size or line[0].base < last[0].base:
        return False
    same_style = abs(size - max(s.size for s in last)) < 0.1 * size and all(s.is_bold for s in line) == all(
        s.is_bold for s in last
    )
    if prev.type == "heading":
        return kind == "heading" and same_style
    if prev.type in ("list_item", "caption"):  # a wrapped item or caption: same style, indented or aligned
        return kind == "paragraph" and same_style and line[0].x0 >= last[0].x0 - 1
    return kind == "paragraph" and same_style


def block_text(block: Block) -> str:
    sep = "\t" if block.type == "table_row" else " "
    out = ""
    for line in block.lines:
        text = sep.join(s.text for s in line)
        if not out:
            out = text
        elif re.search(r"[^\W\d_]-$", out) and text[:1].islower():
            out = out[:-1] + text  # a word hyphenated across the line break
        else:
            out += "\n" + text
    return out


def has_images(page: PdfPage) -> bool:
    """Whether the page holds an image object (a scan, a figure), nested up to two levels deep."""
    import pypdfium2.raw as pr

    return any(True for _ in page.get_objects(filter=(pr.FPDF_PAGEOBJ_IMAGE,), max_depth=2))
