"""``chunklab evaluate``: compare chunking strategies on the kit's datasets or on your own files.

``chunklab evaluate --dataset docs --strategies fixed,recursive,structural,semantic,hierarchical
--k 5 [--sweep size=200,400,800 overlap=0,10%] [--out DIR] [--split dev|heldout]``, or on your
corpus: ``chunklab evaluate --corpus DIR --questions FILE [--format auto|quotes|spans|beir]
[--report report.html]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from chunklab._validate import check_positive_int
from chunklab.commands.arguments import add_model_argument
from chunklab.evaluate.loader import BUILT_IN
from chunklab.evaluate.metrics import CONVENTIONS
from chunklab.evaluate.userdata import FORMATS
from chunklab.words import counted

if TYPE_CHECKING:
    from chunklab.chunkers.catalog import Strategy
    from chunklab.evaluate.result import BenchmarkResult

DEFAULT_STRATEGIES = "fixed,recursive,structural,semantic,hierarchical"


def add_parser(subparsers) -> None:
    """Register the ``evaluate`` subcommand."""
    from chunklab.chunkers.catalog import DEFAULTS

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
            "Chunk a dataset (built in, or --corpus DIR --questions FILE) with each strategy, index it "
            "in Chroma with the local model, ask every question and score the top-k chunks against the "
            "gold spans. Prints a table (means with 95% paired-bootstrap intervals, and costs); --out "
            "also writes results.csv, per_question.csv, pairwise.csv, results.json and PNG plots; "
            "--report one self-contained HTML page."
        ),
    )
    p.add_argument(
        "--dataset",
        choices=BUILT_IN,
        default="docs",
        help="which built-in dataset (default docs; ignored with --corpus)",
    )
    p.add_argument("--corpus", metavar="DIR", help="your corpus: a folder of documents (or a BEIR folder)")
    p.add_argument(
        "--questions",
        metavar="FILE",
        help="your questions (quotes JSON/JSONL, spans CSV/JSONL, "
        "or a BEIR qrels .tsv; default for BEIR: qrels/*.tsv)",
    )
    p.add_argument("--format", choices=FORMATS, default="auto", help="question format (default auto)")
    p.add_argument(
        "--on-error",
        choices=("fail", "skip"),
        default="fail",
        help="an unreadable corpus file or a bad question: stop (default) or leave it out and say so",
    )
    p.add_argument(
        "--convention",
        choices=CONVENTIONS,
        default="union",
        help="span metrics: 'union' counts a retrieved character once (default); 'chroma' sums "
        "retrieved lengths as Chroma's chunking_evaluation report does",
    )
    add_model_argument(p)
    p.add_argument(
        "--late",
        action="store_true",
        help="embed the chunks by late chunking: each document read by MiniLM in windows of its "
        "max_seq_length tokens, each chunk's token embeddings pooled (instead of each chunk alone)",
    )
    p.add_argument(
        "--tokenizer",
        metavar="PATH",
        help="a tokenizer.json (Hugging Face tokenizers format): every strategy measures its sizes "
        "(size, max_chars, min_chars, levels) in that file's tokens instead of its own unit",
    )
    p.add_argument("--report", metavar="FILE", help="write one self-contained HTML report here")
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
    p.add_argument(
        "--sweep-strategy",
        default="recursive",
        metavar="NAME",
        help="the strategy whose parameters --sweep varies (default recursive)",
    )
    p.add_argument(
        "--split",
        help="only the questions of this split (docs: dev|heldout; yours: its split "
        "field; BEIR: the qrels file name)",
    )
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

    from chunklab.embed import get_encoder
    from chunklab.evaluate import Benchmark, load_dataset
    from chunklab.ingest.report import document_notes

    check_positive_int(args.k, "--k")
    if args.late and args.model != "minilm":
        raise ValueError(f"--late needs --model minilm (token embeddings), got --model {args.model}")
    strategies = build_strategies(args)
    if args.questions is not None and args.corpus is None:
        raise ValueError("--questions needs --corpus DIR (the documents the questions are about)")
    dataset = load_dataset(
        Path(args.corpus) if args.corpus is not None else args.dataset,
        args.format,
        questions=args.questions,
        split=args.split,
        on_error=args.on_error,
        n_files=args.n_files,
        seed=args.seed,
    )
    for problem in dataset.skipped:
        print(f"skipped: {problem}", file=sys.stderr)
    for doc in dataset.documents:  # a fallback decoding or a gap, as chunklab index reports them
        metadata = getattr(doc, "metadata", {})  # a corpus file (Document)
        where = getattr(doc, "path", None) or doc.doc_id
        if metadata.get("decode_problem"):
            print(f"fallback-decoded: {where}: {metadata['decode_problem']}", file=sys.stderr)
        for note in document_notes(metadata):
            print(f"noted: {where}: {note}", file=sys.stderr)
    bench = Benchmark(
        dataset,
        strategies,
        k=args.k,
        encoder=get_encoder(args.model),
        store_dir=args.store_dir,
        n_resamples=args.resamples,
        seed=args.seed,
        convention=args.convention,
        late=args.late,
    )
    result = bench.run(progress=not args.no_progress)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 40):
        print(
            f"\n{counted(len(bench.questions), 'question')}, {counted(len(bench.documents), 'document')}, "
            f"k = {args.k}; "
            f"mean [95% CI over {args.resamples} paired bootstrap resamples]; {result.note()}"
        )
        print(result.table().to_string())
        for line in result.truncation_warnings():
            print(line)
        print(f"wall time {result.wall_s:.1f} s")
    if args.out:
        written = write_outputs(result, args.out, sweep=bool(args.sweep))
        print(f"wrote {', '.join(written)} to {args.out}")
    if args.report:
        from chunklab.evaluate.html_report import write_report

        write_report(result, bench, args.report)
        print(f"wrote {args.report}")
    return 0


def build_strategies(args: argparse.Namespace) -> list[Strategy]:
    """The strategies of ``--strategies`` / ``--sweep``, sized in ``--tokenizer`` tokens when given."""
    from chunklab.chunkers.catalog import parse_param_value, parse_strategies, sweep_strategies

    if args.sweep:
        grid = parse_sweep(args.sweep, parse_param_value)
        strategies = sweep_strategies(args.sweep_strategy, **grid)
        if args.strategies:
            strategies = parse_strategies(args.strategies) + strategies
    else:
        strategies = parse_strategies(args.strategies or DEFAULT_STRATEGIES)
    if args.tokenizer:
        unit = tokenizer_unit(args.tokenizer)
        strategies = [_with_unit(s, unit) for s in strategies]
    return strategies


def _with_unit(strategy: Strategy, unit: str) -> Strategy:
    """``strategy`` rebuilt from the catalog measuring sizes in ``unit`` (same name in tables)."""
    import dataclasses

    from chunklab.chunkers.catalog import DEFAULTS, get_strategy

    if "unit" not in DEFAULTS.get(strategy.family, {}):  # a strategy registered without a size unit
        raise ValueError(f"--tokenizer: strategy {strategy.family!r} has no size unit to measure in tokens")
    rebuilt = get_strategy(strategy.family, **{**strategy.params, "unit": unit})
    return dataclasses.replace(rebuilt, name=strategy.name, sweep=strategy.sweep)


def tokenizer_unit(path: str) -> str:
    """The length unit naming the tokenizer file at ``path`` (checked to exist and to load)."""
    from chunklab.units import check_unit, tokenizer_for

    if not Path(path).is_file():
        raise ValueError(f"--tokenizer {path!r} is not a file (give a tokenizer.json)")
    unit = check_unit(f"tokenizer:{Path(path).resolve()}")
    tokenizer_for(unit)  # an unreadable file is an error now, naming it, not in the middle of a run
    return unit


def parse_sweep(items: list[str], parse_value: Callable[[str], object]) -> dict[str, list[object]]:
    """``["size=200,400", "overlap=0,10%"]`` -> ``{"size": [200, 400], "overlap": [0, "10%"]}``."""
    grid: dict[str, list[object]] = {}
    for item in items:
        key, eq, values = item.partition("=")
        key = key.strip()
        if not eq or not key or not values.strip():
            raise ValueError(f"--sweep items look like size=200,400,800; got {item!r}")
        if key in grid:
            raise ValueError(f"--sweep names {key!r} twice")
        grid[key] = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
    return grid


def write_outputs(result: BenchmarkResult, out_dir: str, sweep: bool = False) -> list[str]:
    """results.csv (summary), per_question.csv, pairwise.csv, results.json and the PNG plots."""
    from chunklab.evaluate.plots import save_figures

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result.summary.to_csv(out / "results.csv")
    result.per_question.to_csv(out / "per_question.csv", index=False)
    result.pairwise.to_csv(out / "pairwise.csv", index=False)
    (out / "results.json").write_text(
        json.dumps(result.to_json(), indent=1, default=str) + "\n", encoding="utf-8"
    )
    written = ["results.csv", "per_question.csv", "pairwise.csv", "results.json"]
    written += save_figures(result, out, sweep=sweep)
    return written
