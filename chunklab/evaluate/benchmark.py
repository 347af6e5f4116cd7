"""The benchmark runner: chunk a corpus with each strategy, index it, ask every question, score.

``Benchmark(dataset, strategies, k=5).run()`` indexes each strategy in its own Chroma
collection (:class:`chunklab.store.ChunkStore`, in a temporary folder unless ``store_dir``
is given), embeds all questions once in a batch, retrieves the top ``k`` chunks per question
and scores them by **offsets** (doc_id + character spans), because chunk texts differ across
strategies while the gold spans do not. Confidence intervals come from a paired bootstrap
over questions (:mod:`chunklab.evaluate.bootstrap`); costs are measured on the way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from chunklab.chunk import Chunk, embedding_text
from chunklab.evaluate.bootstrap import (
    N_RESAMPLES,
    bootstrap_means,
    confidence_interval,
    pairwise_wins,
    resample_counts,
)
from chunklab.evaluate.metrics import (
    MIN_GOLD_OVERLAP,
    hits_by_span,
    hits_by_text,
    precision_omega,
    rank_metrics,
    span_metrics,
)

__all__ = ["COST_COLUMNS", "MAIN_METRICS", "METRICS", "Benchmark", "BenchmarkResult", "as_strategies"]

#: per-question metric columns, in table order
METRICS = (
    "hit",
    "recall",
    "precision",
    "mrr",
    "ndcg",
    "char_recall",
    "char_precision",
    "iou",
    "precision_omega",
    "text_recall",
)
#: metrics compared pair by pair in :attr:`BenchmarkResult.pairwise`
MAIN_METRICS = ("recall", "mrr", "ndcg", "char_recall", "char_precision", "iou")
#: cost columns of the summary
COST_COLUMNS = (
    "chunks",
    "vectors",
    "chars_embedded",
    "tokens_embedded",
    "truncated_chunks",
    "vector_bytes",
    "index_bytes",
    "chunk_s",
    "chunker_texts_embedded",
    "ingest_s",
    "query_p50_ms",
    "query_p95_ms",
    "retrieved_chars",
)

#: cost columns shown by :meth:`BenchmarkResult.table`
DISPLAY_COSTS = ("chunks", "vectors", "tokens_embedded", "retrieved_chars", "index_bytes", "ingest_s", "query_p95_ms")

METRIC_DOCS = {
    "hit": "1 if any top-k chunk is relevant to a gold span (span_hit: >= 50% of the gold, or inside it)",
    "recall": "share of the question's gold spans hit by a top-k chunk",
    "precision": "share of the top-k chunks relevant to some gold span",
    "mrr": "1 / rank of the first relevant chunk (0 if none)",
    "ndcg": "binary-relevance nDCG@k, each gold span counted once",
    "char_recall": "share of gold characters covered by the union of the top-k spans",
    "char_precision": "gold characters covered / total characters retrieved (overlaps counted each time)",
    "iou": "|union of retrieved ∩ gold| / |union of retrieved ∪ gold| in characters",
    "precision_omega": "char precision of every chunk that touches the gold (no retrieval: the chunker alone)",
    "text_recall": "course definition: share of gold quotes inside a top-k chunk's text or containing it",
}


COST_DOCS = {
    "chunks": "chunks the strategy produced (parents included for hierarchical)",
    "vectors": "vectors in the index (what is searched: leaves only for hierarchical)",
    "chars_embedded": "characters of the embedded texts (chunk text plus its context header)",
    "tokens_embedded": "MiniLM tokens of the embedded texts",
    "truncated_chunks": "embedded texts longer than the model's window (their tail is not embedded)",
    "vector_bytes": "raw float32 vector bytes, 4 * vectors * dim",
    "index_bytes": "bytes on disk of the strategy's Chroma folder",
    "chunk_s": "seconds spent chunking (semantic chunking embeds sentences here)",
    "chunker_texts_embedded": "texts the chunker itself embedded or read from the cache",
    "ingest_s": "chunking + embedding + writing the index, seconds",
    "query_p50_ms": "median search latency per question (vector search, plus auto-merge), ms",
    "query_p95_ms": "95th percentile of that latency, ms",
    "retrieved_chars": "mean characters of the retrieved chunks per question (context handed on)",
}


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

    def table(self, metrics: Sequence[str] = ("recall", "mrr", "ndcg", "char_recall", "char_precision", "iou"),
              costs: Sequence[str] = DISPLAY_COSTS,
              digits: int = 3) -> pd.DataFrame:
        """A display table: ``mean [lo, hi]`` strings per metric and the chosen cost columns."""
        rows = {}
        for name, row in self.summary.iterrows():
            out: dict[str, Any] = {}
            for m in metrics:
                out[m] = f"{row[m]:.{digits}f} [{row[m + '_lo']:.{digits}f}, {row[m + '_hi']:.{digits}f}]"
            for c in costs:
                v = row[c]
                out[c] = int(round(v)) if abs(v) >= 100 else round(float(v), 2)
            rows[name] = out
        df = pd.DataFrame.from_dict(rows, orient="index")
        df.index.name = "strategy"
        return df

    def markdown(self, metrics: Sequence[str] = ("recall", "mrr", "ndcg", "char_recall", "char_precision", "iou"),
                 costs: Sequence[str] = DISPLAY_COSTS,
                 digits: int = 3) -> str:
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
            "metrics": METRIC_DOCS,
            "costs": COST_DOCS,
            "strategies": self.params,
            "summary": _records(self.summary.reset_index()),
            "pairwise": _records(self.pairwise),
            "per_question": _records(self.per_question),
        }


class Benchmark:
    """Compare chunking strategies on a dataset of documents and questions with gold spans.

    ``dataset`` has ``documents`` (``doc_id``, ``text``, ...) and ``questions`` (``id``,
    ``question``, ``doc_id``, ``gold_spans``, optionally ``answers``). ``strategies`` is a
    list of :class:`chunklab.strategies.Strategy`, registry names, or a mapping
    ``name -> callable(document) -> list[Chunk]``. ``encoder`` defaults to the shared cached
    :func:`chunklab.embed.get_encoder`. Each strategy is indexed in its own collection under
    ``store_dir`` (a temporary folder removed after the run when not given).
    """

    def __init__(
        self,
        dataset: Any,
        strategies: Any,
        k: int = 5,
        encoder: Any = None,
        store_dir: str | Path | None = None,
        n_resamples: int = N_RESAMPLES,
        seed: int = 0,
        min_gold_overlap: float = MIN_GOLD_OVERLAP,
    ) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples <= 0:
            raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
        if not 0 < min_gold_overlap <= 1:
            raise ValueError(f"min_gold_overlap must be in (0, 1], got {min_gold_overlap!r}")
        self.documents = list(getattr(dataset, "documents", None) or [])
        self.questions = list(getattr(dataset, "questions", None) or [])
        if not self.documents:
            raise ValueError("the dataset has no documents")
        if not self.questions:
            raise ValueError("the dataset has no questions (check the split)")
        self.dataset_name = str(getattr(dataset, "name", ""))
        self._check_dataset()
        self.strategies = as_strategies(strategies)
        self.k = k
        self.encoder = encoder
        self.store_dir = Path(store_dir) if store_dir is not None else None
        self.n_resamples = n_resamples
        self.seed = seed
        self.min_gold_overlap = min_gold_overlap

    def _check_dataset(self) -> None:
        docs = {}
        for d in self.documents:
            if not isinstance(getattr(d, "doc_id", None), str) or not isinstance(getattr(d, "text", None), str):
                raise ValueError(f"a document needs str doc_id and text, got {d!r:.80}")
            if d.doc_id in docs:
                raise ValueError(f"document id {d.doc_id!r} appears twice")
            docs[d.doc_id] = d
        ids = set()
        for q in self.questions:
            if q.id in ids:
                raise ValueError(f"question id {q.id!r} appears twice")
            ids.add(q.id)
            if q.doc_id not in docs:
                raise ValueError(f"question {q.id!r} asks about unknown document {q.doc_id!r}")
            if not q.gold_spans:
                raise ValueError(f"question {q.id!r} has no gold spans")
            n = len(docs[q.doc_id].text)
            for s, e in q.gold_spans:
                if not 0 <= s < e <= n:
                    raise ValueError(f"question {q.id!r}: gold span ({s}, {e}) outside its document (length {n})")

    # ------------------------------------------------------------------------------ run
    def run(self, progress: bool = True) -> BenchmarkResult:
        """Chunk, index, retrieve and score every strategy; bootstrap the summary."""
        from tqdm.auto import tqdm

        from chunklab.embed import get_encoder

        t_start = time.perf_counter()
        encoder = self.encoder if self.encoder is not None else get_encoder()
        own_dir = self.store_dir is None
        root = Path(tempfile.mkdtemp(prefix="chunklab-bench-")) if own_dir else self.store_dir
        assert root is not None
        rows: list[dict[str, Any]] = []
        costs: dict[str, dict[str, Any]] = {}
        try:
            query_vecs = encoder.encode([q.question for q in self.questions], show_progress=False)
            bar = tqdm(self.strategies, desc="strategies", unit="strategy", disable=not progress)
            for i, strategy in enumerate(bar):
                bar.set_postfix_str(strategy.name)
                r, c = self._run_one(strategy, i, encoder, query_vecs, root, progress)
                rows.extend(r)
                costs[strategy.name] = c
            bar.close()
        finally:
            if own_dir:
                shutil.rmtree(root, ignore_errors=True)
        per_question = pd.DataFrame(
            rows, columns=["strategy", "question_id", "doc_id", *METRICS, "retrieved_chars"]
        )
        summary, pairwise = self._summarize(per_question, costs)
        return BenchmarkResult(
            per_question,
            summary,
            pairwise,
            self.k,
            self.n_resamples,
            self.seed,
            self.dataset_name,
            {s.name: {"kind": s.kind, **s.params, **({"sweep": s.sweep} if getattr(s, "sweep", None) else {})}
             for s in self.strategies},
            time.perf_counter() - t_start,
        )

    def _run_one(
        self, strategy: Any, index: int, encoder: Any, query_vecs: np.ndarray, root: Path, progress: bool
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        from chunklab.store import ChunkStore

        t0 = time.perf_counter()
        texts_before = _texts_seen(encoder)
        chunks: list[Chunk] = []
        for doc in self.documents:
            got = strategy(doc, encoder=encoder)
            for c in got:
                if not isinstance(c, Chunk):
                    raise ValueError(f"strategy {strategy.name!r} returned {type(c).__name__}, not Chunk")
            chunks.extend(got)
        chunk_s = time.perf_counter() - t0
        chunker_texts = _texts_seen(encoder) - texts_before
        chunks = [c for c in chunks if c.text.strip()]
        if not chunks:
            raise ValueError(f"strategy {strategy.name!r} produced no chunks")
        by_id = {c.id: c for c in chunks}
        leaves = strategy.index_chunks(chunks) if hasattr(strategy, "index_chunks") else chunks
        name = f"s{index:02d}-" + re.sub(r"[^A-Za-z0-9._-]+", "-", strategy.name).strip("-._")[:60]
        folder = root / name
        store = ChunkStore(path=folder, collection=name, encoder=encoder)
        if store.count() or store.count(parents=True):  # a reused store_dir: start clean
            for coll in (name, name + "_parents"):
                with contextlib.suppress(Exception):
                    store.client.delete_collection(coll)
            store = ChunkStore(path=folder, collection=name, encoder=encoder)
        leaves = list({c.id: c for c in leaves}.values())
        embedded = [embedding_text(c) if store.embed_context else c.text for c in leaves]
        token_counts = _token_counts(embedded)
        limit = int(getattr(encoder, "max_seq_length", 256)) - 2  # [CLS] and [SEP]
        t1 = time.perf_counter()
        store.add(leaves, show_progress=progress and len(leaves) >= 2000)
        ingest_s = chunk_s + time.perf_counter() - t1
        stats = store.stats()

        latencies = []
        retrieved: list[list[Chunk]] = []
        for vec in query_vecs:
            tq = time.perf_counter()
            hits = store.search_vectors(vec[None, :], k=self.k)[0]
            if getattr(strategy, "postprocess", None) is not None:
                hits = strategy.postprocess(hits, by_id)[: self.k]
            found = [c for c, _ in hits]
            latencies.append((time.perf_counter() - tq) * 1000)
            retrieved.append(found)

        spans_by_doc: dict[str, list[tuple[str, int, int]]] = {}
        for c in leaves:
            spans_by_doc.setdefault(c.doc_id, []).append((c.doc_id, c.start, c.end))
        rows = []
        for q, found in zip(self.questions, retrieved, strict=True):
            rows.append(
                {"strategy": strategy.name, "question_id": q.id, "doc_id": q.doc_id,
                 **self.score(found, q, spans_by_doc.get(q.doc_id, []))}
            )
        cost = {
            "chunks": len(by_id),
            "vectors": int(stats.get("vectors", len(leaves))),
            "chars_embedded": sum(len(t) for t in embedded),
            "tokens_embedded": sum(token_counts),
            "truncated_chunks": sum(n > limit for n in token_counts),
            "vector_bytes": 4 * int(stats.get("vectors", len(leaves))) * int(getattr(encoder, "dim", 384)),
            "index_bytes": _dir_bytes(folder),
            "chunk_s": chunk_s,
            "chunker_texts_embedded": chunker_texts,
            "ingest_s": ingest_s,
            "query_p50_ms": float(np.percentile(latencies, 50)),
            "query_p95_ms": float(np.percentile(latencies, 95)),
        }
        del store
        return rows, cost

    def score(self, retrieved: Sequence[Chunk], question: Any, doc_chunk_spans: Sequence[tuple[str, int, int]]) -> dict[str, float]:
        """Every metric of :data:`METRICS` for one question's retrieved chunks (already cut to k)."""
        gold = [(question.doc_id, s, e) for s, e in question.gold_spans]
        spans = [(c.doc_id, c.start, c.end) for c in retrieved]
        hits = hits_by_span(spans, gold, k=None, min_gold_overlap=self.min_gold_overlap)
        out = rank_metrics(hits, len(gold), self.k)
        chars = span_metrics(spans, gold)
        out["char_recall"] = chars["recall"]
        out["char_precision"] = chars["precision"]
        out["iou"] = chars["iou"]
        out["precision_omega"] = precision_omega(doc_chunk_spans, gold)
        answers = list(getattr(question, "answers", None) or [])
        if answers:
            found = set().union(*hits_by_text([c.text for c in retrieved], answers)) if retrieved else set()
            out["text_recall"] = len(found) / len(answers)
        else:
            out["text_recall"] = out["recall"]
        out["retrieved_chars"] = float(sum(c.end - c.start for c in retrieved))
        return out

    # ------------------------------------------------------------------------------ summary
    def _summarize(self, per_question: pd.DataFrame, costs: Mapping[str, Mapping[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
        names = [s.name for s in self.strategies]
        qids = [q.id for q in self.questions]
        counts = resample_counts(len(qids), self.n_resamples, self.seed)
        table = per_question.set_index(["strategy", "question_id"])
        summary_rows = []
        resampled: dict[str, dict[str, np.ndarray]] = {m: {} for m in METRICS}
        for name in names:
            block = table.loc[name].reindex(qids)
            values = block[list(METRICS)].to_numpy(dtype=np.float64).T  # (metrics, questions)
            means = bootstrap_means(values, counts)  # (metrics, resamples)
            lo, hi = confidence_interval(means)
            row: dict[str, Any] = {"strategy": name}
            for j, m in enumerate(METRICS):
                row[m] = float(values[j].mean())
                row[m + "_lo"] = float(lo[j])
                row[m + "_hi"] = float(hi[j])
                resampled[m][name] = means[j]
            row.update(costs[name])
            row["retrieved_chars"] = float(block["retrieved_chars"].mean())
            summary_rows.append(row)
        summary = pd.DataFrame(summary_rows).set_index("strategy")
        pair_rows = []
        for m in MAIN_METRICS:
            wins = pairwise_wins(resampled[m], names)
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    pair_rows.append(
                        {"metric": m, "a": a, "b": b, "a_wins": wins[a, b], "b_wins": wins[b, a],
                         "ties": max(0.0, round(1.0 - wins[a, b] - wins[b, a], 12))}
                    )
        pairwise = pd.DataFrame(pair_rows, columns=["metric", "a", "b", "a_wins", "b_wins", "ties"])
        return summary, pairwise


def as_strategies(strategies: Any) -> list[Any]:
    """Normalize names, Strategy objects, or a ``{name: callable}`` mapping to Strategy objects."""
    from chunklab.strategies import Strategy, get_strategy

    if isinstance(strategies, str):
        from chunklab.strategies import parse_strategies

        return parse_strategies(strategies)
    if isinstance(strategies, Mapping):
        items: Iterable[Any] = [  # the mapping's key names the strategy
            dataclasses.replace(s, name=str(n)) if isinstance(s, Strategy) else Strategy(str(n), "custom", {}, _wrap(s))
            for n, s in strategies.items()
        ]
    elif isinstance(strategies, Iterable):
        items = [get_strategy(s) if isinstance(s, str) else s for s in strategies]
    else:
        raise ValueError(f"strategies must be a list or a mapping, got {type(strategies).__name__}")
    out = []
    for s in items:
        if not isinstance(s, Strategy):
            raise ValueError(f"not a strategy: {s!r:.80} (use a registry name, a Strategy or a callable)")
        out.append(s)
    if not out:
        raise ValueError("no strategies to compare")
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise ValueError(f"strategy names must be unique, got {names}")
    return out


def _wrap(fn: Any) -> Any:
    if not callable(fn):
        raise ValueError(f"a strategy must be callable(document) -> list[Chunk], got {fn!r:.80}")
    return fn


def _token_counts(texts: Sequence[str]) -> list[int]:
    """MiniLM tokens of each text (special tokens excluded)."""
    from chunklab.units import get_tokenizer

    if not texts:
        return []
    tok = get_tokenizer()
    return [len(e.ids) for e in tok.encode_batch(list(texts), add_special_tokens=False)]


def _cell(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return f"{value:.0f}" if abs(value) >= 100 else f"{value:.2f}"
    return str(value)


def _texts_seen(encoder: Any) -> int:
    """Texts the encoder embedded or answered from its cache so far (0 if it does not count)."""
    return int(getattr(encoder, "model_calls", 0)) + int(getattr(encoder, "cache_hits", 0))


def _dir_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in df.to_dict(orient="records"):
        out.append({k: (v.item() if isinstance(v, np.generic) else v) for k, v in rec.items()})
    return out
