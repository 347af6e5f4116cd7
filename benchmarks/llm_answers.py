"""Answers next to recall: recursive, structural, LLM boundaries, contextual retrieval; with the local model.

Questions: ``--questions`` drawn (seed 0) from the docs question set's questions about ``--docs``
documents (the first ones by id unless named), whose documents form the corpus searched. Strategies
(``--strategies``, catalog names at ``--size`` characters, plus two enrichments of ``recursive``):
``recursive+title`` (title and section path in front of each chunk, :func:`add_context`) and
``recursive+llm-context`` (that plus a sentence the model writes, :func:`add_llm_context`, the
contextual retrieval of Anthropic, 2024). Each strategy is indexed and searched by
:class:`chunklab.evaluate.Benchmark` (recall, MRR, ... by offsets); the model then answers every
question from that strategy's top ``--k`` chunks (:func:`generate_answers`), and
:func:`score_answer` scores the answers (token F1 against the gold quotes, support, citations).
Intervals: the paired bootstrap over questions; differences against ``recursive``. Costs: what the
model did for each strategy (prompts, generated tokens, seconds: while chunking or writing
contexts, and while answering), on one thread of this machine, with the load average beside them.
Generations are cached (``--cache``, default a fresh temporary folder: a cold run).

``--set code`` asks the code question set instead (:func:`chunklab.datasets.questions.code.code_questions`
over ``--files`` files of at most ``--max-file-chars`` drawn with seed 0 from the ``stdlib`` corpus: this
interpreter's standard library, on every fresh clone with no download; docstrings stripped, a docstring's
first sentence asks for its function). There ``structural`` is the code chunker (the catalog's
``structural`` dispatches on the document's format) at ``--size`` characters too, and the documents'
SHA-256 are recorded, so a replay knows whether its standard library is the one measured.

    nice .venv/bin/python benchmarks/llm_answers.py --docs 1 --questions 6 --label quick
    nice .venv/bin/python benchmarks/llm_answers.py --set code --files 16 --questions 16 \
        --strategies recursive,structural,llm-boundaries --k 2 --answer-tokens 32 --label code-q16
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from llm_chunking import estimate_code_50k, machine_info  # a sibling: benchmarks/ is sys.path[0]

RESULTS = Path(__file__).resolve().parent / "results"
ENRICHED = ("recursive+title", "recursive+llm-context")
DEFAULT_STRATEGIES = "recursive,structural,llm-boundaries," + ",".join(ENRICHED)
SETS = ("docs", "code")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", default="docs", choices=SETS, help="the question set asked")
    parser.add_argument("--files", type=int, default=16, help="code set: files drawn from the stdlib corpus")
    parser.add_argument("--max-file-chars", type=int, default=8_000, help="code set: the largest file drawn")
    parser.add_argument(
        "--docs", default="1", help="how many documents (the first by id), or their ids, comma-separated"
    )
    parser.add_argument("--questions", type=int, default=6, help="questions drawn from theirs (0: all)")
    parser.add_argument("--k", type=int, default=3, help="chunks retrieved and shown to the model")
    parser.add_argument("--size", type=int, default=1000, help="max characters of a chunk")
    parser.add_argument("--strategies", default=DEFAULT_STRATEGIES)
    parser.add_argument("--answer-tokens", type=int, default=64, help="tokens the model may write per answer")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument(
        "--cache", default=None, help="generation cache root (default: a fresh temporary one)"
    )
    parser.add_argument("--replay", default=None, help="answer from this recording instead (a smoke run)")
    parser.add_argument("--label", default="quick")
    parser.add_argument(
        "--reestimate", action="store_true", help="only recompute the cost estimates of an existing result"
    )
    args = parser.parse_args()
    out = RESULTS / f"llm_answers-{args.label}.json"
    if args.reestimate:
        write(add_estimates(json.loads(out.read_text(encoding="utf-8"))), out)
        return

    from chunklab.generate import Generator, ReplayGenerator

    work = Path(tempfile.mkdtemp(prefix="chunklab-llm-answers-"))
    gen: Generator | ReplayGenerator = (
        ReplayGenerator.from_file(args.replay)
        if args.replay
        else Generator(cache_dir=Path(args.cache) if args.cache else work, threads=args.threads)
    )
    try:
        result = run(args, gen)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write(add_estimates(result), out)


def write(result: dict, out: Path) -> None:
    """The result as JSON at ``out`` and as Markdown beside it."""
    RESULTS.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(f"wrote {out} and {out.with_suffix('.md').name}")


def add_estimates(result: dict) -> dict:
    """Model seconds and generated tokens per 1,000 contexts and per 1,000 answers (measured rates, cold
    runs only), and the hours contextual retrieval would take on code-50k: an estimate, not a measurement."""
    rates = {}
    steps = [("contexts", result["model_cost"].get("recursive+llm-context", {}).get("chunking"))]
    steps += [(f"answers ({name})", cost.get("answers")) for name, cost in result["model_cost"].items()]
    for label, cost in steps:
        if cost and cost["model_calls"]:
            rates[label] = {
                "seconds_per_1000": round(cost["generate_seconds"] / cost["model_calls"] * 1000),
                "generated_tokens_per_1000": round(cost["generated_tokens"] / cost["model_calls"] * 1000),
                "measured_on": int(cost["model_calls"]),
            }
    result["rates_per_1000"] = rates
    if "contexts" in rates:
        row = {"strategy": "contextual retrieval", "run": "cold"}
        result["estimate_code_50k"] = estimate_code_50k(
            [{**row, "seconds_per_1000_chunks": rates["contexts"]["seconds_per_1000"]}]
        )
    return result


def run(args: argparse.Namespace, gen: object) -> dict[str, object]:
    """Retrieve, answer and score every strategy; the result as JSON-ready values."""
    import pandas as pd

    from chunklab.chunkers.catalog import get_strategy
    from chunklab.datasets.model import QuestionSet
    from chunklab.enrich.context import add_context
    from chunklab.enrich.llm_context import ContextStats, add_llm_context
    from chunklab.evaluate import Benchmark, load_dataset
    from chunklab.evaluate.answers import (
        ANSWER_METRICS,
        answer_differences,
        answer_summary,
        generate_answers,
        score_answer,
    )

    source: dict[str, object] = {"set": args.set}
    if args.set == "code":
        source.update(code_source(args.files, args.max_file_chars))
        subset = question_set(source)
        source["sha256"] = documents_sha256(subset.documents)
    else:
        data = load_dataset("docs")
        ids = sorted(d.doc_id for d in data.documents)
        wanted = ids[: int(args.docs)] if args.docs.isdigit() else args.docs.split(",")
        docs = [data.doc(i) for i in wanted]
        questions = [q for q in data.questions if q.doc_id in wanted]
        subset = QuestionSet(f"docs:{'+'.join(wanted)}", docs, questions)
    if args.questions and args.questions < len(subset.questions):
        subset = subset.sample(args.questions, seed=0)

    recursive = get_strategy("recursive", size=args.size)
    context_stats = ContextStats()

    def with_title(doc):  # noqa: ANN001, ANN202 - a strategy callable: document -> chunks
        return add_context(recursive(doc), title=doc.title, source=doc.text)

    def with_llm_context(doc):  # noqa: ANN001, ANN202
        chunks = recursive(doc)
        return add_llm_context(
            chunks, doc.text, title=doc.title, markdown=True, generator=gen, stats=context_stats
        )

    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    strategies: dict[str, object] = {}
    llm_stats = {}
    for name in names:
        if name == "recursive+title":
            strategies[name] = with_title
        elif name == "recursive+llm-context":
            strategies[name] = with_llm_context
        elif name in ("llm-boundaries", "propositions"):
            from chunklab.chunkers.llm import LLMStats, chunk_llm_boundaries, chunk_propositions

            fn = chunk_llm_boundaries if name == "llm-boundaries" else chunk_propositions
            stats = llm_stats.setdefault(name, LLMStats())

            def llm_chunks(doc, fn=fn, stats=stats):  # noqa: ANN001, ANN202
                return fn(doc.text, args.size, doc.doc_id, generator=gen, stats=stats)

            strategies[name] = llm_chunks
        else:
            # the size limit under each strategy's own parameter name (structural cuts at headings)
            # (the code chunker of a code set gets the same character budget as recursive)
            structural = {"max_chars": args.size} if args.set == "code" else {}
            sized = {"structural": structural, "semantic": {"max_chars": args.size}}.get(
                name, {"size": args.size}
            )
            strategies[name] = get_strategy(name, **sized)

    model_cost: dict[str, dict[str, float]] = {}
    t0 = time.perf_counter()
    # one Benchmark per strategy, so what the model did while chunking is counted per strategy
    per_question = []
    retrieved = {}
    chunk_counts = {}
    for name in names:
        before = _counters(gen)
        bench = Benchmark(subset, {name: strategies[name]}, k=args.k, n_resamples=args.resamples)
        res = bench.run(progress=False)
        model_cost[name] = {"chunking": _delta(gen, before)}
        per_question.append(res.per_question)
        retrieved[name] = res.retrieved[name]
        chunk_counts[name] = int(res.summary.loc[name, "chunks"])
        print(name, "retrieval done", json.dumps(model_cost[name]), flush=True)
    retrieval = pd.concat(per_question, ignore_index=True)

    rows = []
    examples = {}
    spans: dict[str, dict[str, list[list[object]]]] = {}
    for name in names:
        before = _counters(gen)
        answers = generate_answers(
            subset.questions, retrieved[name], k=args.k, generator=gen, max_new_tokens=args.answer_tokens
        )
        model_cost[name]["answers"] = _delta(gen, before)
        for q, a in zip(subset.questions, answers, strict=True):
            rows.append({"strategy": name, "question_id": q.id, **score_answer(a, q)})
        spans[name] = {
            q.id: [[c.doc_id, c.start, c.end] for c in a.passages]
            for q, a in zip(subset.questions, answers, strict=True)
        }
        examples[name] = [
            {"question_id": a.question_id, "answer": a.text, "cites": list(a.cites)} for a in answers
        ]
        print(name, "answers done", json.dumps(model_cost[name]["answers"]), flush=True)
    scored = pd.DataFrame(rows)
    summary = answer_summary(scored, n_resamples=args.resamples)
    base = "recursive" if "recursive" in names else names[0]
    diffs = answer_differences(scored, [(n, base) for n in names if n != base], n_resamples=args.resamples)
    recall_metrics = ["recall", "mrr", "char_recall"]
    from chunklab.evaluate.bootstrap import bootstrap_means, confidence_interval, resample_counts

    qids = [q.id for q in subset.questions]
    counts = resample_counts(len(qids), args.resamples, 0)
    table = []
    for name in names:
        block = retrieval[retrieval.strategy == name].set_index("question_id").reindex(qids)
        row: dict[str, object] = {"strategy": name}
        for m in recall_metrics:
            vals = block[m].to_numpy(dtype=float)
            lo, hi = confidence_interval(bootstrap_means(vals[None, :], counts))
            row.update({m: float(vals.mean()), f"{m}_lo": float(lo[0]), f"{m}_hi": float(hi[0])})
        row.update(summary.loc[name].to_dict())
        row["chunks"] = chunk_counts[name]
        table.append(row)
    return {
        "benchmark": "llm_answers",
        "label": args.label,
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {
            **machine_info(args.threads),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        },
        "model": gen.model_id,
        "dataset": subset.name,
        "source": source,
        "questions": qids,
        "k": args.k,
        "answer_tokens": args.answer_tokens,
        "size": args.size,
        "resamples": args.resamples,
        "metrics": {"retrieval": recall_metrics, "answers": list(ANSWER_METRICS)},
        "rows": table,
        "differences": diffs,
        "baseline": base,
        "model_cost": model_cost,
        "context_stats": context_stats.as_dict(),
        "llm_stats": {n: s.as_dict() for n, s in llm_stats.items()},
        "answers": examples,
        "passages": spans,
        "per_question": _per_question(retrieval, scored, recall_metrics),
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def code_source(files: int, max_file_chars: int) -> dict[str, object]:
    """How the code set is drawn: ``files`` stdlib files of at most ``max_file_chars``, seed 0."""
    if files < 1:
        raise ValueError(f"files must be at least 1, got {files!r}")
    return {"corpus": "stdlib", "n_files": files, "max_file_chars": max_file_chars, "seed": 0}


def question_set(source: dict) -> object:
    """The code question set a result's ``source`` names (its documents and every question)."""
    from chunklab.datasets.questions.code import code_questions
    from chunklab.datasets.registry import corpus

    return code_questions(
        n_files=source["n_files"],
        seed=source["seed"],
        max_file_chars=source["max_file_chars"],
        corpus=corpus(source["corpus"]),
    )


