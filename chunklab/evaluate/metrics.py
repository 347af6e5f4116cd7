"""Retrieval metrics, defined exactly: chunk-level (by text or by offsets) and character-level.

Two families:

* **Chunk-level** metrics ask, for each of the top ``k`` retrieved chunks, "is this chunk a
  hit?" and then count hits: :func:`recall_at_k`, :func:`precision_at_k`, :func:`mrr`,
  :func:`ndcg_at_k`. A hit is decided either by text (the course's definition, for a quick
  check with strings) or by offsets (:func:`span_hit`, what the benchmark runner uses,
  because chunk texts differ across strategies while offsets into the source do not).
* **Character-level** metrics measure how much of the answer's characters the retrieved
  spans cover, and how much of what was retrieved is answer: :func:`span_metrics`,
  :func:`precision_omega`, in one of two conventions said out loud (:data:`CONVENTIONS`):
  ``"union"`` counts a character retrieved twice once, ``"chroma"`` (Chroma's
  chunking_evaluation report) sums the retrieved lengths.

Spans are half-open ``(start, end)`` character offsets into a document, or
``(doc_id, start, end)`` when several documents are involved; 2-tuples all belong to one
unnamed document.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from chunklab._validate import check_choice, check_positive_int, is_int

__all__ = [
    "CONVENTIONS",
    "MIN_GOLD_OVERLAP",
    "check_convention",
    "contains_hit",
    "hits_by_containment",
    "hits_by_document",
    "hits_by_span",
    "hits_by_text",
    "mrr",
    "ndcg_at_k",
    "precision_at_k",
    "precision_omega",
    "rank_metrics",
    "recall_at_k",
    "span_hit",
    "span_metrics",
    "text_hit",
]

#: A retrieved span is relevant when it covers at least this share of a gold span.
MIN_GOLD_OVERLAP = 0.5
#: How span metrics count retrieved characters: as a set, or summed as Chroma's report does.
CONVENTIONS = ("union", "chroma")

Span = tuple[str, int, int]
T = TypeVar("T")
_SPACE = re.compile(r"\s+")


class HasSpan(Protocol):
    """Anything with character offsets (a :class:`~chunklab.chunk.Chunk`); ``doc_id`` is read when present."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


#: a span as callers give it: ``(start, end)``, ``(doc_id, start, end)``, or a :class:`HasSpan`
SpanLike = Sequence[str | int] | HasSpan


# --------------------------------------------------------------------------- hit tests


def text_hit(chunk_text: str, gold_text: str) -> bool:
    """The course's hit test: the gold text lies inside the chunk, or the chunk inside the gold.

    Both strings are compared after collapsing every run of whitespace to one space and
    stripping the ends (so a quote that wraps differently, or HTML visible text, still
    matches). A chunk that is empty after that is never a hit.
    """
    chunk = _norm(chunk_text)
    gold = _norm(gold_text)
    if not chunk or not gold:
        return False
    return gold in chunk or chunk in gold


def span_hit(chunk_span: SpanLike, gold_span: SpanLike, min_gold_overlap: float = MIN_GOLD_OVERLAP) -> bool:
    """Offset-based hit test: is the retrieved span relevant to the gold span?

    Both spans must be in the same document. The retrieved span ``[s, e)`` is relevant when
    **either** it overlaps the gold span ``[gs, ge)`` by at least ``min_gold_overlap`` (50%)
    of the gold span's length — which includes containing it — **or** it lies entirely
    inside the gold span (the offset version of the course's "chunk inside the gold").
    An empty retrieved span is never relevant.
    """
    cd, cs, ce = _span(chunk_span)
    gd, gs, ge = _span(gold_span)
    if cd != gd or ce <= cs or ge <= gs:
        return False
    overlap = min(ce, ge) - max(cs, gs)
    if overlap <= 0:
        return False
    return overlap >= min_gold_overlap * (ge - gs) or (gs <= cs and ce <= ge)


def contains_hit(chunk_span: SpanLike, gold_span: SpanLike) -> bool:
    """Full containment: the retrieved span holds the **whole** gold span (same doc).

    Stricter than :func:`span_hit`, which also counts a span covering half of the
    gold, or lying inside it: a chunk that ends in the middle of the answer's
    sentence is a :func:`span_hit` and not a ``contains_hit``. Every
    ``contains_hit`` is a ``span_hit``.
    """
    cd, cs, ce = _span(chunk_span)
    gd, gs, ge = _span(gold_span)
    return cd == gd and ge > gs and cs <= gs and ge <= ce


