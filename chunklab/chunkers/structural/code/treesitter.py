"""Tree-sitter plumbing for :mod:`chunklab.chunkers.structural.code`: grammars, parsing, offsets.

Grammars come from the individual ``tree-sitter-<language>`` wheels (compiled, offline); none is
downloaded. Tree-sitter reports UTF-8 **byte** offsets; :class:`ByteToChar` turns them into Python
``str`` indices exactly (non-ASCII identifiers and strings, astral characters, lone surrogates).
"""

from __future__ import annotations

import importlib
import re
import threading
from bisect import bisect_right
from functools import cache
from typing import TYPE_CHECKING

from chunklab.chunkers.structural.code.languages import GRAMMARS

if TYPE_CHECKING:
    import tree_sitter

__all__ = ["ByteToChar", "GrammarMissing", "definition_nodes", "encode_for_parser", "get_language", "parse"]

_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_local = threading.local()


class GrammarMissing(RuntimeError):
    """The grammar wheel of a language is not installed (or tree-sitter itself is not)."""


@cache
def get_language(language: str) -> tree_sitter.Language:
    """The compiled :class:`tree_sitter.Language` of ``language`` (a key of :data:`GRAMMARS`)."""
    spec = GRAMMARS[language]
    try:
        import tree_sitter

        module = importlib.import_module(spec.module)
    except ImportError as exc:
        raise GrammarMissing(f"grammar for {language!r} not installed ({spec.module}): {exc}") from exc
    return tree_sitter.Language(getattr(module, spec.function)())


def _parser(language: str) -> tree_sitter.Parser:
    """One parser per thread and language (tree-sitter parsers are not shared across threads)."""
    cache = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    parser = cache.get(language)
    if parser is None:
        import tree_sitter

        parser = cache[language] = tree_sitter.Parser(get_language(language))
    return parser


def encode_for_parser(text: str) -> bytes:
    """``text`` as UTF-8 for the parser: a byte order mark becomes three spaces (same byte length).

    Lone surrogates (left by some decoders) encode as themselves (``surrogatepass``), so byte
    offsets stay aligned with :class:`ByteToChar`.
    """
    data = text.encode("utf-8", "surrogatepass")
    if data.startswith(b"\xef\xbb\xbf"):
        data = b"   " + data[3:]
    return data


def parse(language: str, data: bytes) -> tree_sitter.Tree:
    """The syntax tree of ``data`` (UTF-8 bytes) in ``language``."""
    return _parser(language).parse(data)


@cache
def _definition_query(language: str) -> tree_sitter.Query | None:
    """One query matching every definition node type of ``language`` that its grammar has."""
    import tree_sitter

    grammar = get_language(language)
    kinds = [t for t in GRAMMARS[language].definitions if grammar.id_for_node_kind(t, True) is not None]
    if not kinds:
        return None
    return tree_sitter.Query(grammar, "[" + " ".join(f"({t})" for t in kinds) + "] @d")


def definition_nodes(language: str, root: tree_sitter.Node) -> list[tree_sitter.Node]:
    """Every node under ``root`` whose type defines something in ``language``, outer before inner.

    A tree-sitter query (matched in C), so the file is not walked in Python; the nodes are in
    source order, an enclosing node before the nodes it holds.
    """
    query = _definition_query(language)
    if query is None:
        return []
    import tree_sitter

    found = tree_sitter.QueryCursor(query).captures(root).get("d", [])
    return sorted(found, key=lambda n: (n.start_byte, -n.end_byte))


class ByteToChar:
    """Maps a UTF-8 byte offset of ``text`` to its character offset, exactly.

    Only the non-ASCII characters are recorded (their byte end and the extra bytes so far), so an
    ASCII file costs nothing and a lookup is one bisection. A byte offset inside a multi-byte
    character maps to that character's start.
    """

    def __init__(self, text: str) -> None:
        ends: list[int] = []
        extras: list[int] = []
        extra = 0
        for m in () if text.isascii() else _NON_ASCII.finditer(text):
            cp = ord(m.group())
            width = 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
            byte_start = m.start() + extra
            extra += width - 1
            ends.append(byte_start + width)
            extras.append(extra)
        self._ends = ends
        self._extras = extras
        self.ascii = not ends

    def __call__(self, byte: int) -> int:
        if self.ascii:
            return byte
        i = bisect_right(self._ends, byte)
        char = byte - (self._extras[i - 1] if i else 0)
        if i < len(self._ends):  # inside the next non-ASCII character: snap to its start
            next_char_start = self._ends[i] - self._extras[i] - 1
            char = min(char, next_char_start)
        return char
