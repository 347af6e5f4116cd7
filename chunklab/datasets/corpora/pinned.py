"""Pinned corpora: files named by a committed manifest, fetched into the cache and verified by sha256.

Every fetched corpus (``code-50k``'s wheels, ``code-poly``'s archives, ``pdf-docs``'s files)
is a list of :class:`Pin` records (the file's name in the corpus folder, where it comes
from, its size and sha256), read from a manifest in ``chunklab/data/corpora/``, and lives in
``<cache dir>/corpora/<name>/`` (:func:`corpus_dir`). :func:`fetch_pins` is the one fetch
loop: each file that is missing or wrong is downloaded into ``<folder>/.partial/``, checked
against its pinned size and sha256, then renamed into place (an atomic rename on the same
file system), so an interrupted fetch never leaves a wrong file under a final name and a
rerun resumes: verified files are skipped, and :func:`download_url` continues a partial
download with an HTTP ``Range`` request. A file whose bytes differ raises ``ValueError``
naming it; a network failure raises ``ConnectionError`` naming the URL.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol, TypeVar

from chunklab.words import counted

__all__ = [
    "CORPORA_DIR",
    "FetchReport",
    "Pin",
    "Pinned",
    "batches_of",
    "check_fetched",
    "check_sha256",
    "check_size",
    "corpus_dir",
    "download_url",
    "fetch_pins",
    "manifest_names",
    "parse_manifest",
    "pin_status",
    "read_manifest",
    "sha256_of",
]

#: where the committed manifests live (``<name>.txt``, ``<name>.pins``, ``<name>.toml``)
CORPORA_DIR = Path(__file__).resolve().parents[2] / "data" / "corpora"

#: the folder, inside a corpus folder, where downloads wait for their verification
PARTIAL = ".partial"

_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class Pin:
    """One pinned file: its path in the corpus folder, where it comes from, its size and sha256.

    ``url`` is an http(s) URL, or what the file's downloader asks for when it is not fetched
    by URL (a pip requirement ``project==version``, an archive member).
    """

    name: str
    url: str
    size: int
    sha256: str

    @property
    def pin(self) -> Pin:
        """The pin itself (a :class:`Pin` is :class:`Pinned`)."""
        return self


class Pinned(Protocol):
    """Anything a manifest lists (a wheel, an archive, a PDF file): it has a :class:`Pin`."""

    @property
    def pin(self) -> Pin: ...


P = TypeVar("P", bound=Pinned)
T = TypeVar("T")


@dataclass
class FetchReport:
    """What :func:`fetch_pins` did: files pinned, already verified, downloaded, bytes and seconds."""

    noun: ClassVar[str] = "file"

    name: str
    directory: Path
    files: int
    present: int
    downloaded: int
    downloaded_bytes: int
    total_bytes: int
    seconds: float

    def summary(self) -> str:
        """One line for the command line: counts, megabytes and seconds."""
        return (
            f"{self.name}: {counted(self.files, self.noun)} in {self.directory}; "
            f"{self.present} already verified, {self.downloaded} downloaded "
            f"({self.downloaded_bytes / 1e6:.1f} MB of {self.total_bytes / 1e6:.1f} MB) "
            f"in {self.seconds:.1f} s"
        )


R = TypeVar("R", bound=FetchReport)


def manifest_names(suffix: str, folder: Path = CORPORA_DIR) -> list[str]:
    """The names of the committed manifests ending in ``suffix`` (``.txt``, ``.pins``), sorted."""
    return sorted(p.stem for p in folder.glob(f"*{suffix}"))


def read_manifest(
    name: str,
    suffix: str,
    parse: Callable[[list[str], str], list[P]],
    folder: Path = CORPORA_DIR,
    what: str = "corpus name",
) -> list[P]:
    """The records of manifest ``<folder>/<name><suffix>``, read by ``parse(lines, source)``.

    An unknown ``name`` raises ``ValueError`` listing the manifests there are.
    """
    names = manifest_names(suffix, folder)
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"{what} must be one of {names}, got {name!r}")
    path = folder / f"{name}{suffix}"
    return parse(path.read_text(encoding="utf-8").splitlines(), str(path))


def parse_manifest(
    lines: Iterable[str],
    source: str,
    shape: str,
    build: Callable[[list[str], str], P],
    noun: str = "file",
) -> list[P]:
    """Parse a line manifest: one record a line, fields as ``shape`` names them, ``#`` comments.

    ``build(fields, where)`` makes a record from the fields of one line (``where`` is
    ``source:lineno``, for its errors); a line with the wrong number of fields, or two
    records with the same :class:`Pin` name, raise ``ValueError`` naming the line.
    """
    records: list[P] = []
    seen: set[str] = set()
    width = len(shape.split())
    for lineno, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source}:{lineno}"
        fields = line.split()
        if len(fields) != width:
            raise ValueError(f"{where}: expected {shape!r}, got {raw!r}")
        record = build(fields, where)
        name = record.pin.name
        if name in seen:
            raise ValueError(f"{where}: {noun} {name} is pinned twice")
        seen.add(name)
        records.append(record)
    return records


def check_sha256(digest: str, where: str) -> str:
    """``digest`` when it is 64 lowercase hex digits, else ``ValueError`` naming ``where``."""
    if len(digest) != 64 or not set(digest) <= _HEX:
        raise ValueError(f"{where}: sha256 must be 64 lowercase hex digits, got {digest!r}")
    return digest


def check_size(size: str, where: str) -> int:
    """``size`` as a byte count, else ``ValueError`` naming ``where``."""
    if not size.isdigit():
        raise ValueError(f"{where}: size must be a byte count, got {size!r}")
    return int(size)


def corpus_dir(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where corpus ``name``'s files are kept: ``<cache dir>/corpora/<name>``.

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


def pin_status(pin: Pin, directory: str | os.PathLike[str]) -> str:
    """``"ok"`` (present, right size and sha256), ``"missing"`` or ``"corrupt"`` for one file."""
    path = Path(directory) / pin.name
    if not path.is_file():
        return "missing"
    if path.stat().st_size != pin.size or sha256_of(path) != pin.sha256:
        return "corrupt"
    return "ok"


def check_fetched(name: str, pins: Sequence[Pin], directory: str | os.PathLike[str], noun: str) -> None:
    """Refuse to read corpus ``name`` unless every file is in ``directory`` with its pinned size.

    ``FileNotFoundError`` (files missing) and ``ValueError`` (a file of the wrong size) both
    name the fetch command; the sha256 is checked by the fetch, not on every read.
    """
    folder = Path(directory)
    missing = [p.name for p in pins if not (folder / p.name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{len(missing)} of {counted(len(pins), noun)} of corpus {name!r} are not in {folder} "
            f"(first: {missing[0]}); run `chunklab corpus fetch {name}`"
        )
    for pin in pins:
        size = (folder / pin.name).stat().st_size
        if size != pin.size:
            raise ValueError(
                f"{noun} {pin.name} has {size} bytes, pinned {pin.size}: "
                f"run `chunklab corpus fetch {name}` to replace it"
            )


def fetch_pins(
    name: str,
    items: Sequence[P],
    download: Callable[[list[P], Path], None],
    *,
    directory: Path,
    batches: Callable[[list[P]], Iterable[list[P]]] | None = None,
    progress: bool = True,
    report: type[R],
) -> R:
    """Download every item of ``items`` whose file is not present and verified; a ``report``.

    ``batches`` groups the items to fetch (default: one at a time); ``download(batch,
    staging)`` writes each item's file to ``staging / item.pin.name``, where a file already
    there is a partial download of an earlier run to continue or replace. Every file of a
    batch is verified before any is renamed into ``directory``; a mismatch deletes the
    batch's downloads and raises ``ValueError`` naming the file and its origin (files placed
    before stay, so a rerun resumes). An error of ``download`` itself (the network) leaves
    what arrived in the staging folder, for the next run to continue. ``report`` is the
    :class:`FetchReport` class to return (its ``noun`` names the files in messages).
    """
    directory.mkdir(parents=True, exist_ok=True)
    staging = directory / PARTIAL
    start = time.perf_counter()
    todo = [item for item in items if pin_status(item.pin, directory) != "ok"]
    from tqdm.auto import tqdm

    bar = tqdm(
        total=sum(item.pin.size for item in todo),
        unit="B",
        unit_scale=True,
        desc=f"fetch {name}",
        disable=not progress or not todo,
    )
    fetched = fetched_bytes = 0
    try:
        for batch in batches(todo) if batches is not None else ([item] for item in todo):
            staging.mkdir(exist_ok=True)
            download(batch, staging)
            try:
                for item in batch:
                    _verify(item.pin, staging, report.noun)
            except ValueError:  # none of the batch is placed: its downloads go too
                for item in batch:
                    (staging / item.pin.name).unlink(missing_ok=True)
                raise
            for item in batch:
                target = directory / item.pin.name
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / item.pin.name, target)
                fetched += 1
                fetched_bytes += item.pin.size
                bar.update(item.pin.size)
    finally:
        bar.close()
        _remove_empty_folders(staging)
    pins = [item.pin for item in items]
    return report(
        name,
        directory,
        len(pins),
        len(pins) - len(todo),
        fetched,
        fetched_bytes,
        sum(p.size for p in pins),
        time.perf_counter() - start,
    )


def download_url(url: str, dest: Path, *, timeout: float = 120) -> None:
    """Download ``url`` to the file ``dest``, continuing a partial ``dest`` with an HTTP ``Range``.

    A server that ignores the range sends the whole file again, which then replaces ``dest``.
    Any network failure raises ``ConnectionError`` naming the URL; what arrived stays in
    ``dest`` for the next try.
    """
    have = dest.stat().st_size if dest.is_file() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        request = urllib.request.Request(url, headers=headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            expected, received = response.length, 0
            with open(dest, "ab" if have and response.status == 206 else "wb") as out:
                for block in iter(lambda: response.read(1 << 20), b""):
                    out.write(block)
                    received += len(block)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing past what is there: verification decides
            return
        raise ConnectionError(f"downloading {url} failed: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as exc:
        raise ConnectionError(_broken(url, dest, getattr(exc, "reason", None) or exc)) from exc
    if expected is not None and received < expected:  # the server closed the connection early
        raise ConnectionError(_broken(url, dest, f"{received} of {expected} bytes arrived"))


def batches_of(size: int) -> Callable[[list[T]], Iterator[list[T]]]:
    """A ``batches`` argument for :func:`fetch_pins`: ``size`` items at a time, in order."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {size!r}")

    def split(items: list[T]) -> Iterator[list[T]]:
        for i in range(0, len(items), size):
            yield items[i : i + size]

    return split


def _verify(pin: Pin, staging: Path, noun: str) -> None:
    got = staging / pin.name
    if not got.is_file():
        found = sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file())
        raise ValueError(f"{noun} {pin.name} ({pin.url}) was not downloaded; the download wrote {found}")
    size, digest = got.stat().st_size, sha256_of(got)
    if size != pin.size or digest != pin.sha256:
        got.unlink()
        raise ValueError(
            f"{noun} {pin.name} ({pin.url}) failed verification: {size} bytes, sha256 {digest}; "
            f"pinned {pin.size} bytes, sha256 {pin.sha256}"
        )


def _remove_empty_folders(folder: Path) -> None:
    """Remove ``folder`` and the folders under it that hold no file (partial downloads stay)."""
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    if not any(folder.iterdir()):
        folder.rmdir()


def _broken(url: str, dest: Path, reason: object) -> str:
    kept = dest.stat().st_size if dest.is_file() else 0
    return f"downloading {url} failed ({reason}); {kept} bytes kept: fetch again to resume"
