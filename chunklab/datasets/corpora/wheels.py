"""Pinned wheel corpora: which wheels, where they live, and fetching them with pip, verified.

A corpus is a committed list of exact pins, one per line, in
``chunklab/data/corpora/<name>.txt``::

    project==version sha256 filename size

(blank lines and ``#`` comments ignored). :func:`fetch_corpus` downloads the wheels with
``pip download`` into ``cache_dir()/corpora/<name>/`` through the one pinned fetch of
:mod:`chunklab.datasets.corpora.pinned` (each checked against its committed sha256 before it takes
its final name, so an interrupted fetch leaves only temporary files and a rerun downloads
only what is missing or wrong). Nothing is installed: :mod:`chunklab.datasets.corpora.code50k` reads
the ``.py`` files straight out of the zip archives.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from chunklab.datasets.corpora import pinned
from chunklab.datasets.corpora.pinned import CORPORA_DIR, Pin, corpus_dir, sha256_of

__all__ = [
    "CORPORA_DIR",
    "WheelPin",
    "WheelReport",
    "corpus_dir",
    "corpus_names",
    "fetch_corpus",
    "load_pins",
    "parse_pins",
    "sha256_of",
    "wheel_status",
]

_SHAPE = "project==version sha256 filename size"


@dataclass(frozen=True, slots=True)
class WheelPin:
    """One pinned wheel: the distribution, its exact version, and the file PyPI serves for it."""

    project: str
    version: str
    sha256: str
    filename: str
    size: int

    @property
    def spec(self) -> str:
        """``project==version``, the requirement pip is given."""
        return f"{self.project}=={self.version}"

    @property
    def pin(self) -> Pin:
        """The wheel as a :class:`~chunklab.datasets.corpora.pinned.Pin` (its origin: the pip requirement)."""
        return Pin(self.filename, self.spec, self.size, self.sha256)


class WheelReport(pinned.FetchReport):
    """What :func:`fetch_corpus` did: wheels already present, downloaded, bytes and seconds."""

    noun = "wheel"

    @property
    def wheels(self) -> int:
        """How many wheels the corpus pins."""
        return self.files


def corpus_names() -> list[str]:
    """The names of the committed wheel corpora (``code-50k``, ...), sorted."""
    return pinned.manifest_names(".txt", CORPORA_DIR)


def load_pins(name: str) -> list[WheelPin]:
    """The pins of corpus ``name``, in file order (raises ``ValueError`` for an unknown name)."""
    return pinned.read_manifest(name, ".txt", parse_pins, CORPORA_DIR)


def parse_pins(lines: Iterable[str], source: str = "<pins>") -> list[WheelPin]:
    """Parse ``project==version sha256 filename size`` lines; a malformed line raises ``ValueError``.

    The filename must be a pure-Python wheel (``*-none-any.whl``) and each file may appear
    only once, so two pins can never write the same cache file.
    """
    return pinned.parse_manifest(lines, source, _SHAPE, _wheel_pin, noun="wheel")


def _wheel_pin(fields: list[str], where: str) -> WheelPin:
    spec, digest, filename, size = fields
    if spec.count("==") != 1:
        raise ValueError(f"{where}: expected {_SHAPE!r}, got requirement {spec!r}")
    project, version = spec.split("==")
    if not filename.endswith("-none-any.whl") or "/" in filename:
        raise ValueError(f"{where}: filename must be a pure-Python wheel (*-none-any.whl), got {filename!r}")
    return WheelPin(
        project, version, pinned.check_sha256(digest, where), filename, pinned.check_size(size, where)
    )


def wheel_status(pin: WheelPin, directory: str | os.PathLike[str]) -> str:
    """``"ok"`` (present, right size and sha256), ``"missing"``, or ``"corrupt"`` for one wheel."""
    return pinned.pin_status(pin.pin, directory)


def fetch_corpus(
    name: str,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    batch_size: int = 16,
    downloader: Callable[[list[WheelPin], Path], None] | None = None,
) -> WheelReport:
    """Download every wheel of corpus ``name`` that is not already present and verified.

    Wheels are fetched ``batch_size`` at a time by ``downloader`` (default: ``pip download
    --no-deps --only-binary=:all:`` for Python 3.11, pure wheels only) into a folder beside
    the corpus, each checked against its pinned sha256, then renamed into place. A wheel
    whose sha256 differs raises ``ValueError`` naming it (the bad file is deleted; wheels
    verified before it are kept, so a rerun resumes).
    """
    batches = pinned.batches_of(batch_size)
    return pinned.fetch_pins(
        name,
        load_pins(name),
        downloader or pip_download,
        directory=corpus_dir(name, cache_dir),
        batches=batches,
        progress=progress,
        report=WheelReport,
    )


def pip_download(pins: list[WheelPin], dest: Path) -> None:
    """Run ``pip download`` for ``pins`` into ``dest``: exact versions, pure wheels, no dependencies."""
    for pin in pins:  # pip would take a file already there for done: start each one afresh
        (dest / pin.filename).unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.11",
        "--implementation",
        "py",
        "--abi",
        "none",
        "--platform",
        "any",
        "--disable-pip-version-check",
        "--quiet",
        "--dest",
        str(dest),
    ]
    cmd += [p.spec for p in pins]
    # a machine-wide pip constraints file (a cap on torch, ...) must not veto a corpus pin
    env = {**os.environ, "PIP_CONSTRAINT": ""}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise ValueError(f"pip download failed for {', '.join(p.spec for p in pins)}: " + " | ".join(tail))
