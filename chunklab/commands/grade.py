"""``chunklab grade PATH... [--report grades.csv] [--feedback DIR] [--timeout S]``: grade exercise notebooks."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers) -> None:
    """Register the ``grade`` subcommand."""
    p = subparsers.add_parser(
        "grade",
        help="grade learner notebooks against the reference checkpoints, each in a sealed sandbox",
        description=(
            "Run each learner notebook with the reference solution's checkpoint cells, alone in a fresh "
            "scratch folder and a bubblewrap sandbox (when bwrap is installed), and compare the checkpoints' "
            "outputs with the reference's; hidden checks call your functions on fresh inputs. Prints one "
            "line per checkpoint and a score; exits 1 unless every checkpoint of every notebook passes (and "
            "no cell ran past its time limit: such a cell is interrupted and grading goes on). "
            "A folder is graded notebook by notebook (bulk mode); --report writes one CSV row per notebook "
            "and --feedback one HTML page per submission."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="notebooks, or folders of submissions")
    p.add_argument("--report", metavar="CSV", help="write the grades to this CSV file")
    p.add_argument("--feedback", metavar="DIR",
                   help="write an HTML feedback page per submission and index.html (default: beside --report)")
    p.add_argument("--timeout", type=float, default=1200.0, metavar="S",
                   help="time limit per cell in seconds (default 1200; each notebook gets twice that, see "
                        "--notebook-timeout); a cell "
                        "past it is interrupted and the remaining checkpoints are graded while the notebook's "
                        "own limit allows")
    p.add_argument("--notebook-timeout", type=float, metavar="S",
                   help="time limit per notebook as a whole, in seconds (default: twice --timeout)")
    p.add_argument("--memory", type=float, default=8.0, metavar="GIB",
                   help="memory (address space) limit per notebook, in GiB (default 8; 0: none)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run kernels without bubblewrap (only for notebooks you trust)")
    p.add_argument("--seed", type=int, help="seed of the hidden checks' inputs (default: fresh per submission)")
    p.add_argument("--solutions", metavar="DIR", help="folder of reference solutions (default: the course's)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Grade, print the verdicts, optionally write the CSV and feedback; 0 only when everything passed."""
    from pathlib import Path

    from chunklab.course.grader import GradeOptions, grade_notebooks
    from chunklab.course.notebooks import GradingError
    from chunklab.course.paths import collect_notebooks
    from chunklab.course.results import format_result, write_feedback, write_report

    if args.memory < 0:
        print(f"chunklab grade: error: --memory must be >= 0 GiB, got {args.memory}", file=sys.stderr)
        return 2
    options = GradeOptions(timeout=args.timeout, notebook_timeout=args.notebook_timeout,
                           memory=int(args.memory * 1024**3) or None, sandbox=False if args.no_sandbox else None,
                           seed=args.seed)
    try:
        paths = collect_notebooks(args.paths)
        results = grade_notebooks(paths, solutions_dir=args.solutions, options=options)
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
    feedback = args.feedback or (str(Path(args.report).with_suffix("")) + "-feedback" if args.report else None)
    if feedback and (args.feedback or len(results) > 1):
        pages = write_feedback(results, feedback)
        print(f"feedback written to {pages[-1].parent} ({len(pages) - 1} pages and index.html)")
    if any(r.error for r in results) and all(r.error for r in results):
        return 2
    return 0 if all(r.ok and not r.timeouts for r in results) else 1
