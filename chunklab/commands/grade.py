"""``chunklab grade PATH... [--report grades.csv] [--timeout S]``: grade exercise notebooks."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers) -> None:
    """Register the ``grade`` subcommand."""
    p = subparsers.add_parser(
        "grade",
        help="grade learner notebooks against the reference checkpoints (nbval)",
        description=(
            "Run each learner notebook with the reference solution's checkpoint cells and "
            "compare their outputs with nbval. Prints one line per checkpoint and a score; "
            "exits 1 unless every checkpoint of every notebook passes. A folder is graded "
            "notebook by notebook (bulk mode); --report writes one CSV row per notebook."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="notebooks, or folders of submissions")
    p.add_argument("--report", metavar="CSV", help="write the grades to this CSV file")
    p.add_argument("--timeout", type=float, default=1200.0, metavar="S",
                   help="time limit per cell and per notebook, in seconds (default 1200)")
    p.add_argument("--solutions", metavar="DIR", help="folder of reference solutions (default: the course's)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Grade, print the verdicts, optionally write the CSV; 0 only when everything passed."""
    from chunklab.grading import GradingError, collect_notebooks, format_result, grade_notebooks, write_report

    try:
        paths = collect_notebooks(args.paths)
        results = grade_notebooks(paths, solutions_dir=args.solutions, timeout=args.timeout)
    except GradingError as exc:
        print(f"chunklab grade: error: {exc}", file=sys.stderr)
        return 2
    for r in results:
        print(format_result(r))
    if len(results) > 1:
        ok = sum(r.ok for r in results)
        print(f"{ok}/{len(results)} notebooks passed every checkpoint")
    if args.report:
        out = write_report(results, args.report)
        print(f"report written to {out}")
    if any(r.error for r in results) and all(r.error for r in results):
        return 2
    return 0 if all(r.ok for r in results) else 1
