"""What a benchmark run returns: per-question scores, the bootstrapped summary, pairwise wins.

:class:`BenchmarkResult` holds the tables and renders them (``table``, ``markdown``,
``to_json``); :data:`METRICS` and :data:`COST_COLUMNS` name their columns and
:data:`METRIC_DOCS` / :data:`COST_DOCS` say what each one means.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from chunklab.chunk import Chunk
from chunklab.evaluate.bootstrap import (
    bootstrap_means,
    bootstrap_p_value,
    cluster_resample_counts,
    confidence_interval,
    holm,
    is_established,
    pairwise_wins,
    resample_counts,
)

__all__ = [
    "COST_COLUMNS",
    "COST_DOCS",
    "DISPLAY_COSTS",
    "DISPLAY_METRICS",
    "MAIN_METRICS",
    "METRICS",
    "METRIC_DOCS",
    "SPAN_METRICS",
    "TRUNCATION_SHARE",
    "BenchmarkResult",
    "RESAMPLE_UNITS",
    "Comparison",
    "FamilyComparison",
    "measured_metrics",
    "summarize",
]

#: per-question metric columns, in table order
METRICS = (
    "hit",
    "recall",
    "full_recall",
    "precision",
    "mrr",
    "ndcg",
    "char_recall",
    "char_precision",
    "iou",
    "precision_omega",
    "text_recall",
)
#: character-level metrics: reported only when the questions have gold spans (not for BEIR qrels)
SPAN_METRICS = ("full_recall", "char_recall", "char_precision", "iou", "precision_omega")
#: metrics compared pair by pair in :attr:`BenchmarkResult.pairwise`
MAIN_METRICS = ("recall", "mrr", "ndcg", "char_recall", "char_precision", "iou")
#: cost columns of the summary
COST_COLUMNS = (
    "chunks",
    "vectors",
    "chars_embedded",
    "tokens_embedded",
    "truncated_chunks",
    "truncated",
    "vector_bytes",
    "index_bytes",
    "chunk_s",
    "chunker_texts_embedded",
    "ingest_s",
    "query_p50_ms",
    "query_p95_ms",
    "retrieved_chars",
)

#: metrics shown by :meth:`BenchmarkResult.table` (the printed table and the HTML report)
DISPLAY_METRICS = ("recall", "mrr", "ndcg", "char_recall", "char_precision", "iou", "precision_omega")
#: share of a strategy's chunks over the model's window above which a run warns
TRUNCATION_SHARE = 0.05
#: cost columns shown by :meth:`BenchmarkResult.table`
DISPLAY_COSTS = (
    "chunks",
    "vectors",
    "tokens_embedded",
    "truncated",
    "retrieved_chars",
    "index_bytes",
    "ingest_s",
    "query_p95_ms",
)

METRIC_DOCS = {
    "hit": "1 if any top-k chunk is relevant to a gold span (span_hit: >= 50% of the gold, or inside it)",
    "recall": "share of the question's gold spans hit by a top-k chunk",
    "full_recall": (
        "share of the question's gold spans held whole by one top-k chunk (contains_hit: full containment)"
    ),
    "precision": "share of the top-k chunks relevant to some gold span",
    "mrr": "1 / rank of the first relevant chunk (0 if none)",
    "ndcg": "binary-relevance nDCG@k, each gold span counted once",
    "char_recall": "share of gold characters covered by the union of the top-k spans",
    "char_precision": (
        "gold characters covered / characters retrieved (union: each counted once; chroma: summed)"
    ),
    "iou": (
        "gold characters covered / (characters retrieved + gold characters - covered), in the same convention"
    ),
    "precision_omega": (
        "char precision of every chunk that touches the gold (no retrieval: the chunker alone)"
    ),
    "text_recall": "course definition: share of gold quotes inside a top-k chunk's text or containing it",
}


COST_DOCS = {
    "chunks": "chunks the strategy produced (parents included for hierarchical)",
    "vectors": "vectors in the index (what is searched: leaves only for hierarchical)",
    "chars_embedded": "characters of the embedded texts (chunk text plus its context header)",
    "tokens_embedded": "MiniLM tokens of the embedded texts",
    "truncated_chunks": "embedded texts longer than the model's window (their tail is not embedded)",
    "truncated": "share of the embedded texts longer than the model's window (truncated_chunks / vectors)",
    "vector_bytes": "raw float32 vector bytes, 4 * vectors * dim",
    "index_bytes": "bytes on disk of the strategy's Chroma folder",
    "chunk_s": "seconds spent chunking (semantic chunking embeds sentences here)",
    "chunker_texts_embedded": "texts the chunker itself embedded or read from the cache",
    "ingest_s": "chunking + embedding + writing the index, seconds",
    "query_p50_ms": "median search latency per question (vector search, plus auto-merge), ms",
    "query_p95_ms": "95th percentile of that latency, ms",
    "retrieved_chars": "mean characters of the retrieved chunks per question (context handed on)",
}


#: what :meth:`BenchmarkResult.compare` may resample: single questions, or whole documents (clusters)
RESAMPLE_UNITS = ("question", "document")


class Comparison(TypedDict):
    """Strategy a against b on one metric (:meth:`BenchmarkResult.compare` says what each key is)."""

    diff: float
    lo: float
    hi: float
    a_ahead: float
    b_ahead: float
    ties: float
    n: int
    sd: float
    established: bool
    p: float
    resampled: str


class FamilyComparison(Comparison):
    """A :class:`Comparison` within a family of them (:meth:`BenchmarkResult.compare_family`)."""

    p_holm: float
    established_holm: bool


@dataclass
class BenchmarkResult:
    """What :meth:`Benchmark.run` returns.

    ``per_question``: one row per (strategy, question) with every metric of :data:`METRICS`.
    ``summary``: one row per strategy: each metric's mean with ``<metric>_lo``/``<metric>_hi``
    (95% paired-bootstrap interval) and the cost columns of :data:`COST_COLUMNS`.
    ``pairwise``: one row per (metric, strategy A, strategy B): ``a_wins`` is the share of
    resamples in which A's mean beats B's, ``b_wins`` the reverse, ``ties`` the rest.
    """

    per_question: pd.DataFrame
    summary: pd.DataFrame
    pairwise: pd.DataFrame
    k: int
    n_resamples: int
    seed: int
    dataset: str = ""
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    wall_s: float = 0.0
    #: how span metrics count retrieved characters (:data:`chunklab.evaluate.metrics.CONVENTIONS`)
    convention: str = "union"
    #: ``"span"`` (gold character spans) or ``"document"`` (BEIR-style qrels: no span metrics)
    relevance: str = "span"
    #: strategy name -> the top-k chunks of each question, in question order (for the HTML report)
    retrieved: dict[str, list[list[Chunk]]] = field(default_factory=dict, repr=False)
    #: the model's window in tokens (None: a model without one, e.g. the static model)
    window: int | None = None

    def truncation_warnings(self, min_share: float = TRUNCATION_SHARE) -> list[str]:
        """A warning line per strategy with more than ``min_share`` of its chunks over the model's window.

        Those chunks are embedded by their opening only, so comparing sizes past the window
        compares embeddings of the same opening length (the rest of the text only costs context).
        """
        from chunklab.ingest.report import truncation_warning

        lines = []
        for name, row in self.summary.iterrows():
            over, vectors = int(row.get("truncated_chunks", 0)), int(row.get("vectors", 0))
            line = truncation_warning(over, vectors, self.window, min_share, name=str(name))
            if line:
                lines.append(line)
        if lines:
            lines.append(
                f"          a size comparison past {self.window} tokens compares embeddings of each "
                "chunk's opening: the longer chunks only cost more context"
            )
        return lines

    @property
    def reported_metrics(self) -> tuple[str, ...]:
        """The metrics this run measured (:func:`measured_metrics` of its relevance)."""
        return measured_metrics(self.relevance)

    def note(self) -> str:
        """One line saying how the metrics were computed (shown under every table)."""
        if self.relevance == "document":
            return (
                "document-level relevance (qrels): a chunk is a hit when its document is relevant; "
                "span metrics (char_recall, char_precision, iou, precision_omega) are not reported"
            )
        return f"span metrics in the {self.convention!r} convention"

    def compare(
        self,
        a: str,
        b: str,
        metric: str = "recall",
        questions: Iterable[str] | None = None,
        resample: str = "question",
    ) -> Comparison:
        """Strategy ``a`` against ``b`` on ``metric``: the paired difference and how sure it is.

        Over the chosen question ids (all by default): ``diff`` the mean of a - b per question,
        ``lo``/``hi`` its 95% paired-bootstrap interval (same ``seed`` and ``n_resamples`` as
        the run), ``a_ahead``/``b_ahead``/``ties`` the shares of resamples, ``n`` the number of
        questions, ``sd`` the standard deviation of the per-question differences,
        ``established`` (:func:`~chunklab.evaluate.bootstrap.is_established`), ``p`` the
        two-sided bootstrap p-value (:func:`~chunklab.evaluate.bootstrap.bootstrap_p_value`)
        and ``resampled`` the unit drawn: ``resample="question"`` (the default) draws questions,
        ``"document"`` draws whole documents with all their questions (the cluster bootstrap).
        """
        if metric not in self.reported_metrics:
            raise ValueError(f"metric must be one of {', '.join(self.reported_metrics)}; got {metric!r}")
        if resample not in RESAMPLE_UNITS:
            raise ValueError(f"resample must be one of {', '.join(RESAMPLE_UNITS)}; got {resample!r}")
        qids = self._question_ids(questions)
        table = self.per_question.set_index(["strategy", "question_id"])[metric]
        for name in (a, b):
            if name not in self.summary.index:
                raise ValueError(f"no strategy {name!r} in this result; it has {list(self.summary.index)}")
        diffs = table.loc[a].reindex(qids).to_numpy(float) - table.loc[b].reindex(qids).to_numpy(float)
        if resample == "document":
            doc_of = self.per_question.drop_duplicates("question_id").set_index("question_id")["doc_id"]
            counts = cluster_resample_counts(list(doc_of.reindex(qids)), self.n_resamples, self.seed)
        else:
            counts = resample_counts(len(qids), self.n_resamples, self.seed)
        means = bootstrap_means(diffs[None, :], counts)[0]
        lo, hi = confidence_interval(means)
        return {
            "diff": float(diffs.mean()),
            "lo": float(lo),
            "hi": float(hi),
            "a_ahead": float(np.mean(means > 0)),
            "b_ahead": float(np.mean(means < 0)),
            "ties": float(np.mean(means == 0)),
            "n": len(qids),
            "sd": float(diffs.std(ddof=1)) if len(qids) > 1 else 0.0,
            "established": is_established({"lo": float(lo), "hi": float(hi)}),
            "p": bootstrap_p_value(means),
            "resampled": resample,
        }

    def compare_family(
        self,
        pairs: Iterable[tuple[str, str]],
        metric: str = "recall",
        questions: Iterable[str] | None = None,
        resample: str = "question",
    ) -> list[FamilyComparison]:
        """:meth:`compare` for each pair of a family, with Holm's correction for their number.

        Each item is the comparison plus ``p_holm`` (:func:`~chunklab.evaluate.bootstrap.holm`
        over the family) and ``established_holm`` (``p_holm < 0.05``): with many comparisons on
        one page, some intervals exclude zero by chance; Holm keeps the chance of any false
        "established" in the family at 5%.
        """
        chosen = None if questions is None else list(questions)
        family = [self.compare(a, b, metric, chosen, resample) for a, b in pairs]
        if not family:
            raise ValueError("pairs must name at least one pair of strategies")
        return [
            {**c, "p_holm": p_adj, "established_holm": bool(p_adj < 0.05 and c["established"])}
            for c, p_adj in zip(family, holm([c["p"] for c in family]), strict=True)
        ]

    def interaction(
        self,
        a: str,
        b: str,
        group: Iterable[str],
        rest: Iterable[str],
        metric: str = "recall",
        resample: str = "question",
    ) -> Comparison:
        """Is ``a``'s gain over ``b`` larger on the questions of ``group`` than on those of ``rest``?

        The difference of differences ``mean(a - b | group) - mean(a - b | rest)`` with its 95%
        bootstrap interval: each group is resampled on its own (a stratified bootstrap; whole
        documents with ``resample="document"``), with the run's ``seed`` for ``group`` and the
        next seed for ``rest``. ``n`` counts both groups, ``sd`` is the pooled per-question
        spread, ``a_ahead`` the share of resamples in which the gain is larger on ``group``.
        A gain "larger on the questions that need context" is this interval excluding zero.
        """
        if metric not in self.reported_metrics:
            raise ValueError(f"metric must be one of {', '.join(self.reported_metrics)}; got {metric!r}")
        if resample not in RESAMPLE_UNITS:
            raise ValueError(f"resample must be one of {', '.join(RESAMPLE_UNITS)}; got {resample!r}")
        ids = [self._question_ids(list(g)) for g in (group, rest)]
        if set(ids[0]) & set(ids[1]):
            raise ValueError("group and rest must not share a question")
        table = self.per_question.set_index(["strategy", "question_id"])[metric]
        doc_of = self.per_question.drop_duplicates("question_id").set_index("question_id")["doc_id"]
        diffs, means = [], []
        for offset, qids in enumerate(ids):
            d = table.loc[a].reindex(qids).to_numpy(float) - table.loc[b].reindex(qids).to_numpy(float)
            if resample == "document":
                counts = cluster_resample_counts(
                    list(doc_of.reindex(qids)), self.n_resamples, self.seed + offset
                )
            else:
                counts = resample_counts(len(qids), self.n_resamples, self.seed + offset)
            diffs.append(d)
            means.append(bootstrap_means(d[None, :], counts)[0])
        gap = means[0] - means[1]
        lo, hi = confidence_interval(gap)
        pooled = np.concatenate([d - d.mean() for d in diffs])
        return {
            "diff": float(diffs[0].mean() - diffs[1].mean()),
            "lo": float(lo),
            "hi": float(hi),
            "a_ahead": float(np.mean(gap > 0)),
            "b_ahead": float(np.mean(gap < 0)),
            "ties": float(np.mean(gap == 0)),
            "n": len(pooled),
            "sd": float(pooled.std(ddof=2)) if len(pooled) > 2 else 0.0,
            "established": is_established({"lo": float(lo), "hi": float(hi)}),
            "p": bootstrap_p_value(gap),
            "resampled": resample,
        }

    def combine(self, other: BenchmarkResult) -> BenchmarkResult:
        """This run and ``other`` as one result, so strategies of the two runs compare paired.

        Both runs must have asked the same questions in the same order, with the same ``k``,
        resamples, seed and convention; their strategies must differ. The summary is
        recomputed over the joint strategies (same resample matrix), costs kept.
        """
        for attr in ("k", "n_resamples", "seed", "convention", "relevance"):
            if getattr(self, attr) != getattr(other, attr):
                raise ValueError(
                    f"other: {attr} differs ({getattr(self, attr)!r} vs {getattr(other, attr)!r})"
                )
        qids = self._question_ids(None)
        if other._question_ids(None) != qids:
            raise ValueError("other: the two runs did not ask the same questions in the same order")
        shared = set(self.summary.index) & set(other.summary.index)
        if shared:
            raise ValueError(f"other: strategies {sorted(shared)} are in both runs")
        names = [*self.summary.index, *other.summary.index]
        per_question = pd.concat([self.per_question, other.per_question], ignore_index=True)
        costs = {
            n: {c: run.summary.loc[n, c] for c in COST_COLUMNS if c in run.summary.columns}
            for run in (self, other)
            for n in run.summary.index
        }
        summary, pairwise = summarize(
            per_question, names, qids, self.reported_metrics, costs, self.n_resamples, self.seed
        )
        return dataclasses.replace(
            self,
            per_question=per_question,
            summary=summary,
            pairwise=pairwise,
            params={**self.params, **other.params},
            wall_s=self.wall_s + other.wall_s,
            retrieved={**self.retrieved, **other.retrieved},
        )

    def subset(self, questions: Iterable[str]) -> BenchmarkResult:
        """The same run restricted to these question ids: summary and pairwise recomputed, costs kept."""
        qids = self._question_ids(questions)
        per_question = self.per_question[self.per_question["question_id"].isin(set(qids))].reset_index(
            drop=True
        )
        names = list(self.summary.index)
        costs = {
            n: {c: self.summary.loc[n, c] for c in COST_COLUMNS if c in self.summary.columns} for n in names
        }
        summary, pairwise = summarize(
            per_question, names, qids, self.reported_metrics, costs, self.n_resamples, self.seed
        )
        keep = set(qids)
        order = [q for q in dict.fromkeys(self.per_question["question_id"]) if q in keep]
        retrieved = {}
        for name, lists in self.retrieved.items():
            by_q = dict(zip(self._question_ids(None), lists, strict=False))
            retrieved[name] = [by_q[q] for q in order if q in by_q]
        return dataclasses.replace(
            self, per_question=per_question, summary=summary, pairwise=pairwise, retrieved=retrieved
        )

    def _question_ids(self, questions: Iterable[str] | None) -> list[str]:
        """Question ids in run order; the chosen ones, each checked to be in the run."""
        every = list(dict.fromkeys(self.per_question["question_id"]))
        if questions is None:
            return every
        if isinstance(questions, str):
            raise ValueError("questions must be a list of question ids, not one string")
        wanted = set(questions)
        unknown = wanted - set(every)
        if unknown:
            raise ValueError(f"unknown question id(s): {sorted(unknown)[:5]}")
        if not wanted:
            raise ValueError("questions must name at least one question id")
        return [q for q in every if q in wanted]

    def table(
        self,
        metrics: Sequence[str] = DISPLAY_METRICS,
        costs: Sequence[str] = DISPLAY_COSTS,
        digits: int = 3,
    ) -> pd.DataFrame:
        """A display table: ``mean [lo, hi]`` strings per metric and the chosen cost columns.

        Metrics the run did not measure (span metrics under document-level relevance) are left out.
        """
        metrics = [m for m in metrics if m in self.reported_metrics]
        rows = {}
        for name, row in self.summary.iterrows():
            out: dict[str, str | float] = {}
            for m in metrics:
                out[m] = f"{row[m]:.{digits}f} [{row[m + '_lo']:.{digits}f}, {row[m + '_hi']:.{digits}f}]"
            for c in costs:
                v = float(row[c])
                whole = abs(v) >= 100 or v.is_integer()  # a count prints as 50, not 50.0
                out[c] = int(round(v)) if whole else round(v, 2)
            rows[name] = out
        df = pd.DataFrame.from_dict(rows, orient="index")
        df.index.name = "strategy"
        return df

    def markdown(
        self,
        metrics: Sequence[str] = DISPLAY_METRICS,
        costs: Sequence[str] = DISPLAY_COSTS,
        digits: int = 3,
    ) -> str:
        """:meth:`table` as a GitHub-flavoured Markdown table (for reports and notes)."""
        table = self.table(metrics, costs, digits)
        header = ["strategy", *table.columns]
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
        for name, row in table.iterrows():
            cells = [str(name)] + [_cell(v) for v in row]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """Everything as JSON-ready data (summary, pairwise, per-question rows, settings)."""
        return {
            "dataset": self.dataset,
            "k": self.k,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "wall_s": self.wall_s,
            "convention": self.convention,
            "relevance": self.relevance,
            "note": self.note(),
            "metrics": {m: METRIC_DOCS[m] for m in self.reported_metrics},
            "costs": COST_DOCS,
            "strategies": self.params,
            "summary": _records(self.summary.reset_index()),
            "pairwise": _records(self.pairwise),
            "per_question": _records(self.per_question),
        }


def measured_metrics(relevance: str) -> tuple[str, ...]:
    """:data:`METRICS` for gold spans; less the span metrics for document-level relevance (qrels)."""
    if relevance == "document":
        return tuple(m for m in METRICS if m not in SPAN_METRICS)
    return METRICS


def summarize(
    per_question: pd.DataFrame,
    names: Sequence[str],
    qids: Sequence[str],
    measured: Sequence[str],
    costs: Mapping[str, Mapping[str, float]],
    n_resamples: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The summary (means, paired-bootstrap intervals, costs) and pairwise table over questions ``qids``.

    Every strategy is resampled with the same count matrix (:func:`resample_counts` of
    ``len(qids)``, ``n_resamples``, ``seed``). Metrics not in ``measured`` stay as NaN columns,
    so the layout of the summary never depends on the dataset.
    """
    counts = resample_counts(len(qids), n_resamples, seed)
    table = per_question.set_index(["strategy", "question_id"])
    summary_rows = []
    resampled: dict[str, dict[str, np.ndarray]] = {m: {} for m in measured}
    for name in names:
        block = table.loc[name].reindex(list(qids))
        values = block[list(measured)].to_numpy(dtype=np.float64).T  # (metrics, questions)
        means = bootstrap_means(values, counts)  # (metrics, resamples)
        lo, hi = confidence_interval(means)
        row: dict[str, str | float] = {"strategy": name}
        for m in METRICS:
            row[m] = row[m + "_lo"] = row[m + "_hi"] = float("nan")
        for j, m in enumerate(measured):
            row[m] = float(values[j].mean())
            row[m + "_lo"] = float(lo[j])
            row[m + "_hi"] = float(hi[j])
            resampled[m][name] = means[j]
        row.update(costs.get(name, {}))
        row["retrieved_chars"] = float(block["retrieved_chars"].mean())
        summary_rows.append(row)
    summary = pd.DataFrame(summary_rows).set_index("strategy")
    pair_rows = []
    for m in (m for m in MAIN_METRICS if m in measured):
        wins = pairwise_wins(resampled[m], names)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                pair_rows.append(
                    {
                        "metric": m,
                        "a": a,
                        "b": b,
                        "a_wins": wins[a, b],
                        "b_wins": wins[b, a],
                        "ties": max(0.0, round(1.0 - wins[a, b] - wins[b, a], 12)),
                    }
                )
    return summary, pd.DataFrame(pair_rows, columns=["metric", "a", "b", "a_wins", "b_wins", "ties"])


def _cell(value: object) -> str:
    if isinstance(value, float | np.floating):
        number = float(value)
        return f"{number:.0f}" if abs(number) >= 100 else f"{number:.2f}"
    return str(value)


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain Python values; NaN (a metric not measured) becomes None, i.e. JSON null."""
    out = []
    for rec in df.to_dict(orient="records"):
        row = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in rec.items()}
        out.append({k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()})
    return out
