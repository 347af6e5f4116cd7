"""Pick the structural chunker for a document by its format, and count how often chunkers fall back.

:data:`STRUCTURAL` is the one table from a document format (:data:`chunklab.documents.FORMATS`)
to its structural chunker, and to how a plain-text strategy reads it (HTML: its visible text);
:func:`chunk_document` and the catalog's strategies ask it.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePath
from typing import TypedDict

from chunklab._validate import check_choice, renamed_keyword
from chunklab.chunk import Chunk
from chunklab.chunkers.structural._common import check_max_size, check_source, resolve_doc_id
from chunklab.chunkers.structural.code import CODE_LANGUAGES, chunk_code
from chunklab.chunkers.structural.elements import chunk_elements
from chunklab.chunkers.structural.html import chunk_html, chunk_visible_text
from chunklab.chunkers.structural.markdown import chunk_markdown
from chunklab.chunkers.structural.python import chunk_python
from chunklab.chunkers.structural.rst import chunk_rst
from chunklab.documents import FORMATS, LAID_OUT, Document, detect_format, document_format
from chunklab.protocols import DocumentLike
from chunklab.words import counted

__all__ = [
    "FORMATS",
    "STRUCTURAL",
    "FallbackStats",
    "FallbackSummary",
    "FormatChunkers",
    "chunk_document",
    "chunk_text",
]


@renamed_keyword("max_chars", "max_size")
def chunk_document(
    source: str | bytes | DocumentLike,
    format: str = "auto",
    path: str | PurePath | None = None,
    *,
    max_size: int = 1500,
    min_chars: int = 200,
    max_level: int = 3,
    keep_boilerplate: bool = False,
    doc_id: str | None = None,
    unit: str = "chars",
) -> list[Chunk]:
    """Chunk a document with the structural chunker for its format (its entry in :data:`STRUCTURAL`).

    ``source`` is a str, bytes, or a document (:class:`chunklab.documents.Document`, or
    anything with ``text`` and ``doc_id``: its format, path and id are used). ``format`` is
    ``"auto"`` (extension, then sniffing), or one of :data:`FORMATS`; ``"text"`` uses the
    recursive chunker with 10% overlap; ``"pdf"``, ``"docx"`` and ``"ipynb"`` documents are chunked
    by their elements (:func:`chunk_elements`); source code in the languages of
    :data:`chunklab.chunkers.structural.code.CODE_LANGUAGES` goes to
    :func:`chunklab.chunkers.structural.code.chunk_code` (tree-sitter). ``min_chars`` applies to
    Python, ``max_level`` to Markdown and reStructuredText, ``keep_boilerplate`` to HTML.
    ``unit`` (any unit of
    :mod:`chunklab.units`: ``"chars"``, ``"words"``, ``"tokens"``, ``"tokenizer:PATH"``)
    measures ``max_size`` and ``min_chars``, for every format.
    """
    document: DocumentLike | None = None
    if not isinstance(source, (str, bytes, bytearray)) and isinstance(getattr(source, "text", None), str):
        document = source
        source = document.text
        format = document_format(document) if format == "auto" else format
        path = path if path is not None else getattr(document, "path", None)
        doc_id = doc_id if doc_id is not None else getattr(document, "doc_id", None)
    source = check_source(source, "source")
    check_choice(format, ("auto", *FORMATS), "format")
    path_str = str(path) if path is not None else None
    if format == "auto":
        format = detect_format(path_str, source[:4096])
    options = _Options(max_size, min_chars, max_level, keep_boilerplate, doc_id, path_str, unit)
    return STRUCTURAL[format].structural(source, document, format, options)


@dataclass(frozen=True)
class _Options:
    """The structural options of :func:`chunk_document`, handed to the chunker of the format."""

    max_size: int
    min_chars: int
    max_level: int
    keep_boilerplate: bool
    doc_id: str | None
    path: str | None
    unit: str


#: ``(source text, the document or None, its format, options) -> chunks``
StructuralFn = Callable[[str | bytes, DocumentLike | None, str, _Options], list[Chunk]]
#: ``(document, chunk function of a plain-text strategy) -> chunks``: how a plain strategy reads a format
VisibleTextFn = Callable[..., list[Chunk]]


@dataclass(frozen=True)
class FormatChunkers:
    """A format's chunkers: its structural chunker, and for markup the view plain-text strategies chunk.

    ``visible_text`` None: a plain-text strategy (fixed, recursive, ...) chunks the document's
    text as it is; else ``visible_text(document, chunk)`` runs ``chunk`` on what a reader sees
    and maps each span back onto the source (HTML).
    """

    structural: StructuralFn
    visible_text: VisibleTextFn | None = None


def _elements(source: str | bytes, document: DocumentLike | None, fmt: str, o: _Options) -> list[Chunk]:
    """PDF, Word, notebooks: by the elements their loader mapped."""
    laid_out = document if document is not None else Document.from_text(_as_text(source), "doc", fmt)
    return chunk_elements(laid_out, o.max_size, unit=o.unit, doc_id=o.doc_id, path=o.path)


def _python(source: str | bytes, document: DocumentLike | None, fmt: str, o: _Options) -> list[Chunk]:
    return chunk_python(source, o.max_size, o.min_chars, o.path, doc_id=o.doc_id, unit=o.unit)


def _code(source: str | bytes, document: DocumentLike | None, fmt: str, o: _Options) -> list[Chunk]:
    return chunk_code(source, fmt, o.max_size, o.path, doc_id=o.doc_id, unit=o.unit)


def _html(source: str | bytes, document: DocumentLike | None, fmt: str, o: _Options) -> list[Chunk]:
    return chunk_html(
        source, o.max_size, doc_id=o.doc_id, path=o.path, keep_boilerplate=o.keep_boilerplate, unit=o.unit
    )


def _markdown(source: str | bytes, document: DocumentLike | None, fmt: str, o: _Options) -> list[Chunk]:
    return chunk_markdown(source, o.max_size, o.max_level, doc_id=o.doc_id, path=o.path, unit=o.unit)


def _rst(source: str | bytes, document: DocumentLike | None, fmt: str, o: _Options) -> list[Chunk]:
    return chunk_rst(source, o.max_size, o.max_level, doc_id=o.doc_id, path=o.path, unit=o.unit)


def _text(source: str | bytes, document: DocumentLike | None, fmt: str, o: _Options) -> list[Chunk]:
    return chunk_text(source, o.max_size, doc_id=o.doc_id, path=o.path, role=fmt, unit=o.unit)


#: the one table: document format -> its chunkers (every laid-out format by its elements, every
#: tree-sitter language by :func:`chunk_code`; a test checks that every format has an entry)
STRUCTURAL: dict[str, FormatChunkers] = {
    "text": FormatChunkers(_text),
    "markdown": FormatChunkers(_markdown),
    "rst": FormatChunkers(_rst),
    "html": FormatChunkers(_html, chunk_visible_text),
    **dict.fromkeys(LAID_OUT, FormatChunkers(_elements)),
    **dict.fromkeys(CODE_LANGUAGES, FormatChunkers(_code)),
    "python": FormatChunkers(_python),
}


def _as_text(source: str | bytes) -> str:
    from chunklab._validate import check_text

    return check_text(source)


@renamed_keyword("max_chars", "max_size")
def chunk_text(
    text: str | bytes,
    max_size: int = 1500,
    *,
    doc_id: str | None = None,
    path: str | None = None,
    role: str = "text",
    unit: str = "chars",
) -> list[Chunk]:
    """Plain text: the recursive chunker with 10% overlap (in ``unit``), labelled as structural."""
    from chunklab._validate import check_text
    from chunklab.chunkers.recursive import chunk_recursive
    from chunklab.units import unit_params

    check_source(text, "text")
    max_size = check_max_size(max_size)
    text = check_text(text)
    doc_id = resolve_doc_id(doc_id, path)
    chunks = chunk_recursive(text, max_size, max_size // 10, unit, doc_id=doc_id, strategy="structural")
    params = {"format": "text", "max_chars": max_size, **unit_params(unit)}
    extra = {"params": params, "kind": role, "path": path}
    return [dataclasses.replace(c, metadata={**c.metadata, **extra}) for c in chunks]


class FallbackSummary(TypedDict):
    """:meth:`FallbackStats.as_dict`: counts, rate, reasons by count and ``[path, reason]`` examples."""

    documents: int
    fallbacks: int
    rate: float
    reasons: dict[str, int]
    examples: list[list[str]]


class FallbackStats:
    """Counts documents chunked, how many fell back to plain recursive splitting, and why.

    Feed it each document's chunks with :meth:`add`; ``rate`` is the share of documents
    that fell back, ``reasons`` counts the reasons (line numbers stripped so that the same
    error groups together), ``examples`` keeps the full reason of each fallback by path.
    The course warns when ``rate`` passes ``warn_rate`` (5%).
    """

    warn_rate = 0.05

    def __init__(self) -> None:
        self.documents = 0
        self.fallbacks = 0
        self.chunks = 0
        self.reasons: Counter[str] = Counter()
        self.examples: list[tuple[str, str]] = []

    def add(self, chunks: Iterable[Chunk], path: str | None = None) -> bool:
        """Record one document's chunks; True when that document fell back."""
        reason = None
        n = 0
        for c in chunks:
            n += 1
            if reason is None and c.metadata.get("fallback"):
                reason = str(c.metadata.get("fallback_reason") or "unknown")
                path = path or c.metadata.get("path") or c.doc_id
        self.documents += 1
        self.chunks += n
        if reason is None:
            return False
        self.record(reason, path)
        return True

    def record(self, reason: str, path: str | None = None, documents: int = 0) -> None:
        """Count a fallback by its reason (and ``documents`` more documents seen)."""
        self.documents += documents
        self.fallbacks += 1
        self.reasons[reason_key(reason)] += 1
        self.examples.append((str(path) if path is not None else "?", reason))

    def merge(self, other: FallbackStats) -> FallbackStats:
        """Add another counter's numbers to this one (for worker pools); returns self."""
        self.documents += other.documents
        self.fallbacks += other.fallbacks
        self.chunks += other.chunks
        self.reasons.update(other.reasons)
        self.examples.extend(other.examples)
        return self

    @property
    def rate(self) -> float:
        """Share of documents that fell back (0.0 when none were seen)."""
        return self.fallbacks / self.documents if self.documents else 0.0

    def top(self, n: int = 5) -> list[tuple[str, int]]:
        """The ``n`` most common fallback reasons with their counts."""
        return self.reasons.most_common(n)

    def warning(self) -> str | None:
        """A warning sentence when the fallback rate passes ``warn_rate``, else None."""
        if self.rate > self.warn_rate:
            return (
                f"{self.rate:.1%} of documents fell back to recursive chunking "
                f"(over {self.warn_rate:.0%}): check the top reasons {self.top(3)}"
            )
        return None

    def summary(self) -> str:
        """One line, then the top reasons."""
        lines = [f"fallback: {self.fallbacks}/{counted(self.documents, 'document')} ({self.rate:.2%})"]
        lines += [f"  {count:6d}  {reason}" for reason, count in self.top()]
        return "\n".join(lines)

    def as_dict(self) -> FallbackSummary:
        """A JSON-ready summary."""
        return {
            "documents": self.documents,
            "fallbacks": self.fallbacks,
            "rate": self.rate,
            "reasons": dict(self.reasons.most_common()),
            "examples": [list(e) for e in self.examples],
        }

    def __repr__(self) -> str:
        return f"FallbackStats(documents={self.documents}, fallbacks={self.fallbacks}, rate={self.rate:.3f})"


_LINE_INFO = re.compile(r"\s*\((?:line|byte) \d+[^)]*\)|\b(?:at )?byte \d+|line \d+")


def reason_key(reason: str) -> str:
    """A fallback reason without positions, so that the same error groups together."""
    return _LINE_INFO.sub("", reason).strip()