def documents_sha256(documents: object) -> dict[str, str]:
    """Each document's id and the SHA-256 of its (indexed) text."""
    import hashlib

    return {d.doc_id: hashlib.sha256(d.text.encode("utf-8")).hexdigest() for d in documents}


def _per_question(retrieval: object, scored: object, recall_metrics: list[str]) -> list[dict[str, object]]:
    """One row per strategy and question: the retrieval metrics and the answer scores."""
    import pandas as pd

    assert isinstance(retrieval, pd.DataFrame) and isinstance(scored, pd.DataFrame)
    merged = retrieval[["strategy", "question_id", *recall_metrics]].merge(
        scored, on=["strategy", "question_id"]
    )
    return [
        {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}
        for r in merged.to_dict("records")
    ]


def _counters(gen: object) -> dict[str, float]:
    return {
        k: float(getattr(gen, k, 0))
        for k in ("model_calls", "cache_hits", "prompt_tokens", "generated_tokens", "generate_seconds")
    }


def _delta(gen: object, before: dict[str, float]) -> dict[str, float]:
    now = _counters(gen)
    out = {k: round(now[k] - before[k], 1) for k in now}
    out["tokens_per_s"] = (
        round(out["generated_tokens"] / out["generate_seconds"], 2) if out["generate_seconds"] else None
    )
    return out


