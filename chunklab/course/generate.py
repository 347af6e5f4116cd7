"""The exercise generator: ``exercises/`` is written from ``solutions/``, never edited by hand.

In a solution notebook, learner-only code sits between ``### BEGIN SOLUTION`` and
``### END SOLUTION``. The exercise keeps every cell and cell id, replaces each region by
its ``# HINT: ...`` lines (or ``# YOUR CODE HERE``) and a ``raise NotImplementedError`` that says
what to write in which section,
locks the checkpoint cells (and says so in a first comment line, since JupyterLab draws no
lock) and clears outputs, except in cells tagged ``keep-output``
(things the learner must see before writing any code); a kept cell loses its widget outputs
(a progress bar's snapshot: the widget's state is not saved, so Lab could only say "model
not found").

Adding a notebook:

1. write ``solutions/NN-name.ipynb``: learner code between the markers (``# HINT: ...``
   lines inside a region become the exercise's hint); checkpoint cells tagged
   ``checkpoint`` with ``"editable": false, "deletable": false`` in their metadata, with
   ids that name them (``cp-...``), printing values only a correct solution gives, in
   bands or against thresholds when they depend on the machine; cells whose output varies
   start with ``# NBVAL_IGNORE_OUTPUT``;
2. ``chunklab course execute solutions/NN-name.ipynb`` (stores outputs, no timing noise);
3. ``chunklab course make-exercises`` (refuses a solution that :func:`lint_solution` faults);
4. add its plausible wrong solutions to ``WRONG`` in ``tests/notebooks/test_wrong_solutions.py``.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chunklab.course.notebooks import (
    CHECKPOINT_TAG,
    GradingError,
    cell_headings,
    is_checkpoint,
    notebook_text,
    read_notebook,
)
from chunklab.course.paths import course_root

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = [
    "BEGIN",
    "END",
    "KEEP_OUTPUT_TAG",
    "LOCK_BANNER",
    "ExerciseStatus",
    "execute_notebook",
    "lint_solution",
    "make_exercise",
    "make_exercises",
    "strip_solutions",
    "stub_message",
]

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
HINT = "# HINT:"
#: tag of a cell whose outputs the exercise keeps (data the learner must see)
KEEP_OUTPUT_TAG = "keep-output"
MARKDOWN_STUB = "*Your answer here.*"
#: first line of every checkpoint cell in an exercise: JupyterLab draws no lock, so the cell says it
LOCK_BANNER = "# 🔒 LOCKED CHECKPOINT: run it as it is (the grader runs the reference's copy of this cell)"
_CELL_NOISE = ("execution", "collapsed", "scrolled", "ExecuteTime")
#: the MIME type of a live widget's output (a tqdm bar in Jupyter); meaningless once its kernel is gone
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def strip_solutions(source: str, cell_type: str = "code", heading: str = "") -> str:
    """Replace every solution region of a cell's source by its hint and a stub.

    In code cells the stub is the region's ``# HINT:`` comment lines (``# YOUR CODE HERE``
    when there are none) and ``raise NotImplementedError(...)``, indented like the BEGIN
    marker, whose message says what to write and where (:func:`stub_message`; ``heading`` is
    the section the cell sits under); in markdown cells it is "*Your answer here.*".
    Unbalanced markers raise ValueError.
    """
    lines = source.split("\n")
    out: list[str] = []
    inside = False
    indent = ""
    hints: list[str] = []
    region: list[str] = []
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            if inside:
                raise ValueError(f"line {n}: {BEGIN} inside another solution region")
            inside, indent, hints, region = True, line[: len(line) - len(line.lstrip())], [], []
        elif stripped.startswith(END):
            if not inside:
                raise ValueError(f"line {n}: {END} without {BEGIN}")
            inside = False
            if cell_type == "code":
                out.extend(indent + h for h in (hints or ["# YOUR CODE HERE"]))
                message = stub_message(_enclosing_function(out, indent), _assigned(region, indent), heading)
                out.append(f"{indent}raise NotImplementedError({message!r})")
            else:
                out.append(indent + MARKDOWN_STUB)
        elif inside:
            region.append(line)
            if stripped.startswith(HINT):
                hints.append(stripped)
        else:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} without {END}")
    return "\n".join(out)


def stub_message(function: str = "", names: Sequence[str] = (), heading: str = "") -> str:
    """What a stub says when it runs: what to write, and the section of the cell to write it in.

    ``write chunk_by_pages() in the cell under "2. Pages as chunks"``; without a function,
    the names the missing code sets (``write the code that sets n_chunks and n_tokens ...``).
    """
    if function:
        what = f"write {function}()"
    elif names:
        listed = ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]
        what = f"write the code that sets {listed}"
    else:
        what = "write the missing code"
    return f'{what} in the cell under "{heading}"' if heading else f"{what} in this cell"


_DEF = re.compile(r"^(?P<indent>\s*)(?:async\s+)?def\s+(?P<name>\w+)")
_ASSIGN = re.compile(r"^(?P<names>\w+(?:\s*,\s*\w+)*)\s*(?::[^=]+)?=(?!=)")


def _enclosing_function(above: list[str], indent: str) -> str:
    """The function a region at ``indent`` sits in: the nearest ``def`` above it indented less,
    unless a top-level statement comes first (the region is then in a loop or block of its own)."""
    for line in reversed(above):
        match = _DEF.match(line)
        if match and len(match["indent"]) < len(indent):
            return match["name"]
        if line[:1].strip() and not line.startswith((")", "]", "@", "#")):
            return ""
    return ""


def _assigned(region: list[str], indent: str) -> list[str]:
    """The names a region's own statements (at its indent) assign, in order of first assignment."""
    names: list[str] = []
    for line in region:
        if not line.startswith(indent) or line[len(indent) : len(indent) + 1].isspace():
            continue
        rest = line[len(indent) :]
        while (match := _ASSIGN.match(rest)) is not None:  # also a chained ``a = b = 0``
            names.extend(n for n in (m.strip() for m in match["names"].split(",")) if n not in names)
            rest = rest[match.end() :].lstrip()
    return names


