"""Chunk laid-out documents (PDF, Word, notebooks) by their elements, not by character counts.

:func:`chunk_elements` reads the element map a loader gave the document
(:mod:`chunklab.documents.layout`): headings open sections (their path is
``metadata["headings"]``) and always join the content they head; a list stays with its
lead-in paragraph (one that ends with ":"); a table stays whole when it fits, else it is
split between rows and every later piece carries the header row in
``metadata["table_header"]`` (so the embedded text repeats it, while ``text`` stays the exact
slice); a caption stays with its table. Consecutive pieces of one section are packed up to
``max_size`` (in any ``unit``). Notebooks: Markdown cells by their headings, code cells by the
Python chunker, each chunk citing its cell. Every chunk's ``text`` is
``document.text[start:end]`` and carries ``page``/``page_end`` (PDF), ``paragraph`` and, where
the file records them, ``page``/``page_end`` (Word) or ``cell`` (notebooks).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chunklab._validate import renamed_keyword
from chunklab.chunk import Chunk
from chunklab.chunkers.recursive import chunk_recursive
from chunklab.chunkers.structural._common import check_max_size, resolve_doc_id
from chunklab.documents.layout import Element, locate
from chunklab.protocols import DocumentLike
from chunklab.units import UnitIndex, check_unit, unit_params

__all__ = ["chunk_elements"]


@dataclass
class _Unit:
    """Elements that go into one chunk together (a heading with what it heads, a list, a table)."""

    elements: list[Element]
    kind: str
    headings: list[str]
    opens_section: bool = False
    types: set[str] = field(default_factory=set)

    @property
    def start(self) -> int:
        return self.elements[0].start

    @property
    def end(self) -> int:
        return self.elements[-1].end


@renamed_keyword("max_chars", "max_size")
def chunk_elements(
    document: DocumentLike,
    max_size: int = 1500,
    *,
    unit: str = "chars",
    doc_id: str | None = None,
    path: str | None = None,
) -> list[Chunk]:
    """Chunks of a laid-out ``document`` (``text`` plus ``elements``) by its elements, within ``max_size``.

    A document without elements (a plain string given as "pdf") is split by the recursive
    chunker and says so in ``metadata["fallback_reason"]``.
    """
    max_size = check_max_size(max_size)
    check_unit(unit)
    text: str = document.text
    if not isinstance(text, str):
        raise ValueError(f"document.text must be a str, got {type(text).__name__}")
    elements: Sequence[Element] = tuple(getattr(document, "elements", ()) or ())
    kind = str(getattr(document, "format", "pdf"))
    doc_id = resolve_doc_id(doc_id if doc_id is not None else getattr(document, "doc_id", None), path)
    params: dict[str, object] = {"format": kind, "max_chars": max_size, **unit_params(unit)}
    if not text.strip():
        return []
    base = {"strategy": "structural", "params": params, "format": kind, "path": path}
    if not elements:
        pieces = chunk_recursive(text, max_size, 0, unit, doc_id=doc_id, strategy="structural")
        extra = {**base, "kind": "fallback", "fallback": True, "fallback_reason": "no element map"}
        return [dataclasses.replace(c, metadata={**c.metadata, **extra}) for c in pieces]
    measure = UnitIndex(text, unit)
    if kind == "ipynb":
        from chunklab.chunkers.structural._cells import chunk_cells

        return chunk_cells(text, elements, max_size, unit, doc_id, base)
    out: list[Chunk] = []
    for group in _pack(_units(text, elements), measure, max_size):
        out.extend(_emit(text, group, elements, measure, max_size, unit, doc_id, base))
    return out


# --------------------------------------------------------------------------- units


def _units(text: str, elements: Sequence[Element]) -> list[_Unit]:
    """Group the elements: headings with what follows, lists with their lead-in, tables with captions."""
    units: list[_Unit] = []
    path: list[tuple[int, str]] = []
    heads: list[Element] = []
    i, n = 0, len(elements)
    while i < n:
        e = elements[i]
        if e.type == "heading":
            level = e.level or 1
            path = [p for p in path if p[0] < level] + [(level, " ".join(text[e.start : e.end].split()))]
            heads.append(e)
            i += 1
            continue
        j = i + 1
        kind = "text"
        if e.type == "table_row" or (
            e.type == "caption" and i + 1 < n and elements[i + 1].type == "table_row"
        ):
            table = elements[i + 1].table if e.type == "caption" else e.table
            while j < n and elements[j].type == "table_row" and elements[j].table == table:
                j += 1
            if j < n and elements[j].type == "caption" and elements[i].type != "caption":
                j += 1  # a caption below its table
            kind = "table"
        elif e.type == "list_item":
            while j < n and elements[j].type == "list_item":
                j += 1
            kind = "list"
        group = list(elements[i:j])
        prev = units[-1] if units else None
        opens = bool(heads)
        if kind == "list" and not heads and prev is not None and prev.kind == "text":
            last = prev.elements[-1]
            if text[last.start : last.end].rstrip().endswith(":"):  # the list's lead-in joins it
                units.pop()
                group, opens = [*prev.elements, *group], prev.opens_section
        units.append(_Unit([*heads, *group], kind, [t for _, t in path], opens))
        heads = []
        i = j
    if heads:  # headings with nothing under them join the content before them
        if units:
            units[-1].elements.extend(heads)
        else:
            units.append(_Unit(list(heads), "text", [t for _, t in path], True))
    for u in units:
        u.types = {x.type for x in u.elements}
    return units


def _pack(units: list[_Unit], measure: UnitIndex, budget: int) -> list[list[_Unit]]:
    """Consecutive units of one section packed while they fit; a heading starts a new chunk."""
    groups: list[list[_Unit]] = []
    for u in units:
        cur = groups[-1] if groups else None
        if (
            cur is not None
            and not u.opens_section
            and cur[0].headings == u.headings
            and measure.count(cur[0].start, u.end) <= budget
        ):
            cur.append(u)
        else:
            groups.append([u])
    return groups


# --------------------------------------------------------------------------- chunks


def _emit(
    text: str,
    group: list[_Unit],
    elements: Sequence[Element],
    measure: UnitIndex,
    budget: int,
    unit: str,
    doc_id: str,
    base: Mapping[str, object],
) -> list[Chunk]:
    start, end = group[0].start, group[-1].end
    types = sorted(set().union(*(u.types for u in group)))
    kind = "table" if "table_row" in types else "list" if "list_item" in types else "section"
    meta = {**base, "kind": kind, "headings": group[0].headings, "elements": types}
    if measure.count(start, end) <= budget:
        return [Chunk(text[start:end], start, end, doc_id, {**meta, **locate(elements, start, end)})]
    (u,) = group  # packing only joins units that fit, so an oversized group is one unit
    if u.kind == "table":
        return _split_table(text, u, elements, measure, budget, doc_id, meta)
    pieces = chunk_recursive(text[start:end], budget, 0, unit, doc_id=doc_id, strategy="structural")
    out = []
    for c in pieces:
        s, e = c.start + start, c.end + start
        extra = {k: v for k, v in c.metadata.items() if k in ("oversize", "oversize_reason")}
        out.append(Chunk(text[s:e], s, e, doc_id, {**meta, **extra, "split": True, **locate(elements, s, e)}))
    return out


def _split_table(
    text: str,
    u: _Unit,
    elements: Sequence[Element],
    measure: UnitIndex,
    budget: int,
    doc_id: str,
    meta: Mapping[str, object],
) -> list[Chunk]:
    """A table over budget, cut between rows; later pieces repeat the header row in the embedded text."""
    header = next((e for e in u.elements if e.type == "table_row" and e.header), None)
    header_text = text[header.start : header.end] if header is not None else None
    spans: list[list[Element]] = [[]]
    for el in u.elements:
        cur = spans[-1]
        has_row = any(x.type == "table_row" for x in cur)
        if has_row and el.type == "table_row" and measure.count(cur[0].start, el.end) > budget:
            spans.append([el])
        else:
            cur.append(el)
    out = []
    for k, span in enumerate(spans):
        s, e = span[0].start, span[-1].end
        extra: dict[str, object] = {"split": True, "table_part": k + 1, "table_parts": len(spans)}
        if header_text and header not in span:
            extra["table_header"] = header_text
        if measure.count(s, e) > budget:
            why = "one table row (with its caption or heading) longer than the budget"
            extra.update(oversize=True, oversize_reason=why)
        out.append(Chunk(text[s:e], s, e, doc_id, {**meta, **extra, **locate(elements, s, e)}))
    return out
