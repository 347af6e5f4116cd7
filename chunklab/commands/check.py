"""``chunklab check NB [--checkpoint ID]``: self-check while working, the visible checks only."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers) -> None:
    """Register the ``check`` subcommand."""
    p = subparsers.add_parser(
        "check",
        help="self-check an exercise notebook: its checkpoints' visible outputs, no hidden checks",
        description=(
            "Run a saved exercise notebook the way the grader does and compare its checkpoints with the "
            "reference outputs, without the hidden checks (so a pass here is necessary, not sufficient). "
            "In a notebook: from chunklab.course import check; check('cp-...')."
        ),
    )
    p.add_argument("notebook", metavar="NB", help="the exercise notebook (save it first)")
    p.add_argument(
        "--checkpoint", action="append", metavar="ID", help="report only this checkpoint (repeatable)"
    )
    p.add_argument(
        "--timeout", type=float, default=1200.0, metavar="S", help="time limit per cell and notebook"
    )
    p.add_argument("--solutions", metavar="DIR", help="folder of reference solutions (default: the course's)")
    p.add_argument(
        "--progress",
        action="store_true",
        help="write a line to stderr before each code cell runs (what check() in a notebook shows)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check, print one line per checkpoint; 0 when the reported checkpoints all pass."""
    from chunklab.course.grader import GradeOptions, grade_notebooks
    from chunklab.course.notebooks import GradingError
    from chunklab.course.results import format_result

    try:
        (result,) = grade_notebooks(
            [args.notebook],
            solutions_dir=args.solutions,
            options=GradeOptions(
                timeout=args.timeout, hidden=False, progress=_progress if args.progress else None
            ),
        )
    except GradingError as exc:
        print(f"chunklab check: error: {exc}", file=sys.stderr)
        return 2
    if result.error:
        print(format_result(result))
        return 2
    if args.checkpoint:
        known = {c.cell_id for c in result.checkpoints}
        unknown = sorted(set(args.checkpoint) - known)
        if unknown:
            print(
                f"chunklab check: error: --checkpoint {', '.join(unknown)}: "
                "not a checkpoint of this notebook "
                f"(its checkpoints: {', '.join(sorted(known))})",
                file=sys.stderr,
            )
            return 2
        result.checkpoints = [c for c in result.checkpoints if c.cell_id in args.checkpoint]
    print(format_result(result))
    print("  (visible checks only: the grader also runs hidden checks on fresh inputs)")
    return 0 if result.ok else 1


def _progress(line: str) -> None:
    from chunklab.course.selfcheck import PROGRESS

    print(f"{PROGRESS}{line}", file=sys.stderr, flush=True)
