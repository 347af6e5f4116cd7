"""Pinned source archives (npm tarballs, PyPI sdists, Debian packages): the manifest, fetching, reading.

A polyglot corpus is a committed manifest ``chunklab/data/corpora/<name>.pins``, one archive a
line (blank lines and ``#`` comments ignored)::

    kind name version sha256 size url

``kind`` is ``npm`` (a package tarball, ``.tgz``), ``pypi`` (a source distribution,
``.tar.gz``/``.zip``), ``deb`` (a Debian binary package: an ``ar`` archive holding
``data.tar.*``) or ``debsrc`` (the upstream tarball of a Debian source package,
``.orig.tar.xz``/``.gz``/``.bz2``, as ``apt-get source --print-uris`` lists it).
:func:`fetch_archives` downloads each archive that is missing or wrong into
``<cache dir>/corpora/<name>/`` through the one pinned fetch of :mod:`chunklab.datasets.corpora.pinned`
(checked against its pinned size and sha256 before it takes its final name; a rerun resumes,
a partial download included), and :func:`read_members` reads the regular files of an
archive into memory, never extracting anything to disk.
"""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from chunklab.datasets.corpora import pinned
from chunklab.datasets.corpora.pinned import CORPORA_DIR, Pin, corpus_dir

__all__ = [
    "ArchivePin",
    "ArchiveReport",
    "archive_status",
    "fetch_archives",
    "load_archive_pins",
    "parse_archive_pins",
    "pinned_archive_corpora",
    "read_members",
]

KINDS = ("npm", "pypi", "deb", "debsrc")
_SHAPE = "kind name version sha256 size url"


@dataclass(frozen=True, slots=True)
class ArchivePin:
    """One pinned archive: where it comes from, what it is, and the bytes it must have."""

    kind: str
    name: str
    version: str
    sha256: str
    size: int
    url: str

    @property
    def filename(self) -> str:
        """The cache file name: ``<kind>-<name>-<version><extension>`` (``/`` and ``@`` made safe)."""
        base = self.url.rsplit("/", 1)[-1].split("?", 1)[0]
        extensions = (".tar.gz", ".tgz", ".zip", ".deb", ".tar.bz2", ".tar.xz")
        ext = next((e for e in extensions if base.endswith(e)), "")
        safe = self.name.replace("/", "__").replace("@", "")
        return f"{self.kind}-{safe}-{self.version.replace(':', '_')}{ext}"

    @property
    def project(self) -> str:
        """``name==version``, the project a file of this archive belongs to."""
        return f"{self.name}=={self.version}"

    @property
    def pin(self) -> Pin:
        """The archive as a :class:`~chunklab.datasets.corpora.pinned.Pin`: its cache file name and URL."""
        return Pin(self.filename, self.url, self.size, self.sha256)


class ArchiveReport(pinned.FetchReport):
    """What :func:`fetch_archives` did: archives already verified, downloaded, bytes and seconds."""

    noun = "archive"

    @property
    def archives(self) -> int:
        """How many archives the corpus pins."""
        return self.files


def pinned_archive_corpora() -> list[str]:
    """The names of the committed archive manifests (``code-poly``, ...), sorted."""
    return pinned.manifest_names(".pins", CORPORA_DIR)


def load_archive_pins(name: str) -> list[ArchivePin]:
    """The pins of archive corpus ``name`` in file order (``ValueError`` for an unknown name)."""
    return pinned.read_manifest(name, ".pins", parse_archive_pins, CORPORA_DIR, "archive corpus")


def parse_archive_pins(lines: Iterable[str], source: str = "<pins>") -> list[ArchivePin]:
    """Parse ``kind name version sha256 size url`` lines; a malformed line raises ``ValueError``."""
    return pinned.parse_manifest(lines, source, _SHAPE, _archive_pin, noun="archive")


def _archive_pin(fields: list[str], where: str) -> ArchivePin:
    kind, name, version, digest, size, url = fields
    if kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {KINDS}, got {kind!r}")
    digest, count = pinned.check_sha256(digest, where), pinned.check_size(size, where)
    if not url.startswith(("https://", "http://")):
        raise ValueError(f"{where}: url must be http(s), got {url!r}")
    return ArchivePin(kind, name, version, digest, count, url)


def archive_status(pin: ArchivePin, directory: str | os.PathLike[str]) -> str:
    """``"ok"`` (present, right size and sha256), ``"missing"`` or ``"corrupt"`` for one archive."""
    return pinned.pin_status(pin.pin, directory)


