"""Every solution notebook is a valid single source and passes nbval as committed."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunklab.course.generate import lint_solution
from chunklab.course.notebooks import read_notebook
from tests.support.nbval import nbval_runs

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def test_there_are_solution_notebooks():
    assert SOLUTIONS, "solutions/ holds no notebooks"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_is_executed_locked_and_marked(path):
    assert lint_solution(read_notebook(path), path.name) == []


@pytest.fixture(scope="module")
def nbval_results(request: pytest.FixtureRequest):
    """The nbval run of every solution whose nbval test this session selected (``-k`` keeps to the chosen
    ones), ``NBVAL_JOBS`` at a time; a run a grading test already asked for is not run again."""
    selected = [
        item.callspec.params["path"]
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_solution_passes_nbval"
    ]
    return nbval_runs(selected)


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_passes_nbval(path, nbval_results):
    """``pytest --nbval`` with the course's sanitize file: every stored output is reproduced."""
    proc = nbval_results[path]
    assert proc.returncode == 0, f"nbval failed on {path.name}:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
