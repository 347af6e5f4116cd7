"""Line ranges of Python source and syntax-tree positions, for :mod:`chunklab.chunkers.structural.python`.

:class:`PythonLines` knows the source's lines (``\\n``, ``\\r\\n`` and a lone ``\\r`` end one,
as Python's tokenizer counts them, through :class:`chunklab.text.LineIndex`) and packs runs
of whole lines within a budget measured in any unit of :mod:`chunklab.units` (characters by
default); :class:`Piece` is such a run on its way to a chunk.
"""

from __future__ import annotations

import ast

from chunklab.text import LineIndex, line_span
from chunklab.units import UnitIndex

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCK_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")


class Piece:
    """A run of whole lines ``[lo, hi]`` (1-based, inclusive) that becomes (part of) a chunk.

    ``size`` is its length in the chunker's unit (characters unless given).
    """

    __slots__ = ("lo", "hi", "s", "e", "kind", "name", "node", "scope", "cls", "parts", "members", "size")

    def __init__(self, lo, hi, s, e, kind, name, node, scope, cls=None, size=None):
        self.lo = lo
        self.hi = hi
        self.s = s
        self.e = e
        self.kind = kind
        self.name = name
        self.node = node
        self.scope = scope
        self.cls = cls
        self.parts: tuple[int, int] | None = None
        self.members: list[Piece] | None = None
        self.size: int = e - s if size is None else size


class PythonLines:
    """The lines of one source (1-based) and a budget of ``max_size`` units (characters by default).

    ``count(s, e)`` measures ``text[s:e]`` in the unit by bisection over one encoding of
    the whole source (:class:`chunklab.units.UnitIndex`), so packing stays linear.
    """

    def __init__(self, text: str, max_size: int, unit: str = "chars") -> None:
        self.text = text
        self.lines = LineIndex(text, universal=True)
        self.starts = self.lines.edges
        self.nlines = len(self.starts) - 1
        self.max = max_size
        self.size_unit = unit
        self.count = UnitIndex(text, unit).count

    def span(self, lo: int, hi: int) -> tuple[int, int]:
        """Offsets of lines ``lo..hi`` (1-based), without leading blank lines and trailing whitespace."""
        return line_span(self.text, self.starts, lo - 1, hi - 1)

    def line_kind(self, line: int) -> str:
        """``"blank"``, ``"comment"`` or ``"code"`` for 1-based ``line``."""
        stripped = self.text[self.starts[line - 1] : self.starts[line]].strip()
        if not stripped:
            return "blank"
        return "comment" if stripped[0] == "#" else "code"

    def attach_above(self, first: int, floor: int) -> int:
        """Move ``first`` up over the comment lines right above it (not to or past ``floor``)."""
        line = first - 1
        while line > floor and self.line_kind(line) == "comment":
            line -= 1
        return line + 1

    def merge_ranges(self, ranges: list[tuple[int, int, bool]]) -> list[tuple[int, int, bool]]:
        """Greedily merge neighbouring line ranges while the result stays within budget."""
        out: list[tuple[int, int, bool]] = []
        for a, b, big in ranges:
            if out and not big and not out[-1][2]:
                pa, _pb, _ = out[-1]
                s, e = self.span(pa, b)
                if self.count(s, e) <= self.max:
                    out[-1] = (pa, b, False)
                    continue
            out.append((a, b, big))
        return out

    def line_split_ranges(self, lo: int, hi: int) -> list[tuple[int, int, bool]]:
        """Pack whole lines up to the budget; a single line over it stands alone, oversize."""
        out: list[tuple[int, int, bool]] = []
        cur = lo
        line = lo
        while line <= hi:
            s, e = self.span(cur, line)
            if self.count(s, e) > self.max:
                if line == cur:
                    out.append((cur, line, True))
                    cur = line = line + 1
                    continue
                s2, e2 = self.span(cur, line - 1)
                if e2 > s2:
                    out.append((cur, line - 1, False))
                cur = line
                continue
            line += 1
        if cur <= hi:
            s, e = self.span(cur, hi)
            if e > s:
                out.append((cur, hi, False))
        return out


def qualname(qual: str, name: str) -> str:
    return f"{qual}.{name}" if qual else name


def is_oversize(p: Piece) -> bool:
    return isinstance(p.node, tuple)


def main_piece(group: list[Piece]) -> Piece:
    """The piece that names a merged chunk: the class header, else the largest definition."""
    for p in group:
        if p.kind == "class_header":
            return p
    defs = [p for p in group if p.kind != "module"] or group
    return max(defs, key=lambda p: p.size)


def statement_first_line(node) -> int:
    """The first line of a statement, its decorators included (``case`` lines for match cases)."""
    first = getattr(node, "lineno", None)
    if first is None:  # match_case has no position of its own
        first = node.pattern.lineno
    decos = getattr(node, "decorator_list", None)
    if decos:
        first = min(first, min(d.lineno for d in decos))
    return first


def docstring_of(node) -> str | None:
    try:
        return ast.get_docstring(node)
    except TypeError:
        return None


def block_children(node) -> list[ast.AST]:
    if isinstance(node, list):
        return node
    out: list[ast.AST] = []
    for field in _BLOCK_FIELDS:
        value = getattr(node, field, None)
        if value:
            out.extend(value)
    if len(out) > 1:
        out.sort(key=statement_first_line)
    return out
