"""The pinned polyglot code corpus ``code-poly``: source files of twelve languages read out of archives.

``poly_corpus("code-poly")`` (also ``chunklab.datasets.corpus("code-poly")``) lists every source
file of every archive pinned in ``chunklab/data/corpora/code-poly.pins`` (npm tarballs, PyPI
sdists, Debian binary packages and Debian source tarballs), once ``chunklab corpus fetch
code-poly`` has downloaded them. Each file carries its **language** (from the extension, or
the shebang of an extension-less script), its project (``name==version``) and the archive
kind. Nothing is unpacked to disk: the first listing reads each archive once in memory and
writes a small index beside it (member, language, size, content digest), so later listings
read only the indexes.

Kept: files of a known language up to ``MAX_FILE_BYTES``, valid UTF-8, no NUL byte, not
minified (``*.min.js``, or an average line over 500 characters), outside ``testdata/``
folders and Debian's ``usr/share/doc``; files whose bytes equal an earlier file's are dropped.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from chunklab.datasets.corpora.archives import ArchivePin, load_archive_pins, read_members
from chunklab.datasets.corpora.code import CodeCorpus, CorpusFile
from chunklab.datasets.corpora.pinned import check_fetched, corpus_dir

__all__ = ["EXTENSIONS", "PolyCorpus", "PolyFile", "language_of", "poly_corpus"]

MAX_FILE_BYTES = 400_000
_INDEX_VERSION = 1

#: file extension -> language (the names :func:`chunklab.chunkers.structural.code.chunk_code` takes)
EXTENSIONS: dict[str, str] = {
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
    ".java": "java",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".php": "php",
    ".sh": "bash",
    ".bash": "bash",
    ".py": "python",
}
_SHEBANGS = {
    "sh": "bash",
    "bash": "bash",
    "dash": "bash",
    "python": "python",
    "python3": "python",
    "ruby": "ruby",
}


def language_of(path: str, head: bytes = b"") -> str | None:
    """The language of a file from its extension, else its ``#!`` line, else ``None``.

    Extension-less files under a ``bash-completion/completions/`` folder are Bash.
    """
    base = path.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    if dot > 0:
        return EXTENSIONS.get(base[dot:].lower())
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].decode("ascii", "replace").split()
        if words:
            program = words[0].rsplit("/", 1)[-1]
            if program == "env" and len(words) > 1:
                program = words[1]
            return _SHEBANGS.get(program)
    if "/bash-completion/completions/" in f"/{path}":
        return "bash"
    return None


@dataclass(frozen=True, slots=True)
class PolyFile(CorpusFile):
    """One source file inside a pinned archive. ``path`` is ``<archive>!/<member>``; ``root`` is the kind."""

    archive: str = ""
    member: str = ""
    language: str = ""
    name: str = ""
    version: str = ""

    @property
    def project(self) -> str:
        """The package it ships in, as ``name==version`` (``lodash==4.17.21``, ``rust-src==1.63.0...``)."""
        return f"{self.name}=={self.version}"

    @property
    def doc_id(self) -> str:
        """``"project:relpath"``: a relative path alone repeats across packages (``index.js``)."""
        return f"{self.project}:{self.relpath}"

    @property
    def format(self) -> str:
        """The document format it is loaded as: its language (the grammar that chunks it)."""
        return self.language

    @property
    def metadata(self) -> dict[str, str]:
        """Language, project, archive kind and path: what a document built from the file carries."""
        return {"language": self.language, "project": self.project, "kind": self.root, "path": self.relpath}

    def read_bytes(self) -> bytes:
        """The member's bytes, read from the archive in memory (the last two archives are cached)."""
        return _archive_contents(self.archive, os.getpid())[self.member]

    def read_text(self) -> str:
        """The file as text (every kept file is valid UTF-8; a byte order mark is dropped)."""
        return self.read_bytes().decode("utf-8").removeprefix("\ufeff")


