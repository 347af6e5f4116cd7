"""Notebook cells for the element chunker: Markdown cells by heading, code cells by the Python chunker.

Each cell is chunked on its own by the chunker of its type (:func:`chunk_markdown`,
:func:`chunk_python`, else the recursive chunker for raw cells and outputs) and the pieces are
shifted to the notebook's offsets; a Markdown cell that holds only headings joins the cell
after it (a heading alone never becomes a chunk). The heading path runs on across cells.
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
    running: list[str] = []
    pending: int | None = None  # start of a heading-only Markdown cell waiting for its content
    for e in elements:
        cell_text = text[e.start : e.end]
        lines = [ln for ln in cell_text.splitlines() if ln.strip()]
        if e.type == "markdown" and lines and all(_HEADING_LINE.match(ln) for ln in lines):
            titles = [m.group(1) for ln in lines if (m := _HEADING_LINE.match(ln))]
            running = (
                titles[-1:] if len(titles) == 1 and lines[0].lstrip().startswith("# ") else running + titles
            )
            pending = e.start if pending is None else pending
            continue
        pieces = _cell_chunks(cell_text, e.type, budget, unit, doc_id)
        for k, c in enumerate(pieces):
            s, end = c.start + e.start, c.end + e.start
            heads = list(c.metadata.get("headings") or [])
            if e.type == "markdown" and heads:
                running = heads
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
