"""The benchmark runner: chunk a corpus with each strategy, index it, ask every question, score.

``Benchmark(dataset, strategies, k=5).run()`` indexes each strategy in its own Chroma
collection (:class:`chunklab.retrieval.chroma.store.ChunkStore`, in a temporary folder unless ``store_dir``
is given), embeds all questions once in a batch, retrieves the top ``k`` chunks per question
and scores them by **offsets** (doc_id + character spans), because chunk texts differ across
strategies while the gold spans do not. Questions without gold spans but with
``relevant_docs`` (BEIR qrels) are scored at document level and get no span metrics.
Confidence intervals come from a paired bootstrap over questions
(:mod:`chunklab.evaluate.bootstrap`); costs are measured on the way.

Each strategy runs in small steps: :meth:`Benchmark.chunk_corpus`, :meth:`Benchmark.open_store`,
:meth:`Benchmark.retrieve`, :meth:`Benchmark.score` and :meth:`Benchmark.costs`.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from chunklab._validate import check_positive_int, check_share
from chunklab.chunk import Chunk
from chunklab.datasets.model import Dataset, GoldQuestion
from chunklab.evaluate.bootstrap import N_RESAMPLES
from chunklab.evaluate.metrics import (
    MIN_GOLD_OVERLAP,
    check_convention,
    hits_by_containment,
    hits_by_document,
    hits_by_span,
    hits_by_text,
    precision_omega,
    rank_metrics,
    span_metrics,
)
from chunklab.evaluate.result import METRICS, SPAN_METRICS, BenchmarkResult, measured_metrics, summarize
from chunklab.protocols import DocumentLike, EncoderLike

if TYPE_CHECKING:
    from chunklab.chunkers.catalog import ChunkFn, Strategy
    from chunklab.retrieval.chroma.store import ChunkStore

__all__ = ["Benchmark", "Indexed", "as_strategies"]


@dataclass
class Indexed:
    """One strategy's chunks and the store they were indexed in (what the later steps need)."""

    chunks: list[Chunk]
    leaves: list[Chunk]
    store: ChunkStore
    chunk_s: float
    ingest_s: float
    chunker_texts: int


