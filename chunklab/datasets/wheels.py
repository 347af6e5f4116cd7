"""Pinned wheel corpora: which wheels, where they live, and fetching them with pip, verified.

A corpus is a committed list of exact pins, one per line, in
``chunklab/data/corpora/<name>.txt``::

    project==version sha256 filename size

(blank lines and ``#`` comments ignored). :func:`fetch_corpus` downloads the wheels with
``pip download`` into ``cache_dir()/corpora/<name>/`` and checks every one against its
committed sha256 before it takes its final name, so an interrupted fetch leaves only
temporary files and a rerun downloads only what is missing or wrong. Nothing is installed:
:mod:`chunklab.datasets.code50k` reads the ``.py`` files straight out of the zip archives.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CORPORA_DIR",
    "FetchReport",
    "WheelPin",
    "corpus_dir",
    "corpus_names",
    "fetch_corpus",
    "load_pins",
    "parse_pins",
    "sha256_of",
    "wheel_status",
]

#: where the committed pin lists live (one ``<name>.txt`` per corpus)
CORPORA_DIR = Path(__file__).resolve().parent.parent / "data" / "corpora"

_HEX = frozenset("0123456789abcdef")


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


@dataclass
class FetchReport:
    """What :func:`fetch_corpus` did: wheels already present, downloaded, bytes and seconds."""

    name: str
    directory: Path
    wheels: int
    present: int
    downloaded: int
    downloaded_bytes: int
    total_bytes: int
    seconds: float


def corpus_names() -> list[str]:
    """The names of the committed wheel corpora (``code-50k``, ...), sorted."""
    return sorted(p.stem for p in CORPORA_DIR.glob("*.txt"))


def load_pins(name: str) -> list[WheelPin]:
    """The pins of corpus ``name``, in file order (raises ``ValueError`` for an unknown name)."""
    if not isinstance(name, str) or name not in corpus_names():
        raise ValueError(f"corpus name must be one of {corpus_names()}, got {name!r}")
    path = CORPORA_DIR / f"{name}.txt"
    return parse_pins(path.read_text(encoding="utf-8").splitlines(), source=str(path))


def parse_pins(lines: Iterable[str], source: str = "<pins>") -> list[WheelPin]:
    """Parse ``project==version sha256 filename size`` lines; a malformed line raises ``ValueError``.

    The filename must be a pure-Python wheel (``*-none-any.whl``) and each file may appear
    only once, so two pins can never write the same cache file.
    """
    pins: list[WheelPin] = []
    seen: set[str] = set()
    for lineno, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source}:{lineno}"
        fields = line.split()
        if len(fields) != 4 or fields[0].count("==") != 1:
            raise ValueError(f"{where}: expected 'project==version sha256 filename size', got {raw!r}")
        spec, digest, filename, size = fields
        project, version = spec.split("==")
        if len(digest) != 64 or not set(digest) <= _HEX:
            raise ValueError(f"{where}: sha256 must be 64 lowercase hex digits, got {digest!r}")
        if not filename.endswith("-none-any.whl") or "/" in filename:
            raise ValueError(
                f"{where}: filename must be a pure-Python wheel (*-none-any.whl), got {filename!r}"
            )
        if not size.isdigit():
            raise ValueError(f"{where}: size must be a byte count, got {size!r}")
        if filename in seen:
            raise ValueError(f"{where}: wheel {filename} is pinned twice")
        seen.add(filename)
        pins.append(WheelPin(project, version, digest, filename, int(size)))
    return pins


def corpus_dir(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where corpus ``name``'s wheels are kept: ``<cache dir>/corpora/<name>``.

    The cache dir is ``cache_dir`` or :func:`chunklab.paths.cache_dir`.
    """
    from chunklab.paths import cache_dir as kit_cache_dir

    return kit_cache_dir(Path(cache_dir) if cache_dir is not None else None) / "corpora" / name


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def wheel_status(pin: WheelPin, directory: str | os.PathLike[str]) -> str:
    """``"ok"`` (present, right size and sha256), ``"missing"``, or ``"corrupt"`` for one wheel."""
    path = Path(directory) / pin.filename
    if not path.is_file():
        return "missing"
    if path.stat().st_size != pin.size or sha256_of(path) != pin.sha256:
        return "corrupt"
    return "ok"


def fetch_corpus(
    name: str,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    batch_size: int = 16,
    downloader: Callable[[list[WheelPin], Path], None] | None = None,
) -> FetchReport:
    """Download every wheel of corpus ``name`` that is not already present and verified.

    Wheels are fetched ``batch_size`` at a time by ``downloader`` (default: ``pip download
    --no-deps --only-binary=:all:`` for Python 3.11, pure wheels only) into a temporary
    folder beside the corpus, each checked against its pinned sha256, then renamed into
    place. A wheel whose sha256 differs raises ``ValueError`` naming it (the bad file is
    deleted; wheels verified before it are kept, so a rerun resumes).
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    pins = load_pins(name)
    directory = corpus_dir(name, cache_dir)
    directory.mkdir(parents=True, exist_ok=True)
    download = downloader or pip_download
    start = time.perf_counter()
    todo = [p for p in pins if wheel_status(p, directory) != "ok"]
    total = sum(p.size for p in pins)
    from tqdm.auto import tqdm

    bar = tqdm(
        total=sum(p.size for p in todo),
        unit="B",
        unit_scale=True,
        desc=f"fetch {name}",
        disable=not progress or not todo,
    )
    fetched = fetched_bytes = 0
    try:
        for i in range(0, len(todo), batch_size):
            batch = todo[i : i + batch_size]
            with tempfile.TemporaryDirectory(prefix=".fetch-", dir=directory) as tmp:
                download(batch, Path(tmp))
                for pin in batch:
                    _verify_and_place(pin, Path(tmp), directory)
                    fetched += 1
                    fetched_bytes += pin.size
                    bar.update(pin.size)
    finally:
        bar.close()
    return FetchReport(
        name,
        directory,
        len(pins),
        len(pins) - len(todo),
        fetched,
        fetched_bytes,
        total,
        time.perf_counter() - start,
    )


def pip_download(pins: list[WheelPin], dest: Path) -> None:
    """Run ``pip download`` for ``pins`` into ``dest``: exact versions, pure wheels, no dependencies."""
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


def _verify_and_place(pin: WheelPin, tmp: Path, directory: Path) -> None:
    got = tmp / pin.filename
    if not got.is_file():
        found = sorted(p.name for p in tmp.iterdir())
        raise ValueError(f"wheel {pin.filename} ({pin.spec}) was not downloaded; pip wrote {found}")
    digest = sha256_of(got)
    if digest != pin.sha256:
        got.unlink()
        raise ValueError(
            f"wheel {pin.filename} ({pin.spec}) failed verification: sha256 {digest}, pinned {pin.sha256}"
        )
    shutil.move(str(got), str(directory / pin.filename))  # same file system: an atomic rename
