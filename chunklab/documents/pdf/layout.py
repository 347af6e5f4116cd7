"""Page layout for the PDF loader: segments (runs on one baseline), columns, lines and typed blocks.

:func:`reading_order` reads a page's bands top to bottom and each band column by column (a
gutter that no body line crosses, with lines filling the columns on both sides);
:func:`blocks` groups lines into headings (font size, weight), list items (bullets), table rows
(cells aligned on one baseline, two or more rows alike), captions and paragraphs; and
:func:`block_text` joins a block's lines, mending a word hyphenated across a line break where the
document or the hyphenation dictionary says it is one word (:class:`Hyphenation`).
"""

from __future__ import annotations

import functools
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from pypdfium2 import PdfPage
    from pyphen import Pyphen

from chunklab.documents.characters import compose_accents

__all__ = [
    "HYPHENATION_LANGUAGES",
    "Block",
    "Hyphenation",
    "LineEndHyphen",
    "Seg",
    "block_text",
    "blocks",
    "reading_order",
]

_BULLET = re.compile(r"^(?:[•◦▪‣∙·*\-–—]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s")
#: a caption's opening: "Table 3:", "FIGURE 2.1.", "Fig. 4 —", as a caption is written (capitalized or in
#: capitals), the number followed by its punctuation, a space or the line's end: not a line of running
#: text that starts "table 1) lists" or "figure 2, which"
_CAPTION = re.compile(
    r"^(?:(?:Table|Figure|Fig\.|Tabla|Figura)|(?:TABLE|FIGURE|FIG\.|TABLA|FIGURA))\s*\d+(?:\.\d+)*(?:[.:\s—–-]|$)"
)


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
    #: wide gaps inside the run where a column gutter may lie: (ink right before it, left of the next
    #: glyph, index into ``chars``, into ``sizes``, the bold count before it)
    cuts: list[tuple[float, float, int, int, int]] = field(default_factory=list)
    #: ink width over size of each glyph drawn as one vertical stroke (l, I, |): how heavy the face is
    stems: list[float] = field(default_factory=list)
    #: the font of the run's first character, "name|weight" as PDFium reports them
    font: str = ""

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
    """The page's segments in reading order: bands top to bottom, each band column by column.

    A full-width line (a title, an abstract, a figure caption across both columns) closes the
    band above it, so columns are read below and between full-width blocks; a run that PDFium
    gave across a narrow gutter (one baseline, a wide gap) is cut there first.
    """
    segs = sorted(segs, key=lambda s: (round(s.base), s.x0))
    gutter = _gutter(segs, width)
    if gutter is None:
        return segs
    segs = [piece for s in segs for piece in _cut_at(s, gutter)]
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


def _gap_at(s: Seg, g: float) -> tuple[float, float, int, int, int] | None:
    """The wide gap inside ``s`` that ``x = g`` falls in, if any."""
    for c in s.cuts:
        if c[0] <= g <= c[1]:
            return c
    return None


def _cut_at(s: Seg, g: float) -> list[Seg]:
    """``s`` as it lies on each side of the gutter at ``g``: itself, or two segments cut at its gap there."""
    cut = _gap_at(s, g) if s.x0 < g < s.x1 else None
    if cut is None:
        return [s]
    ink_right, next_left, ci, si, bi = cut
    a = Seg(s.page, s.chars[:ci], s.x0, ink_right, s.top, s.bottom, s.base, s.sizes[:si], bi)
    b = Seg(s.page, s.chars[ci:], next_left, s.x1, s.top, s.bottom, s.base, s.sizes[si:], s.bold - bi)
    a.cuts = [c for c in s.cuts if c[2] < ci]
    b.cuts = [(c[0], c[1], c[2] - ci, c[3] - si, c[4] - bi) for c in s.cuts if c[2] > ci]
    return [p for p in (a, b) if p.text]


