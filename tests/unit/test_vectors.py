"""chunklab.retrieval.vectors: the exact scan and faiss's IVF index behind the static tier at scale."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from chunklab.retrieval.vectors import EXACT_BELOW, VectorIndex, agreement, exact_topk


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _brute(matrix: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference: full scores, stable sort (equal scores in row order)."""
    scores = queries.astype(np.float32) @ matrix.astype(np.float32).T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, 1), order


# small integers make ties common and every product exact in float32
_matrices = st.integers(1, 40).flatmap(
    lambda n: st.integers(1, 6).flatmap(
        lambda d: st.tuples(
            arrays(np.float32, (n, d), elements=st.integers(-3, 3).map(float)),
            arrays(np.float32, (3, d), elements=st.integers(-3, 3).map(float)),
        )
    )
)


@settings(max_examples=150, deadline=None)
@given(_matrices, st.integers(1, 50), st.integers(1, 17))
def test_exact_topk_is_the_brute_force_ranking_with_ties_in_row_order(pair, k, block):
    matrix, queries = pair
    scores, ids = exact_topk(matrix, queries, k, block=block)
    ref_s, ref_i = _brute(matrix, queries, k)
    assert ids.shape == (3, min(k, len(matrix)))
    np.testing.assert_array_equal(scores, ref_s)
    np.testing.assert_array_equal(ids, ref_i)  # the block size never changes the answer


def test_ivf_scanning_every_cell_returns_the_exact_top_k():
    rng = np.random.default_rng(0)
    x = _unit(rng, 5000, 24)
    q = _unit(rng, 40, 24)
    index = VectorIndex(x, method="ivf", nlist=50, seed=3)
    assert (index.method, index.nlist, len(index)) == ("ivf", 50, 5000)
    s, i = index.search(q, 10, nprobe=50)
    ref_s, ref_i = exact_topk(x, q, 10)
    np.testing.assert_allclose(s, ref_s, rtol=1e-5, atol=1e-6)  # unquantized: scores are exact inner products
    assert agreement(i.tolist(), ref_i.tolist(), 10) == 1.0
    # fewer cells: still valid rows whose scores are their true inner products, and lower agreement
    s1, i1 = index.search(q, 10, nprobe=1)
    found = i1 >= 0
    np.testing.assert_allclose(
        s1[found], np.einsum("qd,qkd->qk", q, x[np.where(found, i1, 0)])[found], rtol=1e-5, atol=1e-6
    )
    assert agreement(index.ranked(q, 10, nprobe=1), ref_i.tolist(), 10) < 1.0
    default = index.nprobe
    assert index.ranked(q, 10) == index.ranked(q, 10, nprobe=default) != index.ranked(q, 10, nprobe=1)
    assert index.nprobe == default  # a per-call nprobe does not stick


def test_ivf_answers_are_deterministic_for_a_seed():
    rng = np.random.default_rng(1)
    x, q = _unit(rng, 3000, 16), _unit(rng, 20, 16)
    a = VectorIndex(x, method="ivf", nlist=30, seed=7).ranked(q, 5)
    b = VectorIndex(x.copy(), method="ivf", nlist=30, seed=7).ranked(q, 5)
    assert a == b


def test_ivf_may_return_fewer_rows_than_k_and_marks_them():
    rng = np.random.default_rng(2)
    x = _unit(rng, 400, 8)
    index = VectorIndex(x, method="ivf", nlist=10, nprobe=1)
    s, i = index.search(x[:5], 300)
    assert i.shape == (5, 300)
    assert (i == -1).any() and np.isneginf(s[i == -1]).all()
    assert all(len(r) == int((row >= 0).sum()) for r, row in zip(index.ranked(x[:5], 300), i))


def test_auto_chooses_exact_below_the_threshold_and_defaults_are_sane():
    rng = np.random.default_rng(3)
    small = VectorIndex(_unit(rng, 50, 4))
    assert small.method == "exact" and "exact" in repr(small)
    first_axis = np.eye(4, dtype=np.float32)[0]  # one query as a 1-D vector
    assert small.ranked(first_axis, 3) == _brute(small._matrix, first_axis[None], 3)[1].tolist()
    x = _unit(rng, 50000, 8)
    ivf = VectorIndex(x, method="ivf")
    assert ivf.nlist == round(4 * np.sqrt(50000)) and 16 <= ivf.nprobe <= ivf.nlist
    assert (
        VectorIndex(x[:100], method="ivf").nlist == 2
    )  # at most n / 39 cells, so k-means has points to train on
    assert EXACT_BELOW == 100_000


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"method": "hnsw"}, "method must be one of"),
        ({"nlist": 0}, "nlist must be > 0"),
        ({"nprobe": 1.5}, "nprobe must be a positive integer"),
    ],
)
def test_bad_parameters_are_refused_clearly(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VectorIndex(np.zeros((3, 2), np.float32), **kwargs)


def test_bad_vectors_and_queries_are_refused_clearly():
    with pytest.raises(ValueError, match="2-D array"):
        VectorIndex(np.zeros(5))
    with pytest.raises(ValueError, match="NaN or infinite"):
        VectorIndex(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="at least one vector"):
        VectorIndex(np.zeros((0, 4)), method="ivf")
    index = VectorIndex(np.eye(3, dtype=np.float32))
    with pytest.raises(ValueError, match="2 dimensions, the index has 3"):
        index.search(np.zeros((1, 2)), 1)
    with pytest.raises(ValueError, match="k must be"):
        index.search(np.zeros((1, 3)), 0)
    with pytest.raises(ValueError, match="numbers"):
        VectorIndex([["a", "b"]])
    assert VectorIndex(np.zeros((0, 4))).ranked(np.ones((2, 4)), 3) == [[], []]


def test_agreement_counts_the_exact_top_k_found():
    assert agreement([[1, 2, 3]], [[3, 2, 1]], 3) == 1.0
    assert agreement([[1, 9, 8], [4, 5, 6]], [[1, 2, 3], [4, 5, 7]], 3) == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert agreement([[1, 2]], [[1, 2]], 1) == 1.0 and agreement([[2, 1]], [[1, 2]], 1) == 0.0
    with pytest.raises(ValueError, match="2 rankings against 1"):
        agreement([[1], [2]], [[1]], 1)


def test_exact_topk_refuses_nan_in_the_matrix_through_its_scores():
    with pytest.raises(ValueError, match="NaN or infinite"):
        exact_topk(np.array([[1.0, 0.0], [np.nan, 0.0]]), np.array([[1.0, 0.0]]), 1)
