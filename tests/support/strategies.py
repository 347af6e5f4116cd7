"""Hypothesis strategies for nasty text: the inputs chunkers meet in the wild."""

from __future__ import annotations

from hypothesis import strategies as st

NASTY_PIECES = [
    "",
    " ",
    "\n",
    "\n\n",
    "\r\n",
    "\r\n\r\n",
    "\t",
    "\ufeff",
    "\u00a0",
    "\u200b",
    "e\u0301",  # combining accent
    "👩‍👩‍👧",  # emoji ZWJ sequence
    "🇫🇷",
    ". ",
    "! ",
    "? ",
    "...",
    "x" * 200,
    "Mr. Smith paid $3.50 at 9 a.m. on 2024-01-05.",
    "def f(x):\n    return x\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "   \n   \n",
    "\x00",
    "\x0c",
    "中文句子。第二句！",
]

words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0x1FAFF),
    min_size=0,
    max_size=12,
)
piece = st.one_of(st.sampled_from(NASTY_PIECES), words)

#: Text assembled from nasty pieces and random words.
nasty_text = st.lists(piece, min_size=0, max_size=60).map("".join)

#: A single very long word (no separator at all) embedded in some text.
long_word_text = st.tuples(nasty_text, st.integers(300, 10_000), nasty_text).map(
    lambda t: t[0] + "w" * t[1] + t[2]
)

any_text = st.one_of(nasty_text, long_word_text, st.text(max_size=400))


def joined_lines(pieces, *, line_size: int, max_lines: int, newlines=("\n", "\r\n")):
    """Lines drawn from ``pieces`` or random text (``line_size`` at most), joined by one newline style
    drawn from ``newlines``, with a BOM in front half of the time: a format's own lines, mistreated."""

    @st.composite
    def text(draw):
        lines = draw(
            st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=line_size)), max_size=max_lines)
        )
        newline = draw(st.sampled_from(newlines))
        out = newline.join(lines)
        if draw(st.booleans()):
            out = "\ufeff" + out
        return out

    return text()