def has_solution(source: str) -> bool:
    """Whether a cell's source holds a solution region."""
    return any(line.strip().startswith(BEGIN) for line in source.split("\n"))


def make_exercise(solution: NotebookNode) -> NotebookNode:
    """The exercise notebook for one solution notebook (a new notebook; the input is untouched)."""
    nb = copy.deepcopy(solution)
    for meta_key in ("widgets", "toc", "varInspector"):
        nb.metadata.pop(meta_key, None)
    headings = cell_headings(nb)
    for i, cell in enumerate(nb.cells):
        where = f"cell {i} (id {cell.get('id')})"
        try:
            if has_solution(cell.source):
                if is_checkpoint(cell):
                    raise ValueError("a checkpoint cell must not hold a solution region")
                cell.source = strip_solutions(cell.source, cell.cell_type, headings[i])
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from exc
        for key in _CELL_NOISE:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            tags = cell.metadata.get("tags") or []
            if is_checkpoint(cell):
                cell.metadata["editable"] = False
                cell.metadata["deletable"] = False
                cell.source = f"{LOCK_BANNER}\n{cell.source}"
            if KEEP_OUTPUT_TAG not in tags:
                cell.outputs = []
                cell.execution_count = None
            else:
                cell.outputs = [out for out in cell.outputs if WIDGET_VIEW not in out.get("data", {})]
                for out in cell.outputs:
                    if "execution_count" in out:
                        out["execution_count"] = None
                cell.execution_count = None
    return nb