def markdown(result: dict) -> str:
    """The result as a Markdown page: the table with intervals, differences, costs."""
    lines = [
        f"# Answers next to recall ({result['label']})",
        "",
        f"Model {result['model']}, {len(result['questions'])} questions of {result['dataset']}, "
        f"top {result['k']} chunks of at most {result['size']} characters; 95% paired-bootstrap "
        f"intervals ({result['resamples']} resamples). Measured {result['measured']} on "
        f"{result['machine']['cores']} cores (load {result['machine']['load_average_1m']}), "
        f"{result['machine']['threads']} thread.",
        "",
        "| strategy | recall | MRR | answer F1 | supported | cites gold | citation precision |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        cells = [
            f"{r[m]:.2f} [{r[m + '_lo']:.2f}, {r[m + '_hi']:.2f}]"
            for m in ("recall", "mrr", "answer_f1", "supported", "cites_gold", "citation_precision")
        ]
        lines.append(f"| {r['strategy']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Paired differences against {result['baseline']} (established: the interval excludes 0):",
        "",
    ]
    lines += ["| strategy | metric | difference | interval | established |", "|---|---|---|---|---|"]
    for d in result["differences"]:
        lines.append(
            f"| {d['a']} | {d['metric']} | {d['diff']:+.2f} | [{d['lo']:+.2f}, {d['hi']:+.2f}] | "
            f"{'yes' if d['established'] else 'no'} |"
        )
    lines += ["", "Model cost per strategy (cache hits: answered from the generation cache, not run):", ""]
    lines += [
        "| strategy | step | prompts run | cache hits | generated tokens | seconds | tokens/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, steps in result["model_cost"].items():
        for step, c in steps.items():
            rate = c["tokens_per_s"] if c["tokens_per_s"] is not None else "-"
            lines.append(
                f"| {name} | {step} | {c['model_calls']:.0f} | {c['cache_hits']:.0f} | "
                f"{c['generated_tokens']:.0f} | {c['generate_seconds']:.0f} | {rate} |"
            )
    cs = result["context_stats"]
    lines += ["", f"Contexts written: {cs['prompts']}, unusable (fell back to the title): {cs['fallbacks']}."]
    lines += ["", "Model seconds per 1,000 (measured rates, prompts the model ran):", ""]
    lines += ["| step | seconds | generated tokens | measured on |", "|---|---|---|---|"]
    for label, r in result.get("rates_per_1000", {}).items():
        lines.append(
            f"| {label} | {r['seconds_per_1000']} | {r['generated_tokens_per_1000']} | {r['measured_on']} |"
        )
    est = result.get("estimate_code_50k")
    if est:
        hours = est["hours_one_thread"]["contextual retrieval"]
        lines += [
            "",
            f"Estimate (not measured): contextual retrieval for the {est['chunks']:,} structural chunks of "
            f"code-50k would take about {hours:,.0f} hours on one thread of this machine at this load.",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
