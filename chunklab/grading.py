"""Checkpoint helpers for the exercise notebooks, and the notebook grader.

Checkpoint cells (tagged ``checkpoint`` and locked) print values that only a correct
implementation produces; the helpers below keep those values machine-independent (bands,
thresholds, rounded numbers).

The grader takes a learner's notebook, keeps the learner's own code cells, puts in the
**reference** solution's checkpoint cells (source and stored outputs, matched by cell id,
inserted from the reference when the learner deleted one), executes the result with nbval
in a subprocess and reports one line per checkpoint. Stored outputs in the learner's
notebook are never compared, so editing them cannot earn a pass.
"""

from __future__ import annotations

import copy
import csv
import difflib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CHECKPOINT_TAG",
    "CheckpointResult",
    "GradeResult",
    "GradingError",
    "at_least",
    "at_most",
    "band",
    "build_graded_notebook",
    "checkpoint_cells",
    "collect_notebooks",
    "course_root",
    "describe_chunks",
    "find_reference",
    "format_result",
    "grade_notebook",
    "grade_notebooks",
    "is_checkpoint",
    "read_notebook",
    "sanitize_file",
    "show",
    "write_report",
]

#: the cell tag that marks a checkpoint cell
CHECKPOINT_TAG = "checkpoint"
#: the sanitize file, relative to the course root
SANITIZE_NAME = "solutions/nbval_sanitize.cfg"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class GradingError(ValueError):
    """A notebook cannot be graded: missing, malformed, or not one of the course's."""


# --------------------------------------------------------------------------------------
# Checkpoint helpers: what checkpoint cells print
# --------------------------------------------------------------------------------------


def show(label: str, value: Any, *, digits: int = 3) -> None:
    """Print ``label: value`` with floats rounded to ``digits`` decimals (stable across machines)."""
    print(f"{label}: {_fmt(value, digits)}")


def band(value: float, edges: Sequence[float], *, unit: str = "") -> str:
    """The band of ``edges`` that holds ``value``: ``"10-20%"``-style, for machine-dependent numbers.

    ``edges`` are increasing; a value below the first edge reads ``"< first"``, one at or
    above the last ``">= last"``. Use it for rates and sizes that differ from one machine
    to another but should land in the same band everywhere.
    """
    if not edges or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise ValueError(f"edges must be a non-empty increasing sequence, got {list(edges)!r}")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "undefined"
    if value < edges[0]:
        return f"< {_fmt(edges[0])}{unit}"
    for lo, hi in zip(edges, edges[1:], strict=False):
        if lo <= value < hi:
            return f"{_fmt(lo)}-{_fmt(hi)}{unit}"
    return f">= {_fmt(edges[-1])}{unit}"


def at_least(label: str, value: float, threshold: float) -> str:
    """``"label >= threshold: yes"`` (or ``no``): a named verdict against a threshold."""
    ok = value is not None and not (isinstance(value, float) and math.isnan(value)) and value >= threshold
    return f"{label} >= {_fmt(threshold)}: {'yes' if ok else 'no'}"


def at_most(label: str, value: float, threshold: float) -> str:
    """``"label <= threshold: yes"`` (or ``no``): a named verdict against a threshold."""
    ok = value is not None and not (isinstance(value, float) and math.isnan(value)) and value <= threshold
    return f"{label} <= {_fmt(threshold)}: {'yes' if ok else 'no'}"


def describe_chunks(
    chunks: Sequence[Any],
    source: str,
    *,
    max_size: int | None = None,
    length: Callable[[str], int] | None = None,
    overlap: int = 0,
    show_spans: int = 2,
) -> None:
    """Print what a checkpoint needs to know about a chunk list.

    The count, the first and last ``show_spans`` offsets, and the Chunk contract verdict
    from :func:`chunklab.check_chunks` (the number of violations and the first one).
    """
    from chunklab.chunk import check_chunks

    chunks = list(chunks)
    print(f"chunks: {len(chunks)}")
    if chunks:
        head = [(c.start, c.end) for c in chunks[:show_spans]]
        tail = [(c.start, c.end) for c in chunks[-show_spans:]]
        print(f"first spans: {head}")
        print(f"last spans: {tail}")
    problems = check_chunks(chunks, source, max_size=max_size, length=length, overlap=overlap)
    print(f"contract violations: {len(problems)}")
    if problems:
        print(f"first violation: {problems[0]}")