def lint_solution(nb: NotebookNode, name: str = "notebook") -> list[str]:
    """Problems that make a solution notebook unfit as the single source (empty list: fine).

    Every code cell executed; at least one checkpoint; checkpoint cells locked, printing
    something, holding no solution region and no bare "PASS"; solution markers balanced;
    unique cell ids; no stored error outputs.
    """
    problems: list[str] = []
    ids = [c.get("id") for c in nb.cells]
    dups = sorted({i for i in ids if ids.count(i) > 1 and i})
    if dups or not all(ids):
        problems.append(f"{name}: cell ids must exist and be unique (duplicates: {dups})")
    cps = 0
    regions = 0
    for i, cell in enumerate(nb.cells):
        where = f"{name} cell {i} (id {cell.get('id')})"
        try:
            if has_solution(cell.source):
                regions += 1
                strip_solutions(cell.source, cell.cell_type)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
        if cell.cell_type != "code":
            continue
        if cell.execution_count is None:
            problems.append(f"{where}: not executed (solutions are committed executed)")
        if any(o.get("output_type") == "error" for o in cell.outputs):
            problems.append(f"{where}: stored output is an error")
        if is_checkpoint(cell):
            cps += 1
            meta = cell.metadata
            if meta.get("editable", True) or meta.get("deletable", True):
                problems.append(f"{where}: checkpoint must be locked (editable: false, deletable: false)")
            if has_solution(cell.source):
                problems.append(f"{where}: checkpoint holds a solution region")
            text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
            text += "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs if "data" in o)
            if not text.strip():
                problems.append(f"{where}: checkpoint prints nothing (it must print values to compare)")
            elif re.fullmatch(r"\W*(pass(ed)?|ok|true)\W*", text.strip(), flags=re.IGNORECASE):
                problems.append(f"{where}: checkpoint prints a bare verdict; print the values instead")
            if "NBVAL_IGNORE_OUTPUT" in cell.source or "NBVAL_SKIP" in cell.source:
                problems.append(f"{where}: checkpoint output must be compared (no NBVAL_IGNORE_OUTPUT/SKIP)")
    if not cps:
        problems.append(f"{name}: no cell tagged {CHECKPOINT_TAG!r}")
    if not regions:
        problems.append(f"{name}: no {BEGIN} region for the learner to write")
    return problems


@dataclass
class ExerciseStatus:
    """The state of one exercise file with respect to its solution."""

    path: Path
    state: str  # "ok", "stale", "missing", "orphan", "written", "removed"


def make_exercises(
    solutions_dir: str | os.PathLike | None = None,
    exercises_dir: str | os.PathLike | None = None,
    *,
    check: bool = False,
) -> list[ExerciseStatus]:
    """Write (or with ``check``, only compare) ``exercises/NN-*.ipynb`` from ``solutions/``.

    Returns one status per notebook. In check mode nothing is written and the statuses say
    which exercises are ``stale``, ``missing`` or ``orphan`` (an exercise with no solution);
    otherwise stale and missing ones are written and orphans removed.
    """
    sol = Path(solutions_dir) if solutions_dir else course_root() / "solutions"
    exe = Path(exercises_dir) if exercises_dir else course_root() / "exercises"
    if not sol.is_dir():
        raise GradingError(f"{sol}: no solutions folder")
    statuses: list[ExerciseStatus] = []
    names = set()
    for src in sorted(sol.glob("*.ipynb")):
        names.add(src.name)
        solution = read_notebook(src)
        problems = lint_solution(solution, src.name)
        if problems:
            raise ValueError("cannot generate exercises from a faulty solution:\n  " + "\n  ".join(problems))
        text = notebook_text(make_exercise(solution))
        dest = exe / src.name
        current = dest.read_text(encoding="utf-8") if dest.exists() else None
        if current == text:
            statuses.append(ExerciseStatus(dest, "ok"))
        elif check:
            statuses.append(ExerciseStatus(dest, "missing" if current is None else "stale"))
        else:
            exe.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
            statuses.append(ExerciseStatus(dest, "written"))
    if exe.is_dir():
        for extra in sorted(exe.glob("*.ipynb")):
            if extra.name not in names:
                if check:
                    statuses.append(ExerciseStatus(extra, "orphan"))
                else:
                    extra.unlink()
                    statuses.append(ExerciseStatus(extra, "removed"))
    return statuses


def execute_notebook(path: str | os.PathLike, *, timeout: float = 600.0) -> Path:
    """Execute a solution notebook in place (its folder as working directory), without timing metadata.

    The way solutions get their committed outputs: ``chunklab course execute solutions/NN-x.ipynb``.
    """
    from nbclient import NotebookClient

    p = Path(path)
    nb = read_notebook(p)
    env_backup = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    try:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(p.parent.resolve())}},
            record_timing=False,
        )
        client.execute()
    finally:
        for k, v in env_backup.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    for cell in nb.cells:
        for key in _CELL_NOISE:
            cell.metadata.pop(key, None)
    nb.metadata.pop("widgets", None)
    p.write_text(notebook_text(nb), encoding="utf-8")
    return p
