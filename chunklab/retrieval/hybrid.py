"""Hybrid retrieval: fuse a dense ranking (the Chroma store) with a lexical one (BM25).

Dense search finds paraphrases and misses exact identifiers; BM25 does the opposite. Fusing
the two rankings keeps what each does well. Two fusions:

- ``"rrf"``, reciprocal-rank fusion (Cormack et al., 2009): a chunk scores
  ``sum(1 / (rrf_k + rank))`` over the rankings it appears in (ranks from 1). Only ranks
  matter, so BM25's unbounded scores and cosine similarities never need reconciling.
- ``"weighted"``: each ranking's scores are min-max scaled to [0, 1] over its candidates and
  combined as ``w_dense * dense + w_lexical * lexical`` (a chunk missing from one ranking
  gets 0 there).

Both retrievers are asked for ``depth`` candidates with the same ``where`` filter; the
fused list is cut to ``k``. Each fusion works over ids (``*_ids``: chunk ids, row positions,
anything hashable); the chunk versions match chunks by ``chunk.id`` through them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from chunklab._validate import check_non_negative_int, check_positive_int
from chunklab.chunk import Chunk
from chunklab.protocols import Retriever
from chunklab.retrieval.filters import BatchRetriever, check_queries

__all__ = [
    "FUSIONS",
    "HybridRetriever",
    "reciprocal_rank_fusion",
    "reciprocal_rank_fusion_ids",
    "weighted_fusion",
    "weighted_fusion_ids",
]

FUSIONS = ("rrf", "weighted")
Ranking = Sequence[tuple[Chunk, float]]
Key = TypeVar("Key", bound=Hashable)


def reciprocal_rank_fusion_ids(
    rankings: Iterable[Iterable[Key]], k: int | None = None, rrf_k: int = 60
) -> list[tuple[Key, float]]:
    """Fuse ranked lists of ids by reciprocal rank: ``score(x) = sum over rankings of 1 / (rrf_k + rank(x))``.

    Ids are any hashable values (chunk ids, row positions); an id listed twice in one ranking
    counts twice. Ties keep the order of first appearance (the first ranking's order first).
    Returns the best ``k`` (all when None) as ``(id, fused score)``.
    """
    check_non_negative_int(rrf_k, "rrf_k")
    scores: dict[Key, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (rrf_k + rank)
    return _best(scores, k)


def reciprocal_rank_fusion(
    rankings: Iterable[Ranking], k: int | None = None, rrf_k: int = 60
) -> list[tuple[Chunk, float]]:
    """Reciprocal-rank fusion: a chunk scores the sum of ``1 / (rrf_k + rank)``.

    Chunks are matched by ``chunk.id`` (:func:`reciprocal_rank_fusion_ids` over those
    ids); ties keep the order of first appearance (the first ranking's order first).
    Returns the best ``k`` (all when None) as ``(chunk, fused score)``.
    """
    rankings = [list(r) for r in rankings]
    ids = [[c.id for c, _ in r] for r in rankings]
    fused = reciprocal_rank_fusion_ids(ids, k=k, rrf_k=rrf_k)
    return _chunks_of(fused, rankings)


def weighted_fusion_ids(
    rankings: Iterable[Iterable[tuple[Key, float]]], weights: Sequence[float], k: int | None = None
) -> list[tuple[Key, float]]:
    """Fuse ``(id, score)`` rankings by their min-max scaled scores, ``sum(weight_i * scaled_i)``.

    An id missing from a ranking counts 0 there; a ranking whose candidates all score the same
    scales them to 1. Returns the best ``k`` (all when None) as ``(id, fused score)``.
    """
    rankings = [list(r) for r in rankings]
    weights = [float(w) for w in weights]
    if len(weights) != len(rankings):
        raise ValueError(f"weights must give one number per ranking ({len(rankings)}), got {len(weights)}")
    if any(w < 0 for w in weights) or not any(w > 0 for w in weights):
        raise ValueError(f"weights must be non-negative with at least one positive, got {weights}")
    scores: dict[Key, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        values = [s for _, s in ranking]
        lo, hi = min(values), max(values)
        for key, score in ranking:
            scaled = (score - lo) / (hi - lo) if hi > lo else 1.0
            scores[key] = scores.get(key, 0.0) + weight * scaled
    return _best(scores, k)


def weighted_fusion(
    rankings: Iterable[Ranking], weights: Sequence[float], k: int | None = None
) -> list[tuple[Chunk, float]]:
    """Fuse rankings by their min-max scaled scores, ``sum(weight_i * scaled_i)``; missing counts 0.

    A ranking whose candidates all score the same scales them to 1. Returns the best ``k``
    (all when None) as ``(chunk, fused score)`` (:func:`weighted_fusion_ids` over chunk ids).
    """
    rankings = [list(r) for r in rankings]
    fused = weighted_fusion_ids([[(c.id, s) for c, s in r] for r in rankings], weights, k=k)
    return _chunks_of(fused, rankings)


def _best(scores: dict[Key, float], k: int | None) -> list[tuple[Key, float]]:
    order = sorted(scores, key=lambda key: -scores[key])  # stable: first appearance breaks ties
    if k is not None:
        order = order[:k]
    return [(key, scores[key]) for key in order]


def _chunks_of(
    fused: list[tuple[str, float]],
    rankings: Sequence[Ranking],
) -> list[tuple[Chunk, float]]:
    """Fused chunk ids back to chunks (the first chunk seen with each id)."""
    chunks: dict[str, Chunk] = {}
    for ranking in rankings:
        for chunk, _score in ranking:
            chunks.setdefault(chunk.id, chunk)
    return [(chunks[cid], score) for cid, score in fused]


class HybridRetriever(BatchRetriever):
    """Dense and lexical retrieval fused: ``search(query, k=5, where=None)`` gives ``(Chunk, score)``.

    ``dense`` is a :class:`chunklab.retrieval.chroma.store.ChunkStore` (or anything with ``search_many``),
    ``lexical`` a :class:`chunklab.retrieval.lexical.BM25Index`. ``fusion`` is ``"rrf"`` (``rrf_k``,
    default 60) or ``"weighted"`` (``weights`` for dense and lexical, default 0.5 each).
    ``depth`` candidates are taken from each side (default 50, at least ``k``).
    """

    def __init__(
        self,
        dense: Retriever,
        lexical: Retriever,
        fusion: str = "rrf",
        *,
        rrf_k: int = 60,
        weights: tuple[float, float] = (0.5, 0.5),
        depth: int = 50,
    ) -> None:
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}; got {fusion!r}")
        check_positive_int(depth, "depth")
        for name, side in (("dense", dense), ("lexical", lexical)):
            if not callable(getattr(side, "search_many", None)):
                raise ValueError(
                    f"{name} must have a search_many(queries, k, where) method, got {type(side).__name__}"
                )
        if fusion == "weighted":
            weighted_fusion([[], []], weights)  # validates the weights once
        check_non_negative_int(rrf_k, "rrf_k")
        self.dense = dense
        self.lexical = lexical
        self.fusion = fusion
        self.rrf_k = rrf_k
        self.weights = (float(weights[0]), float(weights[1]))
        self.depth = depth

    def __repr__(self) -> str:
        return (
            f"HybridRetriever(fusion={self.fusion!r}, depth={self.depth}, "
            f"dense={self.dense!r}, lexical={self.lexical!r})"
        )

    def search_many(
        self, queries: Sequence[str], k: int = 5, where: Mapping[str, Any] | None = None
    ) -> list[list[tuple[Chunk, float]]]:
        """The ``k`` best chunks for each query by fused rank, with the fused score.

        The dense side embeds the queries in one batch; :meth:`search` asks one query.
        """
        check_positive_int(k, "k")
        queries = check_queries(queries)
        if not queries:
            return []
        depth = max(self.depth, k)
        dense = self.dense.search_many(queries, k=depth, where=where)
        lexical = self.lexical.search_many(queries, k=depth, where=where)
        return [self.fuse(d, lx, k) for d, lx in zip(dense, lexical, strict=True)]

    def fuse(
        self,
        dense: Ranking,
        lexical: Ranking,
        k: int,
    ) -> list[tuple[Chunk, float]]:
        """Fuse one query's dense and lexical rankings with this retriever's fusion."""
        if self.fusion == "rrf":
            return reciprocal_rank_fusion([dense, lexical], k=k, rrf_k=self.rrf_k)
        return weighted_fusion([dense, lexical], self.weights, k=k)
