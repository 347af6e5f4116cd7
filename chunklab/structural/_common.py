"""Helpers shared by the structural chunkers: argument checks, decoding, the recursive fallback."""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from itertools import accumulate
from typing import Any

from chunklab._validate import check_doc_id, check_positive_int
from chunklab.chunk import Chunk
from chunklab.recursive import chunk_recursive

_NEWLINE_ANY = re.compile(r"\r\n|\r|\n")


def resolve_doc_id(doc_id: Any, path: Any) -> str:
    """``doc_id`` when given, else the path as a string, else ``"doc"``."""
    if doc_id is not None:
        return check_doc_id(doc_id)
    if path is not None:
        return str(path)
    return "doc"


def check_max_chars(max_chars: Any, name: str = "max_chars") -> int:
    """A positive int budget, else ValueError."""
    return check_positive_int(max_chars, name)


def check_source(source: Any, name: str) -> None:
    """Raise ValueError unless ``source`` is str or bytes."""
    if not isinstance(source, (str, bytes, bytearray)):
        raise ValueError(f"{name} must be a str (or bytes), got {type(source).__name__}")


def decode_python(raw: bytes) -> tuple[str, str | None]:
    """Decode Python source bytes per its BOM / PEP 263 cookie.

    Returns ``(text, problem)``: ``problem`` is None when decoding worked, else a reason
    (bad cookie, undecodable bytes); the text is then decoded as UTF-8 with replacement
    characters so that the fallback chunker can still run.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        detail = ""
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            detail = f": {_decode_error(bad, raw)}"
        if not detail:  # a bad cookie: PEP 263 allows it on line 1 or 2 only
            first_two = raw.split(b"\n", 2)[:2]
            line = next((i + 1 for i, ln in enumerate(first_two) if b"coding" in ln), 1)
            detail = f" (line {line})"
        return _lenient(raw), f"undecodable source: {exc.msg}{detail}"
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        return _lenient(raw), f"undecodable source ({encoding}): {_decode_error(exc, raw)}"
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


def _decode_error(exc: Exception, raw: bytes) -> str:
    if isinstance(exc, UnicodeDecodeError):
        line = raw.count(b"\n", 0, exc.start) + 1
        return f"{exc.reason} at byte {exc.start} (line {line})"
    return str(exc)


def _lenient(raw: bytes) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode("utf-8", errors="replace")


def decode_text(raw: bytes) -> str:
    """Decode text bytes: UTF-8 (BOM removed), with replacement characters for bad bytes."""
    return _lenient(raw)


def line_starts(source: str) -> list[int]:
    """Character offset of the start of each line, plus ``len(source)`` as a sentinel.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``: the newlines Python's tokenizer counts,
    so that ``node.lineno`` maps to the right offset.
    """
    if "\r" in source:
        starts = [0]
        starts.extend(m.end() for m in _NEWLINE_ANY.finditer(source))
    else:
        starts = list(accumulate(map((1).__add__, map(len, source.split("\n"))), initial=0))
        starts.pop()  # the last piece has no newline after it
    if starts[-1] != len(source):
        starts.append(len(source))
    return starts


def fallback_chunks(
    text: str,
    max_chars: int,
    doc_id: str,
    params: dict[str, Any],
    reason: str,
    extra: dict[str, Any] | None = None,
) -> list[Chunk]:
    """The recursive chunker with 10% overlap, every chunk marked ``fallback`` with ``reason``."""
    overlap = max_chars // 10
    chunks = chunk_recursive(text, max_chars, overlap, "chars", doc_id=doc_id, strategy="structural")
    starts = line_starts(text) if chunks else []
    for c in chunks:
        meta = c.metadata
        meta["params"] = params
        meta["kind"] = "fallback"
        meta["fallback"] = True
        meta["fallback_reason"] = reason
        meta["fallback_overlap"] = overlap
        meta["line_start"] = _line_of(starts, c.start)
        meta["line_end"] = _line_of(starts, max(c.start, c.end - 1))
        if extra:
            meta.update(extra)
    return chunks


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)
