"""Pick the structural chunker for a document, and count how often chunkers fall back."""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import PurePath
from typing import Any

from chunklab.chunk import Chunk
from chunklab.structural._common import (
    check_max_chars,
    check_source,
    decode_python,
    decode_text,
    resolve_doc_id,
)
from chunklab.structural.html import chunk_html
from chunklab.structural.markdown import chunk_markdown
from chunklab.structural.python import chunk_python

__all__ = ["KINDS", "FallbackStats", "chunk_document", "detect_kind"]

#: file kind -> file name extensions
EXTENSIONS = {
    "python": (".py", ".pyi", ".pyw"),
    "html": (".html", ".htm", ".xhtml"),
    "markdown": (".md", ".markdown", ".mdown", ".mkd"),
    "text": (".txt", ".text", ".rst", ".log", ".csv"),
}
KINDS = ("python", "html", "markdown", "text")
_HTML_SNIFF = re.compile(r"\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S)
_PY_SNIFF = re.compile(r"^(?:#!.*python|(?:from\s+[\w.]+\s+import|import\s+\w|def\s+\w+\s*\(|class\s+\w+\s*[(:]))", re.M)
_MD_SNIFF = re.compile(r"^(?: {0,3}#{1,6}\s+\S|```|~~~|\s*[-*+]\s+\S|.*\n\s*(?:=+|-+)\s*$)", re.M)


def detect_kind(source: str | bytes, path: str | PurePath | None = None) -> str:
    """The document kind (one of ``KINDS``): by file extension, else by sniffing the start."""
    if path is not None:
        suffix = PurePath(str(path)).suffix.lower()
        for kind, exts in EXTENSIONS.items():
            if suffix in exts:
                return kind
    head = source[:4096]
    if isinstance(head, (bytes, bytearray)):
        head = bytes(head).decode("utf-8", errors="replace")
    head = head.lstrip("\ufeff")
    if _HTML_SNIFF.match(head):
        return "html"
    if _PY_SNIFF.search(head):
        return "python"
    if _MD_SNIFF.search(head):
        return "markdown"
    return "text"


def chunk_document(
    source: str | bytes,
    kind: str = "auto",
    path: str | PurePath | None = None,
    **options: Any,
) -> list[Chunk]:
    """Chunk a document with the structural chunker for its kind.

    ``kind`` is ``"auto"`` (extension, then sniffing), ``"python"``, ``"html"``,
    ``"markdown"`` or ``"text"`` (the recursive chunker with 10% overlap). ``options`` go to
    the chunker (``max_chars``, ``min_chars``, ``max_level``, ``doc_id``); an option the
    chunker does not take is a ValueError.
    """
    check_source(source, "source")
    if not isinstance(kind, str) or (kind != "auto" and kind not in KINDS):
        raise ValueError(f"kind must be 'auto' or one of {KINDS}, got {kind!r}")
    path_str = str(path) if path is not None else None
    if kind == "auto":
        kind = detect_kind(source, path_str)
    func = _CHUNKERS[kind]
    accepted = _accepted(func)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ValueError(f"chunk_document: {kind} chunker does not take {', '.join(unknown)}")
    return func(source, path=path_str, **options)


def chunk_text(
    text: str | bytes,
    max_chars: int = 1500,
    *,
    doc_id: str | None = None,
    path: str | None = None,
) -> list[Chunk]:
    """Plain text: the recursive chunker with 10% overlap, labelled with the structural strategy."""
    from chunklab.recursive import chunk_recursive

    check_source(text, "text")
    max_chars = check_max_chars(max_chars)
    if isinstance(text, (bytes, bytearray)):
        text = decode_text(bytes(text))
    doc_id = resolve_doc_id(doc_id, path)
    chunks = chunk_recursive(text, max_chars, max_chars // 10, doc_id=doc_id, strategy="structural")
    params = {"format": "text", "max_chars": max_chars}
    for c in chunks:
        c.metadata.update(params=params, kind="text", path=path)
    return chunks


_CHUNKERS = {
    "python": chunk_python,
    "html": chunk_html,
    "markdown": chunk_markdown,
    "text": chunk_text,
}
_ACCEPTED: dict[Any, frozenset[str]] = {}


def _accepted(func) -> frozenset[str]:
    if func not in _ACCEPTED:
        names = list(inspect.signature(func).parameters)[1:]
        _ACCEPTED[func] = frozenset(n for n in names if n != "path")
    return _ACCEPTED[func]


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
        lines = [f"fallback: {self.fallbacks}/{self.documents} documents ({self.rate:.2%})"]
        lines += [f"  {count:6d}  {reason}" for reason, count in self.top()]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
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


def decode_for(kind: str, raw: bytes) -> str:
    """Decode file bytes the way the chunker for ``kind`` would (PEP 263 for Python)."""
    if kind == "python":
        return decode_python(raw)[0]
    if kind == "html":
        from chunklab.structural.html import decode_html

        return decode_html(raw)
    return decode_text(raw)
