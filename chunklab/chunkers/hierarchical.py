"""Hierarchical chunking and auto-merging retrieval (small chunks to search, big ones to read).

:func:`chunk_hierarchical` builds levels of nested chunks (by default 2048, 512 and 128
tokens), each level cut by :func:`chunklab.chunkers.recursive.chunk_recursive` inside its parent's
span; :func:`chunk_markdown_hierarchy` uses Markdown sections as parents and their
paragraphs as children. Every chunk carries ``level`` (0 = largest), ``parent_id`` (None
for roots) and, for parents, ``child_ids``.

Retrieval searches the leaves only. :func:`auto_merge` then replaces the retrieved children
of a parent by the parent itself when **more than** ``ratio`` of its children were
retrieved, repeating upward, as LlamaIndex's AutoMergingRetriever does;
:func:`retrieve_parents` simply swaps each leaf for its parent ("small to big").
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from chunklab._validate import check_doc_id, check_positive_int, check_text, renamed_keyword
from chunklab.chunk import Chunk, is_leaf
from chunklab.chunkers.recursive import DEFAULT_SEPARATORS, chunk_recursive, recursive_spans
from chunklab.protocols import StoreLike
from chunklab.text import Block, heading_path_at, markdown_blocks, trim_span
from chunklab.units import UnitIndex, check_unit, over_budget, unit_params

__all__ = [
    "HierarchicalRetriever",
    "auto_merge",
    "check_levels",
    "chunk_hierarchical",
    "chunk_markdown_hierarchy",
    "leaves",
    "retrieve_parents",
]

Hit = tuple[Chunk, float]
_LEVELS = [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS]


def chunk_hierarchical(
    text: str,
    levels: Sequence[int] = (2048, 512, 128),
    unit: str = "tokens",
    doc_id: str = "doc",
) -> list[Chunk]:
    """Nested chunks: level 0 cut at ``levels[0]`` units, each level inside its parent.

    Returned level by level (all roots first, then their children in order, ...). A
    parent that fits in one child still gets that child, so every leaf is at the deepest
    level.
    """
    text = check_text(text)
    doc_id = check_doc_id(doc_id)
    check_unit(unit)
    sizes = check_levels(levels)
    params = {"levels": sizes, "unit": unit}
    tiers: list[list[Chunk]] = []
    parents: list[Chunk | None] = [None]
    for depth, size in enumerate(sizes):
        current: list[Chunk] = []
        for pi, parent in enumerate(parents):
            base = 0 if parent is None else parent.start
            piece = text if parent is None else parent.text
            kids: list[Chunk] = []
            for c in chunk_recursive(piece, size, unit=unit):
                s, e = base + c.start, base + c.end
                meta: dict[str, object] = {
                    "strategy": "hierarchical",
                    "params": params,
                    "level": depth,
                    "parent_id": parent.id if parent is not None else None,
                    "index": len(current) + len(kids),
                }
                if c.metadata.get("oversize"):
                    meta["oversize"] = True
                    meta["oversize_reason"] = c.metadata.get("oversize_reason")
                kids.append(Chunk(text[s:e], s, e, doc_id, meta))
            if parent is not None:
                tiers[-1][pi] = _with_children(parent, kids)
            current.extend(kids)
        tiers.append(current)
        parents = list(current)
    return [c for tier in tiers for c in tier]


def check_levels(levels: Sequence[int]) -> list[int]:
    """``levels`` as a list of positive, strictly decreasing sizes, else a ValueError."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) or not levels:
        raise ValueError(f"levels must be a non-empty list of sizes, largest first; got {levels!r}")
    sizes = [check_positive_int(s, "levels[i]") for s in levels]
    if any(b >= a for a, b in zip(sizes, sizes[1:], strict=False)):
        raise ValueError(f"levels must be strictly decreasing (largest first), got {list(levels)}")
    return sizes


