"""The installed-code corpus: every ``.py`` file of the running interpreter, in a fixed order.

``code_corpus()`` lists the standard library and the site-packages of ``sys.executable``'s
environment (about 21,000 files here), sorted, with duplicates removed (the same file
reached twice through links, and files with identical bytes: only the first is kept).
Only paths and sizes are held; file contents are read when asked for, so the corpus can
be streamed through a chunker without holding it in memory.
"""

from __future__ import annotations

import hashlib
import os
import random
import site
import sysconfig
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import overload

from chunklab.words import counted

__all__ = ["CodeCorpus", "CodeFile", "CorpusFile", "code_corpus"]

_SKIP_DIRS = frozenset({"__pycache__", ".git", ".hg", ".svn"})
_NESTED_SITE = frozenset({"site-packages", "dist-packages"})


@dataclass(frozen=True, slots=True)
class CorpusFile:
    """One file of a corpus: where it is, which root it came from, its size in bytes, its format.

    An installed Python file here; a subclass reads members of wheels or archives. ``format``
    is the document format it is loaded as (a key of :data:`chunklab.documents.FORMATS`).
    """

    path: str
    root: str  # "stdlib" or "site-packages"
    relpath: str  # path relative to the root directory, with "/" separators
    size: int

    @property
    def project(self) -> str:
        """The top-level package or module (``"stdlib"`` for the standard library's own files)."""
        if self.root == "stdlib":
            return "stdlib"
        head = self.relpath.split("/", 1)[0]
        return head[:-3] if head.endswith(".py") else head

    @property
    def language(self) -> str:
        """The file's language, as :func:`chunklab.chunkers.structural.chunk_code` names it: Python."""
        return "python"

    @property
    def format(self) -> str:
        """The document format the file is loaded as, by its extension (``.py``, ``.pdf``, ``.docx``)."""
        from chunklab.documents import detect_format

        return detect_format(self.relpath)

    @property
    def doc_id(self) -> str:
        """The document id the question sets and the ingest plan give the file: ``"root:relpath"``."""
        return f"{self.root}:{self.relpath}"

    @property
    def module(self) -> str:
        """The dotted module name the file would import as (``pkg/__init__.py`` is ``pkg``)."""
        rel = self.relpath[:-3] if self.relpath.endswith(".py") else self.relpath
        parts = rel.split("/")
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)

    def read_bytes(self) -> bytes:
        """The file's bytes."""
        with open(self.path, "rb") as fh:
            return fh.read()

    def read_text(self) -> str:
        """The file decoded as Python source (byte order mark, PEP 263 cookie) by ``decode_bytes``."""
        from chunklab.documents import decode_bytes

        return decode_bytes(self.read_bytes(), "python", name=self.path).text


#: the former name, kept as an alias for chapter 8's published text (``CodeFile`` there)
CodeFile = CorpusFile


class CodeCorpus(Sequence[CorpusFile]):
    """An ordered, duplicate-free list of installed Python files (see :func:`code_corpus`)."""

    def __init__(self, files: Sequence[CorpusFile]) -> None:
        self.files: tuple[CorpusFile, ...] = tuple(files)

    def __len__(self) -> int:
        return len(self.files)

    @overload
    def __getitem__(self, index: int) -> CorpusFile: ...

    @overload
    def __getitem__(self, index: slice) -> CodeCorpus: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return CodeCorpus(self.files[index])
        return self.files[index]

    def __iter__(self) -> Iterator[CorpusFile]:
        return iter(self.files)

    def __repr__(self) -> str:
        return (
            f"CodeCorpus({counted(len(self), 'file')}, {self.total_bytes / 1e6:.1f} MB, "
            f"{counted(len(self.projects()), 'project')})"
        )

    @property
    def paths(self) -> list[str]:
        """The absolute file paths, in corpus order."""
        return [f.path for f in self.files]

    @property
    def total_bytes(self) -> int:
        """Sum of the file sizes."""
        return sum(f.size for f in self.files)

    def projects(self) -> Counter[str]:
        """Files per project (top-level package; ``"stdlib"`` for the standard library)."""
        return Counter(f.project for f in self.files)

    def sample(self, n: int, seed: int = 0) -> CodeCorpus:
        """``n`` files drawn without replacement with ``random.Random(seed)``, kept in corpus order.

        The same ``n`` and ``seed`` give the same files on the same installation.
        """
        from chunklab._validate import check_non_negative_int

        check_non_negative_int(n, "n")
        if n > len(self.files):
            raise ValueError(f"cannot sample {n} files from a corpus of {len(self.files)}")
        picked = sorted(random.Random(seed).sample(range(len(self.files)), n))
        return CodeCorpus([self.files[i] for i in picked])

    def filter(self, root: str | None = None, project: str | None = None) -> CodeCorpus:
        """The files from one root (``"stdlib"``/``"site-packages"``) and/or one project."""
        return CodeCorpus(
            [
                f
                for f in self.files
                if (root is None or f.root == root) and (project is None or f.project == project)
            ]
        )

    def iter_sources(self) -> Iterator[tuple[CorpusFile, bytes]]:
        """Each file with its bytes, read one at a time (the corpus is never held whole)."""
        for f in self.files:
            yield f, f.read_bytes()