class Benchmark:
    """Compare chunking strategies on a dataset of documents and questions with gold spans.

    ``dataset`` is a :class:`chunklab.datasets.model.Dataset`: ``documents`` (``doc_id``,
    ``text``, ...) and ``questions`` (``id``, ``question``, ``doc_id``, ``gold_spans``,
    ``answers``; or ``relevant_docs`` instead of gold spans for document-level relevance),
    as every loader of :func:`chunklab.evaluate.load_dataset` gives them. ``strategies`` is a list of
    :class:`chunklab.chunkers.catalog.Strategy`, registry names, or a mapping
    ``name -> callable(document) -> list[Chunk]``. ``encoder`` defaults to the shared cached
    :func:`chunklab.embed.get_encoder`. Each strategy is indexed in its own collection under
    ``store_dir`` (a temporary folder removed after the run when not given). ``convention``
    chooses how span metrics count retrieved characters (see
    :func:`chunklab.evaluate.metrics.span_metrics`). ``late=True`` embeds the chunks by **late
    chunking** (:class:`chunklab.embed.late.LateEncoder`: each document run through MiniLM in
    windows of its ``max_seq_length`` tokens, each chunk's token embeddings mean-pooled) instead of
    each chunk alone; the questions are embedded as usual.
    """

    def __init__(
        self,
        dataset: Dataset,
        strategies: str | Mapping[str, Strategy | ChunkFn] | Iterable[str | Strategy],
        k: int = 5,
        encoder: EncoderLike | None = None,
        store_dir: str | Path | None = None,
        n_resamples: int = N_RESAMPLES,
        seed: int = 0,
        min_gold_overlap: float = MIN_GOLD_OVERLAP,
        convention: str = "union",
        *,
        late: bool = False,
    ) -> None:
        self.k = check_positive_int(k, "k")
        self.n_resamples = check_positive_int(n_resamples, "n_resamples")
        self.min_gold_overlap = check_share(min_gold_overlap, "min_gold_overlap")
        self.convention = check_convention(convention)
        self.documents: list[DocumentLike] = list(dataset.documents)
        self.questions: list[GoldQuestion] = list(dataset.questions)
        if not self.documents:
            raise ValueError("the dataset has no documents")
        if not self.questions:
            raise ValueError("the dataset has no questions (check the split)")
        self.dataset_name = str(dataset.name)
        self.relevance = _relevance(self.questions)
        self._check_dataset()
        self.strategies = as_strategies(strategies)
        self.encoder = encoder
        self.store_dir = Path(store_dir) if store_dir is not None else None
        self.seed = seed
        if not isinstance(late, bool):
            raise ValueError(f"late must be True or False, got {late!r}")
        self.late = late

    @property
    def metrics(self) -> tuple[str, ...]:
        """The per-question metric columns this dataset supports (no span metrics for qrels)."""
        return measured_metrics(self.relevance)

    def _check_dataset(self) -> None:
        docs: dict[str, DocumentLike] = {}
        for d in self.documents:
            if not isinstance(getattr(d, "doc_id", None), str) or not isinstance(
                getattr(d, "text", None), str
            ):
                raise ValueError(f"a document needs str doc_id and text, got {d!r:.80}")
            if d.doc_id in docs:
                raise ValueError(f"document id {d.doc_id!r} appears twice")
            docs[d.doc_id] = d
        ids = set()
        for q in self.questions:
            if q.id in ids:
                raise ValueError(f"question id {q.id!r} appears twice")
            ids.add(q.id)
            if self.relevance == "document":
                unknown = [d for d in q.relevant_docs if d not in docs]
                if unknown:
                    raise ValueError(f"question {q.id!r} names unknown relevant document(s) {unknown[:3]}")
                continue
            if q.doc_id not in docs:
                raise ValueError(f"question {q.id!r} asks about unknown document {q.doc_id!r}")
            if not q.gold_spans:
                raise ValueError(f"question {q.id!r} has no gold spans")
            n = len(docs[q.doc_id].text)
            for s, e in q.gold_spans:
                if not 0 <= s < e <= n:
                    raise ValueError(
                        f"question {q.id!r}: gold span ({s}, {e}) outside its document (length {n})"
                    )

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
        rows: list[dict[str, str | float]] = []
        costs: dict[str, dict[str, float]] = {}
        retrieved_by: dict[str, list[list[Chunk]]] = {}
        try:
            query_vecs = encoder.encode([q.question for q in self.questions], show_progress=False)
            bar = tqdm(self.strategies, desc="strategies", unit="strategy", disable=not progress)
            for i, strategy in enumerate(bar):
                bar.set_postfix_str(strategy.name)
                indexed = self.index(strategy, self.open_store(strategy, i, root, encoder), encoder, progress)
                retrieved, latencies = self.retrieve(strategy, indexed, query_vecs)
                rows.extend(self.score_strategy(strategy.name, indexed.leaves, retrieved))
                costs[strategy.name] = self.costs(indexed, latencies, encoder)
                retrieved_by[strategy.name] = retrieved
            bar.close()
        finally:
            if own_dir:
                shutil.rmtree(root, ignore_errors=True)
        per_question = pd.DataFrame(
            rows, columns=["strategy", "question_id", "doc_id", *METRICS, "retrieved_chars"]
        )
        names = [st.name for st in self.strategies]
        summary, pairwise = summarize(
            per_question,
            names,
            [q.id for q in self.questions],
            self.metrics,
            costs,
            self.n_resamples,
            self.seed,
        )
        return BenchmarkResult(
            per_question,
            summary,
            pairwise,
            self.k,
            self.n_resamples,
            self.seed,
            self.dataset_name,
            {
                s.name: {
                    "kind": s.family,  # the on-disk key stays "kind": stored results read it
                    **s.params,
                    **({"sweep": s.sweep} if s.sweep else {}),
                }
                for s in self.strategies
            },
            time.perf_counter() - t_start,
            convention=self.convention,
            relevance=self.relevance,
            retrieved=retrieved_by,
            window=getattr(encoder, "max_seq_length", None),
        )

    # ------------------------------------------------------------------------------ steps
    def chunk_corpus(self, strategy: Strategy, encoder: EncoderLike) -> tuple[list[Chunk], float, int]:
        """Every non-blank chunk of every document: ``(chunks, seconds, texts the chunker embedded)``.

        Chunked by :func:`chunklab.ingest.stages.chunk_document`, the rule ``chunk`` and ``index`` use.
        """
        t0 = time.perf_counter()
        texts_before = _texts_seen(encoder)
        from chunklab.ingest.stages import chunk_document

        chunks: list[Chunk] = []
        for doc in self.documents:
            chunks.extend(chunk_document(doc, strategy, encoder))
        if not chunks:
            raise ValueError(f"strategy {strategy.name!r} produced no chunks")
        return chunks, time.perf_counter() - t0, _texts_seen(encoder) - texts_before

    def open_store(self, strategy: Strategy, index: int, root: Path, encoder: EncoderLike) -> ChunkStore:
        """An empty :class:`~chunklab.retrieval.chroma.store.ChunkStore` of its own for strategy ``index``."""
        from chunklab.retrieval.chroma.store import ChunkStore

        name = f"s{index:02d}-" + re.sub(r"[^A-Za-z0-9._-]+", "-", strategy.name).strip("-._")[:60]
        from chunklab.ingest.plan import collection_config

        config = collection_config(strategy)
        # replace=True: a reused store_dir built with another model or chunking is emptied, not mixed
        store = ChunkStore(path=root / name, collection=name, encoder=encoder, config=config, replace=True)
        if store.count() or store.count(parents=True):  # a reused store_dir: start clean
            store.clear()
        return store

    def index(
        self, strategy: Strategy, store: ChunkStore, encoder: EncoderLike, progress: bool = False
    ) -> Indexed:
        """Chunk the corpus with ``strategy`` and upsert the chunks it searches into ``store``."""
        chunks, chunk_s, chunker_texts = self.chunk_corpus(strategy, encoder)
        leaves = strategy.index_chunks(chunks)
        leaves = list({c.id: c for c in leaves}.values())
        t1 = time.perf_counter()
        vectors = self.late_vectors(leaves, encoder) if self.late else None
        store.add(leaves, show_progress=progress and len(leaves) >= 2000, vectors=vectors)
        return Indexed(chunks, leaves, store, chunk_s, chunk_s + time.perf_counter() - t1, chunker_texts)

    def late_vectors(self, leaves: Sequence[Chunk], encoder: EncoderLike) -> np.ndarray:
        """Late-chunked vectors of ``leaves`` (aligned with them): each document's windows run once."""
        from chunklab.embed import Encoder
        from chunklab.embed.late import LateEncoder

        if not isinstance(encoder, Encoder):
            raise ValueError(f"late=True needs a MiniLM chunklab.embed.Encoder, got {encoder!r:.80}")
        texts = {d.doc_id: d.text for d in self.documents}
        by_doc: dict[str, list[int]] = {}
        for i, c in enumerate(leaves):
            by_doc.setdefault(c.doc_id, []).append(i)
        vecs = LateEncoder(encoder).encode_documents(
            [(texts[doc], [(leaves[i].start, leaves[i].end) for i in rows]) for doc, rows in by_doc.items()]
        )
        out = np.empty((len(leaves), encoder.dim), dtype=np.float32)
        for rows, block in zip(by_doc.values(), vecs, strict=True):
            out[rows] = block
        return out

    def retrieve(
        self, strategy: Strategy, indexed: Indexed, query_vecs: np.ndarray
    ) -> tuple[list[list[Chunk]], list[float]]:
        """The top ``k`` chunks per question (auto-merged when the strategy says so) and latencies in ms."""
        by_id = {c.id: c for c in indexed.chunks}
        post = strategy.postprocess
        latencies: list[float] = []
        retrieved: list[list[Chunk]] = []
        for vec in query_vecs:
            tq = time.perf_counter()
            hits = indexed.store.search_vectors(vec[None, :], k=self.k)[0]
            if post is not None:
                hits = post(hits, by_id)[: self.k]
            latencies.append((time.perf_counter() - tq) * 1000)
            retrieved.append([c for c, _ in hits])
        return retrieved, latencies

    def score_strategy(
        self, name: str, leaves: Sequence[Chunk], retrieved: Sequence[Sequence[Chunk]]
    ) -> list[dict[str, str | float]]:
        """One row of :data:`METRICS` per question for one strategy's retrieved chunks."""
        spans_by_doc: dict[str, list[tuple[str, int, int]]] = {}
        for c in leaves:
            spans_by_doc.setdefault(c.doc_id, []).append((c.doc_id, c.start, c.end))
        return [
            {
                "strategy": name,
                "question_id": q.id,
                "doc_id": q.doc_id,
                **self.score(found, q, spans_by_doc.get(q.doc_id, [])),
            }
            for q, found in zip(self.questions, retrieved, strict=True)
        ]

    def score(
        self,
        retrieved: Sequence[Chunk],
        question: GoldQuestion,
        doc_chunk_spans: Sequence[tuple[str, int, int]],
    ) -> dict[str, float]:
        """Every metric of :data:`METRICS` for one question's retrieved chunks (already cut to k).

        Under document-level relevance the span metrics are NaN (not measured).
        """
        if self.relevance == "document":
            hits = hits_by_document([c.doc_id for c in retrieved], question.relevant_docs)
            out = rank_metrics(hits, len(question.relevant_docs), self.k)
            out.update({m: float("nan") for m in SPAN_METRICS})
            out["text_recall"] = out["recall"]
            out["retrieved_chars"] = float(sum(c.end - c.start for c in retrieved))
            return out
        gold = [(question.doc_id, s, e) for s, e in question.gold_spans]
        spans = [(c.doc_id, c.start, c.end) for c in retrieved]
        hits = hits_by_span(spans, gold, k=None, min_gold_overlap=self.min_gold_overlap)
        out = rank_metrics(hits, len(gold), self.k)
        out["full_recall"] = rank_metrics(hits_by_containment(spans, gold), len(gold), self.k)["recall"]
        chars = span_metrics(spans, gold, self.convention)
        out["char_recall"] = chars["recall"]
        out["char_precision"] = chars["precision"]
        out["iou"] = chars["iou"]
        out["precision_omega"] = precision_omega(doc_chunk_spans, gold, self.convention)
        answers = list(question.answers)
        if answers:
            found = set().union(*hits_by_text([c.text for c in retrieved], answers)) if retrieved else set()
            out["text_recall"] = len(found) / len(answers)
        else:
            out["text_recall"] = out["recall"]
        out["retrieved_chars"] = float(sum(c.end - c.start for c in retrieved))
        return out

    def costs(self, indexed: Indexed, latencies: Sequence[float], encoder: EncoderLike) -> dict[str, float]:
        """The cost columns of :data:`~chunklab.evaluate.result.COST_COLUMNS` for one indexed strategy."""
        store = indexed.store
        stats = store.stats()
        embedded = [store.embedded_text(c) for c in indexed.leaves]
        token_counts = _token_counts(embedded)
        window = getattr(encoder, "max_seq_length", 256)
        # [CLS] and [SEP]; a static model has no window, and late chunking pools every token of a chunk
        limit = int(window) - 2 if window and not self.late else None
        truncated = sum(n > limit for n in token_counts) if limit is not None else 0
        return {
            "chunks": len({c.id for c in indexed.chunks}),
            "vectors": int(stats["vectors"]),
            "chars_embedded": sum(len(t) for t in embedded),
            "tokens_embedded": sum(token_counts),
            "truncated_chunks": truncated,
            "truncated": truncated / len(token_counts) if token_counts else 0.0,
            "vector_bytes": int(stats["raw_vector_bytes"]),
            "index_bytes": int(stats["bytes_on_disk"]),
            "chunk_s": indexed.chunk_s,
            "chunker_texts_embedded": indexed.chunker_texts,
            "ingest_s": indexed.ingest_s,
            "query_p50_ms": float(np.percentile(latencies, 50)),
            "query_p95_ms": float(np.percentile(latencies, 95)),
        }


