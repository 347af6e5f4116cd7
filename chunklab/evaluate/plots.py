"""Figures for benchmark results: metric bars with confidence whiskers, sweep curves, cost vs quality.

Each function takes a :class:`~chunklab.evaluate.result.BenchmarkResult` (or its
``summary`` DataFrame), draws on ``ax`` when given (else a new figure) and returns the
matplotlib ``Figure``, so a chapter can show it inline and the CLI can save it as PNG.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from chunklab.evaluate.result import BenchmarkResult

__all__ = ["plot_cost_quality", "plot_metrics", "plot_sweep", "save_figures"]

LABELS = {
    "hit": "hit@k",
    "recall": "recall@k",
    "precision": "precision@k",
    "mrr": "MRR",
    "ndcg": "nDCG@k",
    "char_recall": "character recall",
    "char_precision": "character precision",
    "iou": "character IoU",
    "precision_omega": "precision Ω",
    "text_recall": "recall@k (text)",
    "tokens_embedded": "tokens embedded",
    "retrieved_chars": "characters retrieved per question",
    "chunks": "chunks",
    "index_bytes": "index size on disk (bytes)",
    "ingest_s": "ingest time (s)",
    "query_p95_ms": "query p95 (ms)",
}


def _summary(result: BenchmarkResult | pd.DataFrame) -> pd.DataFrame:
    summary = getattr(result, "summary", result)
    if not isinstance(summary, pd.DataFrame) or summary.empty:
        raise ValueError("expected a BenchmarkResult or its non-empty summary DataFrame")
    return summary


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    if ax is not None:  # an Axes on a subfigure: the figure that can be saved is its root
        fig = ax.figure
        return (fig if isinstance(fig, Figure) else fig.figure), ax
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


def plot_metrics(
    result: BenchmarkResult | pd.DataFrame,
    metrics: Sequence[str] = ("recall", "mrr", "ndcg", "char_recall", "char_precision", "iou"),
    ax: Axes | None = None,
    title: str | None = None,
    k: int | None = None,
) -> Figure:
    """Grouped bars: one group per metric, one bar per strategy, whiskers = 95% bootstrap CI."""
    summary = _summary(result)
    missing = [m for m in metrics if m not in summary.columns]
    if missing:
        raise ValueError(f"unknown metric(s) {missing}; the summary has {list(summary.columns)}")
    k = k if k is not None else getattr(result, "k", None)
    fig, ax = _axes(ax, (max(6.0, 1.4 * len(metrics) + 0.4 * len(summary)), 4.2))
    names = list(summary.index)
    width = 0.8 / max(1, len(names))
    x = np.arange(len(metrics))
    for i, name in enumerate(names):
        row = summary.loc[name]
        means = np.array([row[m] for m in metrics], dtype=float)
        lo = np.array([row.get(m + "_lo", row[m]) for m in metrics], dtype=float)
        hi = np.array([row.get(m + "_hi", row[m]) for m in metrics], dtype=float)
        ax.bar(
            x + (i - (len(names) - 1) / 2) * width,
            means,
            width,
            yerr=np.vstack([means - lo, hi - means]),
            capsize=3,
            label=name,
        )
    ax.set_xticks(x, [LABELS.get(m, m) for m in metrics], rotation=20, ha="right")
    ax.set_ylabel("mean over questions (95% CI)")
    ax.set_xlabel("metric" + (f" (k = {k})" if k else ""))
    ax.set_ylim(0, 1.05)
    ax.set_title(title or "Retrieval quality by chunking strategy")
    ax.legend(title="strategy", fontsize="small", ncols=min(3, len(names)))
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_sweep(
    result: BenchmarkResult | pd.DataFrame,
    metrics: Sequence[str] = ("recall", "ndcg", "char_precision", "iou"),
    x: str = "size",
    hue: str = "overlap",
    params: Mapping[str, Mapping[str, Any]] | None = None,
    title: str | None = None,
) -> Figure:
    """One panel per metric: the metric against parameter ``x``, one curve per value of ``hue``.

    Parameters come from ``result.params`` (or ``params``: strategy name -> its parameters;
    a ``"sweep"`` entry with the raw sweep values, such as ``"10%"``, labels the curves).
    Shaded bands are the 95% bootstrap intervals.
    """
    import matplotlib.pyplot as plt

    summary = _summary(result)
    params = params if params is not None else getattr(result, "params", None)
    if not params:
        raise ValueError("plot_sweep needs the strategies' parameters (a BenchmarkResult or params=...)")
    rows = []
    for name in summary.index:
        p = dict(params.get(name, {}))
        raw = dict(p.get("sweep") or {})
        if x not in p:
            raise ValueError(f"strategy {name!r} has no parameter {x!r} to put on the x axis")
        rows.append((name, p[x], str(raw.get(hue, p.get(hue, "")))))
    units = {str(params.get(n, {}).get("unit", "")) for n in summary.index}
    unit = units.pop() if len(units) == 1 and x == "size" else ""
    fig, axes = plt.subplots(
        1, len(metrics), figsize=(3.6 * len(metrics), 3.6), layout="constrained", squeeze=False
    )
    for ax, metric in zip(axes[0], metrics, strict=True):
        for label in dict.fromkeys(r[2] for r in rows):
            pts = sorted((r[1], r[0]) for r in rows if r[2] == label)
            xs = [p[0] for p in pts]
            ys = np.array([summary.loc[n, metric] for _, n in pts], dtype=float)
            lo = np.array([summary.loc[n].get(metric + "_lo", np.nan) for _, n in pts], dtype=float)
            hi = np.array([summary.loc[n].get(metric + "_hi", np.nan) for _, n in pts], dtype=float)
            ax.plot(xs, ys, marker="o", label=f"{hue} = {label}" if label else None)
            if not np.isnan(lo).any():
                ax.fill_between(xs, lo, hi, alpha=0.15)
        ax.set_xlabel(f"chunk {x}" + (f" ({unit})" if unit else ""))
        ax.set_ylabel(LABELS.get(metric, metric))
        ax.set_title(LABELS.get(metric, metric))
        ax.grid(alpha=0.3)
    if any(r[2] for r in rows):
        axes[0][0].legend(fontsize="small")
    fig.suptitle(title or f"Chunk {x} and {hue} sweep (95% CI bands)")
    return fig


def plot_cost_quality(
    result: BenchmarkResult | pd.DataFrame,
    cost: str = "retrieved_chars",
    metric: str = "recall",
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """Scatter of one cost column against one metric, with CI whiskers, one labelled point per strategy."""
    summary = _summary(result)
    for col in (cost, metric):
        if col not in summary.columns:
            raise ValueError(f"unknown column {col!r}")
    fig, ax = _axes(ax, (6.0, 4.2))
    for name, row in summary.iterrows():
        y = float(row[metric])
        err = [[y - float(row.get(metric + "_lo", y))], [float(row.get(metric + "_hi", y)) - y]]
        ax.errorbar(float(row[cost]), y, yerr=err, fmt="o", capsize=3)
        ax.annotate(
            str(name), (float(row[cost]), y), textcoords="offset points", xytext=(5, 5), fontsize="small"
        )
    ax.set_xlabel(LABELS.get(cost, cost))
    ax.set_ylabel(LABELS.get(metric, metric) + " (95% CI)")
    ax.set_title(title or f"{LABELS.get(metric, metric)} against {LABELS.get(cost, cost)}")
    ax.grid(alpha=0.3)
    return fig


def save_figures(
    result: BenchmarkResult | pd.DataFrame, out_dir: str | os.PathLike[str], sweep: bool = False
) -> list[str]:
    """Write the standard PNGs for ``result`` into ``out_dir``; returns the file names written."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    reported = getattr(result, "reported_metrics", None)
    metrics = [
        m
        for m in ("recall", "mrr", "ndcg", "char_recall", "char_precision", "iou")
        if reported is None or m in reported
    ]
    figures = [
        ("metrics.png", plot_metrics(result, metrics=metrics)),
        ("cost_quality.png", plot_cost_quality(result)),
    ]
    if sweep:
        figures.append(("sweep.png", plot_sweep(result)))
    for name, fig in figures:
        fig.savefig(out / name, dpi=120)
        plt.close(fig)
        written.append(name)
    return written
