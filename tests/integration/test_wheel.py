"""The kit installs as a wheel, not only in editable mode: sdist → wheel → a fresh venv → the CLI works.

The distribution is ``chunklab-kit`` (``chunklab`` on PyPI is another project); the import name
and the command stay ``chunklab``. The wheel is built from the sdist, so a file missing from the
sdist fails here too. The fresh venv gets the wheel with ``--no-deps`` and borrows the already
installed dependencies through a path entry (not a site dir: the editable install of the checkout
is not activated there), and every command runs outside the repository, so a path that exists
only in a checkout fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST_NAME = "chunklab-kit"

pytestmark = pytest.mark.slow


def _tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "chunklab", "pyproject.toml", "README.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in out.stdout.splitlines() if (ROOT / line).is_file()]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel, built without network from a copy of the package's files."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    for rel in _tracked_files():
        target = source / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    dist = work / "dist"
    run = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (wheel,) = dist.glob("chunklab_kit-*.whl")
    (sdist,) = dist.glob("chunklab_kit-*.tar.gz")
    return {"work": work, "wheel": wheel, "sdist": sdist}


@pytest.fixture(scope="module")
def venv(built) -> Path:
    """A fresh venv holding the wheel (not editable), dependencies borrowed from this interpreter."""
    env_dir = built["work"] / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    purelib = _printed_by(
        env_dir, "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=built["work"]
    )
    # a plain path entry: the borrowed folder's own .pth files (the editable checkout) stay inactive
    Path(purelib, "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            str(built["wheel"]),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    return env_dir


def _printed_by(venv: Path, code: str, cwd: Path) -> str:
    """What ``code`` prints run by the venv's own python (without PYTHONPATH: the venv's packages count)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    python = venv / "bin" / "python"
    return subprocess.run(
        [str(python), "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "CHUNKLAB_TORCH_THREADS": "1"}
    env.pop("PYTHONPATH", None)
    # the embedding cache is a user setting, not package data: share the checkout's (warm) one
    env.setdefault("CHUNKLAB_CACHE", str(ROOT / ".chunklab" / "cache"))
    return subprocess.run(
        [str(venv / "bin" / "chunklab"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def test_distribution_name_is_free_and_the_import_name_stays():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'name = "{DIST_NAME}"' in text
    assert 'chunklab = "chunklab.cli:main"' in text


def test_wheel_and_sdist_carry_every_package_file(built):
    expected = {rel for rel in _tracked_files() if rel.startswith("chunklab/")}
    with zipfile.ZipFile(built["wheel"]) as wheel:
        in_wheel = {name for name in wheel.namelist() if name.startswith("chunklab/")}
    assert expected - in_wheel == set(), f"missing from the wheel: {sorted(expected - in_wheel)[:10]}"
    with tarfile.open(built["sdist"]) as sdist:
        in_sdist = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert expected - in_sdist == set(), f"missing from the sdist: {sorted(expected - in_sdist)[:10]}"
    assert "chunklab/py.typed" in in_wheel


def test_installed_wheel_runs_version_chunk_index_and_evaluate(venv, tmp_path):
    where = _run(venv, "--version", cwd=tmp_path)
    assert where.returncode == 0 and where.stdout.split() == ["chunklab", where.stdout.split()[1]], where
    origin = _printed_by(venv, "import chunklab; print(chunklab.__file__)", cwd=tmp_path)
    assert origin.startswith(str(venv)), f"chunklab imported from {origin}, not the installed wheel"

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(
        "# Guide\n\nRestart the scanner with `scanctl restart`.\n\n## Logs\n\nSee /var/log.\n"
    )
    chunk = _run(venv, "chunk", str(docs), "--strategy", "structural", "--out", "chunks.jsonl", cwd=tmp_path)
    assert chunk.returncode == 0, chunk.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "chunks.jsonl").read_text().splitlines()]
    assert rows and all(row["doc_id"] == "guide.md" for row in rows)

    index = _run(
        venv, "index", str(docs), "--store", "store", "--model", "static", "--query", "restart", cwd=tmp_path
    )
    assert index.returncode == 0, index.stderr[-2000:]
    assert "guide.md" in index.stdout

    evaluate = _run(
        venv,
        "evaluate",
        "--dataset",
        "docs",
        "--strategies",
        "fixed",
        "--model",
        "static",
        "--resamples",
        "50",
        "--out",
        "results",
        "--no-progress",
        cwd=tmp_path,
    )
    assert evaluate.returncode == 0, evaluate.stderr[-3000:]
    assert (tmp_path / "results" / "results.csv").is_file()
