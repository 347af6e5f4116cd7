"""Evaluate chunking strategies: exact metrics, a benchmark runner, paired bootstrap CIs, plots.

``from chunklab.evaluate import recall_at_k, span_metrics, Benchmark`` — the metric functions
live in :mod:`chunklab.evaluate.metrics`, resampling in :mod:`chunklab.evaluate.bootstrap`,
the runner in :mod:`chunklab.evaluate.benchmark` (its result in
:mod:`chunklab.evaluate.result`), figures in :mod:`chunklab.evaluate.plots`, and
``load_dataset`` (:mod:`chunklab.evaluate.loader`) gives the question set to run on.
"""

from __future__ import annotations

from chunklab.evaluate.benchmark import Benchmark
from chunklab.evaluate.bootstrap import (
    N_RESAMPLES,
    bootstrap_means,
    bootstrap_p_value,
    cluster_resample_counts,
    confidence_interval,
    holm,
    is_established,
    pairwise_wins,
    required_questions,
    resample_counts,
)
from chunklab.evaluate.loader import load_dataset
from chunklab.evaluate.metrics import (
    CONVENTIONS,
    MIN_GOLD_OVERLAP,
    contains_hit,
    hits_by_containment,
    hits_by_document,
    hits_by_span,
    hits_by_text,
    mrr,
    ndcg_at_k,
    precision_at_k,
    precision_omega,
    rank_metrics,
    recall_at_k,
    span_hit,
    span_metrics,
    text_hit,
)
from chunklab.evaluate.result import (
    COST_COLUMNS,
    MAIN_METRICS,
    METRICS,
    SPAN_METRICS,
    BenchmarkResult,
)
from chunklab.evaluate.sizematch import size_for_chars

__all__ = [
    "CONVENTIONS",
    "COST_COLUMNS",
    "MAIN_METRICS",
    "METRICS",
    "SPAN_METRICS",
    "Benchmark",
    "BenchmarkResult",
    "MIN_GOLD_OVERLAP",
    "N_RESAMPLES",
    "bootstrap_means",
    "bootstrap_p_value",
    "cluster_resample_counts",
    "confidence_interval",
    "contains_hit",
    "hits_by_containment",
    "hits_by_document",
    "hits_by_span",
    "hits_by_text",
    "holm",
    "is_established",
    "load_dataset",
    "mrr",
    "ndcg_at_k",
    "pairwise_wins",
    "precision_at_k",
    "precision_omega",
    "rank_metrics",
    "recall_at_k",
    "required_questions",
    "resample_counts",
    "size_for_chars",
    "span_hit",
    "span_metrics",
    "text_hit",
]
