"""The one way in: files become :class:`Document` objects here, and nowhere else.

``load_document(path, root=...)`` reads one regular file, refuses binary data, decodes it by
its format (PEP 263 cookie for Python; byte order mark, XML declaration or ``<meta charset>`` for
HTML; byte order mark, then UTF-8 for everything else) and names it with the one ``doc_id``
rule: the path relative to a corpus root, with POSIX separators, so the same file gets the
same id from any working directory. ``iter_documents(paths)`` does the same for files and
directories in a deterministic order. :data:`FORMATS` (:mod:`chunklab.documents.formats`) is the
one table of formats: extensions, and the loader of each laid-out format.

Bytes that are not valid in the expected encoding are decoded by an explicit fallback
(windows-1252, else Latin-1, which decode any byte) and the reason is kept in
``metadata["decode_problem"]``; ``strict=True`` refuses such a file instead. Whatever the
format, the text given on is encodable as UTF-8: a lone UTF-16 surrogate is replaced by U+FFFD
and counted in ``metadata["lone_surrogates"]`` (:mod:`chunklab.documents.characters`), and a
loader's crash on a file is a :class:`DocumentError` naming it ("unreadable"). The decoder
itself (``decode_bytes``, ``binary_reason``) lives in :mod:`chunklab.decoding` and is
exported from here.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from chunklab.decoding import Decoded, DocumentError, binary_reason, decode_bytes
from chunklab.documents.characters import combine_surrogates, replace_lone_surrogates
from chunklab.documents.formats import EXTENSIONS, FORMATS, LAID_OUT, DocumentFormat
from chunklab.documents.layout import Element, locate, where

__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "SHEBANGS",
    "Decoded",
    "Document",
    "DocumentError",
    "DocumentFormat",
    "Element",
    "LAID_OUT",
    "binary_reason",
    "corpus_root",
    "decode_bytes",
    "detect_format",
    "doc_id_for",
    "document_format",
    "iter_documents",
    "iter_paths",
    "load_bytes",
    "load_document",
    "locate",
    "where",
    "shebang_format",
]

#: interpreter named by a ``#!`` line -> the code format it runs (scripts without an extension)
SHEBANGS: dict[str, str] = {
    **dict.fromkeys(("node", "nodejs", "deno", "bun"), "javascript"),
    "ts-node": "typescript",
    **dict.fromkeys(("sh", "bash", "dash", "ksh", "zsh", "ash"), "bash"),
    "ruby": "ruby",
    "php": "php",
}
_SHEBANG = re.compile(r"#!\s*(\S+)(?:\s+(?:-\S+\s+)*(\S+))?")
_BY_SUFFIX = {ext: fmt for fmt, exts in EXTENSIONS.items() for ext in exts}
_HTML_SNIFF = re.compile(
    r"\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_PY_SNIFF = re.compile(
    r"^(?:#!.*python|(?:from\s+[\w.]+\s+import|import\s+\w|def\s+\w+\s*\(|class\s+\w+\s*[(:]))", re.M
)
_MD_SNIFF = re.compile(r"^(?: {0,3}#{1,6}\s+\S|```|~~~|\s*[-*+]\s+\S|.*\n\s*(?:=+|-+)\s*$)", re.M)
_MD_TITLE = re.compile(r"\A\s*#[ \t]+(.+?)[ \t#]*$", re.M)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title", re.I | re.S)
_SKIP_DIRS = ("__pycache__",)


@dataclass(frozen=True)
class Document:
    """One document: its decoded text, its id, and what it is.

    ``doc_id`` is the file's path relative to the corpus root (POSIX separators); ``path``
    the file's absolute path; ``format`` one of :data:`FORMATS`; ``title`` the first Markdown
    heading or the HTML ``<title>``, else the file name; ``metadata`` how it was read
    (``encoding``, ``bytes``, ``decode_problem`` when a fallback encoding was used).
    ``elements`` maps spans of ``text`` back to pages and boxes (PDF), paragraphs, styles and
    the pages the file records (Word) or cells (notebooks): see
    :mod:`chunklab.documents.layout`; empty for text formats.
    """

    doc_id: str
    text: str = field(repr=False)
    path: str | None = None
    format: str = "text"
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    elements: tuple[Element, ...] = field(default=(), compare=False, repr=False)

    @property
    def kind(self) -> str:
        """Deprecated alias of :attr:`format`, kept because the published chapters read ``d.kind``."""
        return self.format

    @classmethod
    def from_text(cls, text: str, doc_id: str = "doc", format: str = "text", **fields: Any) -> Document:
        """A document made from a string (no file): for notebooks and tests."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}")
        if format not in FORMATS:
            raise ValueError(f"format must be one of {tuple(FORMATS)}, got {format!r}")
        return cls(doc_id, text, format=format, **fields)


