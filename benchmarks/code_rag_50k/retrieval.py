"""The retrieval part: questions from the whole corpus, every chunk indexed, each retriever scored.

Full scale: BM25 (plain, and contextual: the chunk's header in front, :mod:`.index`), the
static embedding and their reciprocal-rank fusions (MiniLM too with ``--minilm-full``); then
MiniLM on a stratified sample of files. Structural vs recursive, and contextual vs plain, with
paired 95 % bootstrap intervals on the same questions. Per question, each retriever's rank of
the first chunk that hits the gold function and of the first chunk from the gold file (top
``fuse_depth``) are kept under ``per_question`` (written to a file of their own by :mod:`.report`).
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

from chunklab.datasets.corpora.code import CodeCorpus
from chunklab.datasets.questions.code import code_questions
from chunklab.embed import Encoder
from chunklab.embed.models import resolve_device
from chunklab.evaluate.bootstrap import bootstrap_means, confidence_interval, resample_counts
from chunklab.evaluate.metrics import hits_by_span, rank_metrics, span_metrics
from chunklab.retrieval.hybrid import reciprocal_rank_fusion_ids
from chunklab.retrieval.vectors import agreement, exact_topk

from .chunking import doc_id
from .config import CONTEXTUAL, METRIC_NAMES, RETRIEVERS_FULL, Config
from .index import CodeIndex, build_index
from .resources import Memory


def questions_for(corpus: CodeCorpus, config: Config) -> tuple[Any, dict[str, str], float]:
    """The question set drawn from the whole corpus, the indexed texts it overrides (docstrings
    stripped) and the seconds it took."""
    t0 = time.perf_counter()
    ds = code_questions(
        n_files=min(config.question_files, len(corpus)), seed=0, corpus=corpus, min_file_chars=500
    )
    return ds, {d.doc_id: d.text for d in ds.documents}, time.perf_counter() - t0


def retrieval_full(corpus: CodeCorpus, config: Config, memory: Memory) -> dict[str, Any]:
    """The retrieval part's first scope, ``full``: every chunk of every file indexed, every question asked."""
    ds, overrides, questions_s = questions_for(corpus, config)
    questions = ds.questions
    out: dict[str, Any] = {
        "questions": len(questions),
        "question_files": len(ds.documents),
        "questions_s": round(questions_s, 1),
        "k": config.k,
        "scopes": {},
    }
    t1, cpu1 = time.perf_counter(), time.process_time()
    full_retrievers = (
        (*RETRIEVERS_FULL, "minilm") if minilm_at_full_scale(config.minilm_full) else RETRIEVERS_FULL
    )
    full = evaluate_scope(
        corpus, list(range(len(corpus))), questions, full_retrievers, config, overrides, memory
    )
    full["wall_s"] = round(time.perf_counter() - t1, 1)
    full["main_cpu_s"] = round(time.process_time() - cpu1, 1)
    full["peak_rss_mb"] = memory.peak()
    out["scopes"]["full"] = full
    return out


def retrieval_sample(
    corpus: CodeCorpus, config: Config, memory: Memory, out: dict[str, Any]
) -> dict[str, Any]:
    """``out`` with the dense sample's scope added (``config.dense_files`` files, MiniLM too)."""
    if not config.dense_files:
        return out
    ds, overrides, _ = questions_for(corpus, config)
    sample, asked = stratified_sample(corpus, ds.questions, config.dense_files, seed=0)
    scope = evaluate_scope(corpus, sample, asked, (*RETRIEVERS_FULL, "minilm"), config, overrides, memory)
    scope["sampling"] = (
        f"{len(asked)} questions from {len({q.doc_id for q in asked})} files + stratified sample by project"
    )
    return {**out, "scopes": {**out["scopes"], "dense sample": scope}}


def minilm_at_full_scale(choice: str) -> bool:
    """Whether MiniLM also runs over every chunk: ``"yes"``, ``"no"``, or ``"auto"`` (when a CUDA
    device is present)."""
    if choice in ("yes", "no"):
        return choice == "yes"
    return resolve_device("auto").startswith("cuda")


