"""Structural chunking of Python source with ``ast``: functions, classes, methods, module code.

The source is parsed once. Only the top-level statements (and the bodies of classes and
functions that are over budget) are visited; offsets come from a line-start table and
``lineno``/``end_lineno``, so every chunk is a run of whole lines and ``source[start:end]``
is exactly its text. Every line of the file belongs to exactly one unit before packing
(decorators and the comments right above a definition go with it, the lines in between
with the unit before), so nothing is lost, whatever the comments and blank lines do.
"""

from __future__ import annotations

import ast
import gc
from bisect import bisect_left
from typing import Any

from chunklab._validate import check_non_negative_int, renamed_keyword
from chunklab.chunk import Chunk
from chunklab.chunkers.structural._common import (
    check_max_size,
    check_source,
    fallback_chunks,
    resolve_doc_id,
    retokenized_oversize,
)
from chunklab.chunkers.structural._pysource import (
    DEFS,
    Piece,
    PythonLines,
    block_children,
    docstring_of,
    is_oversize,
    main_piece,
    qualname,
    statement_first_line,
)
from chunklab.documents import decode_bytes
from chunklab.text import NONSPACE
from chunklab.units import check_unit, unit_params

__all__ = ["chunk_python"]

_NAMED = (ast.ClassDef, *DEFS)  # what ``defines`` lists
_SOURCE_ORDER = ("body", "handlers", "orelse", "finalbody", "cases")  # a statement's blocks, top-down


@renamed_keyword("max_chars", "max_size")
def chunk_python(
    source: str | bytes,
    max_size: int = 1500,
    min_chars: int = 200,
    path: str | None = None,
    *,
    doc_id: str | None = None,
    unit: str = "chars",
) -> list[Chunk]:
    """Chunk Python source along its syntax tree, each chunk at most ``max_size``.

    ``unit`` measures ``max_size`` and ``min_chars`` in another unit of
    :mod:`chunklab.units` instead (``"tokens"``, ``"tokenizer:PATH"``, ``"words"``).

    Each top-level function and class is a unit with its decorators and the comments
    right above it; module-level code is grouped into ``module`` chunks. A class over
    budget becomes a ``class_header`` chunk plus one ``method`` chunk per method
    (metadata ``class``); a function still over budget is split at statement boundaries,
    then by lines. ``defines`` lists the qualified names (``Basket.add``; a nested function
    ``outer.inner``) of every function and class whose ``def``/``class`` line the chunk holds,
    in source order, each once. Units under ``min_chars`` are merged with neighbours without leaving
    their class. Source that ``ast`` cannot parse (or bytes that cannot be decoded)
    falls back to the recursive chunker with 10% overlap, marked ``fallback`` with the
    reason.
    """
    check_source(source, "source")
    max_size = check_max_size(max_size)
    min_chars = check_non_negative_int(min_chars, "min_chars")
    if path is not None and not isinstance(path, str):
        path = str(path)
    doc_id = resolve_doc_id(doc_id, path)
    check_unit(unit)
    params = {
        "format": "python",
        "max_chars": max_size,
        "min_chars": min_chars,
        **unit_params(unit),
    }
    extra = {"path": path}
    if isinstance(source, (bytes, bytearray)):
        text, _encoding, problem = decode_bytes(bytes(source), "python")
        if problem:
            return fallback_chunks(
                text,
                max_size,
                doc_id,
                params,
                problem,
                extra,
                unit,
            )
    else:
        text = source
    parse_text = text[1:] if text.startswith("\ufeff") else text
    # The syntax tree has no reference cycles, so the cycle collector has nothing to
    # find while it is alive, yet would walk all its nodes again and again: pause it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _chunk_parsed(
            text,
            parse_text,
            max_size,
            min_chars,
            doc_id,
            params,
            path,
            extra,
            unit,
        )
    finally:
        if gc_was_enabled:
            gc.enable()


def _chunk_parsed(text, parse_text, max_size, min_chars, doc_id, params, path, extra, unit) -> list[Chunk]:
    try:
        tree = ast.parse(parse_text)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        reason = f"{type(exc).__name__}: {exc.msg}{where}"
        return fallback_chunks(text, max_size, doc_id, params, reason, extra, unit)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return fallback_chunks(text, max_size, doc_id, params, f"{type(exc).__name__}: {exc}", extra, unit)
    try:
        chunker = _PythonChunker(text, max_size, min_chars, doc_id, params, path, unit)
        chunker.collect_definitions(tree.body, "")  # what each chunk ``defines``
        return chunker.run(tree)
    except RecursionError as exc:  # absurdly deep nesting that ast accepted
        return fallback_chunks(text, max_size, doc_id, params, f"RecursionError: {exc}", extra, unit)


