"""``make lab`` as a learner's clone meets it: the venv keyed on the requirements' hash, Lab offline and
started without make's own variables (so ``make grade`` in a Lab terminal is a top-level make)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """The Makefile and what its hash reads, a venv stamp made *before* them (as after a fresh clone
    beside an installed venv), and a stand-in ``jupyter`` that records the environment Lab gets."""
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    digest = subprocess.run(
        "cat requirements.txt pyproject.toml | sha256sum | cut -c1-16",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    stamp = tmp_path / ".venv" / f".installed-{digest}"
    stamp.touch()
    os.utime(stamp, (1_000_000_000, 1_000_000_000))  # 2001: older than every file of the clone
    jupyter = bin_dir / "jupyter"
    jupyter.write_text('#!/bin/sh\nenv > "$(dirname "$0")/../lab-env.txt"\n', encoding="utf-8")
    jupyter.chmod(0o755)
    return tmp_path


def _make(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MAKELEVEL": "1", "MAKEFLAGS": "w"}  # as if started from another make
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_make_lab_does_not_reinstall_a_venv_whose_stamp_carries_the_requirements_hash(clone):
    dry = _make(clone, "-n", "lab")
    assert dry.returncode == 0, dry.stderr
    assert "pip install" not in dry.stdout and "jupyter lab" in dry.stdout, dry.stdout
    dry = _make(clone, "-n", "grade", "NB=exercises/01-fixed.ipynb")
    assert "pip install" not in dry.stdout and "chunklab grade" in dry.stdout, dry.stdout


def test_make_lab_starts_lab_offline_and_without_makes_variables(clone):
    run = _make(clone, "lab")
    assert run.returncode == 0, run.stdout + run.stderr
    env = dict(
        line.split("=", 1)
        for line in (clone / ".venv" / "lab-env.txt").read_text().splitlines()
        if "=" in line
    )
    assert env["HF_HUB_OFFLINE"] == env["TRANSFORMERS_OFFLINE"] == "1"
    assert not {"MAKELEVEL", "MAKEFLAGS", "MFLAGS"} & env.keys(), sorted(k for k in env if "MAKE" in k)
    assert env["PATH"].startswith(f"{clone}/.venv/bin:")
