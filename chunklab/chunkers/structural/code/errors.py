"""Parse errors in a tree-sitter tree: where they are, how much of the file they cover, which chunks.

Used by :mod:`chunklab.chunkers.structural.code`. Tree-sitter always returns a tree; what it could
not parse sits in ``ERROR`` nodes (and zero-width ``MISSING`` ones), usually a few lines around a
macro or a construct the grammar does not know. The chunker keeps chunking on syntax everywhere
else, treats each error region as an atom (cut by lines when over budget), and marks the chunks
that cover one. Only when the tree is mostly error, more than :data:`FALLBACK_ERROR_SHARE` of the
file's bytes in error regions (an ``ERROR`` node's bytes outside the sound subtrees tree-sitter
recovered inside it), is the whole file chunked without syntax (``fallback``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["FALLBACK_ERROR_SHARE", "ErrorSummary", "ParseErrors", "find_parse_errors", "mark_error_chunks"]

#: above this share of the file's bytes in error regions, the file falls back (no syntax used)
FALLBACK_ERROR_SHARE = 0.5


class ErrorSummary(TypedDict):
    """A file's parse errors as each of its chunks records them (``metadata["parse_errors"]``)."""

    count: int
    first_line: int
    share: float


class ParseErrors(NamedTuple):
    """The error regions of one file: character spans (sorted, disjoint), their count, first line."""

    spans: list[tuple[int, int]]
    first_line: int
    share: float  # of the file's UTF-8 bytes in error regions

    def summary(self) -> ErrorSummary:
        """What every chunk of the file records as ``metadata["parse_errors"]``."""
        return {"count": len(self.spans), "first_line": self.first_line, "share": round(self.share, 4)}


def find_parse_errors(
    root: Node,
    char: Callable[[int], int],
    line_of: Callable[[int], int],
    n_bytes: int,
    comments: frozenset[str] = frozenset(),
) -> ParseErrors | None:
    """The error regions under ``root``: what ERROR nodes hold outside sound subtrees, and MISSING nodes.

    Tree-sitter often recovers whole definitions inside an ERROR node (the root itself can be
    one); those subtrees, and the comments (node types ``comments``, valid anywhere), are sound
    and not counted. The regions are the runs of an ERROR node's other children that hold no
    error of their own. Only subtrees that hold an error are visited.
    """
    if not root.has_error:
        return None
    spans: list[tuple[int, int]] = []
    error_bytes = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            at = char(node.start_byte)
            spans.append((at, at))
        elif node.is_error:
            run = -1  # start byte of the current run of junk children
            for c in node.children:
                if c.has_error or (c.is_named and (c.child_count or c.type in comments)):  # not junk
                    if c.has_error:
                        stack.append(c)
                    if run >= 0:
                        error_bytes += c.start_byte - run
                        spans.append((char(run), char(c.start_byte)))
                        run = -1
                elif run < 0:
                    run = c.start_byte
            if run >= 0:
                error_bytes += node.end_byte - run
                spans.append((char(run), char(node.end_byte)))
            elif node.child_count == 0:
                error_bytes += node.end_byte - node.start_byte
                spans.append((char(node.start_byte), char(node.end_byte)))
        else:
            stack.extend(c for c in node.children if c.has_error)
    if not spans:  # has_error without an ERROR or MISSING node below: nothing to point at
        return None
    spans.sort()
    return ParseErrors(spans, line_of(spans[0][0]), error_bytes / max(1, n_bytes))


def mark_error_chunks(
    bounds: list[tuple[int, int]], metas: list[dict[str, Any]], errors: ParseErrors, line_of
) -> None:
    """Mark the chunks (``bounds`` sorted, as ``metas``) that cover an error region.

    A region inside a chunk, or overlapping it, marks that chunk; a region that lies between
    chunks (in whitespace trimmed off, or a ``MISSING`` token at the very end) marks the chunk
    before it, so every region is reported by some chunk. Every chunk also records the file's
    ``parse_errors`` summary.
    """
    if not bounds:
        return
    summary = errors.summary()
    for meta in metas:
        meta["parse_errors"] = summary
    starts = [s for s, _e in bounds]
    for a, b in errors.spans:
        i = max(0, bisect_right(starts, a) - 1)
        hit = False
        j = i
        while j < len(bounds) and bounds[j][0] < max(b, a + 1):
            if bounds[j][1] > a:
                _mark(metas[j], line_of(max(a, bounds[j][0])))
                hit = True
            j += 1
        if not hit:
            _mark(metas[i], line_of(a))


def _mark(meta: dict[str, Any], line: int) -> None:
    meta["parse_error"] = True
    meta["parse_error_line"] = min(line, meta.get("parse_error_line", line))