def _gutter(segs: list[Seg], width: float) -> float | None:
    """An x that no body line crosses (or crosses only at a wide gap), with full columns on both sides.

    The columns must lie side by side: between the top and the bottom that both columns reach,
    at most a fifth of the lines may cross the gutter (full-width lines above, below or between
    column blocks are bands of their own, however many there are).
    """
    if len(segs) < 6:
        return None
    best: tuple[int, float, float] | None = None
    for step in range(30, 71):
        g = width * step / 100
        lefts: list[tuple[Seg, float]] = []  # (segment, width of its piece on that side)
        rights: list[tuple[Seg, float]] = []
        crossing: list[Seg] = []
        starts: list[tuple[float, str, bool]] = []  # each right piece: where it begins, its text, whether cut
        ends: list[float] = []  # where each right piece ends
        for s in segs:
            if s.x1 <= g:
                lefts.append((s, s.x1 - s.x0))
            elif s.x0 >= g:
                rights.append((s, s.x1 - s.x0))
                starts.append((s.x0, s.text, False))
                ends.append(s.x1)
            elif (cut := _gap_at(s, g)) is not None:
                lefts.append((s, cut[0] - s.x0))
                rights.append((s, s.x1 - cut[1]))
                starts.append((cut[1], "".join(s.chars[cut[2] :]), True))
                ends.append(s.x1)
            else:
                crossing.append(s)
        if len(lefts) < 3 or len(rights) < 3:
            continue
        near = _near_counts([x for x, _, _ in starts])
        x0 = starts[max(range(len(near)), key=near.__getitem__)][0]
        aligned = [t for x, t, _ in starts if abs(x - x0) <= 2]  # the first largest group's texts
        few_cross = len(crossing) + sum(1 for *_, cut in starts if cut) <= 0.2 * len(segs)  # the old test
        # flush-right labels: right pieces ending at one x but not starting at one (a code column's
        # indented lines start at several x and end ragged), or one text repeated
        flush_right = len(aligned) < 0.5 * len(starts) and _largest_group(ends) >= 0.5 * len(ends)
        if flush_right or (not few_cross and len(set(aligned)) < 0.5 * len(aligned)):
            continue
        lo, hi = min(s.x0 for s, _ in lefts), max(s.x1 for s, _ in rights)
        left_long, right_long = _long_median(lefts, g - lo), _long_median(rights, hi - g)
        if not (left_long or _mostly_long(lefts, g - lo)) or not (right_long or _mostly_long(rights, hi - g)):
            continue  # short pieces on a side: table cells, not a column
        if not (left_long or right_long):
            continue  # neither side's typical piece is a line: a table, however long some cells are
        top = max(min(s.top for s, _ in lefts), min(s.top for s, _ in rights))
        bottom = min(max(s.bottom for s, _ in lefts), max(s.bottom for s, _ in rights))
        if bottom <= top:
            continue  # one block above the other: not side by side
        inside = sum(1 for s in crossing if top < (s.top + s.bottom) / 2 < bottom)
        beside = sum(1 for s, _ in lefts + rights if top <= (s.top + s.bottom) / 2 <= bottom)
        if inside > 0.2 * (inside + beside):
            continue
        cand = (inside, abs(step - 50), g)
        if best is None or cand < best:
            best = cand
    return best[2] if best else None


#: lines of a column's full width a side needs before short pieces beside them (an equation) may be ignored
_COLUMN_LINES = 12


def _long_median(pieces: list[tuple[Seg, float]], side: float) -> bool:
    """Whether a side's median piece is a line: 0.6 of the side's width or more."""
    return statistics.median(w for _, w in pieces) >= 0.6 * side


def _mostly_long(pieces: list[tuple[Seg, float]], side: float) -> bool:
    """Whether a side is a column: half its ink (by width) or more in lines of nearly its full width.

    Table cells are short pieces; a column's lines are long, and the many short pieces of an
    equation set in it (indices, fractions, one per symbol) do not outweigh its lines, when it has
    at least ``_COLUMN_LINES`` of them (a table's few long cells are not a column).
    """
    widths = [w for _, w in pieces]
    long = [w for w in widths if w >= 0.85 * side]  # full lines, as a justified column sets them
    return len(long) >= _COLUMN_LINES and sum(long) >= 0.5 * sum(widths)


def _largest_group(xs: list[float]) -> int:
    """How many of ``xs`` lie within 2 pt of the one that has the most others that near."""
    return max(_near_counts(xs), default=0)


def _near_counts(xs: list[float]) -> list[int]:
    """For each of ``xs``, how many of ``xs`` lie within 2 pt of it (``abs(x - y) <= 2``), by one
    sliding window over the sorted values instead of comparing every pair: those near a value
    are one run of the sorted list, and the run's ends only move right as the value grows."""
    order = sorted(range(len(xs)), key=xs.__getitem__)
    ordered = [xs[k] for k in order]
    counts = [0] * len(xs)
    lo = hi = 0
    for r, k in enumerate(order):
        x = ordered[r]
        while abs(ordered[lo] - x) > 2:
            lo += 1
        hi = max(hi, r)
        while hi + 1 < len(ordered) and abs(ordered[hi + 1] - x) <= 2:
            hi += 1
        counts[k] = hi - lo + 1
    return counts


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