def hits_by_text(
    retrieved_texts: Sequence[str], gold_text: str | Sequence[str], k: int | None = None
) -> list[set[int]]:
    """For each of the top ``k`` retrieved texts, the gold quotes it hits, by index (:func:`text_hit`)."""
    golds = _gold_texts(gold_text)
    top = _top(retrieved_texts, k)
    return [{g for g, gold in enumerate(golds) if text_hit(t, gold)} for t in top]


def hits_by_span(
    retrieved_spans: Sequence[SpanLike],
    gold_spans: Sequence[SpanLike],
    k: int | None = None,
    min_gold_overlap: float = MIN_GOLD_OVERLAP,
) -> list[set[int]]:
    """For each of the top ``k`` retrieved spans, the indices of the gold spans it hits (:func:`span_hit`)."""
    golds = [_span(g) for g in _nonempty(gold_spans, "gold_spans")]
    top = _top(retrieved_spans, k)
    return [{g for g, gold in enumerate(golds) if span_hit(r, gold, min_gold_overlap)} for r in top]


def hits_by_containment(
    retrieved_spans: Sequence[SpanLike], gold_spans: Sequence[SpanLike], k: int | None = None
) -> list[set[int]]:
    """For each of the top ``k`` retrieved spans, the gold spans it holds whole (:func:`contains_hit`)."""
    golds = [_span(g) for g in _nonempty(gold_spans, "gold_spans")]
    top = _top(retrieved_spans, k)
    return [{g for g, gold in enumerate(golds) if contains_hit(r, gold)} for r in top]


def hits_by_document(
    retrieved_doc_ids: Sequence[str], relevant_docs: Sequence[str], k: int | None = None
) -> list[set[int]]:
    """Document-level hits (BEIR qrels): for each top-``k`` chunk, the index of its document if relevant.

    A chunk is a hit when it comes from a relevant document; each relevant document is one
    "gold", so :func:`rank_metrics` then gives recall over documents and an nDCG in which a
    second chunk of the same document earns nothing.
    """
    docs = list(_nonempty(relevant_docs, "relevant_docs"))
    index = {d: i for i, d in enumerate(docs)}
    return [{index[d]} if d in index else set() for d in _top(retrieved_doc_ids, k)]


# --------------------------------------------------------------------------- chunk-level metrics


def recall_at_k(
    retrieved_texts: Sequence[str],
    gold_text: str | Sequence[str],
    k: int,
) -> float:
    """Share of the gold quotes hit by at least one of the top ``k`` retrieved chunks.

    A chunk hits a quote when the quote lies inside the chunk or the chunk inside the
    quote (:func:`text_hit`, whitespace-normalized). With one gold string the result is
    0 or 1; with a list of ``G`` quotes it is (quotes hit) / ``G``. ``k`` larger than
    the number of retrieved chunks simply uses them all; empty retrieval gives 0.
    """
    hits = hits_by_text(retrieved_texts, gold_text, _check_k(k))
    return _recall(hits, len(_gold_texts(gold_text)))


def precision_at_k(
    retrieved_texts: Sequence[str],
    gold_text: str | Sequence[str],
    k: int,
) -> float:
    """Share of the top ``k`` retrieved chunks that hit at least one gold quote.

    The denominator is the number of chunks actually considered, ``min(k,
    len(retrieved))`` (a short result list is not padded with misses); empty retrieval
    gives 0.
    """
    hits = hits_by_text(retrieved_texts, gold_text, _check_k(k))
    return _precision(hits)


def mrr(
    retrieved_texts: Sequence[str],
    gold_text: str | Sequence[str],
    k: int | None = None,
) -> float:
    """Reciprocal rank of the first retrieved chunk (within the top ``k``) that hits a gold quote.

    ``1 / rank`` with ranks starting at 1, or 0 when no chunk hits. Averaged over
    questions this is the mean reciprocal rank.
    """
    hits = hits_by_text(retrieved_texts, gold_text, None if k is None else _check_k(k))
    return _reciprocal_rank(hits)


