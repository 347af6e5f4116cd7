"""The visible text of one HTML block, character by character, with the raw offset each character comes from.

:func:`char_map` is what lets :mod:`chunklab.chunkers.structural.html` cut a block's text anywhere and
still give the exact offset of the cut in the markup (character references included).
"""

from __future__ import annotations

import bisect
import html as html_lib
import re

from chunklab.chunkers.structural.html.tags import Block

# the character references html.unescape replaces (same pattern as the standard library's)
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")


def char_map(block: Block, src: str, events: list[int]) -> tuple[str, list[int], list[bool]]:
    """The block's text with, per character, its raw offset and whether a cut may fall before it.

    Character data is matched against its raw slice (which ends where the next token
    starts): literal characters map one to one, a character reference maps to its ``&``
    and only its first character may start a piece. Whitespace is then collapsed and
    stripped exactly as :func:`_normalize` does.
    """
    chars: list[str] = []
    pos: list[int] = []
    ok: list[bool] = []
    n = len(src)
    for part, where in zip(block.parts, block.where):
        is_data = where >= 0
        at = where if is_data else ~where
        if is_data:
            k = bisect.bisect_right(events, at)
            raw = src[at : events[k] if k < len(events) else n]
            if raw == part:
                chars.extend(part)
                pos.extend(range(at, at + len(part)))
                ok.extend([True] * len(part))
                continue
            if html_lib.unescape(raw) == part:
                p = 0
                for m in _CHARREF.finditer(raw):
                    lit = raw[p : m.start()]
                    chars.extend(lit)
                    pos.extend(range(at + p, at + m.start()))
                    ok.extend([True] * len(lit))
                    ref = m.group()
                    rep = html_lib.unescape(ref)
                    # an unknown name stays as it is, and "&notit" gives "\u00acit": characters
                    # that unescape kept map to themselves, the expansion to the "&"
                    keep = 0
                    if rep == ref:
                        keep = len(ref)
                    else:
                        while (
                            keep < len(rep) - 1 and keep < len(ref) - 1 and rep[-1 - keep] == ref[-1 - keep]
                        ):
                            keep += 1
                    grown = len(rep) - keep
                    chars.extend(rep)
                    pos.extend([at + m.start()] * grown)
                    pos.extend(range(at + m.end() - keep, at + m.end()))
                    ok.extend([True] + [False] * (grown - 1) if grown else [])
                    ok.extend([True] * keep)
                    p = m.end()
                lit = raw[p:]
                chars.extend(lit)
                pos.extend(range(at + p, at + len(raw)))
                ok.extend([True] * len(lit))
                continue
        # synthetic separators (cells, <br>) and data the parser passed through otherwise
        chars.extend(part)
        pos.extend([at] * len(part))
        ok.extend([True] + [False] * (len(part) - 1) if is_data else [True] * len(part))
    triples = list(zip(chars, pos, ok))
    if not block.pre:
        collapsed = []
        in_ws = False
        for t in triples:
            if t[0].isspace():
                if not in_ws:
                    collapsed.append((" ", t[1], t[2]))
                in_ws = True
            else:
                collapsed.append(t)
                in_ws = False
        triples = collapsed
    triples = _strip(triples)
    if any(t[0] == "\ufeff" for t in triples):
        triples = _strip([t for t in triples if t[0] != "\ufeff"])
    text = "".join(t[0] for t in triples)
    if text != block.text:
        raise RuntimeError("internal error: character map disagrees with the block text")
    return text, [t[1] for t in triples], [t[2] for t in triples]


def _strip(triples: list[tuple[str, int, bool]]) -> list[tuple[str, int, bool]]:
    a, b = 0, len(triples)
    while a < b and triples[a][0].isspace():
        a += 1
    while b > a and triples[b - 1][0].isspace():
        b -= 1
    return triples[a:b]