def block_text(block: Block, hyphenation: Hyphenation | None = None) -> tuple[str, list[LineEndHyphen]]:
    """The block's text: its lines joined by newlines (a table row's cells by tabs), and each word
    hyphenated at a line end mended or kept as ``hyphenation`` decides (:meth:`Hyphenation.joins`),
    with those decisions (offsets into the block's text, where the word now stands)."""
    sep = "\t" if block.type == "table_row" else " "
    out = ""
    decided: list[LineEndHyphen] = []
    for line in block.lines:
        text = sep.join(s.text for s in line)
        if not out:
            out = text
        elif text[:1].islower() and (head := _WORD_END.search(out)) and (tail := _WORD_START.match(text)):
            join, by = (hyphenation or Hyphenation([])).joins(head[1], tail[0])
            out = out[:-1] if join else out
            start = head.start(1)
            decided.append(
                {
                    "page": line[0].page,
                    "start": start,
                    "end": len(out) + tail.end(),
                    "text": out[start:] + tail[0],
                    "joined": join,
                    "by": by,
                }
            )
            out += text
        else:
            out += "\n" + text
    return out, decided


#: a line's last word ending in a hyphen after a letter ("exam-", "state-of-the-"), and the next line's
#: first word when it starts with a lower-case letter ("ple", "art")
_WORD_END = re.compile(r"(?<![\w-])([\w-]*[^\W\d_]-)$")
_WORD_START = re.compile(r"[^\W\d_](?:\w|-(?=\w))*")
_LETTERS = re.compile(r"[^\W\d_]*")
_WORDS = re.compile(r"[^\W\d_]\w*(?:-\w+)*")
#: the hyphenation dictionaries consulted (LibreOffice's, shipped in pyphen)
HYPHENATION_LANGUAGES = ("en_US",)


class LineEndHyphen(TypedDict):
    """A word hyphenated at a line end (``metadata["hyphenation"]``): where it stands in the text
    (``text[start:end]``, as written there), on which page, whether the hyphen was dropped
    (``joined``) and what decided (``by``: ``"document"``, ``"dictionary"``)."""

    page: int
    start: int
    end: int
    text: str
    joined: bool
    by: str


class Hyphenation:
    """What decides whether a word hyphenated at a line end ("exam-" / "ple") is one word.

    The document first: a word it writes elsewhere, on one line, with the hyphen ("well-known")
    or without it ("example"), is written that way here too (the more frequent form, the hyphen
    on a tie). Else the dictionary (:data:`HYPHENATION_LANGUAGES`, LibreOffice's hyphenation
    patterns through pyphen): the hyphen is dropped when the break is a legal hyphenation point
    of the joined word ("exam-ple" of "example"), and kept otherwise, as it is for a word with a
    digit or an underscore before the break, which no dictionary holds (the letters after the
    break are checked, so a footnote mark after the word, "avail-" / "able48", does not count).
    The document's words are counted once, on the first line-end hyphen.
    """

    def __init__(self, segs: list[Seg]) -> None:
        self.segs = segs

    @cached_property
    def counts(self) -> Counter[str]:
        """How often the document writes each word (lower case, hyphenated ones whole) on one line."""
        return Counter(w.lower() for s in self.segs for w in _WORDS.findall(s.text))

    def joins(self, head: str, tail: str) -> tuple[bool, str]:
        """Whether ``head`` (ending in its hyphen) and ``tail`` are one word without the hyphen,
        and what decided: ``"document"`` or ``"dictionary"``."""
        whole, hyphened = (head[:-1] + tail).lower(), (head + tail).lower()
        written_whole, written_hyphened = self.counts[whole], self.counts[hyphened]
        if written_whole or written_hyphened:
            return written_whole > written_hyphened, "document"
        # the letters on each side of the break: "avail-" + "able48" (a footnote mark) is "available"
        left, right = head[:-1].rpartition("-")[2], _LETTERS.match(tail)[0]  # type: ignore[index]
        if not left.isalpha():
            return False, "dictionary"
        word = (left + right).lower()
        return any(len(left) in _positions(lang, word) for lang in HYPHENATION_LANGUAGES), "dictionary"


@functools.lru_cache(maxsize=4096)
def _positions(lang: str, word: str) -> frozenset[int]:
    """The legal hyphenation points of ``word`` by the ``lang`` dictionary (character counts before them)."""
    return frozenset(_dictionary(lang).positions(word))


@functools.cache
def _dictionary(lang: str) -> Pyphen:
    from pyphen import Pyphen

    return Pyphen(lang=lang)


def has_images(page: PdfPage) -> bool:
    """Whether the page holds an image object (a scan, a figure), nested up to two levels deep."""
    import pypdfium2.raw as pr

    return any(True for _ in page.get_objects(filter=(pr.FPDF_PAGEOBJ_IMAGE,), max_depth=2))