def detect_format(path: str | os.PathLike[str] | None, head: str | bytes | None = None) -> str:
    """The format of a file (one of :data:`FORMATS`): by extension, else by sniffing ``head``, else text."""
    if path is not None:
        fmt = _BY_SUFFIX.get(PurePath(os.fspath(path)).suffix.lower())
        if fmt is not None:
            return fmt
    if head is None:
        return "text"
    if isinstance(head, (bytes, bytearray)):
        head = decode_bytes(bytes(head[:4096]), "text").text
    head = head[:4096].lstrip("\ufeff")
    shebang = shebang_format(head)
    if shebang is not None:
        return shebang
    if _HTML_SNIFF.match(head):
        return "html"
    if _PY_SNIFF.search(head):
        return "python"
    if _MD_SNIFF.search(head):
        return "markdown"
    return "text"


def shebang_format(head: str) -> str | None:
    """The code format a ``#!`` first line names (``/usr/bin/env node`` -> javascript), else None."""
    m = _SHEBANG.match(head)
    if m is None:
        return None
    interpreter = m.group(1).rsplit("/", 1)[-1]
    if interpreter == "env" and m.group(2):
        interpreter = m.group(2).rsplit("/", 1)[-1]
    return SHEBANGS.get(interpreter.rstrip("0123456789.") or interpreter)


def document_format(document: object) -> str:
    """The format of any document-like object: ``format``, else ``kind``, else from its path or id."""
    for attr in ("format", "kind"):
        value = getattr(document, attr, None)
        if isinstance(value, str) and value in FORMATS:
            return value
    return detect_format(getattr(document, "path", None) or getattr(document, "doc_id", None))


def load_document(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    format: str | None = None,
    strict: bool = False,
) -> Document:
    """Read one regular file as a :class:`Document`; a :class:`DocumentError` says why not.

    ``root`` is the corpus root the ``doc_id`` is relative to (default: the file's folder).
    ``format`` overrides :func:`detect_format`. FIFOs, devices, sockets and directories are
    refused without being opened for a blocking read, binary files are refused, and with
    ``strict=True`` so are files that need a fallback encoding.
    """
    name = os.fspath(path)
    return load_bytes(_read_regular(name), name, root=root, format=format, strict=strict)


def load_bytes(
    raw: bytes,
    name: str,
    *,
    root: str | os.PathLike[str] | None = None,
    format: str | None = None,
    strict: bool = False,
    doc_id: str | None = None,
) -> Document:
    """A :class:`Document` from the bytes of a file called ``name``, as :func:`load_document` reads one.

    For what is not a file of its own (a corpus member read from an archive): ``doc_id``,
    when given, replaces the id :func:`doc_id_for` would give ``name`` under ``root``.
    """
    if not isinstance(strict, bool):
        raise ValueError(f"strict must be a bool, got {strict!r}")
    if format is None and _BY_SUFFIX.get(PurePath(name).suffix.lower()) in LAID_OUT:
        format = _BY_SUFFIX[PurePath(name).suffix.lower()]
    elif format is None and PurePath(name).suffix.lower() not in _BY_SUFFIX:
        format = next((f.name for f in FORMATS.values() if f.signature and raw.startswith(f.signature)), None)
    if format in LAID_OUT:
        return _load_laid_out(name, raw, format, root, doc_id)
    binary = binary_reason(raw)
    if binary:
        raise DocumentError(name, "binary", f"binary file ({binary}), skipped")
    if format is None:
        format = detect_format(name, raw[:4096])
    elif format not in FORMATS:
        raise ValueError(f"format must be one of {tuple(FORMATS)}, got {format!r}")
    decoded = decode_bytes(raw, format, name=name, strict=strict)
    meta: dict[str, object] = {"encoding": decoded.encoding, "bytes": len(raw)}
    if decoded.problem:
        meta["decode_problem"] = decoded.problem
    text = _encodable(combine_surrogates(decoded.text), meta)
    where = os.path.abspath(name)  # chunk metadata keeps it: the same from any working directory
    return Document(
        doc_id or doc_id_for(where, root if root is not None else os.path.dirname(where)),
        text,
        where,
        format,
        _title(text, format) or os.path.basename(name),
        meta,
    )


def iter_documents(
    paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    *,
    strict: bool = False,
    errors: list[DocumentError] | None = None,
) -> Iterator[Document]:
    """Documents from files and directories (see :func:`iter_paths`), ids relative to ``root``.

    ``root`` defaults to :func:`corpus_root` of ``paths``. A file that cannot be read raises
    its :class:`DocumentError`, unless ``errors`` is a list: then it is appended there and
    skipped.
    """
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if root is None:
        root = corpus_root(paths)
    for p in iter_paths(paths):
        try:
            yield load_document(p, root=root, strict=strict)
        except DocumentError as exc:
            if errors is None:
                raise
            errors.append(exc)


