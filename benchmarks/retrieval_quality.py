"""Dense, lexical and hybrid retrieval on the kit's docs (or code) questions: recall@5 with paired intervals.

Chunks the corpus once (structural, 1,000 characters), then retrieves the top 5 for every
question with: MiniLM and the static model (dense, contextual header embedded), BM25 on the
bare text and on header + text ("contextual BM25"), and RRF / weighted fusions of each dense
model with contextual BM25. A question's recall@5 is the share of its gold quotes that a
retrieved chunk of the right document covers (``chunklab.evaluate.span_hit``). Differences are
paired per question, with 95 % bootstrap intervals from ``chunklab.evaluate`` (10,000
resamples); "established" means the interval excludes 0.

    python benchmarks/retrieval_quality.py [--dataset docs|code] [--files 40] [--k 5]
        [--split dev|heldout] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

COMPARISONS = [  # (a, b): a - b is reported
    ("dense-static", "dense-minilm"),
    ("bm25", "dense-minilm"),
    ("bm25-context", "bm25"),
    ("bm25-context", "dense-minilm"),
    ("hybrid-rrf-minilm", "dense-minilm"),
    ("hybrid-weighted-minilm", "dense-minilm"),
    ("hybrid-rrf-static", "dense-static"),
    ("hybrid-rrf-static", "dense-minilm"),
]


def question_recall(hits_for: list, question, k: int) -> float:
    """Recall@k of one question from its retrieved chunks (gold quotes covered, right document only)."""
    from chunklab.evaluate import rank_metrics, span_hit

    hits = []
    for chunk in hits_for[:k]:
        if chunk.doc_id != question.doc_id:
            hits.append(set())
            continue
        hits.append(
            {g for g, gold in enumerate(question.gold_spans) if span_hit((chunk.start, chunk.end), gold)}
        )
    return rank_metrics(hits, len(question.gold_spans), k)["recall"]


def paired(a: np.ndarray, b: np.ndarray) -> dict:
    """Mean of a - b per question with its paired 95 % bootstrap interval."""
    from chunklab.evaluate import bootstrap_means, confidence_interval, is_established, resample_counts

    diff = a - b
    means = bootstrap_means(diff, resample_counts(len(diff), seed=0))
    lo, hi = confidence_interval(means)
    out = {"diff": float(diff.mean()), "lo": float(lo), "hi": float(hi)}
    out["established"] = is_established(out)
    return out


def main() -> None:
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.embed import Encoder
    from chunklab.evaluate import load_dataset
    from chunklab.retrieval.chroma.store import ChunkStore
    from chunklab.retrieval.hybrid import HybridRetriever
    from chunklab.retrieval.lexical import BM25Index

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--split", default=None, choices=("dev", "heldout"))
    parser.add_argument(
        "--dataset",
        default="docs",
        choices=("docs", "code"),
        help="docs: the kit's documents; code: installed Python files, docstring questions",
    )
    parser.add_argument("--files", type=int, default=40, help="--dataset code: files sampled (default 40)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    dataset = load_dataset(args.dataset, split=args.split, n_files=args.files)
    strategy = get_strategy("structural", max_chars=1000)
    chunks = [c for doc in dataset.documents for c in strategy.index_chunks(strategy(doc))]
    queries = [q.question for q in dataset.questions]
    timings: dict[str, float] = {}
    dense = {}
    for model in ("minilm", "static"):
        t0 = time.perf_counter()
        store = ChunkStore(
            in_memory=True, collection=f"quality-{model}", encoder=Encoder(model, show_progress=False)
        )
        store.add(chunks, show_progress=False)
        timings[f"index-{model}"] = time.perf_counter() - t0
        dense[model] = store
    lexical = {"bm25": BM25Index(chunks, context=False), "bm25-context": BM25Index(chunks, context=True)}
    retrievers = {
        "dense-minilm": dense["minilm"],
        "dense-static": dense["static"],
        **lexical,
        "hybrid-rrf-minilm": HybridRetriever(dense["minilm"], lexical["bm25-context"]),
        "hybrid-weighted-minilm": HybridRetriever(
            dense["minilm"], lexical["bm25-context"], fusion="weighted"
        ),
        "hybrid-rrf-static": HybridRetriever(dense["static"], lexical["bm25-context"]),
    }
    recall: dict[str, np.ndarray] = {}
    for name, retriever in retrievers.items():
        t0 = time.perf_counter()
        results = retriever.search_many(queries, k=args.k)
        timings[f"search-{name}"] = time.perf_counter() - t0
        recall[name] = np.array(
            [
                question_recall([c for c, _ in hits], q, args.k)
                for hits, q in zip(results, dataset.questions, strict=True)
            ]
        )
    result = {
        "dataset": dataset.name,
        "questions": len(dataset.questions),
        "chunks": len(chunks),
        "strategy": strategy.name,
        "k": args.k,
        "recall": {name: round(float(v.mean()), 4) for name, v in recall.items()},
        "paired": {f"{a} - {b}": paired(recall[a], recall[b]) for a, b in COMPARISONS},
        "seconds": {name: round(s, 2) for name, s in timings.items()},
    }
    print(
        f"{dataset.name}: {len(dataset.questions)} questions, {len(chunks)} chunks ({strategy.name}), "
        f"recall@{args.k}"
    )
    for name, value in result["recall"].items():
        print(f"  {name:24s} {value:.3f}")
    for label, cmp in result["paired"].items():
        mark = "established" if cmp["established"] else "not established"
        print(f"  {label:40s} {cmp['diff']:+.3f}  [{cmp['lo']:+.3f}, {cmp['hi']:+.3f}]  {mark}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
