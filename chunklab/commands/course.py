"""``chunklab course make-exercises [--check]`` and ``chunklab course execute NB...``."""

from __future__ import annotations

import argparse
import sys

from chunklab.words import counted


def add_parser(subparsers) -> None:
    """Register the ``course`` subcommand and its actions."""
    p = subparsers.add_parser("course", help="course maintenance: generate exercises, execute solutions")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    mk = sub.add_parser(
        "make-exercises",
        help="write exercises/ from solutions/",
        description="Write exercises/NN-*.ipynb from solutions/NN-*.ipynb (solution regions become stubs).",
    )
    mk.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and list the exercises that are stale, missing or orphaned",
    )
    mk.add_argument("--solutions", metavar="DIR", help="solutions folder (default: the course's)")
    mk.add_argument("--exercises", metavar="DIR", help="exercises folder (default: the course's)")
    mk.set_defaults(func=run_make_exercises)
    ex = sub.add_parser(
        "execute",
        help="execute solution notebooks in place (refreshes their committed outputs)",
    )
    ex.add_argument("notebooks", nargs="+", metavar="NB")
    ex.add_argument("--timeout", type=float, default=600.0, metavar="S", help="time limit per cell")
    ex.set_defaults(func=run_execute)


def run_make_exercises(args: argparse.Namespace) -> int:
    """Generate (or check) the exercises."""
    from chunklab.course.generate import make_exercises

    statuses = make_exercises(args.solutions, args.exercises, check=args.check)
    bad = [s for s in statuses if s.state not in ("ok", "written", "removed")]
    for s in statuses:
        if s.state != "ok":
            print(f"{s.state:8} {s.path}")
    if args.check:
        if bad:
            stale = counted(len(bad), "exercise notebook")
            print(f"{stale} out of date: run `make exercises`", file=sys.stderr)
            return 1
        print(f"{counted(len(statuses), 'exercise notebook')} up to date")
    else:
        changed = sum(s.state != "ok" for s in statuses)
        print(f"{counted(len(statuses), 'exercise notebook')} checked, {changed} changed")
    return 0


def run_execute(args: argparse.Namespace) -> int:
    """Execute each solution notebook in place and report the wall time."""
    import time

    from chunklab.course.generate import execute_notebook

    for nb in args.notebooks:
        t0 = time.perf_counter()
        execute_notebook(nb, timeout=args.timeout)
        print(f"executed {nb} in {time.perf_counter() - t0:.1f} s")
    return 0
