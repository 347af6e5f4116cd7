"""Late chunking against embedding each chunk alone: recall@k and MRR on the docs question set, and cost.

Corpus and questions: the kit's docs question set (``--docs`` documents, the first by id, and
``--questions`` of their questions drawn with seed 0; 0 means all). Chunks: ``recursive`` at each
``--sizes`` characters. Each size is indexed twice by :class:`chunklab.evaluate.Benchmark`: each
chunk embedded alone by MiniLM (``late=False``, what the kit does) and late-chunked (``late=True``,
:class:`chunklab.embed.late.LateEncoder`: the document read in windows of MiniLM's 256 tokens, 64
shared, each chunk's token embeddings mean-pooled). Questions are embedded alike in both.
Intervals: 95% paired bootstrap over questions (:mod:`chunklab.evaluate.bootstrap`, the resample
matrix of the benchmark runner) and, for the differences, also the cluster bootstrap over documents.
Cost: the chunks of every size embedded cold (no cache) both ways on ``--threads`` torch threads,
model already loaded: CPU seconds (``time.process_time``) and wall seconds per 1,000 chunks, with
the load average before and after (a shared machine).

    .venv/bin/python benchmarks/late_chunking.py --docs 20  # 196 questions: about two CPU minutes
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from llm_chunking import machine_info  # a sibling: benchmarks/ is sys.path[0]

RESULTS = Path(__file__).resolve().parent / "results"
METRICS = ("recall", "mrr")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=0, help="documents (the first by id; 0: all 40)")
    parser.add_argument("--questions", type=int, default=0, help="questions drawn from theirs (0: all)")
    parser.add_argument("--sizes", default="1000,400", help="recursive chunk sizes in characters")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--label", default="docs", help="docs: results/late_chunking.json; else -LABEL")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="chunklab-late-"))
    try:
        result = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.mkdir(exist_ok=True)
    name = "late_chunking" if args.label == "docs" else f"late_chunking-{args.label}"
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (RESULTS / f"{name}.md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))


def run(args: argparse.Namespace, work: Path) -> dict[str, object]:
    """Retrieval of both arms at every size, their paired differences, and the embedding cost."""
    import numpy as np
    import pandas as pd

    from chunklab.chunkers.catalog import get_strategy
    from chunklab.datasets.model import QuestionSet
    from chunklab.embed import Encoder
    from chunklab.evaluate import Benchmark, load_dataset
    from chunklab.evaluate.bootstrap import (
        bootstrap_means,
        bootstrap_p_value,
        cluster_resample_counts,
        confidence_interval,
        resample_counts,
    )

    t_start = time.perf_counter()
    load_before = os.getloadavg()
    data = load_dataset("docs")
    ids = sorted(d.doc_id for d in data.documents)
    wanted = set(ids[: args.docs] if args.docs else ids)
    docs = [d for d in data.documents if d.doc_id in wanted]
    subset = QuestionSet(
        f"docs ({len(docs)} documents)", docs, [q for q in data.questions if q.doc_id in wanted]
    )
    if args.questions and args.questions < len(subset.questions):
        subset = subset.sample(args.questions, seed=0)
    qids = [q.id for q in subset.questions]
    doc_of = [q.doc_id for q in subset.questions]
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    encoder = Encoder(cache_dir=work / "cache", threads=args.threads)
    blocks = []
    chunks_by_arm: dict[str, int] = {}
    for size in sizes:
        strategy = get_strategy("recursive", size=size)
        for late in (False, True):
            arm = f"recursive-{size}" + ("+late" if late else "")
            bench = Benchmark(
                subset, {arm: strategy}, k=args.k, encoder=encoder, n_resamples=args.resamples, late=late
            )
            res = bench.run(progress=False)
            blocks.append(res.per_question)
            chunks_by_arm[arm] = int(res.summary.loc[arm, "chunks"])
            print(arm, "done", flush=True)
    per_question = pd.concat(blocks, ignore_index=True)

    counts = resample_counts(len(qids), args.resamples, 0)
    clusters = cluster_resample_counts(doc_of, args.resamples, 0)
    rows = []
    for arm, block in per_question.groupby("strategy", sort=False):
        values = block.set_index("question_id").reindex(qids)[list(METRICS)].to_numpy(float).T
        lo, hi = confidence_interval(bootstrap_means(values, counts))
        row: dict[str, object] = {"strategy": arm, "chunks": chunks_by_arm[str(arm)]}
        for j, m in enumerate(METRICS):
            row.update({m: float(values[j].mean()), f"{m}_lo": float(lo[j]), f"{m}_hi": float(hi[j])})
        rows.append(row)
    differences = []
    for size in sizes:
        alone = (
            per_question[per_question.strategy == f"recursive-{size}"].set_index("question_id").reindex(qids)
        )
        late = (
            per_question[per_question.strategy == f"recursive-{size}+late"]
            .set_index("question_id")
            .reindex(qids)
        )
        for m in METRICS:
            diff = (late[m] - alone[m]).to_numpy(float)
            boot = bootstrap_means(diff[None, :], counts)
            lo, hi = confidence_interval(boot)
            clo, chi = confidence_interval(bootstrap_means(diff[None, :], clusters))
            differences.append(
                {
                    "size": size,
                    "metric": m,
                    "late_minus_alone": float(diff.mean()),
                    "lo": float(lo[0]),
                    "hi": float(hi[0]),
                    "p": bootstrap_p_value(boot),
                    "cluster_lo": float(clo[0]),
                    "cluster_hi": float(chi[0]),
                    "late_better": int(np.sum(diff > 0)),
                    "alone_better": int(np.sum(diff < 0)),
                }
            )
    cost = measure_cost(docs, sizes, args.threads)
    load_after = os.getloadavg()
    return {
        "benchmark": "late_chunking",
        "label": args.label,
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {
            **machine_info(args.threads),
            "load_average_before": [round(x, 1) for x in load_before],
            "load_average_after": [round(x, 1) for x in load_after],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        },
        "model": encoder.name,
        "window_tokens": int(encoder.max_seq_length or 0),
        "late": {"window_text_tokens": cost["window"], "overlap_tokens": cost["overlap"]},
        "dataset": subset.name,
        "questions": len(qids),
        "documents": len(docs),
        "k": args.k,
        "sizes": sizes,
        "resamples": args.resamples,
        "rows": rows,
        "differences": differences,
        "cost": cost["rows"],
        "wall_s": round(time.perf_counter() - t_start, 1),
    }


def measure_cost(docs: list, sizes: list[int], threads: int) -> dict[str, object]:
    """CPU and wall seconds per 1,000 chunks, embedded cold alone and late, for each size."""
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.embed import Encoder
    from chunklab.embed.late import LateEncoder
    from chunklab.ingest.stages import chunk_document

    encoder = Encoder(cache_dir=False, threads=threads)
    encoder.encode(["warm up: load the model before timing"])
    late = LateEncoder(encoder)
    rows = []
    for size in sizes:
        strategy = get_strategy("recursive", size=size)
        per_doc = [(d, chunk_document(d, strategy, encoder)) for d in docs]
        texts = [c.text for _, cs in per_doc for c in cs]
        c0, w0 = time.process_time(), time.perf_counter()
        encoder.encode(texts, show_progress=False)
        alone = (time.process_time() - c0, time.perf_counter() - w0)
        windows_before = late.windows
        c0, w0 = time.process_time(), time.perf_counter()
        late.encode_documents([(d.text, [(c.start, c.end) for c in cs]) for d, cs in per_doc])
        late_s = (time.process_time() - c0, time.perf_counter() - w0)
        n = len(texts)
        for how, (cpu, wall), extra in (
            ("alone", alone, {}),
            ("late", late_s, {"windows": late.windows - windows_before}),
        ):
            rows.append(
                {
                    "size": size,
                    "embedding": how,
                    "chunks": n,
                    "cpu_s": round(cpu, 2),
                    "wall_s": round(wall, 2),
                    "cpu_s_per_1000_chunks": round(cpu / n * 1000, 2),
                    "wall_s_per_1000_chunks": round(wall / n * 1000, 2),
                    **extra,
                }
            )
    return {"rows": rows, "window": late.window, "overlap": late.overlap}


def markdown(result: dict) -> str:
    """The result as a Markdown page: the retrieval table, the paired differences, the cost."""
    m = result["machine"]
    lines = [
        f"# Late chunking against each chunk alone ({result['label']})",
        "",
        f"Measured {result['measured']} on {m['cores']} cores ({m['cpu']}), {m['threads']} torch thread, "
        f"load average {m['load_average_before'][0]} before and {m['load_average_after'][0]} after; "
        f"{result['model']}, window {result['window_tokens']} tokens "
        f"({result['late']['window_text_tokens']} of text, {result['late']['overlap_tokens']} shared by "
        f"consecutive windows). {result['dataset']}, {result['questions']} questions, k = {result['k']}; "
        f"95% paired-bootstrap intervals over questions ({result['resamples']} resamples).",
        "",
        "| strategy | chunks | recall@k | MRR |",
        "|---|---:|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['strategy']} | {r['chunks']} "
            f"| {r['recall']:.3f} [{r['recall_lo']:.3f}, {r['recall_hi']:.3f}] "
            f"| {r['mrr']:.3f} [{r['mrr_lo']:.3f}, {r['mrr_hi']:.3f}] |"
        )
    lines += [
        "",
        "Late minus alone (paired; the cluster bootstrap over documents beside it):",
        "",
        "| size | metric | difference | 95% interval | p | by documents | late better / alone better |",
        "|---:|---|---:|---|---:|---|---|",
    ]
    for d in result["differences"]:
        lines.append(
            f"| {d['size']} | {d['metric']} | {d['late_minus_alone']:+.3f} "
            f"| [{d['lo']:+.3f}, {d['hi']:+.3f}] "
            f"| {d['p']:.3f} | [{d['cluster_lo']:+.3f}, {d['cluster_hi']:+.3f}] "
            f"| {d['late_better']} / {d['alone_better']} |"
        )
    lines += [
        "",
        "Cost of embedding the chunks cold (model loaded, no cache):",
        "",
        "| size | embedding | chunks | CPU s | wall s | CPU s per 1,000 chunks | wall s per 1,000 chunks |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for c in result["cost"]:
        how = f"{c['embedding']} ({c['windows']} windows)" if "windows" in c else c["embedding"]
        lines.append(
            f"| {c['size']} | {how} "
            f"| {c['chunks']} | {c['cpu_s']} | {c['wall_s']} | {c['cpu_s_per_1000_chunks']} "
            f"| {c['wall_s_per_1000_chunks']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