def ndcg_at_k(
    retrieved_texts: Sequence[str],
    gold_text: str | Sequence[str],
    k: int,
) -> float:
    """Normalized discounted cumulative gain with binary relevance, over the top ``k``.

    The chunk at rank ``i`` (from 1) gains 1 when it hits a gold quote that no
    higher-ranked chunk already hit (finding the same answer twice earns nothing), else
    0. ``DCG = sum(gain_i / log2(i + 1))``; the ideal ranking finds ``min(k, G)``
    distinct quotes in the first ranks, ``IDCG = sum(1 / log2(i + 1) for i in 1..min(k,
    G))``; ``nDCG = DCG / IDCG``. With one quote this is ``1 / log2(rank + 1)`` of the
    first hit.
    """
    k = _check_k(k)
    hits = hits_by_text(retrieved_texts, gold_text, k)
    return _ndcg(hits, len(_gold_texts(gold_text)), k)


def rank_metrics(hits: Sequence[set[int]], n_gold: int, k: int) -> dict[str, float]:
    """All chunk-level metrics from a per-rank hit list (as built by :func:`hits_by_span`).

    Returns ``hit`` (1 if any gold is found), ``recall``, ``precision``, ``mrr`` and
    ``ndcg``, with the definitions of the functions of the same names.
    """
    hits = list(hits)[: _check_k(k)]
    return {
        "hit": float(any(hits)),
        "recall": _recall(hits, n_gold),
        "precision": _precision(hits),
        "mrr": _reciprocal_rank(hits),
        "ndcg": _ndcg(hits, n_gold, k),
    }


def _recall(hits: Sequence[set[int]], n_gold: int) -> float:
    found: set[int] = set()
    for h in hits:
        found |= h
    return len(found) / n_gold


def _precision(hits: Sequence[set[int]]) -> float:
    if not hits:
        return 0.0
    return sum(1 for h in hits if h) / len(hits)


def _reciprocal_rank(hits: Sequence[set[int]]) -> float:
    for rank, h in enumerate(hits, start=1):
        if h:
            return 1.0 / rank
    return 0.0


def _ndcg(hits: Sequence[set[int]], n_gold: int, k: int) -> float:
    seen: set[int] = set()
    dcg = 0.0
    for rank, h in enumerate(hits, start=1):
        new = h - seen
        if new:
            dcg += 1.0 / math.log2(rank + 1)
            seen |= h
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, n_gold) + 1))
    return dcg / ideal if ideal else 0.0


# --------------------------------------------------------------------------- character-level metrics


def span_metrics(
    retrieved_spans: Sequence[SpanLike],
    gold_spans: Sequence[SpanLike],
    convention: str = "union",
) -> dict[str, float]:
    """Character-level recall, precision and IoU of retrieved spans against gold spans.

    Let ``U`` be the union of the retrieved spans (a character retrieved twice counts
    once), ``G`` the union of the gold spans, both as sets of (document, offset)
    characters, and ``L`` the **summed** length of the retrieved spans (a character
    retrieved twice counts twice, so ``L >= |U|``). Recall is the same in both
    conventions:

    * ``recall = |U ∩ G| / |G|`` — share of gold characters covered by some retrieved
      span.

    ``convention="union"`` (the default) treats the retrieved text as a set of
    characters:

    * ``precision = |U ∩ G| / |U|``; ``iou = |U ∩ G| / |U ∪ G|``.

    ``convention="chroma"`` is the convention of Chroma's chunking_evaluation report:
    the retrieved lengths are summed, so overlapping or repeated chunks are counted each
    time (repeated text costs context-window space), for precision and IoU alike:

    * ``precision = |U ∩ G| / L``; ``iou = |U ∩ G| / (L + |G| - |U ∩ G|)``.

    The two agree whenever the retrieved spans do not overlap. Precision and IoU are 0
    when nothing was retrieved. Gold spans must be non-empty; spans in other documents
    cover no gold characters.
    """
    convention = check_convention(convention)
    gold = _union([_span(g) for g in _nonempty(gold_spans, "gold_spans")])
    gold_len = _length(gold)
    if gold_len == 0:
        raise ValueError("gold_spans cover no characters (every gold span is empty)")
    spans = [_span(r) for r in retrieved_spans]
    union = _union(spans)
    inter = _length(_intersect(union, gold))
    retrieved_len = _length(union) if convention == "union" else _length(spans)
    return {
        "recall": inter / gold_len,
        "precision": inter / retrieved_len if retrieved_len else 0.0,
        "iou": inter / (retrieved_len + gold_len - inter),
    }


