"""The one text scanner: Markdown blocks and headings, sentence ends, line numbers.

Every chunker that needs to know where a Markdown block, a heading, a sentence or a line
starts asks this module, so they all agree on the same file.

- :func:`markdown_blocks` partitions a text into blocks (front matter, ATX and setext
  headings, fenced code, GFM tables, paragraphs, blank runs) in one pass over its lines.
  Fences follow CommonMark: a fence opens with three or more backticks or tildes indented
  at most three spaces, and closes only on a line of the same character at least as long
  (an unclosed fence runs to the end), so a ``#`` line inside code is never a heading.
- :func:`split_sentences` finds sentences: Markdown blocks are boundaries, and inside prose
  one private rule (``_ends_sentence``) decides "a sentence ends here", for
  :func:`prose_sentences` and :func:`sentence_end_before` alike.
- :class:`LineIndex` maps offsets to 1-based line numbers and back.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from chunklab._validate import check_text

__all__ = [
    "NONSPACE",
    "Block",
    "LineIndex",
    "heading_path_at",
    "line_span",
    "markdown_blocks",
    "markdown_headings",
    "prose_sentences",
    "sentence_end_before",
    "split_sentences",
    "trim_span",
]

_NEWLINE_ANY = re.compile(r"\r\n|\r|\n")
#: the one pattern for "a character that is not whitespace" (blank tests, trimming spans)
NONSPACE = re.compile(r"\S")


class LineIndex:
    """Maps character offsets to 1-based line numbers (and back) in O(log n).

    Lines end at ``\\n`` only (as ``html.parser`` counts them), or with ``universal=True`` at
    ``\\n``, ``\\r\\n`` or a lone ``\\r`` (as Python's tokenizer and CommonMark count them).
    ``starts`` holds the offset where each line starts; ``edges`` is ``starts`` closed by
    ``len(source)`` (no empty last line after a final newline), so line ``k`` (1-based) spans
    ``edges[k - 1]:edges[k]`` and there are ``len(edges) - 1`` lines.
    """

    __slots__ = ("edges", "length", "starts")

    def __init__(self, source: str, *, universal: bool = False) -> None:
        self.length = len(source)
        if universal and "\r" in source:
            self.starts = [0, *(m.end() for m in _NEWLINE_ANY.finditer(source))]
        else:
            starts = [0]
            find = source.find
            pos = find("\n")
            while pos != -1:
                starts.append(pos + 1)
                pos = find("\n", pos + 1)
            self.starts = starts
        self.edges = self.starts if self.starts[-1] == self.length else [*self.starts, self.length]

    def line_of(self, offset: int) -> int:
        """The 1-based line that holds character ``offset``."""
        return bisect.bisect_right(self.starts, offset)

    def offset_of(self, line: int, col: int = 0) -> int:
        """The character offset of 1-based ``line`` and 0-based ``col``."""
        if line < 1:
            return 0
        if line > len(self.starts):
            return self.length
        return min(self.starts[line - 1] + col, self.length)


def line_span(text: str, edges: list[int], lo: int, hi: int) -> tuple[int, int]:
    """Offsets of 0-based lines ``lo..hi`` (``edges`` from :class:`LineIndex`), trimmed.

    The span starts at the first line that is not blank (at its start, indentation kept)
    and ends at the last non-whitespace character; ``(s, s)`` when all the lines are blank.
    """
    s = edges[lo]
    e = edges[hi + 1]
    m = NONSPACE.search(text, s, e)
    if m is None:
        return s, s
    p = m.start()
    if p > s:
        s = max(s, text.rfind("\n", s, p) + 1, text.rfind("\r", s, p) + 1)
    while e > p and text[e - 1].isspace():
        e -= 1
    return s, e


# -- Markdown blocks ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Block:
    """One Markdown block: lines ``first..last`` (0-based, inclusive), offsets ``[start, end)``.

    ``kind`` is ``"frontmatter"``, ``"heading"`` (with ``level`` and ``title``), ``"code"``
    (a fence, with its ``info`` string), ``"table"``, ``"para"`` or ``"blank"``. ``end`` is
    the start of the next line, so consecutive blocks meet exactly.
    """

    kind: str
    first: int
    last: int
    start: int
    end: int
    level: int = 0
    title: str = ""
    info: str = ""


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_TABLE_DELIM = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")


def markdown_blocks(text: str, lines: LineIndex | None = None) -> list[Block]:
    """The blocks of ``text`` in order; together they cover it exactly, without overlap.

    ``lines`` is the text's ``LineIndex(text, universal=True)`` when the caller has one.
    """
    edges = (lines or LineIndex(text, universal=True)).edges
    n = len(edges) - 1
    rows = [text[edges[i] : edges[i + 1]].rstrip("\r\n") for i in range(n)]
    if rows and rows[0].startswith("\ufeff"):
        rows[0] = rows[0][1:]
    out: list[Block] = []

    def add(kind: str, lo: int, hi: int, **extra: object) -> None:
        out.append(Block(kind, lo, hi, edges[lo], edges[hi + 1], **extra))  # type: ignore[arg-type]

    i = 0
    if rows and rows[0].rstrip() == "---":
        for j in range(1, n):
            if rows[j].rstrip() in ("---", "..."):
                add("frontmatter", 0, j)
                i = j + 1
                break
    if i == 0 and n and text.startswith("\ufeff") and not rows[0].strip():
        add("para", 0, 0)  # a lone byte-order mark: not whitespace, keep it
        i = 1
    para = -1  # first line of the open paragraph
    blank = -1  # first line of the open blank run

    def close(upto: int) -> None:
        nonlocal para, blank
        if para >= 0:
            add("para", para, upto)
            para = -1
        if blank >= 0:
            add("blank", blank, upto)
            blank = -1

    while i < n:
        line = rows[i]
        head = line.lstrip(" ")
        if not head.strip():
            if para >= 0:
                close(i - 1)
            if blank < 0:
                blank = i
            i += 1
            continue
        if blank >= 0:
            close(i - 1)
        c = head[0]
        indent = len(line) - len(head)
        if indent <= 3 and c in "`~":
            m = _FENCE.fullmatch(line)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                close(i - 1)
                end = _fence_end(rows, i, m.group(1))
                add("code", i, end, info=m.group(2).strip())
                i = end + 1
                continue
        if indent <= 3 and c == "#":
            m = _ATX.fullmatch(line)
            if m:
                close(i - 1)
                add("heading", i, i, level=len(m.group(1)), title=(m.group(2) or "").strip())
                i += 1
                continue
        if para >= 0 and indent <= 3 and c in "=-" and _SETEXT.fullmatch(line):
            title = " ".join(rows[k].strip() for k in range(para, i))
            if c == "=" or not title.lstrip().startswith(("- ", "* ", "+ ")):
                add("heading", para, i, level=1 if c == "=" else 2, title=title)
                para = -1
                i += 1
                continue
        if "|" in line and i + 1 < n and "-" in rows[i + 1] and _TABLE_DELIM.fullmatch(rows[i + 1]):
            if "|" in rows[i + 1] or line.strip().startswith("|"):
                close(i - 1)
                j = i + 2
                while j < n and rows[j].strip() and "|" in rows[j]:
                    j += 1
                add("table", i, j - 1)
                i = j
                continue
        if para < 0:
            para = i
        i += 1
    close(n - 1)
    return out


def _fence_end(rows: list[str], i: int, fence: str) -> int:
    """The line that closes the fence opened on line ``i`` (the last line when none does)."""
    mark = fence[0]
    for j in range(i + 1, len(rows)):
        row = rows[j]
        stripped = row.strip(" \t")
        if stripped.startswith(fence) and not stripped.strip(mark) and len(row) - len(row.lstrip(" ")) <= 3:
            return j
    return len(rows) - 1


def markdown_headings(md: str) -> list[tuple[int, int, str]]:
    """``(offset, level, title)`` of every ATX (``#``) and setext heading outside fenced code."""
    if not isinstance(md, str):
        raise ValueError(f"md must be a str, got {type(md).__name__}")
    return [(b.start, b.level, b.title) for b in markdown_blocks(md) if b.kind == "heading"]


def heading_path_at(headings: list[tuple[int, int, str]], offset: int) -> list[str]:
    """The section path (outermost first) in force at ``offset``, given :func:`markdown_headings`."""
    i = bisect.bisect_right([h[0] for h in headings], offset)
    stack: list[tuple[int, str]] = []
    for _off, level, title in headings[:i]:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    return [t for _lvl, t in stack if t]


# -- sentences ---------------------------------------------------------------------------------
_ABBREVIATIONS = frozenset(
    """mr mrs ms mx dr prof sr jr st vs etc e.g i.e cf approx ca mt gen col lt capt sgt rev hon dept
    ed eds al ph.d u.s u.k u.n e.u a.m p.m viz resp incl jan feb mar apr jun jul aug sep sept oct
    nov dec""".split()
)
#: abbreviations only when a number follows: "Fig. 3", "No. 5" (but "No. The app..." ends a sentence)
_NUMBER_ABBREVIATIONS = frozenset("no nos fig figs eq eqs vol vols p pp ref refs sec ch op art".split())
_DOTTED = re.compile(r"^(?:[A-Za-z]\.){1,}[A-Za-z]\.?$")
_ENUMERATOR = re.compile(r"[0-9]{1,3}")
_NUMBERED = re.compile(r"(?<!\S)([0-9]{1,3})\.(?=\s)")
_LOOK_BACK = 240  # characters an enumerator's context is read from
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+\S")
_CANDIDATE = re.compile(r"[.!?…]+[\"'”’)\]*_`]*(?=\s)|[。！？]+[」』”’)]*")
_CLOSERS = "\"'”’)]*_`"
_RUN_AT_END = re.compile(r"(?:[.!?…]+[\"'”’)\]*_`]*|[。！？]+[」』”’)]*)\Z")
_ATOMIC = frozenset({"heading", "code", "table", "frontmatter"})


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of ``text``, trimmed, covering all its words.

    Blank lines, Markdown headings, list items, tables and fenced code blocks are always
    boundaries (a fenced block or a table is one unit); inside prose a sentence ends at
    ``.``, ``!`` or ``?`` followed by whitespace and not by a lowercase letter, unless
    the word before is an abbreviation (Dr., e.g., U.S., Fig.), an initial or the number
    of a list item ("1." opening a line, after a colon or in a run "1. ... 2. ..."; a
    number after a word, "line 3. The", ends one). Periods with no whitespace after them
    (3.14, example.com/a.html, setup.py) never end a sentence.
    """
    text = check_text(text)
    spans: list[tuple[int, int]] = []
    lines = LineIndex(text, universal=True)
    edges = lines.edges
    for block in markdown_blocks(text, lines):
        if block.kind in _ATOMIC:
            _append_trimmed(text, block.start, block.end, spans)
        elif block.kind == "para":
            s = block.start
            # a list item starts a new run
            for k in range(block.first + 1, block.last + 1):
                if _LIST_ITEM.match(text, edges[k]):
                    spans.extend(prose_sentences(text, s, edges[k]))
                    s = edges[k]
            spans.extend(prose_sentences(text, s, block.end))
    return spans


def prose_sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The trimmed sentence spans of the prose ``text[start:end]`` (by the one sentence rule)."""
    out: list[tuple[int, int]] = []
    s = start
    for m in _CANDIDATE.finditer(text, start, end):
        cut = m.end()
        if _ends_sentence(text, s, m.start(), m.group(), cut, end):
            _append_trimmed(text, s, cut, out)
            s = cut
    _append_trimmed(text, s, end, out)
    return out


def _ends_sentence(text: str, s: int, p: int, punct: str, cut: int, end: int) -> bool:
    """Whether the punctuation run ``punct`` at ``text[p:cut]`` ends the sentence begun at ``s``.

    ``end`` bounds the look-ahead. CJK full stops always end one; otherwise a lowercase
    letter next means no, ``!``/``?``/``…`` before anything else means yes, and a period
    ends a sentence unless the word before it is an abbreviation, an initial or dotted.
    """
    if punct[0] in "。！？":
        return True
    j = cut
    while j < end and text[j].isspace():
        j += 1
    if j >= end:
        return True
    nxt = text[j]
    if nxt.islower():
        return False  # "e.g. this", "about 3 p.m. and"
    if punct.rstrip(_CLOSERS) != ".":
        return True  # "!", "?", "..." before a capital
    word_start = p
    while word_start > s and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:p].lstrip("(\"'“‘[")
    low = word.lower()
    if low in _ABBREVIATIONS or (low in _NUMBER_ABBREVIATIONS and nxt.isdigit()):
        return False
    if _ENUMERATOR.fullmatch(word) and _is_enumerator(text, s, p - len(word), int(word)):
        return False  # "1. Open the file", "To open a dispute: 1. Find the line"
    if len(word) == 1 and word.isalpha() and word.isupper():
        return False  # an initial: "J. Smith"
    if _DOTTED.match(word + "."):
        return False  # U.S., e.g., Ph.D.
    return True


def _is_enumerator(text: str, s: int, w: int, n: int) -> bool:
    """Whether the number ``n`` at ``text[w]``, followed by a period, numbers an item of a list.

    It does when it opens its line (``s`` bounds the look-back) or follows a colon, a
    semicolon or a sentence's closing punctuation (not "Fig." or "No.": "see Fig. 3. The"
    ends a sentence), or when ``n - 1`` numbered the item before it on the same line with no
    punctuation between ("Do this: 1. Open the file 2. Read it"). A number after a word
    ("on line 3. The belt") is the end of a sentence. The look-back is bounded, so a long
    line costs linear time.
    """
    floor = max(s, w - _LOOK_BACK)
    while True:
        lo = max(floor, text.rfind("\n", floor, w) + 1, text.rfind("\r", floor, w) + 1)
        before = text[lo:w].rstrip()
        if not before or before[-1] in ":;":
            return True
        run = _RUN_AT_END.search(before)
        if run is not None:
            prev = before[: run.start()].rsplit(None, 1)[-1:] or [""]
            word = prev[0].lstrip("(\"'“‘[").lower()
            return run.group()[0] != "." or word not in _NUMBER_ABBREVIATIONS
        marks = [m for m in _NUMBERED.finditer(before) if int(m.group(1)) == n - 1]
        if n < 2 or not marks or _CANDIDATE.search(before + " ", marks[-1].end()):
            return False
        w, n = lo + marks[-1].start(), n - 1


def sentence_end_before(text: str, pos: int) -> bool:
    """Whether a sentence ends at ``pos`` (whitespace before it skipped), by :func:`prose_sentences`'s rule.

    The word before the punctuation is read from the line that holds it; what follows
    ``pos`` decides the rest (a lowercase letter next continues the sentence).
    """
    e = pos
    while e > 0 and text[e - 1].isspace():
        e -= 1
    line_start = max(text.rfind("\n", 0, e), text.rfind("\r", 0, e)) + 1
    m = _RUN_AT_END.search(text, line_start, e)
    if m is None or (m.group()[0] not in "。！？" and e < len(text) and not text[e].isspace()):
        return False  # no punctuation, or a period inside a token ("3.14", "setup.py")
    return _ends_sentence(text, line_start, m.start(), m.group(), e, len(text))


def trim_span(source: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` so that it neither starts nor ends with whitespace."""
    while start < end and source[start].isspace():
        start += 1
    while end > start and source[end - 1].isspace():
        end -= 1
    return start, end


def _append_trimmed(text: str, s: int, e: int, out: list[tuple[int, int]]) -> None:
    s, e = trim_span(text, s, e)
    if s < e:
        out.append((s, e))
