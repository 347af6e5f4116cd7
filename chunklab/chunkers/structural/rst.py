"""Structural chunking of reStructuredText: sections by their adornments, literal blocks and directives whole.

:func:`rst_blocks` cuts a document into the same :class:`chunklab.text.Block` list the
Markdown scanner gives: section titles (underlined, or over- and underlined, with a
punctuation character) become ``heading`` blocks whose level follows the order in which
each adornment style first appears, as docutils assigns them; a ``::`` paragraph's indented
literal block is a ``code`` block; an explicit markup block (``.. note::``, ``.. code-block::``,
comments, targets) with its indented body is one ``directive`` block; everything else is a
``para``. The blocks are then packed into sections exactly as Markdown's are, with the same
``headings`` path metadata.
"""

from __future__ import annotations

import re
from typing import Any

from chunklab._validate import renamed_keyword
from chunklab.chunk import Chunk
from chunklab.text import Block, LineIndex

__all__ = ["chunk_rst", "rst_blocks"]

#: the characters docutils accepts in section adornments
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1*[ \t]*")
_DIRECTIVE = re.compile(r"\.\.[ \t]+([\w:+.-]+)::")


@renamed_keyword("max_chars", "max_size")
def chunk_rst(
    source: str | bytes,
    max_size: int = 1500,
    max_level: int = 3,
    *,
    doc_id: str | None = None,
    path: str | None = None,
    unit: str = "chars",
) -> list[Chunk]:
    """Chunk reStructuredText by its sections, each chunk at most ``max_size`` (measured in ``unit``).

    Section titles of levels 1..``max_level`` open sections (``metadata["headings"]`` is
    the path of titles, as for Markdown); a section over budget is split between blocks,
    never inside a literal block or a directive unless that block alone is over budget.
    ``source[start:end] == text`` for every chunk. ``unit`` is any unit of :mod:`chunklab.units`.
    """
    from chunklab.chunkers.structural.markdown import chunk_sections

    return chunk_sections(source, "source", rst_blocks, "rst", max_size, max_level, doc_id, path, unit)


def rst_blocks(text: str, lines: LineIndex | None = None) -> list[Block]:
    """The blocks of a reStructuredText document in order; together they cover it exactly."""
    edges = (lines or LineIndex(text, universal=True)).edges
    n = len(edges) - 1
    rows = [text[edges[i] : edges[i + 1]].rstrip("\r\n") for i in range(n)]
    if rows and rows[0].startswith("\ufeff"):
        rows[0] = rows[0][1:]
    styles: list[tuple[str, bool]] = []
    out: list[Block] = []

    def add(kind: str, lo: int, hi: int, **extra: Any) -> None:
        out.append(Block(kind, lo, hi, edges[lo], edges[hi + 1], **extra))

    def level(char: str, overline: bool) -> int:
        if (char, overline) not in styles:
            styles.append((char, overline))
        return styles.index((char, overline)) + 1

    i = 0
    if n and text.startswith("\ufeff") and not rows[0].strip():
        add("para", 0, 0)  # a lone byte-order mark: not whitespace, keep it (as markdown_blocks does)
        i = 1
    while i < n:
        row = rows[i]
        after_break = (
            i == 0 or not rows[i - 1].strip() or (out and out[-1].kind == "heading" and out[-1].last == i - 1)
        )
        if not row.strip():
            j = i
            while j + 1 < n and not rows[j + 1].strip():
                j += 1
            add("blank", i, j)
            i = j + 1
            continue
        if after_break and i + 2 < n and _is_adornment(row) and _title_between(row, rows[i + 1], rows[i + 2]):
            add("heading", i, i + 2, level=level(row.strip()[0], True), title=rows[i + 1].strip())
            i += 3
            continue
        if after_break and i + 1 < n and not row[0].isspace() and _underlines(row, rows[i + 1]):
            add("heading", i, i + 1, level=level(rows[i + 1].strip()[0], False), title=row.strip())
            i += 2
            continue
        if row.startswith(".."):
            j = _indented_end(rows, i + 1, 0)
            m = _DIRECTIVE.match(row)
            add("directive", i, j, info=m.group(1) if m else "")
            i = j + 1
            continue
        j = i
        while j + 1 < n and rows[j + 1].strip():
            j += 1
        add("para", i, j)
        if rows[j].rstrip().endswith("::"):
            k = j + 1
            while k < n and not rows[k].strip():
                k += 1
            indent = _indent(rows[i])
            if k < n and _indent(rows[k]) > indent:
                if k - 1 >= j + 1:
                    add("blank", j + 1, k - 1)
                end = _indented_end(rows, k, indent)
                add("code", k, end, info="literal")
                j = end
        i = j + 1
    return out


def _is_adornment(row: str) -> bool:
    stripped = row.rstrip()
    return bool(stripped) and _ADORNMENT.fullmatch(stripped) is not None


def _underlines(title: str, under: str) -> bool:
    """``under`` adorns ``title``: one punctuation character repeated, long enough (as docutils reads it)."""
    t = title.strip()
    if not t or _is_adornment(title) or not _is_adornment(under) or under[0].isspace():
        return False
    length = len(under.rstrip())
    return length >= len(t) or length >= 4


def _title_between(over: str, title: str, under: str) -> bool:
    return (
        bool(title.strip())
        and not _is_adornment(title)
        and _is_adornment(under)
        and over.strip()[0] == under.strip()[0]
        and len(over.rstrip()) == len(under.rstrip())
    )


def _indent(row: str) -> int:
    return len(row) - len(row.lstrip())


def _indented_end(rows: list[str], start: int, indent: int) -> int:
    """The last row of the block indented deeper than ``indent`` from ``start`` (inner blank rows kept)."""
    last = start - 1
    k = start
    while k < len(rows):
        if rows[k].strip():
            if _indent(rows[k]) <= indent:
                break
            last = k
        k += 1
    return max(last, start - 1)
