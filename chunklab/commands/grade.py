"""``chunklab grade PATH... [--report CSV] [--feedback DIR] [--jobs N] [--resume]``: grade notebooks."""

from __future__ import annotations

import argparse
import sys

from chunklab.words import counted


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
            "A folder is graded notebook by notebook (bulk mode; --jobs N grades N at once), each in its own "
            "sandbox; a student is the sub-folder a notebook is in, or else its file name's prefix. --report "
            "writes one CSV row per notebook and --feedback one HTML page per submission, each as soon as "
            "the notebook is graded, so an interrupted run keeps what it graded (--resume goes on from "
            "there)."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="notebooks, or folders of submissions")
    p.add_argument("--report", metavar="CSV", help="write the grades to this CSV file")
    p.add_argument(
        "--feedback",
        metavar="DIR",
        help="write an HTML feedback page per submission and index.html (default: beside --report)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=1200.0,
        metavar="S",
        help="time limit per cell in seconds (default 1200; each notebook gets twice that, see "
        "--notebook-timeout); a cell "
        "past it is interrupted and the remaining checkpoints are graded while the notebook's "
        "own limit allows",
    )
    p.add_argument(
        "--notebook-timeout",
        type=float,
        metavar="S",
        help="time limit per notebook as a whole, in seconds (default: twice --timeout)",
    )
    p.add_argument(
        "--memory",
        type=float,
        default=8.0,
        metavar="GIB",
        help="memory (address space) limit per notebook, in GiB (default 8; 0: none)",
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run kernels without bubblewrap (only for notebooks you trust)",
    )
    p.add_argument(
        "--tmp-size",
        type=float,
        default=0.5,
        metavar="GIB",
        help="size cap of each sandbox's private /tmp, in GiB (default 0.5)",
    )
    p.add_argument(
        "--scratch-size",
        type=float,
        default=1.0,
        metavar="GIB",
        help="size cap of each notebook's scratch folder (and of any one file it writes), in GiB (default 1)",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        metavar="N",
        help="grade N notebooks at once, each in its own sandbox (default 1)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the rows already in --report and grade only the notebooks it does not list yet",
    )
    p.add_argument(
        "--seed", type=int, help="seed of the hidden checks' inputs (default: fresh per submission)"
    )
    p.add_argument("--solutions", metavar="DIR", help="folder of reference solutions (default: the course's)")
    p.set_defaults(func=run)


def options_from(args: argparse.Namespace):
    """The :class:`~chunklab.course.grader.GradeOptions` of parsed ``grade`` arguments.

    Raises ValueError for a value out of range.
    """
    from chunklab.course.grader import GradeOptions
    from chunklab.course.kernel import Limits

    for name in ("memory", "tmp_size", "scratch_size"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0 GiB, got {getattr(args, name)}")
    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    gib = 1024**3
    limits = Limits(
        tmp=int(args.tmp_size * gib) or Limits.tmp, scratch=int(args.scratch_size * gib) or Limits.scratch
    )
    return GradeOptions(
        timeout=args.timeout,
        notebook_timeout=args.notebook_timeout,
        memory=int(args.memory * gib) or None,
        sandbox=False if args.no_sandbox else None,
        seed=args.seed,
        limits=limits,
    )


def run(args: argparse.Namespace) -> int:
    """Grade, print the verdicts as each notebook finishes, write the CSV and feedback as it goes;
    0 only when everything passed."""
    from pathlib import Path

    from chunklab.course.grader import describe_grading, grade_notebooks
    from chunklab.course.notebooks import GradingError
    from chunklab.course.paths import collect_submissions
    from chunklab.course.results import Gradebook, format_result

    try:
        options = options_from(args)
    except ValueError as exc:
        print(f"chunklab grade: error: {exc}", file=sys.stderr)
        return 2
    if args.resume and not args.report:
        print("chunklab grade: error: --resume needs --report (the CSV to resume)", file=sys.stderr)
        return 2
    try:
        found = collect_submissions(args.paths)
    except GradingError as exc:
        print(f"chunklab grade: error: {exc}", file=sys.stderr)
        return 2
    feedback = args.feedback or (
        str(Path(args.report).with_suffix("")) + "-feedback" if args.report else None
    )
    if feedback and not args.feedback and len(found) == 1:
        feedback = None  # one notebook: the terminal says it all
    book = Gradebook(args.report, feedback, resume=args.resume)
    todo = [p for p in found if not book.graded(p)]
    print(describe_grading(options), flush=True)
    if args.resume:
        print(
            f"resuming: {len(found) - len(todo)} of {counted(len(found), 'notebook')} "
            f"already in {args.report}",
            flush=True,
        )
    bar = _progress(len(todo), len(todo) > 1)

    def finished(result) -> None:
        book.add(result)
        bar.write(format_result(result))
        bar.update(1)

    try:
        results = (
            grade_notebooks(
                todo,
                solutions_dir=args.solutions,
                options=options,
                jobs=args.jobs,
                on_result=finished,
                folders={p: f for p, f in found.items() if f is not None},
            )
            if todo
            else []
        )
    except GradingError as exc:
        print(f"chunklab grade: error: {exc}", file=sys.stderr)
        return 2
    finally:
        bar.close()
    rows = book.rows
    if len(rows) > 1:
        ok = sum(r["total"] not in ("", "0") and r["passed"] == r["total"] and not r["error"] for r in rows)
        print(f"{ok}/{counted(len(rows), 'notebook')} passed every checkpoint")
    if args.report:
        print(f"report written to {args.report}")
    if feedback:
        book.write_index()
        print(f"feedback written to {feedback} ({counted(len(rows), 'page')} and index.html)")
    if results and all(r.error for r in results):
        return 2
    every = (
        all(r["total"] not in ("", "0") and r["passed"] == r["total"] and not r["error"] for r in rows)
        if rows
        else all(r.ok and not r.timeouts for r in results)
    )
    return 0 if every and all(r.ok and not r.timeouts for r in results) else 1


def _progress(total: int, show: bool):
    """A progress bar with an ETA on stderr (silent for one notebook); ``write`` prints above it."""
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        unit="notebook",
        file=sys.stderr,
        disable=not show,
        dynamic_ncols=True,
        desc="grading",
        smoothing=0.1,
    )
