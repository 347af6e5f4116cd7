"""Retrieval per language on ``code-poly``: doc comment → function, structural vs recursive 800/80.

For each language, :func:`chunklab.datasets.questions.poly.poly_questions` builds the
CodeSearchNet questions from a seeded sample of files (each question's comment removed from
the indexed copy). Every sampled file is indexed by two chunkers, ``chunk_code`` (structural,
its default budget) and recursive 800/80, each **plain** and **contextual** (the file path
and, for structural chunks, the qualified name in front of the indexed text). Each index is
asked with BM25, a dense retriever and their reciprocal-rank fusion (hybrid); the dense side
is the static model2vec table distilled from MiniLM (``--dense static``, the default: the run
stays in minutes on a laptop CPU) or MiniLM itself (``--dense minilm``). Scores: recall@5 and
MRR by span (a chunk hits the gold function when it covers half of it or lies inside it).
Paired 95 % bootstrap intervals (2,000 resamples, the same per comparison) for structural −
recursive and contextual − plain, per language and per split (``dev``, ``heldout``, ``all``).

Run: ``make code-poly-retrieval`` or ``python benchmarks/code_poly_retrieval.py`` (after
``chunklab corpus fetch code-poly``). Writes ``benchmarks/results/code_poly_retrieval.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from chunklab.chunk import Chunk, embedding_text
from chunklab.chunkers.catalog import get_strategy
from chunklab.datasets import corpus as named_corpus
from chunklab.datasets.questions.poly import poly_questions
from chunklab.embed import Encoder
from chunklab.evaluate.bootstrap import bootstrap_means, confidence_interval, resample_counts
from chunklab.evaluate.metrics import hits_by_span, rank_metrics
from chunklab.retrieval.hybrid import reciprocal_rank_fusion_ids
from chunklab.retrieval.lexical import BM25Index
from chunklab.retrieval.vectors import exact_topk

RESULTS = Path(__file__).resolve().parent / "results" / "code_poly_retrieval.json"
LANGUAGES = ("javascript", "typescript", "go", "rust", "c", "cpp", "ruby", "php", "java", "csharp")
STRATEGIES = ("structural", "recursive 800/80")
VARIANTS = ("plain", "contextual")
RETRIEVERS = ("bm25", "dense", "hybrid")
METRICS = ("recall", "mrr")
K, DEPTH, RRF_K, RESAMPLES = 5, 50, 60, 2000


def chunk_documents(documents: list[Any], strategy: str, language: str) -> list[Chunk]:
    """Every chunk of every document by ``strategy`` (``chunk_code`` or recursive 800/80)."""
    chunks: list[Chunk] = []
    if strategy == "structural":
        from chunklab.chunkers.structural.code import chunk_code

        for d in documents:
            chunks += chunk_code(d.text, language=language, path=d.title, doc_id=d.doc_id)
    else:
        recursive = get_strategy("recursive", size=800, overlap=80)
        for d in documents:
            chunks += recursive(d)
    return chunks


def with_context(chunks: list[Chunk], paths: dict[str, str]) -> list[Chunk]:
    """Copies whose indexed text starts with ``path > qualified name`` (the name only where known)."""
    from dataclasses import replace

    out = []
    for c in chunks:
        qual = c.metadata.get("qualname")
        head = paths[c.doc_id] + (f" > {qual}" if qual and qual != "<module>" else "")
        out.append(replace(c, metadata={**c.metadata, "context": head}))
    return out


def rank(
    chunks: list[Chunk], queries: list[str], encoder: Encoder, contextual: bool
) -> dict[str, list[list[int]]]:
    """Top chunk positions per query for BM25, dense and hybrid (dense first in the fusion)."""
    bm25 = BM25Index(chunks, context=contextual)
    position = {c.id: i for i, c in enumerate(chunks)}
    lexical = [[position[c.id] for c, _ in hits] for hits in bm25.search_many(queries, k=DEPTH)]
    texts = [embedding_text(c) if contextual else c.text for c in chunks]
    vectors = encoder.encode(texts)
    dense = exact_topk(vectors, encoder.encode(queries), DEPTH)[1].tolist()
    hybrid = [
        [i for i, _ in reciprocal_rank_fusion_ids([d, lx], k=K, rrf_k=RRF_K)] for d, lx in zip(dense, lexical)
    ]
    return {"bm25": lexical, "dense": dense, "hybrid": hybrid}


def score(chunks: list[Chunk], questions: list[Any], ranked: list[list[int]]) -> dict[str, np.ndarray]:
    """Per question recall@5 and MRR, a hit being a chunk that covers half the function or lies in it."""
    cols = {m: np.zeros(len(questions)) for m in METRICS}
    for j, (q, top) in enumerate(zip(questions, ranked)):
        gold = [(q.doc_id, s, e) for s, e in q.gold_spans]
        spans = [(chunks[i].doc_id, chunks[i].start, chunks[i].end) for i in top[:K]]
        m = rank_metrics(hits_by_span(spans, gold, k=K), len(gold), K)
        cols["recall"][j], cols["mrr"][j] = m["recall"], m["mrr"]
    return cols


def interval(values: np.ndarray, counts: np.ndarray) -> dict[str, float]:
    """Mean with its 95 % bootstrap interval over the resamples ``counts``."""
    lo, hi = confidence_interval(bootstrap_means(values[None, :], counts))
    return {
        "mean": round(float(values.mean()), 4),
        "lo": round(float(lo[0]), 4),
        "hi": round(float(hi[0]), 4),
    }


def measure_language(
    files: Any, language: str, n_files: int, encoder: Encoder, min_questions: int = 150
) -> dict[str, Any]:
    """Questions, indexes and scores for one language; paired intervals per split.

    ``n_files`` are sampled; while that gives fewer than ``min_questions`` questions the
    sample doubles (seed 0 throughout), up to every file of the language.
    """
    t0 = time.perf_counter()
    available = sum(f.language == language for f in files)
    ds = poly_questions(files, language, n_files=n_files, seed=0)
    while len(ds.questions) < min_questions and n_files < available:
        n_files = min(2 * n_files, available)
        ds = poly_questions(files, language, n_files=n_files, seed=0)
    questions, documents = ds.questions, ds.documents
    paths = {d.doc_id: d.metadata["path"] for d in documents}
    out: dict[str, Any] = {
        "sampled_files": n_files,
        "files": len(documents),
        "questions": len(questions),
        "splits": {s: sum(q.split == s for q in questions) for s in ("dev", "heldout")},
        "projects": len({d.metadata["project"] for d in documents}),
        "chunks": {},
        "questions_s": round(time.perf_counter() - t0, 1),
    }
    if not questions:
        return out
    per_q: dict[tuple[str, str, str], dict[str, np.ndarray]] = {}
    queries = [q.question for q in questions]
    for strategy in STRATEGIES:
        t = time.perf_counter()
        base = chunk_documents(documents, strategy, language)
        out["chunks"][strategy] = {"n": len(base), "chunk_s": round(time.perf_counter() - t, 1)}
        for variant in VARIANTS:
            chunks = with_context(base, paths) if variant == "contextual" else base
            for r, ranked in rank(chunks, queries, encoder, variant == "contextual").items():
                per_q[(strategy, variant, r)] = score(chunks, questions, ranked)
    out["scores"] = {}
    for split in ("dev", "heldout", "all"):
        keep = np.array([split == "all" or q.split == split for q in questions])
        if keep.sum() < 2:
            continue
        counts = resample_counts(int(keep.sum()), RESAMPLES, seed=0)
        entry: dict[str, Any] = {"questions": int(keep.sum()), "means": {}, "structural_minus_recursive": {}}
        entry["contextual_minus_plain"] = {}
        for (strategy, variant, r), cols in per_q.items():
            entry["means"].setdefault(f"{strategy} {variant}", {})[r] = {
                m: interval(cols[m][keep], counts) for m in METRICS
            }
        for variant in VARIANTS:
            for r in RETRIEVERS:
                a, b = per_q[(STRATEGIES[0], variant, r)], per_q[(STRATEGIES[1], variant, r)]
                entry["structural_minus_recursive"].setdefault(variant, {})[r] = {
                    m: interval(a[m][keep] - b[m][keep], counts) for m in METRICS
                }
        for strategy in STRATEGIES:
            for r in RETRIEVERS:
                a, b = per_q[(strategy, "contextual", r)], per_q[(strategy, "plain", r)]
                entry["contextual_minus_plain"].setdefault(strategy, {})[r] = {
                    m: interval(a[m][keep] - b[m][keep], counts) for m in METRICS
                }
        out["scores"][split] = entry
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def measured_block(load_start: list[float]) -> dict[str, Any]:
    """When, where and how this run was measured, as the book's pages name it (``measured``)."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "chunklab_commit": commit,
        "command": "python " + " ".join(["benchmarks/code_poly_retrieval.py", *sys.argv[1:]]),
        "machine": {"cpu": model, "cores": os.cpu_count() or 1},
        "loadavg_start": load_start,
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    """Run every language, print a recall@5 table, write the results JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--files", type=int, default=400, help="files sampled per language (default 400)")
    p.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated languages")
    p.add_argument("--min-questions", type=int, default=150, help="grow the sample to this many (150)")
    p.add_argument("--dense", choices=("static", "minilm"), default="static", help="the dense retriever")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    files = named_corpus("code-poly")
    encoder = Encoder(model=args.dense, show_progress=False)
    results: dict[str, Any] = {
        "benchmark": "code_poly_retrieval",
        "corpus": "code-poly",
        "corpus_files": len(files),
        "corpus_languages": dict(files.languages().most_common()),
        "files_per_language": args.files,
        "min_questions": args.min_questions,
        "dense": args.dense,
        "k": K,
        "fuse_depth": DEPTH,
        "rrf_k": RRF_K,
        "resamples": RESAMPLES,
        "strategies": {
            "structural": "chunk_code, default max_chars",
            "recursive 800/80": "recursive size=800",
        },
        "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
        "languages": {},
    }
    load_start = [round(x, 2) for x in os.getloadavg()]
    for language in args.languages.split(","):
        res = measure_language(files, language, args.files, encoder, args.min_questions)
        results["languages"][language] = res
        row = res.get("scores", {}).get("all", {}).get("means", {})
        cells = (
            [
                f"{row[f'{s} {v}'][r]['recall']['mean']:.3f}"
                for s in STRATEGIES
                for v in VARIANTS
                for r in RETRIEVERS
            ]
            if row
            else []
        )
        print(
            f"{language:11s} q={res['questions']:4d} {' '.join(cells)}  ({res.get('wall_s', 0)} s)",
            flush=True,
        )
    results["wall_s"] = round(time.perf_counter() - t0, 1)
    results["measured"] = measured_block(load_start)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {results['wall_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