def _fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        text = f"{round(value, digits):.{digits}f}".rstrip("0").rstrip(".")
        return "0" if text == "-0" else text
    return str(value)


# --------------------------------------------------------------------------------------
# Finding notebooks
# --------------------------------------------------------------------------------------


def course_root(start: str | os.PathLike | None = None) -> Path:
    """The course directory (the one holding ``solutions/``).

    ``$CHUNKLAB_COURSE_ROOT`` wins; otherwise the nearest ancestor of ``start`` (default:
    the current directory) with a ``solutions`` folder, then the checkout chunklab runs from.
    """
    env = os.environ.get("CHUNKLAB_COURSE_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(start or Path.cwd()).resolve()
    for cand in [here, *here.parents]:
        if (cand / "solutions").is_dir():
            return cand
    pkg_root = Path(__file__).resolve().parent.parent
    if (pkg_root / "solutions").is_dir():
        return pkg_root
    raise GradingError(
        "cannot find the course's solutions/ folder: run from the course checkout or set CHUNKLAB_COURSE_ROOT"
    )


def sanitize_file(root: Path | None = None) -> Path:
    """The nbval sanitize file (timings, memory addresses, progress rates)."""
    return (root or course_root()) / SANITIZE_NAME


def find_reference(path: str | os.PathLike, solutions_dir: str | os.PathLike | None = None) -> Path:
    """The reference solution a learner's notebook is graded against, found by notebook name.

    ``exercises/03-structural.ipynb`` and ``alice/03-structural.ipynb`` map to
    ``solutions/03-structural.ipynb``; a file name that merely contains a course notebook's
    name (``alice-03-structural.ipynb``) maps to it when exactly one matches.
    """
    sol = Path(solutions_dir) if solutions_dir else course_root() / "solutions"
    names = sorted(p.stem for p in sol.glob("*.ipynb"))
    stem = Path(path).stem
    if stem in names:
        return sol / f"{stem}.ipynb"
    contained = [n for n in names if n in stem]
    if len(contained) == 1:
        return sol / f"{contained[0]}.ipynb"
    listing = ", ".join(names) or "(none)"
    raise GradingError(f"{path}: not one of the course's notebooks (expected one of: {listing})")


def collect_notebooks(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Expand folders into the ``.ipynb`` files below them (sorted); files are kept as given."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(
                f for f in p.rglob("*.ipynb") if ".ipynb_checkpoints" not in f.parts and f.is_file()
            )
            if not found:
                raise GradingError(f"{p}: folder holds no .ipynb notebooks")
            out.extend(found)
        else:
            out.append(p)
    return out


def read_notebook(path: str | os.PathLike):
    """Read a notebook (nbformat 4), raising :class:`GradingError` with a clear message if it can't."""
    import nbformat

    p = Path(path)
    if not p.exists():
        raise GradingError(f"{p}: no such file")
    if p.is_dir():
        raise GradingError(f"{p}: is a folder, not a notebook")
    if p.suffix != ".ipynb":
        raise GradingError(f"{p}: not a notebook (expected a .ipynb file)")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GradingError(f"{p}: cannot be read ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GradingError(f"{p}: malformed notebook, not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise GradingError(f"{p}: malformed notebook (no list of cells)")
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several kinds of errors
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise GradingError(f"{p}: malformed notebook ({first})") from exc
    return nb


# --------------------------------------------------------------------------------------
# Building the graded notebook
# --------------------------------------------------------------------------------------


def is_checkpoint(cell: Any) -> bool:
    """Whether ``cell`` is a checkpoint cell (a code cell tagged ``checkpoint``)."""
    return cell.get("cell_type") == "code" and CHECKPOINT_TAG in (cell.get("metadata", {}).get("tags") or [])


def checkpoint_cells(nb: Any) -> list[Any]:
    """The checkpoint cells of a notebook, in order."""
    return [c for c in nb.cells if is_checkpoint(c)]


def build_graded_notebook(learner: Any, reference: Any):
    """The notebook that gets executed: learner code cells + the reference's checkpoint cells.

    Learner code cells keep their source only (no outputs, no tags, unrun, so nbval checks
    them for errors but never compares outputs). Each reference checkpoint cell replaces the
    learner cell with the same id (or, for notebooks saved without ids, the same source) and
    brings its stored outputs; a checkpoint the learner deleted is inserted after the
    nearest preceding reference cell that is still there.
    """
    import nbformat

    ref_cps = checkpoint_cells(reference)
    by_id = {c.get("id"): c for c in ref_cps}
    by_source = {c.source.strip(): c for c in ref_cps}
    cells: list[Any] = []
    placed: set[str] = set()
    used_ids: set[str] = set()
    counter = 0

    def fresh_id(wanted: str | None) -> str:
        nonlocal counter
        cid = wanted or ""
        while not cid or cid in used_ids or cid in by_id:
            counter += 1
            cid = f"learner-{counter}"
        used_ids.add(cid)
        return cid

    for cell in learner.cells:
        ref = by_id.get(cell.get("id"))
        if ref is None and cell.get("cell_type") == "code":
            ref = by_source.get(cell.source.strip())
        if ref is not None:
            if ref["id"] not in placed:
                cells.append(copy.deepcopy(ref))
                placed.add(ref["id"])
                used_ids.add(ref["id"])
            continue
        if cell.get("cell_type") == "code":
            new = nbformat.v4.new_code_cell(source=cell.source)
            new["id"] = fresh_id(cell.get("id"))
            cells.append(new)
        elif cell.get("cell_type") == "markdown":
            new = nbformat.v4.new_markdown_cell(source=cell.source)
            new["id"] = fresh_id(cell.get("id"))
            cells.append(new)

    # Put back the checkpoints the learner deleted, after their nearest surviving predecessor.
    anchor: str | None = None
    for ref_cell in reference.cells:
        rid = ref_cell.get("id")
        if is_checkpoint(ref_cell) and rid not in placed:
            pos = _index_of(cells, anchor) + 1 if anchor is not None else len(cells)
            cells.insert(pos, copy.deepcopy(ref_cell))
            placed.add(rid)
            anchor = rid
        elif _index_of(cells, rid) >= 0:
            anchor = rid
    graded = nbformat.v4.new_notebook()
    graded.metadata = copy.deepcopy(reference.metadata)
    graded.cells = cells
    return graded


def _index_of(cells: list[Any], cell_id: str | None) -> int:
    for i, c in enumerate(cells):
        if c.get("id") == cell_id:
            return i
    return -1


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclass
class CheckpointResult:
    """The verdict on one checkpoint cell."""

    cell_id: str
    passed: bool
    detail: str = ""  # the diff or the error when it failed


@dataclass
class GradeResult:
    """The verdict on one learner notebook."""

    path: Path
    reference: Path | None = None
    checkpoints: list[CheckpointResult] = field(default_factory=list)
    error: str = ""  # the notebook could not be graded at all
    notes: list[str] = field(default_factory=list)  # e.g. the first learner cell that raised

    @property
    def passed(self) -> int:
        """Checkpoints passed."""
        return sum(c.passed for c in self.checkpoints)

    @property
    def total(self) -> int:
        """Checkpoints graded."""
        return len(self.checkpoints)

    @property
    def ok(self) -> bool:
        """True when the notebook was graded and every checkpoint passed."""
        return not self.error and self.total > 0 and self.passed == self.total

    @property
    def score(self) -> float:
        """Fraction of checkpoints passed (0 when the notebook could not be graded)."""
        return self.passed / self.total if self.total and not self.error else 0.0


def format_result(result: GradeResult) -> str:
    """One line per checkpoint (passed / FAILED with its diff), then the score."""
    lines = [f"{result.path}" + (f"  (reference: {result.reference.name})" if result.reference else "")]
    if result.error:
        lines.append(f"  error: {result.error}")
        lines.append("  score: 0 (not graded)")
        return "\n".join(lines)
    for cp in result.checkpoints:
        if cp.passed:
            lines.append(f"  passed  {cp.cell_id}")
        else:
            lines.append(f"  FAILED  {cp.cell_id}")
            lines.extend("          " + ln for ln in cp.detail.splitlines())
    for note in result.notes:
        lines.append(f"  note: {note}")
    pct = round(100 * result.score)
    lines.append(f"  score: {result.passed}/{result.total} checkpoints passed ({pct}%)")
    return "\n".join(lines)


def write_report(results: Sequence[GradeResult], path: str | os.PathLike) -> Path:
    """Write one CSV row per notebook: path, reference, passed, total, score, failed, error."""
    out = Path(path)
    if out.parent and not out.parent.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["notebook", "reference", "passed", "total", "score", "failed_checkpoints", "error"])
        for r in results:
            writer.writerow(
                [
                    str(r.path),
                    r.reference.stem if r.reference else "",
                    r.passed,
                    r.total,
                    f"{r.score:.3f}",
                    " ".join(c.cell_id for c in r.checkpoints if not c.passed),
                    r.error,
                ]
            )
    return out


# --------------------------------------------------------------------------------------
# Grading
# --------------------------------------------------------------------------------------


def grade_notebook(path: str | os.PathLike, **kwargs: Any) -> GradeResult:
    """Grade one learner notebook (see :func:`grade_notebooks` for the options)."""
    return grade_notebooks([path], **kwargs)[0]


def grade_notebooks(
    paths: Sequence[str | os.PathLike | tuple[str, Any]],
    *,
    solutions_dir: str | os.PathLike | None = None,
    sanitize: str | os.PathLike | None = None,
    timeout: float = 1200.0,
    reference: str | os.PathLike | None = None,
) -> list[GradeResult]:
    """Grade learner notebooks in one nbval run (one kernel per notebook, one pytest process).

    Each item of ``paths`` is a notebook path, or ``(label, notebook)`` with an in-memory
    notebook (used by tests to grade patched solutions). The reference is found by name in
    ``solutions_dir`` unless ``reference`` names it. ``timeout`` limits each cell and each notebook.
    A notebook that can't be graded gets ``error`` set instead of raising.
    """
    if not paths:
        raise GradingError("no notebooks to grade")
    if solutions_dir is None:
        solutions_dir = course_root() / "solutions"
    solutions_dir = Path(solutions_dir)
    if sanitize is None:
        sanitize = solutions_dir.parent / SANITIZE_NAME
        if not Path(sanitize).is_file():
            sanitize = solutions_dir / "nbval_sanitize.cfg"
    timeout = float(timeout)
    if not timeout > 0:
        raise GradingError(f"timeout must be > 0 seconds, got {timeout}")
    results: list[GradeResult] = []
    jobs: list[tuple[GradeResult, Any]] = []
    for item in paths:
        if isinstance(item, tuple):
            label, learner = item
            result = GradeResult(Path(label))
        else:
            result = GradeResult(Path(item))
            learner = None
        results.append(result)
        try:
            if learner is None:
                learner = read_notebook(result.path)
            ref_path = Path(reference) if reference else find_reference(result.path, solutions_dir)
            result.reference = ref_path
            ref_nb = read_notebook(ref_path)
            if not checkpoint_cells(ref_nb):
                raise GradingError(f"{ref_path}: the reference has no checkpoint cells")
            jobs.append((result, build_graded_notebook(learner, ref_nb)))
        except GradingError as exc:
            result.error = str(exc)
    if jobs:
        _run_nbval(jobs, Path(sanitize), timeout)
    return results


def _run_nbval(jobs: list[tuple[GradeResult, Any]], sanitize: Path, timeout: float) -> None:
    """Execute the graded notebooks with nbval in a subprocess and fill in the results."""
    import nbformat

    with tempfile.TemporaryDirectory(prefix="chunklab-grade-") as tmp:
        tmpdir = Path(tmp)
        files: list[Path] = []
        for i, (result, nb) in enumerate(jobs):
            sub = tmpdir / f"nb{i:03d}"
            sub.mkdir()
            f = sub / (result.reference.name if result.reference else "notebook.ipynb")
            nbformat.write(nb, f)
            files.append(f)
        (tmpdir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        records = tmpdir / "results.jsonl"
        args = [
            "-q",
            "-c",
            str(tmpdir / "pytest.ini"),
            "--rootdir",
            str(tmpdir),
            "-p",
            "no:cacheprovider",
            "--color=no",
            "--nbval",
            "--nbval-current-env",
            f"--nbval-cell-timeout={timeout:g}",
        ]
        if sanitize.is_file():
            args.append(f"--nbval-sanitize-with={sanitize}")
        args += [str(f) for f in files]
        cmd = [sys.executable, "-c", "import sys, chunklab.grading as g; sys.exit(g._pytest_main())", str(records), *args]
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONWARNINGS="ignore")
        root = _course_root_or_none()
        if root is not None:
            # The graded copy runs in a temporary folder: keep the course's course root and its
            # embedding cache (chunklab.embed looks for it from the working directory).
            env.setdefault("CHUNKLAB_COURSE_ROOT", str(root))
            env.setdefault("CHUNKLAB_CACHE", str(root / ".chunklab" / "cache"))
        timed_out = False
        proc = subprocess.Popen(
            cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        try:
            log, _ = proc.communicate(timeout=timeout * len(files) + 60)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            log, _ = proc.communicate()
        recs: list[dict[str, Any]] = []
        if records.exists():
            for line in records.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    recs.append(json.loads(line))
        for (result, nb), f in zip(jobs, files, strict=True):
            mine = {r["cell_id"]: r for r in recs if Path(r["file"]) == f}
            order = [c.get("id") for c in nb.cells if c.get("cell_type") == "code"]
            for cell in checkpoint_cells(nb):
                rec = mine.get(cell["id"])
                if rec is None:
                    why = f"grading timed out after {timeout:g} s" if timed_out else "not run"
                    if not timed_out and not mine:
                        why += ": " + _tail(log)
                    result.checkpoints.append(CheckpointResult(cell["id"], False, why))
                else:
                    result.checkpoints.append(CheckpointResult(cell["id"], rec["outcome"] == "passed", _detail(rec)))
            # Point at the learner's own cell that failed before the first failing checkpoint.
            for pos, cid in enumerate(order, 1):
                rec = mine.get(cid)
                if rec is None or rec["outcome"] == "passed":
                    continue
                if not rec["checkpoint"]:
                    result.notes.append(f"code cell {pos} (id {cid}) raised {rec.get('error') or 'an error'}")
                break


def _course_root_or_none() -> Path | None:
    try:
        return course_root()
    except GradingError:
        return None


def _tail(log: str, lines: int = 8) -> str:
    text = _ANSI.sub("", log or "").strip().splitlines()
    return " | ".join(text[-lines:]) if text else "nbval produced no output"


def _detail(rec: dict[str, Any]) -> str:
    if rec["outcome"] == "passed":
        return ""
    if rec.get("error"):
        return f"raised {rec['error']}"
    if "expected" in rec:
        diff = difflib.unified_diff(
            rec["expected"].splitlines(), rec["actual"].splitlines(), "expected", "got", lineterm="", n=1
        )
        return "\n".join(diff) or "outputs differ"
    return rec.get("message") or rec["outcome"]


def _output_text(outputs: Sequence[Any], sanitize: Callable[[str], str]) -> str:
    parts: list[str] = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            text = sanitize(out.get("text", ""))
            parts.append(text if out.get("name") == "stdout" else "".join(f"[stderr] {ln}\n" for ln in text.splitlines()))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "text/plain" in data:
                parts.append(sanitize(data["text/plain"]) + "\n")
            else:
                parts.append(f"<{', '.join(sorted(data))}>\n")
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}\n")
    return "".join(parts)


def _pytest_main() -> int:
    """Run pytest with a recorder plugin; called in the grading subprocess (argv: records file, args)."""
    import pytest
    from nbval.plugin import coalesce_streams

    records = Path(sys.argv[1])
    args = sys.argv[2:]

    class CellRecorder:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            outcome = yield
            report = outcome.get_result()
            cell = getattr(item, "cell", None)
            if cell is None:
                return
            if report.when == "call" or (report.when == "setup" and not report.passed):
                rec: dict[str, Any] = {
                    "file": str(item.fspath),
                    "cell_id": cell.get("id"),
                    "checkpoint": is_checkpoint(cell),
                    "outcome": "passed" if report.passed else "failed",
                }
                if not report.passed:
                    exc = call.excinfo.value if call.excinfo else None
                    rec["message"] = _ANSI.sub("", str(exc) if exc else report.outcome)
                    if report.when == "setup" and report.skipped:
                        rec["message"] = "not run: an earlier cell timed out"
                    test_outputs = getattr(item, "test_outputs", None) or []
                    errors = [o for o in test_outputs if o.get("output_type") == "error"]
                    if errors:
                        ename, evalue = errors[-1]["ename"], str(errors[-1]["evalue"]).strip()
                        rec["error"] = _ANSI.sub("", f"{ename}: {evalue}" if evalue else ename)
                    elif "differ" in rec["message"]:
                        ref = coalesce_streams(copy.deepcopy(cell.get("outputs", [])))
                        rec["expected"] = _output_text(ref, item.sanitize)
                        rec["actual"] = _output_text(test_outputs, item.sanitize)
                    elif "Timeout" in rec["message"] or "timed out" in rec["message"]:
                        rec["error"] = rec["message"].splitlines()[0]
                with records.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec) + "\n")

    return int(pytest.main(args, plugins=[CellRecorder()]))