@renamed_keyword("max_chars", "max_size")
def chunk_markdown_hierarchy(
    md: str,
    max_size: int = 1000,
    doc_id: str = "doc",
    title: str | None = None,
    *,
    unit: str = "chars",
) -> list[Chunk]:
    """Markdown sections (level 0) as parents, their paragraphs (level 1) as children.

    A section runs from a heading to the next heading (text before the first heading is
    a section too); children are blank-line separated blocks, a fenced code block kept
    whole, a heading joined to the block after it; a block over ``max_size`` is cut by
    the recursive separators (:func:`chunklab.chunkers.recursive.recursive_spans`). Both
    levels carry ``headings`` (the section path) and, when given, ``title``. Headings
    and blocks come from :func:`chunklab.text.markdown_blocks`. ``max_size`` counts
    characters, or the units of ``unit`` (any of :mod:`chunklab.units`).
    """
    md = check_text(md, "md")
    max_size = check_positive_int(max_size, "max_size")
    doc_id = check_doc_id(doc_id)
    params = {
        "max_chars": max_size,
        "format": "markdown",
        **unit_params(check_unit(unit)),
    }
    index = UnitIndex(md, unit)
    blocks = markdown_blocks(md)
    heads = [(b.start, b.level, b.title) for b in blocks if b.kind == "heading"]
    bounds = sorted({0, *(h[0] for h in heads), len(md)})
    starts = [blk.start for blk in blocks]
    out_parents: list[Chunk] = []
    out_children: list[Chunk] = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        s, e = trim_span(md, a, b)
        if s >= e:
            continue
        path = heading_path_at(heads, s)
        base = {"strategy": "hierarchical", "params": params, "headings": path}
        if title:
            base["title"] = title
        top = {**base, "level": 0, "parent_id": None, "index": len(out_parents)}
        parent = Chunk(md[s:e], s, e, doc_id, top)
        kids: list[Chunk] = []
        first, stop = bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)
        section_blocks = blocks[first:stop]
        for ps, pe in _paragraphs(md, section_blocks):
            spans = (
                [(ps, pe)]
                if index.count(ps, pe) <= max_size
                else [
                    (ps + a, ps + b)
                    for a, b, _lv, _sh in recursive_spans(
                        md[ps:pe], max_size, 0, unit, _LEVELS, index.slice(ps, pe)
                    )
                ]
            )
            for cs, ce in spans:
                at = len(out_children) + len(kids)
                meta = {**base, "level": 1, "parent_id": parent.id, "index": at}
                # only a piece that re-tokenizes longer alone
                if over_budget(md[cs:ce], max_size, unit):
                    meta["oversize"] = True
                kids.append(Chunk(md[cs:ce], cs, ce, doc_id, meta))
        out_parents.append(_with_children(parent, kids))
        out_children.extend(kids)
    return out_parents + out_children


def _with_children(parent: Chunk, kids: list[Chunk]) -> Chunk:
    """``parent`` rebuilt with ``child_ids`` (its id does not depend on them)."""
    return dataclasses.replace(parent, metadata={**parent.metadata, "child_ids": [k.id for k in kids]})


def _paragraphs(text: str, blocks: list[Block]) -> list[tuple[int, int]]:
    """The children of one section: runs of its blocks with no blank line between them, trimmed.

    A fence is one block, blank lines and all; a run that is a lone heading joins the next.
    """
    runs: list[tuple[int, int, bool]] = []  # start, end, is a lone heading
    cur: list[Block] = []
    for block in [*blocks, None]:
        if block is not None and block.kind != "blank":
            cur.append(block)
            continue
        if cur:
            s, e = trim_span(text, cur[0].start, cur[-1].end)
            if s < e:
                runs.append((s, e, len(cur) == 1 and cur[0].kind == "heading"))
        cur = []
    merged: list[tuple[int, int]] = []
    pending: int | None = None
    for i, (s, e, lone_heading) in enumerate(runs):
        if pending is not None:
            s, pending = pending, None
        if lone_heading and i + 1 < len(runs):
            pending = s
        else:
            merged.append((s, e))
    return merged


def leaves(chunks: Iterable[Chunk]) -> list[Chunk]:
    """The chunks that have no children (the ones to embed and search)."""
    return [c for c in chunks if is_leaf(c)]


def auto_merge(
    results: Sequence[Hit],
    chunks_by_id: Mapping[str, Chunk],
    ratio: float = 0.5,
) -> list[Hit]:
    """Replace retrieved children by their parent when over ``ratio`` of them came back.

    ``results`` are ``(chunk, score)`` pairs from a leaf search; ``chunks_by_id`` finds
    a parent by id (a dict of all chunks, or a store lookup). The parent's score is the
    mean of its retrieved children's scores (as in LlamaIndex). Merging repeats upward
    until nothing changes; a chunk whose ancestor is also returned is dropped. Sorted by
    score.
    """
    ratio = _check_ratio(ratio)
    current: dict[str, Hit] = {}
    for item in results:
        chunk, score = _check_hit(item)
        if chunk.id not in current or current[chunk.id][1] < score:
            current[chunk.id] = (chunk, float(score))
    counts = _ChildCounter(chunks_by_id)
    changed = True
    while changed:
        changed = False
        groups: dict[str, list[str]] = defaultdict(list)
        for cid, (c, _s) in current.items():
            pid = c.parent_id
            if pid:
                groups[str(pid)].append(cid)
        for pid, kids in groups.items():
            parent = chunks_by_id.get(pid)
            if parent is None:
                continue
            total = counts.children(parent)
            if total and len(kids) / total > ratio:
                scores = [current.pop(k)[1] for k in kids]
                mean = sum(scores) / len(scores)
                if pid in current:
                    mean = max(mean, current[pid][1])
                current[pid] = (parent, mean)
                changed = True
    kept = []
    for cid, hit in current.items():
        if not _has_ancestor_in(hit[0], current, chunks_by_id, skip=cid):
            kept.append(hit)
    kept.sort(key=lambda h: (-h[1], h[0].doc_id, h[0].start))
    return kept