def as_strategies(
    strategies: str | Mapping[str, Strategy | ChunkFn] | Iterable[str | Strategy],
) -> list[Strategy]:
    """Normalize names, Strategy objects, or a ``{name: callable}`` mapping to Strategy objects."""
    from chunklab.chunkers.catalog import Strategy, get_strategy, parse_strategies

    if isinstance(strategies, str):
        return parse_strategies(strategies)
    if isinstance(strategies, Mapping):
        items: Iterable[object] = [  # the mapping's key names the strategy
            dataclasses.replace(s, name=str(n))
            if isinstance(s, Strategy)
            else Strategy(str(n), "custom", {}, _wrap(s))
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


def _relevance(questions: Sequence[GoldQuestion]) -> str:
    """``"document"`` when every question comes with ``relevant_docs`` and no gold spans, else ``"span"``."""
    doc_level = [not q.gold_spans and bool(q.relevant_docs) for q in questions]
    if all(doc_level):
        return "document"
    if any(doc_level):
        raise ValueError("mix of questions with gold spans and questions with only relevant documents")
    return "span"


def _wrap(fn: ChunkFn) -> ChunkFn:
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


def _texts_seen(encoder: object) -> int:
    """Texts the encoder embedded or answered from its cache so far (0 if it does not count)."""
    return int(getattr(encoder, "model_calls", 0)) + int(getattr(encoder, "cache_hits", 0))