def url_download(pin: ArchivePin, dest: Path) -> None:
    """Download ``pin.url`` to the file ``dest``, continuing a partial one (``pinned.download_url``)."""
    pinned.download_url(pin.url, dest)


def fetch_archives(
    name: str,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    downloader: Callable[[ArchivePin, Path], None] | None = None,
    pins: list[ArchivePin] | None = None,
) -> ArchiveReport:
    """Download every archive of corpus ``name`` that is not already present and verified.

    Each goes to a file beside the corpus, is checked against its pinned size and sha256,
    then renamed into place; a mismatch deletes the file and raises ``ValueError`` naming
    the archive (those verified before it stay, so a rerun resumes), and a network failure
    raises ``ConnectionError`` keeping what arrived for the next try. ``pins`` replaces the
    committed manifest (tests).
    """
    download = downloader or url_download

    def each(batch: list[ArchivePin], staging: Path) -> None:
        for pin in batch:
            download(pin, staging / pin.filename)

    return pinned.fetch_pins(
        name,
        load_archive_pins(name) if pins is None else pins,
        each,
        directory=corpus_dir(name, cache_dir),
        progress=progress,
        report=ArchiveReport,
    )


def read_members(
    path: str | os.PathLike[str] | IO[bytes],
    keep: Callable[[str], bool] | None = None,
    *,
    kind: str | None = None,
) -> Iterator[tuple[str, bytes]]:
    """``(member name, bytes)`` for each regular file of the archive at ``path``, in archive order.

    Tar (``.tgz``/``.tar.gz``/``.tar.bz2``/``.tar.xz``), zip and Debian ``.deb`` archives are read in
    memory (a ``.deb``'s ``data.tar.xz``/``.gz``/``.bz2`` is unpacked from its ``ar``
    container); ``keep(name)`` picks which members are read at all. Leading ``./`` is dropped
    from names. ``path`` may be an open binary file, with ``kind`` (``"zip"``, ``"deb"`` or
    ``"tar"``) saying what it holds; for a path the kind comes from its extension.
    """
    keep = keep or (lambda _name: True)
    if kind is None:
        if not isinstance(path, (str, os.PathLike)):
            raise ValueError("read_members needs kind= ('zip', 'deb' or 'tar') for an open file")
        name = os.fspath(path)
        kind = "zip" if name.endswith(".zip") else "deb" if name.endswith(".deb") else "tar"
    if kind not in ("zip", "deb", "tar"):
        raise ValueError(f"kind must be 'zip', 'deb' or 'tar', got {kind!r}")
    if kind == "zip":
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.is_dir() and keep(info.filename):
                    yield info.filename, zf.read(info)
        return
    if kind == "deb":
        if isinstance(path, (str, os.PathLike)):
            with open(path, "rb") as fh:
                data = _deb_data_tar(fh, os.fspath(path))
        else:
            data = _deb_data_tar(path, "archive")
        try:
            tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        except tarfile.ReadError as exc:
            raise ValueError(f"{path}: its data.tar uses a compression this reader does not know") from exc
        with tf:
            yield from _tar_members(tf, keep)
        return
    if isinstance(path, (str, os.PathLike)):
        with tarfile.open(path, mode="r:*") as tf:
            yield from _tar_members(tf, keep)
    else:
        with tarfile.open(fileobj=path, mode="r:*") as tf:
            yield from _tar_members(tf, keep)


def _tar_members(tf: tarfile.TarFile, keep: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    for info in tf:
        name = info.name[2:] if info.name.startswith("./") else info.name
        if not info.isreg() or not keep(name):
            continue
        handle = tf.extractfile(info)
        if handle is not None:
            yield name, handle.read()


def _deb_data_tar(fh: IO[bytes], where: str) -> bytes:
    """The ``data.tar.*`` member of a Debian package, still compressed (``ar``: 60-byte headers)."""
    if fh.read(8) != b"!<arch>\n":
        raise ValueError(f"{where} is not a Debian package (no ar magic)")
    while header := fh.read(60):
        if len(header) < 60:
            break
        member = header[:16].decode("ascii", "replace").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        body = fh.read(size)
        if size % 2:
            fh.read(1)
        if member.startswith("data.tar"):
            return body
    raise ValueError(f"{where} has no data.tar member")
