"""``pytest --nbval`` of the solution notebooks, each run once per test process and remembered.

A run executes the solution in a kernel of its own whose working folder is ``solutions/``, so its
embeddings land in this checkout's cache (the one the grader copies into every kernel it starts).
The grading batches of tests/notebooks (``graded_late``, the capstone 08 attack) ask for their
notebook's run first (``nbval_run``): the batch's kernels then find the reference's embeddings in
the cache instead of each embedding the corpus again, and test_solutions.py reads the same run
instead of executing the notebook a second time. ``nbval_runs`` runs several, ``NBVAL_JOBS`` at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SANITIZE = ROOT / "solutions" / "nbval_sanitize.cfg"

#: how many notebooks a test runs at once, in its grading batches and its nbval runs (``$TEST_GRADE_JOBS``,
#: default 1): each still alone in its own sealed kernel or nbval process, so the verdicts are the same
TEST_JOBS = int(os.environ.get("TEST_GRADE_JOBS", "1"))
#: solution notebooks nbval'd at once
NBVAL_JOBS = TEST_JOBS

_RUNS: dict[Path, subprocess.CompletedProcess[str]] = {}
_LOCKS: dict[Path, threading.Lock] = {}
_GUARD = threading.Lock()


def _nbval(path: Path) -> subprocess.CompletedProcess[str]:
    """``pytest --nbval`` of ``path`` with the course's sanitize file (pytest's own files in a temporary
    folder; the notebook's kernel works in the notebook's folder, as nbval sets it)."""
    with tempfile.TemporaryDirectory(prefix=f"nbval-{path.stem}-") as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-c",
            str(folder / "pytest.ini"),
            "--rootdir",
            str(folder),
            "-p",
            "nbval.plugin",
            "-p",
            "no:cacheprovider",
            "--color=no",
            "--nbval",
            "--nbval-current-env",
            f"--nbval-sanitize-with={SANITIZE}",
            "--nbval-cell-timeout=600",
            str(path),
        ]
        # nbval is the one plugin this run needs: the others installed in the venv (hypothesis, langsmith,
        # the grader's...) cost seconds of imports per run and take no part in it
        env = dict(
            os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"
        )
        return subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=1200)


def nbval_run(path: Path) -> subprocess.CompletedProcess[str]:
    """The nbval run of the solution ``path``: run at the first call in this process, remembered after."""
    path = Path(path).resolve()
    with _GUARD:
        lock = _LOCKS.setdefault(path, threading.Lock())
    with lock:  # two callers of one notebook: the second waits for the first's run
        if path not in _RUNS:
            _RUNS[path] = _nbval(path)
        return _RUNS[path]


def nbval_runs(paths: Sequence[Path], jobs: int = NBVAL_JOBS) -> dict[Path, subprocess.CompletedProcess[str]]:
    """``nbval_run`` of each of ``paths``, ``jobs`` at a time, by the path as given."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {p: pool.submit(nbval_run, p) for p in paths}
        return {p: f.result() for p, f in futures.items()}
