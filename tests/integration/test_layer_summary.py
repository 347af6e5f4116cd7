"""``make test`` reports the layers separately: a pytest run ends with one summary line per layer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
        + ["-p", "no:chunklab-grade", "--rootdir", str(tmp_path), "-c", os.devnull, str(tests)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the red test fails the run
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "tests by layer" in line) + 1
    by_layer = {line.split()[0]: line.split(None, 1)[1].split(" in ")[0] for line in lines[start : start + 2]}
    assert by_layer == {"unit": "2 passed", "integration": "1 failed, 1 skipped"}
    assert lines[start].startswith("unit")  # the layers in their order: unit first
