"""The course's chunking experiments on the kit's own documents.

1. Every strategy at its natural defaults (fixed, recursive, structural, semantic,
   hierarchical), k = 5.
2. The chunk-size / overlap sweep with recursive chunking (sizes 200, 400, 800 characters;
   overlap 0 and 10%).

Both with 95% paired-bootstrap intervals (10,000 resamples over questions). Writes CSV, JSON,
PNG and a Markdown summary into ``--out`` (default ``benchmarks/results/eval_docs``)::

    nice .venv/bin/python benchmarks/eval_docs.py [--split dev] [--k 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

STRATEGIES = "fixed,recursive,structural,semantic,hierarchical"
SWEEP = {"size": [200, 400, 800], "overlap": [0, "10%"]}


def main(argv: list[str] | None = None) -> int:
    """Run both experiments and write their tables and figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "eval_docs"))
    parser.add_argument("--split", choices=("dev", "heldout"), default=None)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--skip-strategies", action="store_true")
    args = parser.parse_args(argv)

    from chunklab.chunkers.catalog import parse_strategies, sweep_strategies
    from chunklab.commands.evaluate import write_outputs
    from chunklab.embed import get_encoder
    from chunklab.evaluate import Benchmark, load_dataset

    data = load_dataset("docs", split=args.split)
    encoder = get_encoder()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    notes = [
        "# Chunking experiments on the kit's documents\n",
        f"{len(data.documents)} documents, {len(data.questions)} questions"
        f"{' (split ' + args.split + ')' if args.split else ''}, k = {args.k}; "
        f"mean [95% CI, {args.resamples} paired bootstrap resamples over questions].\n",
    ]
    timings = {}
    experiments = []
    if not args.skip_strategies:
        experiments.append(("strategies", parse_strategies(STRATEGIES), False))
    if not args.skip_sweep:
        experiments.append(("sweep", sweep_strategies("recursive", **SWEEP), True))
    for name, strategies, is_sweep in experiments:
        t0 = time.perf_counter()
        cpu0 = _cpu()
        calls0 = encoder.model_calls
        result = Benchmark(data, strategies, k=args.k, encoder=encoder, n_resamples=args.resamples).run()
        timings[name] = {
            "wall_s": round(time.perf_counter() - t0, 1),
            "cpu_s": round(_cpu() - cpu0, 1),
            "texts_embedded_by_model": encoder.model_calls - calls0,
        }
        write_outputs(result, out / name, sweep=is_sweep)
        title = (
            "Strategies at natural defaults" if name == "strategies" else "Recursive: chunk size x overlap"
        )
        notes.append(f"## {title}\n")
        notes.append(result.markdown() + "\n")
        notes.append(_pairwise_note(result) + "\n")
        print(f"\n{title}\n{result.table().to_string()}\n", flush=True)
    notes.append("## Run\n")
    notes.append(
        "```json\n" + json.dumps({"timings": timings, "load_average": os.getloadavg()}, indent=1) + "\n```\n"
    )
    (out / "README.md").write_text("\n".join(notes), encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _pairwise_note(result) -> str:
    """The clearest wins: pairs where one strategy beats the other in >= 95% of resamples."""
    pw = result.pairwise[result.pairwise["metric"].isin(("recall", "ndcg", "iou"))]
    lines = ["Pairs separated in at least 95% of bootstrap resamples (recall, nDCG, IoU):", ""]
    found = False
    for _, row in pw.iterrows():
        for a, b, share in ((row["a"], row["b"], row["a_wins"]), (row["b"], row["a"], row["b_wins"])):
            if share >= 0.95:
                lines.append(f"- {row['metric']}: {a} > {b} ({share:.1%})")
                found = True
    if not found:
        lines.append("- none: no strategy beats another that consistently")
    return "\n".join(lines)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


if __name__ == "__main__":
    sys.exit(main())
