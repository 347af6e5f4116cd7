"""Metrics against values computed by hand, plus a brute-force oracle for the span metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.evaluate import (
    bootstrap_means,
    confidence_interval,
    mrr,
    ndcg_at_k,
    pairwise_wins,
    precision_at_k,
    precision_omega,
    rank_metrics,
    recall_at_k,
    resample_counts,
    span_hit,
    span_metrics,
    text_hit,
)

DOCS = ["The cat sat on the mat.", "Dogs bark loudly at night.", "the cat sat here", "Birds sing."]


# ----------------------------------------------------------------- text hits (course definition)


def test_text_hit_gold_inside_chunk_and_chunk_inside_gold():
    assert text_hit("The cat sat on the mat.", "cat sat")
    assert text_hit("sat on", "The cat sat on the mat.")
    assert not text_hit("Dogs bark", "cat sat")


def test_text_hit_ignores_whitespace_layout_but_not_case():
    assert text_hit("The cat\n   sat on the mat.", "cat sat on")
    assert not text_hit("THE CAT SAT", "cat sat")


def test_text_hit_empty_chunk_is_never_a_hit():
    assert not text_hit("   \n", "cat sat")


def test_recall_single_gold_is_zero_or_one():
    assert recall_at_k(DOCS, "bark loudly", k=2) == 1.0
    assert recall_at_k(DOCS, "bark loudly", k=1) == 0.0


def test_recall_is_fraction_of_gold_quotes_hit():
    golds = ["cat sat", "bark loudly", "fish swim"]
    assert recall_at_k(DOCS, golds, k=2) == pytest.approx(2 / 3)
    assert recall_at_k(DOCS, golds, k=1) == pytest.approx(1 / 3)


def test_recall_empty_retrieval_is_zero():
    assert recall_at_k([], "cat sat", k=5) == 0.0


def test_recall_k_larger_than_results_uses_them_all():
    assert recall_at_k(DOCS, ["cat sat", "Birds sing"], k=50) == 1.0


def test_precision_is_share_of_top_k_that_hit():
    # "cat sat" is in ranks 1 and 3.
    assert precision_at_k(DOCS, "cat sat", k=4) == pytest.approx(2 / 4)
    assert precision_at_k(DOCS, "cat sat", k=3) == pytest.approx(2 / 3)
    assert precision_at_k(DOCS, "cat sat", k=1) == 1.0


def test_precision_k_larger_than_results_divides_by_results_considered():
    assert precision_at_k(DOCS, "cat sat", k=10) == pytest.approx(2 / 4)
    assert precision_at_k([], "cat sat", k=10) == 0.0


def test_mrr_is_reciprocal_rank_of_first_hit():
    assert mrr(DOCS, "the cat sat here") == pytest.approx(1 / 3)
    assert mrr(DOCS, "the cat sat here", k=2) == 0.0
    assert mrr(DOCS, "nothing like this") == 0.0
    assert mrr([], "cat") == 0.0


def test_ndcg_single_gold_discounts_by_rank():
    assert ndcg_at_k(DOCS, "bark loudly", k=5) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(DOCS, "The cat sat on", k=5) == 1.0


def test_ndcg_two_golds_hand_computed():
    # gold A at rank 1, gold B at rank 4: DCG = 1 + 1/log2(5); IDCG = 1 + 1/log2(3)
    expected = (1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(DOCS, ["The cat sat on", "Birds"], k=4) == pytest.approx(expected)
    # k = 1: the ideal list holds one hit only
    assert ndcg_at_k(DOCS, ["The cat sat on", "Birds"], k=1) == 1.0


def test_ndcg_finding_the_same_gold_twice_earns_nothing_extra():
    # ranks 1 and 3 both hit "cat sat": the second is not new, DCG = IDCG = 1
    assert ndcg_at_k(DOCS, "cat sat", k=4) == 1.0
    # and it does not count as a second gold either: with two golds, only one is found
    assert ndcg_at_k(DOCS, ["cat sat", "fish"], k=4) == pytest.approx(1 / (1 + 1 / math.log2(3)))


@pytest.mark.parametrize("k", [0, -1, 1.5, True, None])
def test_bad_k_is_a_value_error(k):
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(DOCS, "cat", k=k)


def test_empty_gold_is_a_value_error():
    with pytest.raises(ValueError, match="gold"):
        recall_at_k(DOCS, [], k=3)
    with pytest.raises(ValueError, match="gold"):
        precision_at_k(DOCS, "   ", k=3)


def test_retrieved_as_a_bare_string_is_a_value_error():
    with pytest.raises(ValueError, match="list"):
        recall_at_k("The cat sat", "cat", k=3)


# ----------------------------------------------------------------- span hits


@pytest.mark.parametrize(
    ("chunk", "expected"),
    [
        ((0, 15), True),  # covers 5 of the 10 gold chars: exactly 50%
        ((0, 14), False),  # 4 of 10: 40%, and not inside the gold
        ((12, 14), True),  # lies inside the gold
        ((0, 100), True),  # contains the gold
        ((16, 40), False),  # 4 of 10 and sticks out
        ((20, 30), False),  # touches the end only
        ((15, 15), False),  # empty
    ],
)
def test_span_hit_half_of_gold_or_inside_gold(chunk, expected):
    assert span_hit(chunk, (10, 20)) is expected


def test_span_hit_requires_same_document():
    assert span_hit(("a", 10, 20), ("a", 10, 20))
    assert not span_hit(("b", 10, 20), ("a", 10, 20))


def test_rank_metrics_gold_split_across_chunks():
    # gold (10, 30) is split over three chunks; only the middle one lies inside it,
    # the outer ones cover 5/20 and 5/20 (< 50%): one hit, at rank 2.
    from chunklab.evaluate import hits_by_span

    retrieved = [(0, 15), (15, 25), (25, 40)]
    hits = hits_by_span(retrieved, [(10, 30)], k=3)
    assert hits == [set(), {0}, set()]
    m = rank_metrics(hits, n_gold=1, k=3)
    assert m == pytest.approx(
        {"hit": 1.0, "recall": 1.0, "precision": 1 / 3, "mrr": 0.5, "ndcg": 1 / math.log2(3)}
    )


def test_rank_metrics_empty_retrieval():
    assert rank_metrics([], n_gold=2, k=5) == {
        "hit": 0.0,
        "recall": 0.0,
        "precision": 0.0,
        "mrr": 0.0,
        "ndcg": 0.0,
    }


# ----------------------------------------------------------------- character-level span metrics


def test_span_metrics_overlapping_retrieved_spans_union_convention():
    m = span_metrics([(0, 15), (12, 30)], [(10, 20)])
    # U = [0, 30): |U| = 30; G = [10, 20): |G| = 10; |U ∩ G| = 10
    # recall = 10 / 10; precision = 10 / |U| = 10 / 30; iou = 10 / |U ∪ G| = 10 / 30
    assert m == pytest.approx({"recall": 1.0, "precision": 10 / 30, "iou": 10 / 30})


def test_span_metrics_overlapping_retrieved_spans_chroma_convention():
    m = span_metrics([(0, 15), (12, 30)], [(10, 20)], convention="chroma")
    # L = 15 + 18 = 33 (the 3 characters 12..15 counted twice); |G| = 10; |U ∩ G| = 10
    # precision = 10 / 33; iou = 10 / (L + |G| - |U ∩ G|) = 10 / (33 + 10 - 10) = 10 / 33
    assert m == pytest.approx({"recall": 1.0, "precision": 10 / 33, "iou": 10 / 33})


def test_span_metrics_three_overlapping_chunks_around_a_gold_in_two_pieces():
    retrieved = [(0, 40), (30, 70), (60, 100)]
    gold = [(20, 35), (65, 80)]
    # U = [0, 100): |U| = 100; L = 40 + 40 + 40 = 120; |G| = 15 + 15 = 30; |U ∩ G| = 30
    union = span_metrics(retrieved, gold)
    assert union == pytest.approx({"recall": 1.0, "precision": 30 / 100, "iou": 30 / 100})
    chroma = span_metrics(retrieved, gold, convention="chroma")
    # precision = 30 / 120; iou = 30 / (120 + 30 - 30) = 30 / 120
    assert chroma == pytest.approx({"recall": 1.0, "precision": 30 / 120, "iou": 30 / 120})


def test_span_metrics_overlapping_chunks_partly_covering_the_gold():
    retrieved = [(0, 30), (20, 50)]
    gold = [(40, 60)]
    # U = [0, 50): |U| = 50; L = 30 + 30 = 60; |G| = 20; |U ∩ G| = [40, 50) = 10
    # union: recall 10/20, precision 10/50, iou 10 / |U ∪ G| = 10 / (50 + 20 - 10) = 10/60
    assert span_metrics(retrieved, gold) == pytest.approx(
        {"recall": 0.5, "precision": 10 / 50, "iou": 10 / 60}
    )
    # chroma: precision 10/60, iou 10 / (60 + 20 - 10) = 10/70
    assert span_metrics(retrieved, gold, convention="chroma") == pytest.approx(
        {"recall": 0.5, "precision": 10 / 60, "iou": 10 / 70}
    )


def test_span_metrics_duplicate_retrieval_costs_precision_and_iou_only_in_chroma_convention():
    # the same 10 characters twice, exactly the gold: |U| = 10, L = 20, |G| = 10, |U ∩ G| = 10
    assert span_metrics([(10, 20), (10, 20)], [(10, 20)]) == pytest.approx(
        {"recall": 1.0, "precision": 1.0, "iou": 1.0}
    )
    # chroma: precision 10/20; iou 10 / (20 + 10 - 10) = 10/20
    assert span_metrics([(10, 20), (10, 20)], [(10, 20)], convention="chroma") == pytest.approx(
        {"recall": 1.0, "precision": 0.5, "iou": 0.5}
    )


def test_span_metrics_unknown_convention_is_a_value_error():
    with pytest.raises(ValueError, match="convention must be one of 'union', 'chroma'"):
        span_metrics([(0, 4)], [(0, 3)], convention="sum")


def test_span_metrics_gold_partly_covered():
    m = span_metrics([(0, 10)], [(5, 25)])
    assert m == pytest.approx({"recall": 5 / 20, "precision": 5 / 10, "iou": 5 / 25})


def test_span_metrics_gold_split_across_two_retrieved_chunks():
    m = span_metrics([(0, 15), (15, 40)], [(10, 30)])
    assert m == pytest.approx({"recall": 1.0, "precision": 20 / 40, "iou": 20 / 40})


def test_span_metrics_other_documents_cost_precision_only():
    m = span_metrics([("a", 0, 10), ("b", 0, 10)], [("a", 5, 10)])
    assert m == pytest.approx({"recall": 1.0, "precision": 5 / 20, "iou": 5 / 20})


def test_span_metrics_overlapping_gold_spans_are_merged():
    m = span_metrics([(0, 15)], [(0, 10), (5, 15)])
    assert m == pytest.approx({"recall": 1.0, "precision": 1.0, "iou": 1.0})


def test_span_metrics_empty_retrieval_is_all_zero():
    assert span_metrics([], [(3, 9)]) == {"recall": 0.0, "precision": 0.0, "iou": 0.0}


def test_span_metrics_rejects_bad_spans():
    with pytest.raises(ValueError, match="gold"):
        span_metrics([(0, 4)], [])
    with pytest.raises(ValueError, match="no characters"):
        span_metrics([(0, 4)], [(3, 3)])
    with pytest.raises(ValueError, match="start <= end"):
        span_metrics([(5, 4)], [(0, 3)])
    with pytest.raises(ValueError, match="span"):
        span_metrics([(1, 2, 3, 4)], [(0, 3)])


def test_precision_omega_uses_every_chunk_touching_the_gold():
    chunks = [(0, 10), (10, 20), (20, 30)]
    assert precision_omega(chunks, [(5, 12)]) == pytest.approx(7 / 20)
    assert precision_omega(chunks, [(5, 10)]) == pytest.approx(5 / 10)  # (10, 20) only touches the end
    assert precision_omega(chunks, [(5, 12), (25, 27)]) == pytest.approx(9 / 30)
    assert precision_omega([], [(5, 12)]) == 0.0


def test_precision_omega_with_overlapping_chunks_follows_the_convention():
    chunks = [(0, 20), (10, 30), (40, 50)]
    # both of the first two chunks touch the gold [12, 18); the third does not
    # union: |[0, 30)| = 30 -> 6 / 30; chroma: 20 + 20 = 40 -> 6 / 40
    assert precision_omega(chunks, [(12, 18)]) == pytest.approx(6 / 30)
    assert precision_omega(chunks, [(12, 18)], convention="chroma") == pytest.approx(6 / 40)


def test_precision_omega_accepts_chunk_objects():
    from chunklab.chunk import Chunk

    text = "abcdefghijklmnopqrst"
    chunks = [Chunk(text[0:10], 0, 10, "d"), Chunk(text[10:20], 10, 20, "d"), Chunk(text[0:20], 0, 20, "e")]
    assert precision_omega(chunks, [("d", 2, 6)]) == pytest.approx(4 / 10)


SPANS = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 25)).map(lambda t: (t[0], t[0] + t[1])), max_size=8
)


@settings(max_examples=300, deadline=None)
@given(retrieved=SPANS, gold=SPANS.filter(lambda g: any(e > s for s, e in g)))
def test_span_metrics_match_character_set_oracle(retrieved, gold):
    r = set().union(*(set(range(s, e)) for s, e in retrieved)) if retrieved else set()
    g = set().union(*(set(range(s, e)) for s, e in gold))
    total = sum(e - s for s, e in retrieved)
    union = span_metrics(retrieved, gold)
    assert union["recall"] == pytest.approx(len(r & g) / len(g))
    assert union["precision"] == pytest.approx(len(r & g) / len(r) if r else 0.0)
    assert union["iou"] == pytest.approx(len(r & g) / len(r | g))
    chroma = span_metrics(retrieved, gold, convention="chroma")
    assert chroma["recall"] == union["recall"]
    assert chroma["precision"] == pytest.approx(len(r & g) / total if total else 0.0)
    assert chroma["iou"] == pytest.approx(len(r & g) / (total + len(g) - len(r & g)))
    # summing lengths can only lower precision and IoU; equal when nothing overlaps
    assert chroma["precision"] <= union["precision"] + 1e-12
    assert chroma["iou"] <= union["iou"] + 1e-12
    if total == len(r):
        assert chroma == pytest.approx(union)


# ----------------------------------------------------------------- paired bootstrap


def test_resample_counts_rows_draw_every_item_count_and_are_seeded():
    c = resample_counts(7, n_resamples=50, seed=3)
    assert c.shape == (50, 7)
    assert (c.sum(axis=1) == 7).all()
    assert np.array_equal(c, resample_counts(7, n_resamples=50, seed=3))
    assert not np.array_equal(c, resample_counts(7, n_resamples=50, seed=4))


def test_bootstrap_means_equal_explicit_resample_means():
    values = np.array([[1.0, 0.0, 0.5], [0.0, 0.0, 1.0]])
    counts = np.array([[3.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 2.0, 1.0]])
    means = bootstrap_means(values, counts)
    assert means == pytest.approx(np.array([[1.0, 0.5, 0.5 / 3], [0.0, 1 / 3, 1 / 3]]))


def test_confidence_interval_of_a_constant_is_the_constant():
    counts = resample_counts(10, n_resamples=200)
    lo, hi = confidence_interval(bootstrap_means(np.full(10, 0.4), counts))
    assert lo == pytest.approx(0.4) and hi == pytest.approx(0.4)


def test_confidence_interval_brackets_the_mean_and_narrows_with_more_questions():
    rng = np.random.default_rng(0)
    small = rng.integers(0, 2, 20).astype(float)
    large = np.tile(small, 10)
    lo_s, hi_s = confidence_interval(bootstrap_means(small, resample_counts(20, 2000)))
    lo_l, hi_l = confidence_interval(bootstrap_means(large, resample_counts(200, 2000)))
    assert lo_s <= small.mean() <= hi_s
    assert hi_l - lo_l < hi_s - lo_s


def test_pairwise_wins_are_shares_of_resamples():
    counts = resample_counts(5, n_resamples=400)
    a = np.array([1.0, 1.0, 0.0, 1.0, 0.0])
    resampled = {
        "a": bootstrap_means(a, counts),
        "b": bootstrap_means(a - 0.5, counts),
        "c": bootstrap_means(a, counts),
    }
    wins = pairwise_wins(resampled)
    assert wins["a", "b"] == 1.0 and wins["b", "a"] == 0.0
    assert wins["a", "c"] == 0.0 and wins["c", "a"] == 0.0  # always tied


def test_bootstrap_rejects_nan_scores():
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_means(np.array([1.0, np.nan]), resample_counts(2, 10))


WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "alpha beta", "beta gamma", "gamma delta alpha"])


@settings(max_examples=200, deadline=None)
@given(
    retrieved=st.lists(WORDS, max_size=8), golds=st.lists(WORDS, min_size=1, max_size=3), k=st.integers(1, 9)
)
def test_chunk_metrics_stay_in_range_and_recall_grows_with_k(retrieved, golds, k):
    for metric in (recall_at_k, precision_at_k, ndcg_at_k):
        assert 0.0 <= metric(retrieved, golds, k) <= 1.0
    assert recall_at_k(retrieved, golds, k) <= recall_at_k(retrieved, golds, k + 1)
    assert mrr(retrieved, golds, k) <= mrr(retrieved, golds, k + 1)
    # a perfect first chunk gives MRR 1, and recall@k >= 1/G whenever MRR > 0
    if mrr(retrieved, golds, k) > 0:
        assert recall_at_k(retrieved, golds, k) >= 1 / len(golds) - 1e-12
