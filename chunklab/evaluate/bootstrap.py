"""Paired bootstrap over questions: confidence intervals and "how often does A beat B".

Questions about the same document are not independent (one document's style, length and
vocabulary help or hurt every question about it), so :func:`cluster_resample_counts` draws whole
documents instead of single questions: the **cluster bootstrap**, whose intervals are wider when
the documents differ. With one question per document it is the plain bootstrap, draw for draw.
A page that runs many comparisons adjusts for them with :func:`holm` on :func:`bootstrap_p_value`.

Paired means every strategy is scored on the **same** resampled question sets (one matrix of
resample indices shared by all), so the comparison between two strategies is not blurred by
which questions happened to be drawn. Resampling is vectorized: the resample means of every
strategy and metric come from one matrix product with the resample count matrix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from chunklab._validate import check_number, check_positive_int

__all__ = [
    "N_RESAMPLES",
    "bootstrap_means",
    "bootstrap_p_value",
    "cluster_resample_counts",
    "confidence_interval",
    "holm",
    "is_established",
    "pairwise_wins",
    "required_questions",
    "resample_counts",
]

#: Number of bootstrap resamples used by the benchmark runner.
N_RESAMPLES = 10_000


def resample_counts(
    n_items: int,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> np.ndarray:
    """How many times each item is drawn in each resample: an ``(n_resamples, n_items)``
    matrix.

    Resample ``r`` draws ``n_items`` items with replacement (seeded ``numpy`` generator,
    so the same seed always gives the same matrix); row ``r`` counts the draws of each
    item.
    """
    check_positive_int(n_items, "n_items")
    check_positive_int(n_resamples, "n_resamples")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_items, size=(n_resamples, n_items))
    flat = (idx + (np.arange(n_resamples) * n_items)[:, None]).ravel()
    counts = np.bincount(flat, minlength=n_resamples * n_items)
    return counts.reshape(n_resamples, n_items).astype(np.float64)


def cluster_resample_counts(
    clusters: Sequence[object],
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> np.ndarray:
    """The cluster bootstrap's counts: each resample draws whole clusters, replaced.

    ``clusters`` gives each item's cluster (a question's document id). Resample
    ``r`` draws as many clusters as there are, with replacement
    (:func:`resample_counts` over the clusters, numbered in order of first
    appearance), and every item counts as often as its cluster was drawn; a
    resample's size therefore varies, and :func:`bootstrap_means` divides by it.
    When every item is its own cluster, the matrix is :func:`resample_counts` of
    the items, exactly.
    """
    labels = list(clusters)
    check_positive_int(len(labels), "len(clusters)")
    codes: dict[object, int] = {}
    index = np.array([codes.setdefault(c, len(codes)) for c in labels], np.intp)
    counts = resample_counts(len(codes), n_resamples, seed)
    return np.ascontiguousarray(counts[:, index])


def bootstrap_means(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Resample means of ``values`` (shape ``(..., n_items)``) for every row of ``counts``.

    Returns an array of shape ``(..., n_resamples)``: the mean of each series over each
    resampled set of items (each row weighted by its counts and divided by their sum, which is
    ``n_items`` for :func:`resample_counts` and varies for :func:`cluster_resample_counts`).
    """
    values = np.asarray(values, dtype=np.float64)
    if values.shape[-1] != counts.shape[1]:
        raise ValueError(f"values have {values.shape[-1]} items but counts were drawn for {counts.shape[1]}")
    if np.isnan(values).any():
        raise ValueError("values contain NaN: every question needs a score for every metric")
    sizes = counts.sum(axis=1)
    if (sizes <= 0).any():
        raise ValueError("counts has a resample that draws no item")
    return values @ counts.T / sizes


def bootstrap_p_value(resampled: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a paired difference from its resample means.

    ``2 * min(share of resamples <= 0, share >= 0)``, capped at 1: below 0.05 exactly when the
    95% percentile interval excludes zero (up to the percentile's interpolation), the book's
    rule. It is what :func:`holm` adjusts for a family of comparisons.
    """
    means = np.asarray(resampled, dtype=np.float64).ravel()
    if means.size == 0:
        raise ValueError("resampled must hold at least one resample mean")
    below, above = float(np.mean(means <= 0)), float(np.mean(means >= 0))
    return min(1.0, 2 * min(below, above))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` for multiple comparisons, in order.

    Sorted ascending, the ``i``-th smallest (from 0) is multiplied by ``m - i`` and
    the adjusted values are made non-decreasing, capped at 1. A comparison is
    established, family-wise at 5%, when its adjusted p-value is below 0.05; it
    controls the chance of any false "established" among the ``m`` without
    assuming the comparisons independent.
    """
    ps = [check_number(p, "p_values") for p in p_values]
    if any(not 0 <= p <= 1 for p in ps):
        raise ValueError(f"p_values must lie in [0, 1], got {ps!r}")
    m = len(ps)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: ps[j])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def confidence_interval(
    resampled: np.ndarray,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of resampled means along the last axis: ``(low, high)``."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(resampled, [tail, 100 - tail], axis=-1)
    return low, high


def pairwise_wins(
    resampled: Mapping[str, np.ndarray], names: Sequence[str] | None = None
) -> dict[tuple[str, str], float]:
    """For each ordered pair (A, B), the share of resamples in which A's mean is
    strictly above B's.

    ``resampled`` maps a name to its resample means (same resamples for all, as from one
    :func:`resample_counts` matrix). ``wins[A, B] + wins[B, A] + ties = 1``.
    """
    names = list(names or resampled)
    out: dict[tuple[str, str], float] = {}
    for a in names:
        for b in names:
            if a != b:
                out[a, b] = float(np.mean(resampled[a] > resampled[b]))
    return out


def is_established(comparison: Mapping[str, float]) -> bool:
    """The kit's significance rule: a difference is established iff its paired 95% interval excludes 0.

    ``comparison`` has ``lo`` and ``hi`` (as :meth:`BenchmarkResult.compare` returns); an
    interval excluding 0 means one side is ahead in at least about 97.5% of resamples.
    """
    return bool(comparison["lo"] > 0 or comparison["hi"] < 0)


def required_questions(
    sd: float,
    delta: float,
    level: float = 0.95,
    power: float = 0.8,
) -> int:
    """Questions needed to detect a mean paired difference ``delta`` given the per-question ``sd``.

    The normal approximation ``ceil(((z_{1-(1-level)/2} + z_power) * sd / |delta|) ** 2)``:
    at the defaults ``(1.96 + 0.84) ** 2 * (sd / delta) ** 2``.
    """
    from statistics import NormalDist

    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    if not 0 < power < 1:
        raise ValueError(f"power must be between 0 and 1, got {power!r}")
    if check_number(sd, "sd") < 0:
        raise ValueError(f"sd must be >= 0, got {sd!r}")
    if check_number(delta, "delta") == 0:
        raise ValueError("delta must be a non-zero difference to detect, got 0")
    z = NormalDist().inv_cdf(1 - (1 - level) / 2) + NormalDist().inv_cdf(power)
    return max(1, math.ceil((z * sd / abs(delta)) ** 2))
