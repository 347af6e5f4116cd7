"""Characters every loader hands on: surrogate pairs made whole, nothing left that UTF-8 cannot encode.

PDFium returns a character outside the Basic Multilingual Plane (math italic 𝑥, U+1D465) as two
UTF-16 halves; :func:`combine_surrogates` makes each high-low pair the one character it encodes.
A half without its partner (a "lone surrogate") is not a character at all: UTF-8 cannot encode
it, so JSON output, Arrow tables and tokenizers all refuse it. :func:`replace_lone_surrogates`
puts U+FFFD (the replacement character) in its place, one for one, so offsets into the text stay
valid, and counts them; :func:`chunklab.documents.load_bytes` applies it to the text of every
format and records the count in ``metadata["lone_surrogates"]``.
"""

from __future__ import annotations

import re

__all__ = ["REPLACEMENT", "combine_surrogates", "replace_lone_surrogates", "surrogate_pair"]

#: what a lone surrogate becomes
REPLACEMENT = "\ufffd"
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_LONE = re.compile("[\ud800-\udfff]")


def surrogate_pair(high: int, low: int) -> str | None:
    """The character a UTF-16 pair of code units encodes, or None when ``high, low`` is not a pair."""
    if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    return None


def combine_surrogates(text: str) -> str:
    """``text`` with every high-low surrogate pair replaced by the character it encodes.

    Lone halves are left as they are (see :func:`replace_lone_surrogates`); text without
    surrogates is returned unchanged.
    """
    if not _LONE.search(text):
        return text
    return _PAIR.sub(lambda m: surrogate_pair(ord(m[0][0]), ord(m[0][1])) or m[0], text)


def replace_lone_surrogates(text: str) -> tuple[str, int]:
    """``text`` with each surrogate code point replaced by U+FFFD (same length), and how many there were.

    Run :func:`combine_surrogates` first where the text may hold whole pairs and its offsets may
    still change; after this the text always encodes as UTF-8.
    """
    fixed, count = _LONE.subn(REPLACEMENT, text)
    return fixed, count
