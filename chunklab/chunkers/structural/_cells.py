"""Notebook cells for the element chunker: Markdown cells by heading, code cells by the Python chunker.

Each cell is chunked on its own by the chunker of its type (:func:`chunk_markdown`,
:func:`chunk_python`, else the recursive chunker for raw cells and outputs) and the pieces are
shifted to the notebook's offsets; a Markdown cell that holds only headings joins the cell
after it (a heading alone never becomes a chunk). The heading path runs on across cells, by level:
a "## Details" in one cell sits under the "# Loading data" of an earlier one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from chunklab.chunk import Chunk
from chunklab.chunkers.recursive import chunk_recursive
from chunklab.chunkers.structural.markdown import chunk_markdown
from chunklab.chunkers.structural.python import chunk_python
from chunklab.documents.layout import Element, locate
from chunklab.units import UnitIndex

__all__ = ["chunk_cells"]

_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def chunk_cells(
    text: str, elements: Sequence[Element], budget: int, unit: str, doc_id: str, base: Mapping[str, object]
) -> list[Chunk]:
    """Chunks of a notebook's text, cell by cell (see the module docstring)."""
    measure = UnitIndex(text, unit)
    out: list[Chunk] = []
    stack: list[tuple[int, str]] = []  # the heading path so far: (level, title), across cells
    running: list[str] = []
    pending: int | None = None  # start of a heading-only Markdown cell waiting for its content
    for e in elements:
        cell_text = text[e.start : e.end]
        lines = [ln for ln in cell_text.splitlines() if ln.strip()]
        marks = _headings(cell_text) if e.type == "markdown" else []
        if e.type == "markdown" and lines and all(_HEADING_LINE.match(ln) for ln in lines):
            for _, level, title in marks:
                stack = [h for h in stack if h[0] < level] + [(level, title)]
            running = [t for _, t in stack]
            pending = e.start if pending is None else pending
            continue
        pieces = _cell_chunks(cell_text, e.type, budget, unit, doc_id)
        for k, c in enumerate(pieces):
            s, end = c.start + e.start, c.end + e.start
            heads = list(c.metadata.get("headings") or [])
            if e.type == "markdown":
                for _, level, title in [m for m in marks if m[0] <= c.start]:
                    stack = [h for h in stack if h[0] < level] + [(level, title)]
                marks = [m for m in marks if m[0] > c.start]
                running = [t for _, t in stack]
                heads = running or heads
            if k == 0 and pending is not None and measure.count(pending, end) <= budget:
                s = pending
            meta: dict[str, object] = {
                **base,
                "kind": "cell",
                "elements": [e.type],
                "headings": heads or running,
                **{
                    key: c.metadata[key]
                    for key in ("oversize", "oversize_reason", "name")
                    if key in c.metadata
                },
                **locate(elements, s, end),
            }
            out.append(Chunk(text[s:end], s, end, doc_id, meta))
        if pieces and pending is not None and out[-len(pieces)].start != pending:
            out.append(_alone(text, pending, e.start, elements, doc_id, base, running))
        pending = None
    if pending is not None:
        out.append(_alone(text, pending, len(text.rstrip()), elements, doc_id, base, running))
    return sorted(out, key=lambda c: (c.start, c.end))


def _headings(cell_text: str) -> list[tuple[int, int, str]]:
    """The ATX headings of a Markdown cell outside code fences: (offset in the cell, level, title)."""
    out, fenced, at = [], False, 0
    for line in cell_text.splitlines(keepends=True):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := _HEADING_LINE.match(line.rstrip("\r\n"))):
            out.append((at, len(line.lstrip()) - len(line.lstrip().lstrip("#")), m.group(1)))
        at += len(line)
    return out


def _cell_chunks(cell_text: str, kind: str, budget: int, unit: str, doc_id: str) -> list[Chunk]:
    if kind == "markdown":
        return chunk_markdown(cell_text, budget, doc_id=doc_id, unit=unit)
    if kind == "code":
        return chunk_python(cell_text, budget, min(200, budget), doc_id=doc_id, unit=unit)
    return chunk_recursive(cell_text, budget, 0, unit, doc_id=doc_id, strategy="structural")


def _alone(
    text: str,
    start: int,
    end: int,
    elements: Sequence[Element],
    doc_id: str,
    base: Mapping[str, object],
    running: list[str],
) -> Chunk:
    """Heading cells that could not join what follows (too big together, or nothing follows)."""
    end = len(text[:end].rstrip())
    meta = {
        **base,
        "kind": "cell",
        "elements": ["markdown"],
        "headings": running,
        **locate(elements, start, end),
    }
    return Chunk(text[start:end], start, end, doc_id, meta)
