"""Characters every loader hands on: surrogate pairs made whole, nothing left that UTF-8 cannot encode.

PDFium returns a character outside the Basic Multilingual Plane (math italic 𝑥, U+1D465) as two
UTF-16 halves; :func:`combine_surrogates` makes each high-low pair the one character it encodes.
A half without its partner (a "lone surrogate") is not a character at all: UTF-8 cannot encode
it, so JSON output, Arrow tables and tokenizers all refuse it. :func:`replace_lone_surrogates`
puts U+FFFD (the replacement character) in its place, one for one, so offsets into the text stay
valid, and counts them; :func:`chunklab.documents.load_bytes` applies it to the text of every
format and records the count in ``metadata["lone_surrogates"]``.

TeX typesets an accented letter it has no glyph for as two glyphs, a spacing accent and then
the letter ("M´etro", "co¨ordinator"); :func:`compose_accents` makes each such pair the
accented letter ("Métro", "coördinator"), where Unicode has it as one character.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "REPLACEMENT",
    "SPACING_ACCENTS",
    "combine_surrogates",
    "compose_accents",
    "replace_lone_surrogates",
    "surrogate_pair",
]

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


#: a spacing accent TeX draws before the letter it sits on -> the combining mark it stands for. ASCII
#: ` ^ ~ are left out: before a letter they are far more often code than an accent.
SPACING_ACCENTS = {
    "\u00b4": "\u0301",  # ´ acute
    "\u02ca": "\u0301",  # ˊ modifier acute
    "\u02cb": "\u0300",  # ˋ modifier grave
    "\u00a8": "\u0308",  # ¨ diaeresis
    "\u02c6": "\u0302",  # ˆ circumflex
    "\u02dc": "\u0303",  # ˜ tilde
    "\u00af": "\u0304",  # ¯ macron
    "\u02c9": "\u0304",  # ˉ modifier macron
    "\u02d8": "\u0306",  # ˘ breve
    "\u02d9": "\u0307",  # ˙ dot above
    "\u02da": "\u030a",  # ˚ ring above
    "\u02dd": "\u030b",  # ˝ double acute
    "\u02c7": "\u030c",  # ˇ caron
    "\u00b8": "\u0327",  # ¸ cedilla
    "\u02db": "\u0328",  # ˛ ogonek
}
#: TeX puts accents on the dotless i and j
_DOTLESS = {"\u0131": "i", "\u0237": "j"}
_ACCENT_LETTER = re.compile(f"([{''.join(SPACING_ACCENTS)}])([^\\W\\d_])")


def compose_accents(text: str) -> str:
    """``text`` with each spacing accent that comes right before a letter composed with it (NFC).

    "M\u00b4etro" becomes "Métro", "co\u00a8ordinator" "coördinator", "\u00b4\u0131" "í" (TeX accents
    the dotless i). A pair Unicode has no single character for is left as it is, and so is an
    accent before anything but a letter.
    """
    if not any(accent in text for accent in SPACING_ACCENTS):
        return text
    return _ACCENT_LETTER.sub(_compose, text)


def _compose(m: re.Match[str]) -> str:
    letter = _DOTLESS.get(m[2], m[2])
    composed = unicodedata.normalize("NFC", letter + SPACING_ACCENTS[m[1]])
    return composed if len(composed) == 1 else m[0]
