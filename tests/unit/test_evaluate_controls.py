"""The controls behind the book's verdicts: full containment, the cluster bootstrap, Holm's correction.

Issue 40 (Deliver 2): a hit rule stricter than ``span_hit`` (the whole gold span in one chunk),
a bootstrap that draws whole documents because questions cluster in documents, and a correction
for the many comparisons one page makes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.evaluate import (
    bootstrap_means,
    bootstrap_p_value,
    cluster_resample_counts,
    confidence_interval,
    contains_hit,
    hits_by_containment,
    hits_by_span,
    holm,
    rank_metrics,
    resample_counts,
    size_for_chars,
    span_hit,
)
from chunklab.evaluate.result import METRICS, BenchmarkResult, summarize

spans = st.tuples(st.integers(0, 200), st.integers(1, 80)).map(lambda t: (t[0], t[0] + t[1]))


# --- full containment ---------------------------------------------------------------------


def test_a_chunk_that_cuts_the_answer_is_a_span_hit_but_not_a_contains_hit():
    """The intro's Fig. 2: a chunk holding 63% of the sentence, which ends in the next chunk."""
    gold = (100, 200)
    chunk = (0, 163)  # 63 of the 100 gold characters, then the cut
    assert span_hit(chunk, gold)
    assert not contains_hit(chunk, gold)
    assert contains_hit((90, 200), gold) and contains_hit(gold, gold)
    assert not contains_hit(("b", 0, 300), ("a", 100, 200))  # another document
    assert not contains_hit((120, 150), gold)  # inside the gold is a span_hit, not whole


@settings(max_examples=300, deadline=None)
@given(chunk=spans, gold=spans)
def test_every_contains_hit_is_a_span_hit(chunk, gold):
    if contains_hit(chunk, gold):
        assert span_hit(chunk, gold)


@settings(max_examples=200, deadline=None)
@given(
    retrieved=st.lists(spans, max_size=8), golds=st.lists(spans, min_size=1, max_size=3), k=st.integers(1, 8)
)
def test_full_containment_recall_never_exceeds_span_hit_recall(retrieved, golds, k):
    full = rank_metrics(hits_by_containment(retrieved, golds), len(golds), k)["recall"]
    half = rank_metrics(hits_by_span(retrieved, golds), len(golds), k)["recall"]
    assert 0.0 <= full <= half <= 1.0


# --- the cluster bootstrap ----------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), seed=st.integers(0, 2**16), n_resamples=st.integers(1, 50))
def test_cluster_bootstrap_with_one_question_per_cluster_is_the_plain_bootstrap(n, seed, n_resamples):
    clusters = [f"doc-{i}" for i in range(n)]
    plain = resample_counts(n, n_resamples, seed)
    assert np.array_equal(cluster_resample_counts(clusters, n_resamples, seed), plain)
    values = np.random.default_rng(seed).random(n)
    assert np.array_equal(
        bootstrap_means(values, cluster_resample_counts(clusters, n_resamples, seed)),
        bootstrap_means(values, plain),
    )


def test_cluster_bootstrap_draws_whole_clusters():
    clusters = ["a", "a", "a", "b", "c", "c"]
    counts = cluster_resample_counts(clusters, 500, seed=3)
    assert counts.shape == (500, 6)
    assert np.array_equal(counts[:, 0], counts[:, 1]) and np.array_equal(counts[:, 0], counts[:, 2])
    assert np.array_equal(counts[:, 4], counts[:, 5])
    cluster_draws = counts[:, [0, 3, 4]]
    assert (cluster_draws.sum(axis=1) == 3).all()  # three clusters drawn per resample


def test_cluster_bootstrap_widens_the_interval_when_clusters_differ():
    """Ten documents of ten questions, each document all right or all wrong: ten outcomes, not 100."""
    values = np.repeat(np.array([1.0, 0.0] * 5), 10)
    clusters = np.repeat(np.arange(10), 10)
    lo_q, hi_q = confidence_interval(bootstrap_means(values, resample_counts(100, 4000)))
    lo_d, hi_d = confidence_interval(bootstrap_means(values, cluster_resample_counts(clusters, 4000)))
    assert (hi_d - lo_d) > 2 * (hi_q - lo_q)


def test_cluster_bootstrap_refuses_no_items():
    with pytest.raises(ValueError, match="len\\(clusters\\)"):
        cluster_resample_counts([], 10)


# --- p-values and Holm --------------------------------------------------------------------


def test_bootstrap_p_value_is_twice_the_smaller_tail():
    assert bootstrap_p_value(np.array([0.1, 0.2, 0.3, 0.4])) == 0.0
    assert bootstrap_p_value(np.array([-0.1, 0.2, 0.3, 0.4])) == 0.5
    assert bootstrap_p_value(np.array([-0.1, 0.1])) == 1.0
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_p_value(np.array([]))