def stratified_sample(
    corpus: CodeCorpus, questions: list[Any], n_files: int, seed: int = 0
) -> tuple[list[int], list[Any]]:
    """About ``n_files`` corpus indices drawn per project in proportion to its size, plus a third as
    question files.

    The questions kept are those of the question files drawn (seeded), so every kept
    question's gold file is indexed, among distractors from every project.
    """
    rng = random.Random(seed)
    by_doc: dict[str, list[Any]] = {}
    for q in questions:
        by_doc.setdefault(q.doc_id, []).append(q)
    qdocs = sorted(by_doc)
    picked_docs = set(rng.sample(qdocs, min(len(qdocs), max(1, n_files // 3))))
    by_project: dict[str, list[int]] = {}
    for i, f in enumerate(corpus):
        by_project.setdefault(f.project, []).append(i)
    budget = max(1, n_files - len(picked_docs))
    chosen: set[int] = set()
    for project in sorted(by_project):
        members = by_project[project]
        take = min(len(members), max(1, round(budget * len(members) / len(corpus))))
        chosen.update(rng.sample(members, take))
    chosen.update(i for i, f in enumerate(corpus) if doc_id(f) in picked_docs)
    asked = [q for q in questions if q.doc_id in picked_docs]
    return sorted(chosen), asked


def evaluate_scope(
    corpus: CodeCorpus,
    indices: list[int],
    questions: list[Any],
    retrievers: tuple[str, ...],
    config: Config,
    overrides: dict[str, str],
    memory: Memory,
) -> dict[str, Any]:
    """Index ``indices`` with each strategy, ask every question with each retriever, compare strategies."""
    scope: dict[str, Any] = {
        "files": len(indices),
        "questions": len(questions),
        "strategies": {},
        "paired": {},
    }
    per_q: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    counts = resample_counts(len(questions), 2000, seed=0) if questions else None
    scope["per_question"] = {
        "qid": [q.id for q in questions],
        "gold_chars": [sum(e - s for s, e in q.gold_spans) for q in questions],
        "ranks": {},
    }
    for name in config.strategy_names:
        index = build_index(corpus, indices, name, config, overrides, memory, minilm="minilm" in retrievers)
        entry: dict[str, Any] = {"chunks": index.n, "timings": index.timings, "retrievers": {}}
        rankings = rank_all(index, [q.question for q in questions], retrievers, config, entry["timings"])
        for r, deep in rankings.items():
            if r != "_static_exact":
                scope["per_question"]["ranks"][f"{name} | {r}"] = first_ranks(index, questions, deep)
            ranked = [top[: config.k] for top in deep]
            scores = score(index, questions, ranked, config.k)
            per_q[(name, r)] = scores
            means: dict[str, Any] = {m: round(float(v.mean()), 4) for m, v in scores.items()}
            if (
                counts is not None
            ):  # each mean's own 95 % bootstrap interval, same resamples as the paired ones
                lo, hi = confidence_interval(
                    bootstrap_means(np.vstack([scores[m] for m in METRIC_NAMES]), counts)
                )
                means["interval"] = {
                    m: [round(float(x), 4), round(float(y), 4)] for m, x, y in zip(METRIC_NAMES, lo, hi)
                }
            if r == "_static_exact":  # the exact scan of the same vectors: what IVF's approximation costs
                means["recall_minus_ivf"] = paired_difference(
                    scores["recall"] - per_q[(name, "static")]["recall"], counts
                )
                entry["static_exact"] = means
            else:
                entry["retrievers"][r] = means
        entry["timings"]["peak_rss_mb_after_queries"] = memory.peak()
        entry["contextual_minus_plain"] = {
            plain: {
                m: paired_difference(per_q[(name, ctx)][m] - per_q[(name, plain)][m], counts)
                for m in ("recall", "mrr", "retrieved_chars")
            }
            for plain, ctx in CONTEXTUAL.items()
            if ctx in retrievers
        }
        scope["strategies"][name] = entry
        del index
    a, b = config.strategy_names
    for r in retrievers:
        scope["paired"][r] = {
            m: paired_difference(per_q[(a, r)][m] - per_q[(b, r)][m], counts) for m in METRIC_NAMES
        }
    return scope


def paired_difference(diff: np.ndarray, counts: Any) -> dict[str, float]:
    """Mean of per-question differences with its 95 % bootstrap interval (the resamples ``counts``)."""
    lo, hi = confidence_interval(bootstrap_means(diff[None, :], counts))
    return {"diff": round(float(diff.mean()), 4), "lo": round(float(lo[0]), 4), "hi": round(float(hi[0]), 4)}


def rank_all(
    index: CodeIndex, queries: list[str], retrievers: tuple[str, ...], config: Config, timings: dict[str, Any]
) -> dict[str, list[list[int]]]:
    """Top chunk positions per query for each retriever; per-query latency percentiles into ``timings``."""
    if not queries:
        return {r: [] for r in retrievers}
    out: dict[str, list[list[int]]] = {}
    depth, first = config.fuse_depth, queries[: config.latency_queries]
    lat: list[float] = []
    bm25_ranked = []
    for q in queries:
        t = time.perf_counter()
        bm25_ranked.append([i for i, _ in index.bm25.search(q, depth)])
        lat.append(time.perf_counter() - t)
    timings["bm25_query_ms_p50_p95"] = _ms_p50_p95(lat)
    out["bm25"] = bm25_ranked
    if "bm25_ctx" in retrievers:
        t = time.perf_counter()
        out["bm25_ctx"] = [[i for i, _ in index.bm25_ctx.search(q, depth)] for q in queries]
        timings["bm25_ctx_query_ms_mean"] = round((time.perf_counter() - t) / len(queries) * 1000, 2)
    static = Encoder(model="static")
    ann = index.static_ann
    t = time.perf_counter()
    qv = static.encode(queries)
    static_ranked = ann.ranked(qv, depth)
    timings["static_query_ms_mean_batched"] = round((time.perf_counter() - t) / len(queries) * 1000, 2)
    one = []
    for q in first:  # one query at a time, as a user would ask: encode + search
        t = time.perf_counter()
        ann.ranked(static.encode([q]), depth)
        one.append(time.perf_counter() - t)
    timings["static_query_ms_p50_p95"] = _ms_p50_p95(one)
    if ann.method == "ivf":  # what the approximation costs against the exact scan, and what it buys
        tradeoff = ann_tradeoff(index, qv, first, static, config)
        out["_static_exact"] = tradeoff.pop("exact_ranked")
        timings["static_index"].update(tradeoff)
    out["static"] = static_ranked
    if "hybrid" in retrievers:  # dense first, as HybridRetriever fuses
        t = time.perf_counter()
        out["hybrid"] = fuse(static_ranked, bm25_ranked, config)
        timings["fuse_ms_mean"] = round((time.perf_counter() - t) / len(queries) * 1000, 2)
        hybrid = [a + b for a, b in zip(lat[: config.latency_queries], one)]
        timings["hybrid_query_ms_p50_p95"] = [
            round(float(np.percentile(hybrid, p)) * 1000 + timings["fuse_ms_mean"], 1) for p in (50, 95)
        ]
    if "hybrid_ctx" in retrievers:  # the same static list fused with contextual BM25's
        out["hybrid_ctx"] = fuse(static_ranked, out["bm25_ctx"], config)
    if "minilm" in retrievers:
        assert index.minilm is not None and index.minilm_encoder is not None
        qm = index.minilm_encoder.encode(queries)
        out["minilm"] = exact_topk(index.minilm, qm, config.k)[1].tolist()
    return {r: out[r] for r in (*retrievers, "_static_exact") if r in out}


def fuse(dense: list[list[int]], lexical: list[list[int]], config: Config) -> list[list[int]]:
    """Reciprocal-rank fusion of two rankings per query (dense first), ``config.fuse_depth`` deep;
    its top ``config.k`` is the fusion's top ``k`` (ties keep first appearance)."""
    return [
        [i for i, _ in reciprocal_rank_fusion_ids([d, lx], k=config.fuse_depth, rrf_k=config.rrf_k)]
        for d, lx in zip(dense, lexical)
    ]


def first_ranks(index: CodeIndex, questions: list[Any], ranked: list[list[int]]) -> dict[str, list[int]]:
    """Per question, the 1-based rank of the first chunk that hits the gold function (``hit``) and
    of the first chunk from the gold file (``file``) in ``ranked``; 0 when none is listed."""
    hit, file = [], []
    for q, top in zip(questions, ranked):
        gold = [(q.doc_id, s, e) for s, e in q.gold_spans]
        spans = [index.span(i) for i in top]
        hits = hits_by_span(spans, gold)
        hit.append(next((j + 1 for j, h in enumerate(hits) if h), 0))
        file.append(next((j + 1 for j, sp in enumerate(spans) if sp[0] == q.doc_id), 0))
    return {"hit": hit, "file": file}


def ann_tradeoff(
    index: CodeIndex, qv: np.ndarray, latency_queries: list[str], encoder: Encoder, config: Config
) -> dict[str, Any]:
    """The IVF index against the exact scan: top-k agreement and single-query latency per ``nprobe``.

    Every question's exact top k comes from one batched exact scan of the same vectors
    (:func:`chunklab.retrieval.vectors.exact_topk`); latency is encode + search of one query, as in
    :func:`rank_all`, on the first ``config.latency_queries`` questions.
    """
    ann, k = index.static_ann, config.k
    t = time.perf_counter()
    exact = exact_topk(index.static, qv, k)[1].tolist()
    out: dict[str, Any] = {
        "exact_batched_ms_mean": round((time.perf_counter() - t) / len(qv) * 1000, 2),
        "sweep": [],
    }
    one = []
    for q in latency_queries:  # the exact scan one query at a time: the latency IVF avoids
        t = time.perf_counter()
        exact_topk(index.static, encoder.encode([q]), k)
        one.append(time.perf_counter() - t)
    out["exact_query_ms_p50_p95"] = _ms_p50_p95(one)
    for nprobe in sorted({*config.nprobes, ann.nprobe}):
        if nprobe > ann.nlist:
            continue
        found = ann.ranked(qv, k, nprobe=nprobe)
        lat = []
        for q in latency_queries:
            t = time.perf_counter()
            ann.ranked(encoder.encode([q]), config.fuse_depth, nprobe=nprobe)
            lat.append(time.perf_counter() - t)
        out["sweep"].append(
            {
                "nprobe": nprobe,
                "agreement_at_5": round(agreement(found, exact, k), 4),
                "query_ms_p50_p95": _ms_p50_p95(lat),
            }
        )
    out["exact_ranked"] = exact
    return out


def score(index: CodeIndex, questions: list[Any], ranked: list[list[int]], k: int) -> dict[str, np.ndarray]:
    """Per question: P@k, R@k, MRR (span hits), character recall, share of top-k chunks not compiling,
    and the characters the top-k chunks hold (``retrieved_chars``, as :class:`chunklab.evaluate.Benchmark`
    counts them: every chunk's length, overlaps included)."""
    cols = {m: np.zeros(len(questions)) for m in METRIC_NAMES}
    for j, (q, top) in enumerate(zip(questions, ranked)):
        gold = [(q.doc_id, s, e) for s, e in q.gold_spans]
        spans = [index.span(i) for i in top]
        m = rank_metrics(hits_by_span(spans, gold, k=k), len(gold), k)
        cols["precision"][j], cols["recall"][j], cols["mrr"][j] = m["precision"], m["recall"], m["mrr"]
        cols["char_recall"][j] = span_metrics(spans, gold)["recall"]
        cols["not_compiling"][j] = float(np.mean(~index.compiles[top])) if top else 0.0
        cols["retrieved_chars"][j] = float(sum(end - start for _, start, end in spans))
    return cols


def _ms_p50_p95(seconds: list[float]) -> list[float]:
    """The median and 95th percentile of ``seconds``, in milliseconds (one decimal)."""
    return [round(float(np.percentile(seconds, p)) * 1000, 1) for p in (50, 95)]
