"""Fixtures shared by the notebook and grader tests."""

from __future__ import annotations

import nbformat
import pytest

from tests.support.tiny_course import tiny_solution


@pytest.fixture
def course(tmp_path):
    """A solutions folder holding the tiny course's one notebook, ``00-tiny.ipynb``."""
    sol = tmp_path / "solutions"
    sol.mkdir()
    nbformat.write(tiny_solution(), sol / "00-tiny.ipynb")
    return sol