def test_holm_matches_the_hand_computed_step_down():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.2]) == [0.2]
    assert holm([]) == []
    with pytest.raises(ValueError, match="p_values"):
        holm([0.5, 1.5])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_never_lowers_a_p_value_and_keeps_their_order(ps):
    adjusted = holm(ps)
    assert all(a >= p and a <= 1 for a, p in zip(adjusted, ps, strict=True))
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    assert all(adjusted[i] <= adjusted[j] for i, j in zip(order, order[1:], strict=False))


# --- on a benchmark result ----------------------------------------------------------------


def _result(per_doc: int) -> BenchmarkResult:
    """Two strategies, 40 questions in 40 / per_doc documents; ``a`` finds the answer in 3 of 4 documents."""
    rows = []
    for i in range(40):
        doc = f"d{i // per_doc}"
        found = float((i // per_doc) % 4 != 0)
        for name, value in (("a", found), ("b", 0.5 * found)):
            rows.append(
                {
                    "strategy": name,
                    "question_id": f"q{i}",
                    "doc_id": doc,
                    **{m: value for m in METRICS},
                    "retrieved_chars": 100.0,
                }
            )
    per_question = pd.DataFrame(rows)
    qids = [f"q{i}" for i in range(40)]
    summary, pairwise = summarize(per_question, ["a", "b"], qids, METRICS, {}, 2000, 0)
    return BenchmarkResult(per_question, summary, pairwise, k=5, n_resamples=2000, seed=0)


def test_compare_by_document_is_wider_than_by_question_and_equal_with_one_question_each():
    clustered = _result(per_doc=10)
    by_q = clustered.compare("a", "b", metric="full_recall")
    by_doc = clustered.compare("a", "b", metric="full_recall", resample="document")
    assert by_q["diff"] == by_doc["diff"] and by_doc["resampled"] == "document"
    assert by_doc["hi"] - by_doc["lo"] > by_q["hi"] - by_q["lo"]
    single = _result(per_doc=1)
    one, other = single.compare("a", "b"), single.compare("a", "b", resample="document")
    assert (one["lo"], one["hi"], one["p"]) == (other["lo"], other["hi"], other["p"])
    with pytest.raises(ValueError, match="resample must be one of"):
        single.compare("a", "b", resample="doc")


def test_compare_family_adjusts_by_holm():
    result = _result(per_doc=10)
    family = result.compare_family([("a", "b"), ("b", "a")], resample="document")
    raw = [c["p"] for c in family]
    assert [c["p_holm"] for c in family] == holm(raw)
    assert all(c["established_holm"] <= c["established"] for c in family)
    with pytest.raises(ValueError, match="at least one pair"):
        result.compare_family([])


def test_interaction_is_the_difference_of_the_two_groups_gains():
    result = _result(per_doc=1)
    group = [f"q{i}" for i in range(40) if i % 4 != 0]  # where a finds the answer: a - b = 0.5
    rest = [f"q{i}" for i in range(40) if i % 4 == 0]  # where neither does: a - b = 0
    gap = result.interaction("a", "b", group, rest, metric="recall")
    assert gap["diff"] == pytest.approx(0.5)
    assert gap["lo"] == gap["hi"] == pytest.approx(0.5) and gap["established"]
    none = result.interaction("a", "b", group[:15], group[15:])
    assert none["diff"] == 0 and not none["established"]
    with pytest.raises(ValueError, match="must not share"):
        result.interaction("a", "b", group, group[:3])


def test_size_for_chars_interpolates_the_sweep_and_refuses_to_extrapolate():
    sweep = {800: 3000.0, 1200: 4600.0, 1600: 6200.0}
    assert size_for_chars(sweep, 4600) == 1200
    assert size_for_chars(sweep, 5400) == pytest.approx(1400)
    with pytest.raises(ValueError, match="outside the sweep"):
        size_for_chars(sweep, 8443)
    with pytest.raises(ValueError, match="at least two"):
        size_for_chars({800: 3000.0}, 3000)
    with pytest.raises(ValueError, match="must grow"):
        size_for_chars({800: 3000.0, 1200: 2000.0}, 2500)


def test_combine_joins_two_runs_on_the_same_questions_into_one_paired_result():
    run = _result(per_doc=1)
    other = dataclasses.replace(
        run,
        per_question=run.per_question.assign(strategy=run.per_question["strategy"].map({"a": "c", "b": "d"})),
        summary=run.summary.rename(index={"a": "c", "b": "d"}),
    )
    joint = run.combine(other)
    assert list(joint.summary.index) == ["a", "b", "c", "d"]
    assert joint.compare("a", "c")["diff"] == 0 and joint.compare("a", "d") == run.compare("a", "b")
    with pytest.raises(ValueError, match="in both runs"):
        run.combine(run)
    with pytest.raises(ValueError, match="seed differs"):
        run.combine(dataclasses.replace(other, seed=1))
