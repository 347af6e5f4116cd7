"""Hybrid retrieval: reciprocal-rank and weighted fusion by hand and over ids, filters on both sides, the real
model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.chunk import Chunk
from chunklab.retrieval.chroma.store import ChunkStore
from chunklab.retrieval.hybrid import (
    HybridRetriever,
    reciprocal_rank_fusion,
    reciprocal_rank_fusion_ids,
    weighted_fusion,
    weighted_fusion_ids,
)
from chunklab.retrieval.lexical import BM25Index
from tests.support.retrieval import HashEncoder, corpus_chunks


def _c(name: str) -> Chunk:
    return Chunk(name, 0, len(name), name)


A, B, C, D = (_c(n) for n in "abcd")


def test_rrf_scores_are_sums_of_reciprocal_ranks():
    fused = reciprocal_rank_fusion([[(A, 0.9), (B, 0.8), (C, 0.1)], [(C, 12.0), (A, 3.0)]], rrf_k=60)
    expected = {"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61}
    assert [c.doc_id for c, _ in fused] == ["a", "c", "b"]
    assert {c.doc_id: s for c, s in fused} == pytest.approx(expected)
    assert reciprocal_rank_fusion([[(A, 1.0)], [(B, 1.0)]], k=1) == [(A, pytest.approx(1 / 61))]


_RANKING = st.lists(st.sampled_from([A, B, C, D]), unique_by=lambda c: c.id, max_size=4)


@given(_RANKING, _RANKING)
def test_rrf_keeps_the_union_best_first_and_rewards_agreement(first, second):
    fused = reciprocal_rank_fusion([[(c, 0.0) for c in first], [(c, 0.0) for c in second]])
    assert {c.id for c, _ in fused} == {c.id for c in first + second}
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)
    if first and second and first[0].id == second[0].id:
        assert fused[0][0] == first[0]  # top of both rankings is top of the fusion


def test_weighted_fusion_scales_each_ranking_to_unit_range():
    fused = weighted_fusion([[(A, 0.9), (B, 0.5), (C, 0.1)], [(C, 20.0), (D, 10.0)]], weights=(0.7, 0.3))
    got = {c.doc_id: s for c, s in fused}
    assert got == pytest.approx({"a": 0.7, "b": 0.7 * 0.5, "c": 0.0 + 0.3, "d": 0.0})
    assert [c.doc_id for c, _ in fused][:2] == ["a", "b"]


def test_weighted_fusion_rejects_bad_weights():
    with pytest.raises(ValueError, match="one number per ranking"):
        weighted_fusion([[(A, 1.0)]], weights=(0.5, 0.5))
    with pytest.raises(ValueError, match="non-negative"):
        weighted_fusion([[(A, 1.0)], []], weights=(0.0, 0.0))


def test_rrf_over_ids_fuses_row_positions_by_hand():
    fused = reciprocal_rank_fusion_ids([[7, 3, 9], [9, 7]], rrf_k=0)
    assert fused == [(7, pytest.approx(1 + 1 / 2)), (9, pytest.approx(1 / 3 + 1)), (3, pytest.approx(1 / 2))]
    assert reciprocal_rank_fusion_ids([[1], [2]], k=1) == [(1, pytest.approx(1 / 61))]  # tie: first seen
    with pytest.raises(ValueError, match="rrf_k"):
        reciprocal_rank_fusion_ids([[1]], rrf_k=-1)


_POSITIONS = st.lists(st.integers(0, 12), unique=True, max_size=8)


@given(st.lists(_POSITIONS, max_size=3), st.one_of(st.none(), st.integers(1, 10)), st.integers(0, 80))
def test_rrf_over_ids_equals_rrf_over_the_chunks_at_those_ids(rankings, k, rrf_k):
    chunks = {i: Chunk(f"chunk {i}", i, i + 8, f"doc{i % 4}") for r in rankings for i in r}
    by_chunk = reciprocal_rank_fusion([[(chunks[i], 0.0) for i in r] for r in rankings], k=k, rrf_k=rrf_k)
    by_id = reciprocal_rank_fusion_ids(rankings, k=k, rrf_k=rrf_k)
    assert [(chunks[i], s) for i, s in by_id] == by_chunk


@given(
    st.lists(st.lists(st.tuples(st.integers(0, 12), st.floats(-5, 5)), max_size=6), min_size=2, max_size=2),
    st.tuples(st.floats(0, 1), st.floats(0.1, 1)),
)
def test_weighted_fusion_over_ids_equals_weighted_fusion_over_chunks(rankings, weights):
    chunks = {i: Chunk(f"chunk {i}", i, i + 8, "doc") for r in rankings for i, _ in r}
    by_chunk = weighted_fusion([[(chunks[i], s) for i, s in r] for r in rankings], weights, k=5)
    by_id = weighted_fusion_ids(rankings, weights, k=5)
    assert [(chunks[i], s) for i, s in by_id] == by_chunk


@pytest.fixture()
def hashed_store():
    store = ChunkStore(in_memory=True, encoder=HashEncoder())
    store.add(corpus_chunks(), show_progress=False)
    yield store
    store.close()


@pytest.mark.parametrize("fusion", ["rrf", "weighted"])
def test_a_lexical_match_survives_a_useless_dense_side(hashed_store, fusion):
    hybrid = HybridRetriever(hashed_store, BM25Index(corpus_chunks()), fusion=fusion)
    hits = hybrid.search("parse_config", k=3)
    assert "config" in [c.doc_id for c, _ in hits]
    assert len(hits) == 3 and all(isinstance(c, Chunk) and isinstance(s, float) for c, s in hits)


def test_the_where_filter_reaches_both_sides(hashed_store):
    hybrid = HybridRetriever(hashed_store, BM25Index(corpus_chunks()))
    hits = hybrid.search("parse_config user weather", k=5, where={"kind": "doc"})
    assert hits and all(c.metadata["kind"] == "doc" for c, _ in hits)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"fusion": "max"}, "fusion"),
        ({"depth": 0}, "depth"),
        ({"rrf_k": -1}, "rrf_k"),
        ({"fusion": "weighted", "weights": (0, 0)}, "weights"),
    ],
)
def test_bad_settings_are_value_errors(hashed_store, kwargs, match):
    with pytest.raises(ValueError, match=match):
        HybridRetriever(hashed_store, BM25Index(corpus_chunks()), **kwargs)


def test_sides_without_search_many_are_refused():
    with pytest.raises(ValueError, match="lexical must have a search_many"):
        HybridRetriever(BM25Index([]), object())


@pytest.mark.slow
def test_with_minilm_hybrid_finds_both_the_paraphrase_and_the_identifier(tmp_path):
    from chunklab.embed import Encoder

    chunks = corpus_chunks()
    store = ChunkStore(in_memory=True, encoder=Encoder(cache_dir=tmp_path))
    store.add(chunks, show_progress=False)
    lexical = BM25Index(chunks)
    hybrid = HybridRetriever(store, lexical)
    paraphrase = "when will my money come back"  # not one word shared with the corpus
    assert lexical.search(paraphrase, k=5) == []
    assert store.search(paraphrase, k=1)[0][0].doc_id == "refund"
    assert hybrid.search(paraphrase, k=1)[0][0].doc_id == "refund"
    assert hybrid.search("getUserName", k=1)[0][0].doc_id == "user"
    store.close()