def retrieve_parents(
    results: Sequence[Hit],
    chunks_by_id: Mapping[str, Chunk],
) -> list[Hit]:
    """Swap each retrieved leaf for its parent (best child's score; orphans stay)."""
    best: dict[str, Hit] = {}
    for item in results:
        chunk, score = _check_hit(item)
        pid = chunk.parent_id
        parent = chunks_by_id.get(str(pid)) if pid else None
        target = parent if parent is not None else chunk
        if target.id not in best or best[target.id][1] < score:
            best[target.id] = (target, float(score))
    return sorted(best.values(), key=lambda h: (-h[1], h[0].doc_id, h[0].start))


class HierarchicalRetriever:
    """Leaf search in a :class:`chunklab.retrieval.chroma.store.ChunkStore`, then auto-merging into parents.

    The store must hold the parents too (``store.add(chunks)`` with the full hierarchy puts
    them in its parent collection).
    """

    def __init__(self, store: StoreLike, ratio: float = 0.5) -> None:
        self.store = store
        self.ratio = _check_ratio(ratio)
        self.lookup = StoreLookup(store)

    def retrieve(self, query: str, k: int = 6, where: Mapping[str, object] | None = None) -> list[Hit]:
        """The ``k`` best leaves for ``query``, auto-merged into parents where enough siblings came back."""
        return auto_merge(self.store.search(query, k=k, where=where), self.lookup, self.ratio)

    def retrieve_leaves(self, query: str, k: int = 6, where: Mapping[str, object] | None = None) -> list[Hit]:
        """The plain leaf search, for comparison."""
        return self.store.search(query, k=k, where=where)

    def retrieve_parents(
        self, query: str, k: int = 6, where: Mapping[str, object] | None = None
    ) -> list[Hit]:
        """The ``k`` best leaves for ``query``, each replaced by its parent."""
        return retrieve_parents(self.store.search(query, k=k, where=where), self.lookup)


class StoreLookup(Mapping[str, Chunk]):
    """A read-only ``id -> Chunk`` view of a store, fetched on demand and remembered."""

    def __init__(self, store: StoreLike) -> None:
        self.store = store
        self._seen: dict[str, Chunk] = {}

    def __getitem__(self, key: str) -> Chunk:
        if key not in self._seen:
            got = self.store.get([key])
            if not got:
                raise KeyError(key)
            self._seen[key] = got[0]
        return self._seen[key]

    def __iter__(self):
        return iter(self._seen)

    def __len__(self) -> int:
        return len(self._seen)


class _ChildCounter:
    """Number of children of a parent: its ``child_ids``, else counted among the known chunks."""

    def __init__(self, chunks_by_id: Mapping[str, Chunk]) -> None:
        self.chunks_by_id = chunks_by_id
        self._counted: dict[str, int] | None = None

    def children(self, parent: Chunk) -> int:
        ids = parent.metadata.get("child_ids")
        if ids:
            return len(ids)
        if not isinstance(self.chunks_by_id, dict):
            return 0
        if self._counted is None:
            self._counted = defaultdict(int)
            for c in self.chunks_by_id.values():
                pid = c.parent_id
                if pid:
                    self._counted[str(pid)] += 1
        return self._counted.get(parent.id, 0)


def _check_ratio(ratio: object) -> float:
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 <= ratio < 1:
        raise ValueError(f"ratio must be a number in [0, 1), got {ratio!r}")
    return float(ratio)


def _check_hit(item: object) -> Hit:
    if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Chunk)):
        raise ValueError(f"results must be (Chunk, score) pairs, got {item!r:.80}")
    return item[0], float(item[1])


def _has_ancestor_in(
    chunk: Chunk, current: Mapping[str, Hit], chunks_by_id: Mapping[str, Chunk], skip: str
) -> bool:
    seen = {skip}
    pid = chunk.parent_id
    while pid and str(pid) not in seen:
        pid = str(pid)
        if pid in current:
            return True
        seen.add(pid)
        parent = chunks_by_id.get(pid)
        pid = parent.parent_id if parent is not None else None
    return False
