"""The one decoder: file bytes to text by document kind, and the test that bytes are not text at all.

:func:`decode_bytes` is what :func:`chunklab.documents.load_document` (and every chunker that
still accepts bytes) decodes with: a byte order mark (UTF-8, UTF-16, UTF-32) wins; then
Python follows its PEP 263 cookie, HTML its XML declaration or ``<meta charset>``, and
everything else UTF-8. Bytes invalid in that encoding are decoded by an explicit fallback
(windows-1252, else Latin-1, which decode any byte) and ``Decoded.problem`` says why, or
with ``strict=True`` raise a :class:`DocumentError`. Import these names from
:mod:`chunklab.documents`, the one way in.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from typing import NamedTuple

__all__ = ["Decoded", "DocumentError", "binary_reason", "decode_bytes"]

#: byte order marks, longest first (the UTF-32 LE mark starts with the UTF-16 LE one)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


_SNIFF_BYTES = 8192
#: control bytes that do not occur in text (tab, newlines, form feed, escape are allowed)


#: control bytes that do not occur in text (tab, newlines, form feed, escape are allowed)
_CONTROL = bytes(set(range(32)) - {8, 9, 10, 12, 13, 27})


_MAGIC = (
    (b"\x7fELF", "ELF executable or shared library"),
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"GIF8", "GIF image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x1f\x8b", "gzip data"),
    (b"MZ", "Windows executable"),
    (b"\xca\xfe\xba\xbe", "Mach-O or Java class file"),
    (b"\xcf\xfa\xed\xfe", "Mach-O binary"),
    (b"SQLite format 3\x00", "SQLite database"),
)


class DocumentError(ValueError):
    """A file that cannot become a document: ``path`` and a short ``reason`` say why.

    ``reason`` is one of ``"missing"``, ``"not-regular"``, ``"unreadable"``, ``"binary"``
    and ``"undecodable"``, and for laid-out files (PDF, Word, notebooks) ``"no-text-layer"``
    (scanned), ``"encrypted"``, ``"garbled"`` (no Unicode mapping) and ``"empty"``, so that a
    run can count its skipped files by reason.
    """

    def __init__(self, path: str, reason: str, detail: str) -> None:
        super().__init__(f"{path}: {detail}")
        self.path = path
        self.reason = reason
        self.detail = detail

    def __reduce__(self) -> tuple[type[DocumentError], tuple[str, str, str]]:  # picklable for workers
        return (DocumentError, (self.path, self.reason, self.detail))


class Decoded(NamedTuple):
    """Decoded bytes: the text, the encoding used, and why a fallback was needed (else None)."""

    text: str
    encoding: str
    problem: str | None = None


def decode_bytes(raw: bytes, kind: str = "text", *, name: str = "<bytes>", strict: bool = False) -> Decoded:
    """Decode file bytes the way a document of ``kind`` is decoded.

    A byte order mark (UTF-8, UTF-16, UTF-32) wins. Then Python follows its PEP 263 cookie,
    HTML its XML declaration or ``<meta charset>``, everything else UTF-8. Bytes invalid in
    that encoding are decoded as windows-1252 (else Latin-1) and ``problem`` says why (the
    byte and line of the first bad byte); with ``strict=True`` they raise a
    :class:`DocumentError` naming the file ``name`` instead.
    """
    if not isinstance(raw, (bytes, bytearray)):
        raise ValueError(f"raw must be bytes, got {type(raw).__name__}")
    decoded = _decode_by_kind(bytes(raw), kind)
    if strict and decoded.problem:
        raise DocumentError(name, "undecodable", decoded.problem.rsplit("; decoded as ", 1)[0])
    return decoded


def _decode_by_kind(raw: bytes, kind: str) -> Decoded:
    marked = [(bom, encoding) for bom, encoding in _BOMS if raw.startswith(bom)]
    for k, (bom, encoding) in enumerate(marked):
        # FF FE 00 00 opens UTF-32 LE, or UTF-16 LE text that starts with U+0000: try both
        if k + 1 < len(marked) and (len(raw) % 4 or not _decodes(raw[len(bom) :], encoding)):
            continue
        return _decode(raw[len(bom) :], [encoding])
    if kind == "python":
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as exc:
            return _fallback(raw, f"undecodable source: {exc.msg}{_cookie_detail(raw)}")
        return _decode(raw, [encoding], python=True)
    if kind == "html":
        from bs4.dammit import EncodingDetector

        declared = EncodingDetector.find_declared_encoding(raw, is_html=True)
        return _decode(raw, [declared, "utf-8"] if declared else ["utf-8"])
    return _decode(raw, ["utf-8"])


def binary_reason(raw: bytes) -> str | None:
    """Why these bytes are not text (a known file signature, NUL bytes, control bytes), else None."""
    for bom, _enc in _BOMS:
        if raw.startswith(bom):
            return None
    for magic, what in _MAGIC:
        if raw.startswith(magic) and (what != "Windows executable" or b"\x00" in raw[:_SNIFF_BYTES]):
            return what
    head = raw[:_SNIFF_BYTES]
    if b"\x00" in head:
        return f"NUL byte at offset {head.index(0)}"
    if head and len(head.translate(None, _CONTROL)) < 0.7 * len(head):
        return "mostly control bytes"
    return None


def _decode(raw: bytes, encodings: list[str], python: bool = False) -> Decoded:
    first_error = None
    for encoding in encodings:
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            first_error = first_error or exc
            continue
        return Decoded(text[1:] if text.startswith("\ufeff") else text, encoding)
    assert first_error is not None
    where = _error_detail(first_error, raw)
    if python:
        return _fallback(raw, f"undecodable source ({encodings[0]}): {where}")
    return _fallback(raw, f"not valid {encodings[0]}: {where}")


def _decodes(raw: bytes, encoding: str) -> bool:
    try:
        raw.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def _fallback(raw: bytes, problem: str) -> Decoded:
    try:
        return Decoded(raw.decode("windows-1252"), "windows-1252", f"{problem}; decoded as windows-1252")
    except UnicodeDecodeError:
        return Decoded(raw.decode("latin-1"), "latin-1", f"{problem}; decoded as latin-1")


def _error_detail(exc: Exception, raw: bytes) -> str:
    if isinstance(exc, UnicodeDecodeError):
        line = raw.count(b"\n", 0, exc.start) + 1
        return f"{exc.reason} at byte {exc.start} (line {line})"
    return str(exc)


def _cookie_detail(raw: bytes) -> str:
    """Where a PEP 263 problem is: the first bad byte, else the line of the cookie."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f": {_error_detail(bad, raw)}"
    first_two = raw.split(b"\n", 2)[:2]
    line = next((i + 1 for i, ln in enumerate(first_two) if b"coding" in ln), 1)
    return f" (line {line})"