class PolyCorpus(CodeCorpus):
    """A :class:`CodeCorpus` of :class:`PolyFile`, with per-language views."""

    files: tuple[PolyFile, ...]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return PolyCorpus(self.files[index])
        return self.files[index]

    def languages(self) -> Counter[str]:
        """Files per language."""
        return Counter(f.language for f in self.files)

    def language(self, language: str) -> PolyCorpus:
        """The files of one language, in corpus order (``ValueError`` for a language it lacks)."""
        picked = [f for f in self.files if f.language == language]
        if not picked:
            raise ValueError(f"no {language!r} files; languages here: {sorted(self.languages())}")
        return PolyCorpus(picked)

    def sample_per_language(self, n: int, seed: int = 0) -> PolyCorpus:
        """At most ``n`` files of each language (:meth:`sample` with ``seed``), kept in corpus order.

        An even sample: the largest language does not crowd out the small ones.
        """
        from chunklab._validate import check_non_negative_int

        n = check_non_negative_int(n, "n")
        picked: set[CorpusFile] = set()
        for language in sorted(self.languages()):
            files = self.language(language)
            picked.update(files.sample(min(n, len(files)), seed))
        return PolyCorpus([f for f in self.files if f in picked])


def poly_corpus(
    name: str = "code-poly",
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    dedupe: str = "content",
    pins: list[ArchivePin] | None = None,
) -> PolyCorpus:
    """Every kept source file of the fetched archives of ``name``, in manifest then member order.

    Raises ``FileNotFoundError`` naming the fetch command when an archive is missing and
    ``ValueError`` when one does not have its pinned size. ``dedupe`` is ``"content"`` (drop
    files whose bytes equal an earlier one's) or ``"path"`` (keep all). ``pins`` replaces the
    committed manifest (tests).
    """
    if dedupe not in ("content", "path"):
        raise ValueError(f"dedupe must be 'content' or 'path', got {dedupe!r}")
    pins = load_archive_pins(name) if pins is None else pins
    directory = corpus_dir(name, cache_dir)
    return _poly_corpus(tuple(pins), str(directory), dedupe, name)


@lru_cache(maxsize=4)
def _poly_corpus(pins: tuple[ArchivePin, ...], directory: str, dedupe: str, name: str) -> PolyCorpus:
    check_fetched(name, [p.pin for p in pins], directory, "archive")
    files: list[PolyFile] = []
    seen: set[str] = set()
    for pin in pins:
        archive = os.path.join(directory, pin.filename)
        for member, relpath, language, size, digest in _index(pin, archive):
            if dedupe == "content":
                if digest in seen:
                    continue
                seen.add(digest)
            files.append(
                PolyFile(
                    f"{archive}!/{member}",
                    pin.kind,
                    relpath,
                    size,
                    archive,
                    member,
                    language,
                    pin.name,
                    pin.version,
                )
            )
    return PolyCorpus(files)


def relative_path(kind: str, member: str) -> str:
    """The path a member has inside its project: npm's ``package/`` and an sdist's top folder dropped."""
    if kind in ("npm", "pypi") and "/" in member:
        return member.split("/", 1)[1]
    return member


def _wanted(name: str) -> bool:
    lowered = f"/{name.lower()}"
    return not (
        "/testdata/" in lowered
        or lowered.startswith("/usr/share/doc/")
        or lowered.endswith(".min.js")
        or "/node_modules/" in lowered
    )


def _keep_content(data: bytes) -> bool:
    if len(data) > MAX_FILE_BYTES or b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return data.count(b"\n") + 1 >= len(data) / 500


def _index(pin: ArchivePin, archive: str) -> list[tuple[str, str, str, int, str]]:
    """``(member, relpath, language, size, digest)`` of the kept files, from the cached index or a scan."""
    index_path = Path(archive).with_name(f".index-{pin.sha256[:20]}.json")
    if index_path.is_file():
        cached = json.loads(index_path.read_text(encoding="utf-8"))
        if cached.get("version") == _INDEX_VERSION:
            return [tuple(row) for row in cached["files"]]
    rows: list[tuple[str, str, str, int, str]] = []
    for member, data in sorted(read_members(archive, _wanted)):
        language = language_of(member, data[:200])
        if language is None or not _keep_content(data):
            continue
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        rows.append((member, relative_path(pin.kind, member), language, len(data), digest))
    tmp = index_path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"version": _INDEX_VERSION, "files": rows}), encoding="utf-8")
    os.replace(tmp, index_path)
    return rows


@lru_cache(maxsize=2)
def _archive_contents(archive: str, pid: int) -> dict[str, bytes]:
    """The kept members of one archive in memory, cached per process (``pid``: forks never share)."""
    return {m: d for m, d in read_members(archive, _wanted) if language_of(m, d[:200]) is not None}
