"""Every solution notebook is a valid single source and passes nbval as committed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chunklab.course.generate import lint_solution
from chunklab.course.notebooks import read_notebook

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
SANITIZE = ROOT / "solutions" / "nbval_sanitize.cfg"


def test_there_are_solution_notebooks():
    assert SOLUTIONS, "solutions/ holds no notebooks"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_is_executed_locked_and_marked(path):
    assert lint_solution(read_notebook(path), path.name) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_passes_nbval(path, tmp_path):
    """``pytest --nbval`` with the course's sanitize file: every stored output is reproduced."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-c",
        str(tmp_path / "pytest.ini"),
        "--rootdir",
        str(tmp_path),
        "-p",
        "no:cacheprovider",
        "--color=no",
        "--nbval",
        "--nbval-current-env",
        f"--nbval-sanitize-with={SANITIZE}",
        "--nbval-cell-timeout=600",
        str(path),
    ]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, f"nbval failed on {path.name}:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
