"""``make test`` reports the layers separately: a pytest run ends with one summary line per layer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    """The inner run's environment: it loads only the plugins under test (the layers plugin, and xdist
    where asked); the others installed in the venv (nbval, hypothesis, langsmith, the grader's...) take
    seconds to import in every process and play no part in the summary lines or the xdist groups."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_a_run_ends_with_a_line_per_layer_counting_its_outcomes(tmp_path):
    tests = tmp_path / "tests"
    (tests / "unit").mkdir(parents=True)
    (tests / "integration").mkdir()
    (tests / "unit" / "test_a.py").write_text("def test_one():\n    pass\n\n\ndef test_two():\n    pass\n")
    (tests / "integration" / "test_b.py").write_text(
        "import pytest\n\n\ndef test_red():\n    assert False\n\n\n"
        "@pytest.mark.skip(reason='not here')\ndef test_skipped():\n    pass\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.support.layers", "-p", "no:cacheprovider"]
        + ["--rootdir", str(tmp_path), "-c", os.devnull, str(tests)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the red test fails the run
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "tests by layer" in line) + 1
    by_layer = {line.split()[0]: line.split(None, 1)[1].split(" in ")[0] for line in lines[start : start + 2]}
    assert by_layer == {"unit": "2 passed", "integration": "1 failed, 1 skipped"}
    assert lines[start].startswith("unit")  # the layers in their order: unit first


def test_under_xdist_integration_runs_on_one_worker_module_fixtures_stay_whole_and_the_lines_add_up(tmp_path):
    """``make test``'s ``-n 2 --dist loadgroup``: every integration test on one worker, in order; the
    tests of a unit file with a module fixture on one worker (built once); the same line per layer."""
    tests, log = tmp_path / "tests", tmp_path / "log"
    log.mkdir()
    (tests / "unit").mkdir(parents=True)
    (tests / "integration").mkdir()
    record = (
        "import os, pathlib\n\n\ndef seen(name):\n"
        f"    pathlib.Path({str(log)!r}, name).write_text(os.environ['PYTEST_XDIST_WORKER'])\n\n\n"
    )
    (tests / "unit" / "test_free.py").write_text(
        record + "".join(f"def test_{i}():\n    seen('free-{i}')\n\n\n" for i in range(6))
    )
    (tests / "unit" / "test_shared.py").write_text(
        record
        + "import pytest\n\n\n@pytest.fixture(scope='module')\ndef built():\n    seen('built')\n\n\n"
        + "".join(f"def test_{i}(built):\n    seen('shared-{i}')\n\n\n" for i in range(4))
    )
    (tests / "integration" / "test_b.py").write_text(
        record
        + "".join(f"def test_{i}():\n    seen('serial-{i}')\n\n\n" for i in range(5))
        + "def test_red():\n    assert False\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.support.layers", "-p", "no:cacheprovider"]
        + ["-p", "xdist.plugin", "-n", "2", "--dist", "loadgroup"]
        + ["--rootdir", str(tmp_path), "-c", os.devnull, str(tests)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    start = (
        next(i for i, line in enumerate(lines) if "tests by layer (seconds summed over 2 workers)" in line)
        + 1
    )
    by_layer = {line.split()[0]: line.split(None, 1)[1].split(" in ")[0] for line in lines[start : start + 2]}
    assert by_layer == {"unit": "10 passed", "integration": "1 failed, 5 passed"}
    worker = {p.name: p.read_text() for p in log.iterdir()}
    assert len({worker[f"serial-{i}"] for i in range(5)}) == 1, worker
    assert len({worker[n] for n in ["built", *(f"shared-{i}" for i in range(4))]}) == 1, worker
    assert len(worker) == 6 + 5 + 5
