"""``pytest --chunklab-grade submissions/``: the grader as pytest tests, one per checkpoint of each notebook.

Registered through the ``pytest11`` entry point, so a course repository's CI (the way GitHub
Classroom runs autograding) gets pass/fail per checkpoint and JUnit XML from pytest's own
``--junitxml``. Nothing else of the test session is collected when the option is given. Each
notebook is graded once, sealed as by ``chunklab grade``, the first time one of its tests runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from chunklab.course.options import GradeOptions
    from chunklab.course.results import GradeResult

__all__ = ["pytest_addoption", "pytest_collection_modifyitems", "pytest_ignore_collect"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--chunklab-*`` options."""
    group = parser.getgroup("chunklab", "grading exercise notebooks with chunklab")
    group.addoption(
        "--chunklab-grade",
        action="append",
        default=[],
        metavar="PATH",
        help="grade these notebooks or folders of submissions (one test per checkpoint) instead of "
        "collecting tests",
    )
    group.addoption(
        "--chunklab-solutions", metavar="DIR", help="folder of reference solutions (default: the course's)"
    )
    group.addoption("--chunklab-timeout", type=float, default=1200.0, metavar="S", help="time limit per cell")
    group.addoption("--chunklab-seed", type=int, help="seed of the hidden checks' inputs")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``--chunklab-grade``, the session's own test files are not collected."""
    return True if config.getoption("chunklab_grade") else None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """With ``--chunklab-grade``, the items are the checkpoints of each submission."""
    paths = config.getoption("chunklab_grade")
    if not paths:
        return
    from chunklab.course.grader import GradeOptions
    from chunklab.course.notebooks import GradingError, checkpoint_cells, read_notebook
    from chunklab.course.paths import collect_submissions, course_root, find_reference

    solutions = Path(config.getoption("chunklab_solutions") or course_root() / "solutions")
    options = GradeOptions(
        timeout=config.getoption("chunklab_timeout"), seed=config.getoption("chunklab_seed")
    )
    found = collect_submissions(paths)
    grader = _Grader(solutions, options, {p: f for p, f in found.items() if f is not None})
    items.clear()
    for path in found:
        suite = SubmissionSuite.from_parent(session, name=str(path), nodeid=str(path))
        try:
            ids = [c["id"] for c in checkpoint_cells(read_notebook(find_reference(path, solutions)))]
        except GradingError:
            ids = []
        for cell_id in ids or ["notebook"]:
            items.append(CheckpointItem.from_parent(suite, name=cell_id, notebook=path, grader=grader))


class _Grader:
    """Grades each notebook once and keeps its result for all its checkpoints' tests."""

    def __init__(self, solutions: Path, options: GradeOptions, folders: dict[Path, Path]) -> None:
        self.solutions, self.options, self.folders = solutions, options, folders
        self.results: dict[Path, GradeResult] = {}

    def result(self, path: Path) -> GradeResult:
        if path not in self.results:
            from chunklab.course.grader import grade_notebooks

            (self.results[path],) = grade_notebooks(
                [path], solutions_dir=self.solutions, options=self.options, folders=self.folders
            )
        return self.results[path]


class SubmissionSuite(pytest.Collector):
    """One submission: the parent of its checkpoints' tests."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return []


class CheckpointFailed(Exception):
    """A checkpoint of a submission did not pass (its verdict is the message)."""


class CheckpointItem(pytest.Item):
    """One checkpoint of one submission: passes when the grader says it passed."""

    def __init__(self, *, notebook: Path, grader: _Grader, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.notebook, self.grader = notebook, grader

    def runtest(self) -> None:
        from chunklab.course.results import format_result, printable

        result = self.grader.result(self.notebook)
        if result.error:
            raise CheckpointFailed(printable(f"not graded: {result.error}"))
        if self.name == "notebook":
            return
        cp = next((c for c in result.checkpoints if c.cell_id == self.name), None)
        if cp is None or not cp.passed:
            raise CheckpointFailed(format_result(result))

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        """The grader's verdict for a failed checkpoint; pytest's own report for anything else."""
        if isinstance(excinfo.value, CheckpointFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, None, str]:
        return self.notebook, None, f"{self.notebook}::{self.name}"