class _PythonChunker(PythonLines):
    def __init__(self, text, max_size, min_chars, doc_id, params, path, unit="chars"):
        super().__init__(text, max_size, unit)
        self.min = min_chars
        self.doc_id = doc_id
        self.params = params
        self.path = path
        self._scopes = 0
        self.module_doc: str | None = None
        self._def_starts: list[int] = []  # where each definition's def/class keyword is ...
        self._def_names: list[str] = []  # ... and its qualified name, in source order

    def piece(self, lo, hi, kind, name, node, scope, cls=None) -> Piece:
        s, e = self.span(lo, hi)
        return Piece(lo, hi, s, e, kind, name, node, scope, cls, self.count(s, e))

    def new_scope(self) -> int:
        self._scopes += 1
        return self._scopes

    # -- top level ------------------------------------------------------------------
    def run(self, tree: ast.Module) -> list[Chunk]:
        if self.nlines == 0 or NONSPACE.search(self.text) is None:
            return []
        self.module_doc = docstring_of(tree) if tree.body else None
        ranges = self.partition(tree.body, 1, self.nlines)
        if not ranges:  # only comments / blank lines: no statements at all
            pieces = self.line_split(1, self.nlines, "module", "<module>", 0)
        else:
            pieces = []
            for lo, hi, node in ranges:
                pieces.extend(self.unit(node, lo, hi, "", 0))
        return self.emit(self.merge(pieces))

    def collect_definitions(self, stmts: list[Any], qual: str) -> None:
        """Record every function and class among ``stmts`` and in their blocks, at any depth.

        The blocks are visited in the order they stand in the source (``try``: body, handlers,
        ``else``, ``finally``), so the starts come out sorted.
        """
        for node in stmts:
            if isinstance(node, _NAMED):
                name = qualname(qual, node.name)
                self._def_starts.append(self.starts[node.lineno - 1] + node.col_offset)
                self._def_names.append(name)
                self.collect_definitions(node.body, name)
                continue
            for field in _SOURCE_ORDER:
                block = getattr(node, field, None)
                if block and isinstance(block, list):
                    self.collect_definitions(block, qual)

    def partition(self, stmts, lo: int, hi: int) -> list[tuple[int, int, Any]]:
        """Split lines ``lo..hi`` into one range per statement (header lines go to the first).

        Statements sharing a line are grouped (``node`` is then a list). Comments right
        above a statement start its range; other gap lines end the range before.
        """
        out: list[list[Any]] = []
        for node in stmts:
            first = statement_first_line(node)
            last = node.end_lineno or first
            if out and first <= out[-1][1]:
                prev = out[-1]
                prev[1] = max(prev[1], last)
                prev[2] = prev[2] if isinstance(prev[2], list) else [prev[2]]
                prev[2].append(node)
                continue
            if out:
                first = self.attach_above(first, out[-1][1])
                out[-1][1] = first - 1
            out.append([first, last, node])
        if not out:
            return []
        out[0][0] = lo
        out[-1][1] = max(out[-1][1], hi)
        return [(a, b, n) for a, b, n in out if a <= b]

    def unit(
        self,
        node,
        lo: int,
        hi: int,
        qual: str,
        scope: int,
        in_class: str | None = None,
    ):
        """The pieces for one statement range: itself if within budget, else split."""
        if isinstance(node, list):
            kind, name = ("class_header", qual) if in_class else ("module", "<module>")
        elif isinstance(node, DEFS):
            kind, name = (
                ("method" if in_class else "function"),
                qualname(qual, node.name),
            )
        elif isinstance(node, ast.ClassDef):
            kind, name = "class", qualname(qual, node.name)
        else:
            kind, name = ("class_header", qual) if in_class else ("module", "<module>")
        p = self.piece(lo, hi, kind, name, node, scope, in_class)
        if p.e <= p.s:
            return []
        if p.size <= self.max:
            return [p]
        if kind == "class":
            return self.split_class(node, lo, hi, name)
        parts = self.split_node(node, lo, hi)
        sub = self.new_scope()
        out = []
        for i, (a, b, oversize) in enumerate(parts):
            q = self.piece(a, b, kind, name, node, sub, in_class)
            if q.e <= q.s:
                continue
            q.parts = (i + 1, len(parts))
            if oversize:
                q.node = ("oversize", node)
            out.append(q)
        return out

    def split_class(
        self,
        node: ast.ClassDef,
        lo: int,
        hi: int,
        qual: str,
    ) -> list[Piece]:
        """A class over budget: header (signature, docstring, attributes) plus its members."""
        scope = self.new_scope()
        ranges = self.partition(node.body, lo, hi)
        out: list[Piece] = []
        for i, (a, b, child) in enumerate(ranges):
            if i == 0 and isinstance(child, (ast.ClassDef, *DEFS)):
                # the class signature gets its own header piece when the first member is a def
                first_line = self._first_member_line(child)
                if first_line > a:
                    head = self.piece(a, first_line - 1, "class_header", qual, node, scope, qual)
                    if head.size > self.max:  # e.g. a long comment block before the first method
                        for ra, rb, big in self.line_split_ranges(a, first_line - 1):
                            mark = ("oversize", node) if big else node
                            out.append(self.piece(ra, rb, "class_header", qual, mark, scope, qual))
                    elif head.e > head.s:
                        out.append(head)
                    a = first_line
            pieces = self.unit(child, a, b, qual, scope, qual)
            for p in pieces:
                if p.kind == "class_header" and not is_oversize(p):
                    p.node = node
            out.extend(pieces)
        return out

    def _first_member_line(self, child) -> int:
        return self.attach_above(statement_first_line(child), 0)

    # -- splitting a statement over budget (cAST: split, then merge back up) --------
    def split_node(self, node, lo: int, hi: int) -> list[tuple[int, int, bool]]:
        """Line ranges within budget (``oversize`` True for a single line over it)."""
        s, e = self.span(lo, hi)
        if self.count(s, e) <= self.max:
            return [(lo, hi, False)] if e > s else []
        children = block_children(node)
        bounds: list[tuple[int, Any]] = []
        prev = lo
        for child in children:
            b = statement_first_line(child)
            if b <= prev or b > hi:
                continue
            b = self.attach_above(b, prev)
            bounds.append((b, child))
            prev = b
        if not bounds:
            return self.line_split_ranges(lo, hi)
        segs: list[tuple[int, int, Any]] = []
        start, owner = lo, None
        for b, child in bounds:
            segs.append((start, b - 1, owner))
            start, owner = b, child
        segs.append((start, hi, owner))
        ranges: list[tuple[int, int, bool]] = []
        for a, b, owner in segs:
            if a > b:
                continue
            if owner is None:
                sa, sb = self.span(a, b)
                if self.count(sa, sb) <= self.max:
                    if sb > sa:
                        ranges.append((a, b, False))
                else:
                    ranges.extend(self.line_split_ranges(a, b))
            else:
                ranges.extend(self.split_node(owner, a, b))
        return self.merge_ranges(ranges)

    def line_split(self, lo, hi, kind, name, scope) -> list[Piece]:
        out = []
        for a, b, big in self.line_split_ranges(lo, hi):
            p = self.piece(a, b, kind, name, None, scope)
            if big:
                p.node = ("oversize", None)
            out.append(p)
        return out

    # -- packing ----------------------------------------------------------------------
    def merge(self, pieces: list[Piece]) -> list[list[Piece]]:
        """Merge neighbours in the same scope: small units, and runs of module/header code."""
        groups: list[list[Piece]] = []
        cur: list[Piece] = []
        cur_s = cur_e = 0
        for p in pieces:
            if cur:
                last = cur[-1]
                if (
                    last.scope == p.scope
                    and self.count(cur_s, p.e) <= self.max
                    and not is_oversize(last)
                    and not is_oversize(p)
                    and (
                        self.count(cur_s, cur_e) < self.min
                        or p.size < self.min
                        or (last.kind == p.kind and p.kind in ("module", "class_header"))
                    )
                ):
                    cur.append(p)
                    cur_e = p.e
                    continue
                groups.append(cur)
            cur = [p]
            cur_s, cur_e = p.s, p.e
        if cur:
            groups.append(cur)
        return groups

    def emit(self, groups: list[list[Piece]]) -> list[Chunk]:
        text = self.text
        chunks: list[Chunk] = []
        line_of = self.lines.line_of
        for group in groups:
            s, e = group[0].s, group[-1].e
            main = group[0] if len(group) == 1 else main_piece(group)
            meta: dict[str, object] = {
                "strategy": "structural",
                "params": self.params,
                "index": len(chunks),
                "kind": main.kind,
                "name": main.name,
                "line_start": line_of(s),
                "line_end": line_of(e - 1),
                "path": self.path,
            }
            node = main.node
            if isinstance(node, tuple):
                meta["oversize"] = True
                meta["oversize_reason"] = (
                    "a single line longer than max_chars"
                    if self.size_unit == "chars"
                    else f"a single line over max_chars={self.max} in unit {self.size_unit!r}"
                )
                node = node[1]
            else:
                meta.update(retokenized_oversize(text[s:e], self.max, self.size_unit))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                doc = docstring_of(node)
            elif group[0].lo == 1 and main.kind == "module":
                doc = self.module_doc
            else:
                doc = None
            meta["docstring"] = doc
            decos = getattr(node, "decorator_list", None) if not isinstance(node, list) else None
            meta["decorators"] = [self._decorator(d) for d in decos] if decos else []
            if main.cls is not None:
                meta["class"] = main.cls
            if main.parts and main.parts[1] > 1:
                meta["part"], meta["parts"] = main.parts
            if len(group) > 1:
                names = list(dict.fromkeys(p.name for p in group if p.kind != "module"))
                if names and names != [main.name]:
                    meta["names"] = names
            if isinstance(node, ast.AsyncFunctionDef):
                meta["async"] = True
            lo, hi = bisect_left(self._def_starts, s), bisect_left(self._def_starts, e)
            meta["defines"] = list(dict.fromkeys(self._def_names[lo:hi]))
            chunks.append(Chunk(text[s:e], s, e, self.doc_id, meta))
        return chunks

    def _decorator(self, d: ast.expr) -> str:
        s = self.starts[d.lineno - 1]
        e = self.starts[min(d.end_lineno or d.lineno, self.nlines)]
        src = self.text[s:e].strip()
        return src[1:].strip() if src.startswith("@") else src