def code_corpus(
    include_stdlib: bool = True,
    include_site_packages: bool = True,
    *,
    dedupe: str = "content",
) -> CodeCorpus:
    """Every installed ``.py`` file of the running interpreter, in a deterministic order.

    Standard library first, then site-packages, each sorted by relative path. ``dedupe``
    is ``"content"`` (drop later files whose bytes equal an earlier one's, and files reached
    twice through links) or ``"path"`` (only the latter). The listing is cached per
    arguments for the life of the process. Named corpora (``installed``, ``stdlib``,
    ``code-50k``, ...) are reached through :func:`chunklab.datasets.corpus`.
    """
    for value, name in ((include_stdlib, "include_stdlib"), (include_site_packages, "include_site_packages")):
        if not isinstance(value, bool):
            hint = f"; for the corpus named {value!r} use chunklab.datasets.corpus({value!r})"
            raise ValueError(
                f"{name} must be True or False, got {value!r}" + (hint if isinstance(value, str) else "")
            )
    if dedupe not in ("content", "path"):
        raise ValueError(f"dedupe must be 'content' or 'path', got {dedupe!r}")
    return _code_corpus(include_stdlib, include_site_packages, dedupe)


@lru_cache(maxsize=8)
def _code_corpus(include_stdlib: bool, include_site_packages: bool, dedupe: str) -> CodeCorpus:
    roots: list[tuple[str, str]] = []
    if include_stdlib:
        roots.append(("stdlib", sysconfig.get_paths()["stdlib"]))
    if include_site_packages:
        for d in site_package_dirs():
            roots.append(("site-packages", d))
    seen_paths: set[str] = set()
    files: list[CorpusFile] = []
    for label, root in roots:
        for path, rel in sorted(_walk_py(root, skip_nested_site=label == "stdlib"), key=lambda t: t[1]):
            real = os.path.realpath(path)
            if real in seen_paths:
                continue
            seen_paths.add(real)
            try:
                size = os.stat(real).st_size
            except OSError:
                continue
            files.append(CorpusFile(real, label, rel, size))
    if dedupe == "content":
        files = _drop_identical(files)
    return CodeCorpus(files)


def site_package_dirs() -> list[str]:
    """The running interpreter's site-packages directories that exist (no duplicates)."""
    paths = sysconfig.get_paths()
    candidates = [paths["purelib"], paths["platlib"]]
    try:
        candidates += site.getsitepackages()
    except AttributeError:  # some embedded interpreters lack it
        pass
    out: list[str] = []
    seen: set[str] = set()
    for d in candidates:
        real = os.path.realpath(d)
        if os.path.isdir(real) and real not in seen:
            seen.add(real)
            out.append(real)
    return out


def _walk_py(root: str, skip_nested_site: bool) -> Iterator[tuple[str, str]]:
    root = os.path.realpath(root)
    if not os.path.isdir(root):
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in _SKIP_DIRS and not (skip_nested_site and d in _NESTED_SITE)
        )
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                yield full, rel


def _drop_identical(files: list[CorpusFile]) -> list[CorpusFile]:
    """Keep the first of each group of files with identical bytes (only same-size files are read)."""
    by_size: dict[int, list[int]] = defaultdict(list)
    for i, f in enumerate(files):
        by_size[f.size].append(i)
    drop: set[int] = set()
    for indices in by_size.values():
        if len(indices) < 2:
            continue
        first_of: dict[bytes, int] = {}
        for i in indices:
            try:
                with open(files[i].path, "rb") as fh:
                    digest = hashlib.blake2b(fh.read(), digest_size=16).digest()
            except OSError:
                drop.add(i)
                continue
            if digest in first_of:
                drop.add(i)
            else:
                first_of[digest] = i
    return [f for i, f in enumerate(files) if i not in drop]