def precision_omega(
    chunk_spans: Sequence[SpanLike], gold_spans: Sequence[SpanLike], convention: str = "union"
) -> float:
    """Precision if retrieval were perfect: a property of the chunker alone.

    Take every chunk span that overlaps a gold span by at least one character (in the same
    document) — the chunks a perfect retriever would have to return to cover all the gold —
    and compute :func:`span_metrics` precision over them in the given ``convention``: gold
    characters covered divided by the union of those chunks (``"union"``) or by their
    summed length (``"chroma"``). 0 when no chunk touches the gold.
    """
    gold = [_span(g) for g in _nonempty(gold_spans, "gold_spans")]
    touching = [
        c
        for c in (_span(c) for c in chunk_spans)
        if any(c[0] == g[0] and min(c[2], g[2]) > max(c[1], g[1]) for g in gold)
    ]
    return span_metrics(touching, gold, convention)["precision"] if touching else 0.0


# --------------------------------------------------------------------------- helpers


def _norm(text: str) -> str:
    if not isinstance(text, str):
        raise ValueError(f"texts must be str, got {type(text).__name__}")
    return _SPACE.sub(" ", text).strip()


def _gold_texts(gold_text: str | Sequence[str]) -> list[str]:
    golds = [gold_text] if isinstance(gold_text, str) else list(_nonempty(gold_text, "gold_text"))
    for g in golds:
        if not isinstance(g, str):
            raise ValueError(
                f"gold_text must be a str or a list of str, got an item of type {type(g).__name__}"
            )
        if not _norm(g):
            raise ValueError("gold_text must not be empty or whitespace only")
    return golds


def _nonempty(items: Iterable[T], name: str) -> list[T]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise ValueError(f"{name} must be a list, got {type(items).__name__}")
    items = list(items)
    if not items:
        raise ValueError(f"{name} must not be empty: a question needs at least one gold answer")
    return items


def _check_k(k: object) -> int:
    return check_positive_int(k, "k")


def _top(items: Iterable[T], k: int | None) -> list[T]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise ValueError(f"retrieved results must be a list, got {type(items).__name__}")
    items = list(items)
    return items if k is None else items[:k]


def _span(span: object) -> Span:
    """Normalize ``(start, end)`` or ``(doc_id, start, end)`` (or an object with those attributes)."""
    if hasattr(span, "start") and hasattr(span, "end") and not isinstance(span, (tuple, list)):
        doc, s, e = getattr(span, "doc_id", ""), span.start, span.end
    elif isinstance(span, (tuple, list)) and len(span) == 2:
        doc, (s, e) = "", span
    elif isinstance(span, (tuple, list)) and len(span) == 3:
        doc, s, e = span
    else:
        raise ValueError(f"a span must be (start, end) or (doc_id, start, end), got {span!r}")
    if not is_int(s) or not is_int(e):
        raise ValueError(f"span offsets must be integers, got {span!r}")
    if s < 0 or e < s:
        raise ValueError(f"a span needs 0 <= start <= end, got {span!r}")
    return (str(doc), s, e)


def _union(spans: Iterable[Span]) -> list[Span]:
    out: list[Span] = []
    for d, s, e in sorted(sp for sp in spans if sp[2] > sp[1]):
        if out and out[-1][0] == d and s <= out[-1][2]:
            out[-1] = (d, out[-1][1], max(out[-1][2], e))
        else:
            out.append((d, s, e))
    return out


def _intersect(a: list[Span], b: list[Span]) -> list[Span]:
    """Intersection of two sorted, disjoint span lists."""
    out: list[Span] = []
    i = j = 0
    while i < len(a) and j < len(b):
        da, sa, ea = a[i]
        db, sb, eb = b[j]
        if da == db:
            lo, hi = max(sa, sb), min(ea, eb)
            if hi > lo:
                out.append((da, lo, hi))
            if ea <= eb:
                i += 1
            else:
                j += 1
        elif da < db:
            i += 1
        else:
            j += 1
    return out


def _length(spans: Iterable[Span]) -> int:
    return sum(e - s for _, s, e in spans)


def check_convention(convention: object) -> str:
    """``convention`` if it is one of :data:`CONVENTIONS` (``"union"`` or ``"chroma"``)."""
    return check_choice(convention, CONVENTIONS, "convention")
