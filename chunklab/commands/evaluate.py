"""``chunklab evaluate``: compare chunking strategies on the kit's documents or code questions.

``chunklab evaluate --dataset docs --strategies fixed,recursive,structural,semantic,hierarchical
--k 5 [--sweep size=200,400,800 overlap=0,10%] [--out DIR] [--split dev|heldout]``
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

DEFAULT_STRATEGIES = "fixed,recursive,structural,semantic,hierarchical"


def add_parser(subparsers) -> None:
    """Register the ``evaluate`` subcommand."""
    from chunklab.strategies import DEFAULTS

    epilog = "strategies and their defaults:\n" + "\n".join(
        f"  {name:16s} " + (", ".join(f"{k}={v}" for k, v in params.items()) or "(module defaults)")
        for name, params in DEFAULTS.items()
    )
    p = subparsers.add_parser(
        "evaluate",
        epilog=epilog.replace("%", "%%"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="benchmark chunking strategies: recall, precision, IoU with bootstrap CIs, and costs",
        description=(
            "Chunk a dataset with each strategy, index it in Chroma with the local MiniLM model, "
            "ask every question and score the top-k chunks against the gold spans. Prints a table "
            "(means with 95%% paired-bootstrap intervals, and costs); --out also writes "
            "results.csv, per_question.csv, pairwise.csv, results.json and PNG plots."
        ),
    )
    p.add_argument("--dataset", choices=("docs", "code"), default="docs", help="which dataset (default docs)")
    p.add_argument(
        "--strategies",
        default=None,
        metavar="LIST",
        help=(
            f"comma-separated strategies (default {DEFAULT_STRATEGIES}); parameters after a colon, "
            "e.g. 'recursive:size=400;overlap=10%%'"
        ),
    )
    p.add_argument("--k", type=int, default=5, help="chunks retrieved per question (default 5)")
    p.add_argument(
        "--sweep",
        nargs="+",
        metavar="PARAM=V1,V2",
        help="sweep parameters of --sweep-strategy instead, e.g. size=200,400,800 overlap=0,10%%",
    )
    p.add_argument("--sweep-strategy", default="recursive", metavar="NAME",
                   help="the strategy whose parameters --sweep varies (default recursive)")
    p.add_argument("--split", choices=("dev", "heldout"), help="only the questions of this split")
    p.add_argument("--out", metavar="DIR", help="write CSV, JSON and PNG results into DIR")
    p.add_argument("--n-files", type=int, default=200, help="code dataset: files sampled (default 200)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and of the code sample")
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    p.add_argument("--store-dir", metavar="DIR", help="keep the Chroma indexes here (default: a temp dir)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the dataset, run the benchmark, print the table and write the outputs."""
    import pandas as pd

    from chunklab.evaluate import Benchmark
    from chunklab.strategies import parse_param_value, parse_strategies, sweep_strategies

    if isinstance(args.k, bool) or args.k <= 0:
        raise ValueError(f"--k must be a positive integer, got {args.k}")
    if args.sweep:
        grid = parse_sweep(args.sweep, parse_param_value)
        strategies = sweep_strategies(args.sweep_strategy, **grid)
        if args.strategies:
            strategies = parse_strategies(args.strategies) + strategies
    else:
        strategies = parse_strategies(args.strategies or DEFAULT_STRATEGIES)
    dataset = load_dataset(args.dataset, args.split, args.n_files, args.seed)
    bench = Benchmark(
        dataset, strategies, k=args.k, store_dir=args.store_dir, n_resamples=args.resamples, seed=args.seed
    )
    result = bench.run(progress=not args.no_progress)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 40):
        print(
            f"\n{len(bench.questions)} questions, {len(bench.documents)} documents, k = {args.k}; "
            f"mean [95% CI over {args.resamples} paired bootstrap resamples]"
        )
        print(result.table().to_string())
        print(f"wall time {result.wall_s:.1f} s")
    if args.out:
        written = write_outputs(result, args.out, sweep=bool(args.sweep))
        print(f"wrote {', '.join(written)} to {args.out}")
    return 0


def load_dataset(name: str, split: str | None, n_files: int, seed: int) -> Any:
    """The docs dataset (optionally one split) or ``code_questions(n_files, seed)``."""
    if name == "docs":
        from chunklab.datasets.docs import load_docs

        return load_docs(split=split)
    from chunklab.datasets.code_questions import code_questions

    data = code_questions(n_files=n_files, seed=seed)
    return data.split(split) if split else data


def parse_sweep(items: list[str], parse_value: Any) -> dict[str, list[Any]]:
    """``["size=200,400", "overlap=0,10%"]`` -> ``{"size": [200, 400], "overlap": [0, "10%"]}``."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, eq, values = item.partition("=")
        key = key.strip()
        if not eq or not key or not values.strip():
            raise ValueError(f"--sweep items look like size=200,400,800; got {item!r}")
        if key in grid:
            raise ValueError(f"--sweep names {key!r} twice")
        grid[key] = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
    return grid


def write_outputs(result: Any, out_dir: str, sweep: bool = False) -> list[str]:
    """results.csv (summary), per_question.csv, pairwise.csv, results.json and the PNG plots."""
    from pathlib import Path

    from chunklab.evaluate.plots import save_figures

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result.summary.to_csv(out / "results.csv")
    result.per_question.to_csv(out / "per_question.csv", index=False)
    result.pairwise.to_csv(out / "pairwise.csv", index=False)
    (out / "results.json").write_text(json.dumps(result.to_json(), indent=1, default=str) + "\n", encoding="utf-8")
    written = ["results.csv", "per_question.csv", "pairwise.csv", "results.json"]
    written += save_figures(result, out, sweep=sweep)
    return written


if __name__ == "__main__":  # pragma: no cover
    from chunklab.cli import main

    sys.exit(main(["evaluate", *sys.argv[1:]]))