def iter_paths(paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str]) -> Iterator[str]:
    """The files named, and the files with a known extension under the directories named.

    Directories are walked in sorted order without following symbolic links, skipping hidden
    folders and ``__pycache__``; a path seen twice is given once; a glob pattern
    (``docs/**/*.md``) that names no existing file is expanded. A file named directly is
    given whatever it is (reading it says whether it is a regular file); a path that does not
    exist at all raises :class:`FileNotFoundError`.
    """
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    seen: set[str] = set()
    for p in [os.fspath(x) for x in paths]:
        if not os.path.lexists(p) and glob.has_magic(p):  # a pattern the shell did not expand
            matches = sorted(glob.glob(p, recursive=True))
            if not matches:
                raise FileNotFoundError(f"no file matches {p}")
            candidates = list(iter_paths(matches))
        elif os.path.isdir(p):
            found: list[str] = []
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
                found.extend(
                    os.path.join(dirpath, f) for f in filenames if f.lower().endswith(tuple(_BY_SUFFIX))
                )
            candidates = sorted(found)
        elif os.path.lexists(p):
            candidates = [p]
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
        for c in candidates:
            key = os.path.abspath(c)
            if key not in seen:
                seen.add(key)
                yield c


def corpus_root(paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str]) -> str:
    """The default corpus root: the deepest folder holding every input (a directory counts itself)."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not paths:
        raise ValueError("corpus_root needs at least one path")
    folders = []
    for p in [os.fspath(x) for x in paths]:
        matches = glob.glob(p, recursive=True) if not os.path.lexists(p) and glob.has_magic(p) else [p]
        for a in map(os.path.abspath, matches):
            folders.append(a if os.path.isdir(a) else os.path.dirname(a))
    if not folders:
        raise FileNotFoundError(f"no file matches {', '.join(os.fspath(x) for x in paths)}")
    return os.path.commonpath(folders)


def doc_id_for(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str:
    """The one ``doc_id`` rule: ``path`` relative to ``root``, normalized, with POSIX separators.

    Both are made absolute first, so the id does not depend on the working directory; when
    the path is not under the root as written, symbolic links are resolved and it is tried
    again; a path outside the root is a ValueError.
    """
    p, r = os.path.abspath(os.fspath(path)), os.path.abspath(os.fspath(root))
    for a, b in ((p, r), (os.path.realpath(p), os.path.realpath(r))):
        if os.path.commonpath([a, b]) == b:
            rel = os.path.relpath(a, b)
            return PurePath(rel).as_posix() if rel != "." else os.path.basename(a)
    raise ValueError(f"{os.fspath(path)} is not inside the corpus root {os.fspath(root)}")


# --------------------------------------------------------------------------- helpers


def _load_laid_out(
    name: str, raw: bytes, fmt: str, root: str | os.PathLike[str] | None, doc_id: str | None = None
) -> Document:
    """A PDF, Word file or notebook through its format's loader: canonical text plus the element map."""
    loader = FORMATS[fmt].loader
    assert loader is not None  # only laid-out formats come here
    try:
        got = loader(raw, name)
    except DocumentError:
        raise
    except Exception as exc:  # a loader's crash on one file is that file's problem, named, never the run's
        detail = f"the {fmt} loader failed: {type(exc).__name__}: {exc}"
        raise DocumentError(name, "unreadable", detail) from exc
    if not got.text.strip():
        raise DocumentError(name, "empty", f"no text in this {fmt} file")
    where_ = os.path.abspath(name)
    meta = {"bytes": len(raw), "extracted_chars": len(got.text), **(got.metadata or {})}
    # the loader combined surrogate pairs before it counted offsets: the halves left are replaced one
    # for one, so the element map still holds
    text = _encodable(got.text, meta)
    title = replace_lone_surrogates(got.title)[0] if got.title else None
    return Document(
        doc_id or doc_id_for(where_, root if root is not None else os.path.dirname(where_)),
        text,
        where_,
        fmt,
        title or os.path.basename(name),
        meta,
        got.elements,
    )


def _encodable(text: str, meta: dict[str, Any]) -> str:
    """``text`` with its lone surrogates replaced (:func:`replace_lone_surrogates`), counted in ``meta``."""
    text, lone = replace_lone_surrogates(text)
    if lone:
        meta["lone_surrogates"] = lone
    return text


def _read_regular(name: str) -> bytes:
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        what = "dangling symbolic link" if os.path.islink(name) else "no such file"
        raise DocumentError(name, "missing", what) from None
    except IsADirectoryError:
        raise DocumentError(name, "not-regular", "is a directory, not a file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DocumentError(name, "not-regular", "symbolic link loop") from None
        raise DocumentError(name, "unreadable", f"{type(exc).__name__}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise DocumentError(name, "not-regular", f"not a regular file ({_file_type(mode)}), skipped")
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            return fh.read()
    except OSError as exc:
        raise DocumentError(name, "unreadable", f"{type(exc).__name__}: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)


def _file_type(mode: int) -> str:
    for test, what in (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISDIR, "directory"),
    ):
        if test(mode):
            return what
    return "special file"


def _title(text: str, fmt: str) -> str | None:
    head = text[:8192]
    if fmt == "markdown":
        m = _MD_TITLE.match(head)
    elif fmt == "html":
        m = _HTML_TITLE.search(head)
    else:
        return None
    title = " ".join(m.group(1).split()) if m else ""
    return title or None
