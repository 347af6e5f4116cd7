"""Recursive chunking: cut at the strongest separator that keeps a chunk within budget.

From each chunk's start, the window of ``size`` units is searched for the last paragraph
break; failing that the last line break, sentence end, space, and finally any character.
Separators stay with the text they end. Overlap is real: the next chunk starts inside the
previous one, at the earliest word boundary within ``overlap`` units of its end, even
when the previous chunk ended on a paragraph break (the case where LangChain's
RecursiveCharacterTextSplitter silently drops the overlap).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from chunklab._validate import (
    check_doc_id,
    check_non_negative_int,
    check_positive_int,
    check_text,
    renamed_keyword,
)
from chunklab.chunk import Chunk, make_chunk
from chunklab.chunkers.fixed import check_window_args
from chunklab.text import NONSPACE, prose_sentences
from chunklab.units import UnitIndex, check_unit, count_tokens, is_token_unit, over_budget, unit_params

#: ``(b, e, s) -> position``: a boundary or overlap start finder built for one text
_Finder = Callable[[int, int, int], int]

#: Paragraph, line, sentence end, word, character. A level may hold several separators.
DEFAULT_SEPARATORS: tuple[str | tuple[str, ...], ...] = (
    "\n\n",
    "\n",
    (". ", "! ", "? ", "; ", "。", "！", "？"),
    (" ", "\t"),
    "",
)
LEVEL_NAMES = ("paragraph", "line", "sentence", "word", "char")


def chunk_recursive(
    text: str,
    size: int,
    overlap: int = 0,
    unit: str = "chars",
    separators: Sequence[str | Sequence[str]] | None = None,
    doc_id: str = "doc",
    *,
    strategy: str = "recursive",
) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``size`` units, cut at the best separator.

    ``separators`` is a list of levels, strongest first; each level is a string or a
    list of strings; ``""`` means "anywhere" (the last resort). ``overlap`` units of
    each chunk's tail (rounded to a word boundary when one exists) start the next chunk.
    """
    text, size, overlap, doc_id = check_window_args(text, size, overlap, unit, doc_id)
    levels, names = _levels(separators)
    params: dict[str, object] = {"size": size, "overlap": overlap, "unit": unit}
    if separators is not None:
        params["separators"] = [list(lv) for lv in levels]
    spans = recursive_spans(text, size, overlap, unit, levels)
    chunks: list[Chunk] = []
    tokens = is_token_unit(unit)  # once, not per chunk
    no_overlap = "whitespace between the chunks is longer than the size"
    for i, (s, e, level, shared) in enumerate(spans):
        meta: dict[str, object] = {
            "strategy": strategy,
            "params": params,
            "index": i,
            "cut": names[level],
        }
        if overlap and i:
            if shared:
                meta["overlap_chars"] = shared
            else:
                meta["no_overlap_reason"] = no_overlap
        if tokens and count_tokens(text[s:e], unit) > size:
            meta["oversize"] = True
            why = "a word cut between word pieces re-tokenizes longer"
            meta["oversize_reason"] = why
        chunks.append(make_chunk(text, s, e, doc_id, meta))
    return chunks


def _levels(separators):
    if separators is None:
        return [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS], list(LEVEL_NAMES)
    if isinstance(separators, str) or not isinstance(separators, Sequence):
        raise ValueError("separators must be a list of strings (or of lists of strings)")
    levels: list[tuple[str, ...]] = []
    for sep in separators:
        group = (sep,) if isinstance(sep, str) else tuple(sep)
        if not group or not all(isinstance(x, str) for x in group):
            raise ValueError(f"separators: each level must be a string or a list of strings, got {sep!r}")
        levels.append(group)
    if not levels or levels[-1] != ("",):
        levels.append(("",))  # the last resort keeps every chunk within budget
    names = [repr(lv[0]) if len(lv) == 1 else repr(list(lv)) for lv in levels]
    names[-1] = "char"
    return levels, names


def recursive_spans(
    text: str,
    size: int,
    overlap: int,
    unit: str,
    levels: Sequence[tuple[str, ...]],
    index: UnitIndex | None = None,
) -> list[tuple[int, int, int, int]]:
    """The chunk spans as ``(start, end, level of the cut, characters shared)``.

    The shared characters are those each chunk repeats from the previous one.

    ``index`` measures ``text`` in ``unit`` when the caller has one (``UnitIndex.slice``
    of the whole document, so a piece counts what it counts in place); else ``text`` is
    encoded. In characters the walk is :func:`_char_spans` (the same cuts as
    :func:`_unit_spans`, the unit arithmetic inlined); in other units, ``_unit_spans``.
    """
    if unit == "chars":
        return _char_spans(text, size, overlap, levels)
    idx = index if index is not None else UnitIndex(text, unit)
    return _unit_spans(text, size, overlap, levels, idx)


def _unit_spans(
    text: str,
    size: int,
    overlap: int,
    levels: Sequence[tuple[str, ...]],
    idx: UnitIndex,
) -> list[tuple[int, int, int, int]]:
    """:func:`recursive_spans` in the unit of ``idx``: the reference walk, any unit."""
    first = NONSPACE.search(text)
    if first is None:
        return []
    first_boundary = _boundary_finder(text, levels[:-1])
    out: list[tuple[int, int, int, int]] = []
    s = lo = first.start()  # lo: a cut must lie after it (new text past the overlap)
    shared = 0
    while True:
        end, level = _cut(text, lo, idx.limit(s, size), levels)
        e = s + len(text[s:end].rstrip())
        out.append((s, e, level, shared))
        following = NONSPACE.search(text, end)
        if following is None:
            return out
        lo = following.start()
        s, shared = lo, 0
        if overlap:  # start inside the chunk, at a word within `overlap` of its end
            b = max(idx.back(e, overlap), out[-1][0] + 1)
            boundary = first_boundary(b, e, out[-1][0])
            word = NONSPACE.search(text, boundary, e)
            if word is not None and idx.limit(word.start(), size) > lo:
                s, shared = word.start(), e - word.start()


def _cut(
    text: str,
    lo: int,
    limit: int,
    levels: Sequence[tuple[str, ...]],
) -> tuple[int, int]:
    """Where a chunk ending by ``limit`` ends, and the level of its cut.

    The strongest level with a separator in ``[lo, limit)`` (cut after the last one),
    else ``limit`` itself (the last level, "anywhere").
    """
    if limit >= len(text):
        return len(text), 0
    for li, group in enumerate(levels[:-1]):
        found = [text.rfind(sep, lo, limit) for sep in group]
        ends = [p + len(sep) for p, sep in zip(found, group) if p != -1]
        if ends and max(ends) > lo:
            return max(ends), li
    return limit, len(levels) - 1


def _char_spans(
    text: str, size: int, overlap: int, levels: Sequence[tuple[str, ...]]
) -> list[tuple[int, int, int, int]]:
    """:func:`_unit_spans` in characters, the kit's hot path: the same spans, fewer steps per chunk.

    A level of one separator is one ``rfind``; with the default separators, the overlap's start
    (the first non-space after the earliest boundary) is one regex search, not two: a chunk
    ends on a non-space character, so ``boundary\\s*`` stops on a non-space before the chunk's end.
    A hypothesis test checks that both walks give the same spans.
    """
    n = len(text)
    nonspace = NONSPACE.search
    m = nonspace(text)
    if m is None:
        return []
    s = m.start()
    rfind = text.rfind
    last = len(levels) - 1
    # (level, separator, width, ()) for a level of one non-empty separator; (level, None, 0, group) else
    cuts: list[tuple[int, str | None, int, tuple[str, ...]]] = [
        (li, g[0], len(g[0]), ()) if len(g) == 1 and g[0] else (li, None, 0, tuple(g))
        for li, g in enumerate(levels[:last])
    ]
    overlap_start = _overlap_start_finder(text, levels[:last])
    out: list[tuple[int, int, int, int]] = []
    append = out.append
    lo = s  # a cut must lie after this position (new text beyond the overlap)
    shared = 0
    while True:
        limit = s + size
        if limit >= n:
            end, level = n, 0
        else:
            end, level = limit, last
            for li, sep, width, group in cuts:
                if sep is not None:
                    p = rfind(sep, lo, limit)
                    if p != -1:  # p >= lo, so the cut p + width lies after lo
                        end, level = p + width, li
                        break
                    continue
                best = max((p + len(x) for x in group if (p := rfind(x, lo, limit)) != -1), default=-1)
                if best > lo:
                    end, level = best, li
                    break
        e = s + len(text[s:end].rstrip())
        append((s, e, level, shared))
        m = nonspace(text, end)
        if m is None:
            break
        ns = m.start()
        nxt = ns
        shared = 0
        if overlap:
            b = e - overlap
            if b <= s:
                b = s + 1
            cand = overlap_start(b, e, s)
            if cand < e and cand + size > ns:
                nxt = cand
                shared = e - cand
        s = nxt
        lo = ns
    return out


def _overlap_start_finder(text: str, levels: Sequence[tuple[str, ...]]) -> _Finder:
    """A function giving where the overlap of a chunk ending at ``e`` starts: the first non-space
    after the earliest boundary in ``[b, e)`` (after ``b`` when there is none); ``e`` when none.

    ``e`` is a chunk's end, so ``text[e - 1]`` is not a space.
    """
    nonspace = NONSPACE.search
    ends = _boundary_class(levels)
    if ends is not None:  # see _boundary_finder
        search = re.compile(ends + r"\s*").search

        def fast(b: int, e: int, s: int) -> int:
            m = search(text, b - 1, e - 1)
            if m is not None:
                return m.end()  # stops on a non-space: at text[e - 1] at the latest
            m = nonspace(text, b, e)
            return e if m is None else m.start()

        return fast
    first_boundary = _boundary_finder(text, levels)

    def general(b: int, e: int, s: int) -> int:
        m = nonspace(text, first_boundary(b, e, s), e)
        return e if m is None else m.start()

    return general


def _boundary_class(levels: Sequence[tuple[str, ...]]) -> str | None:
    """The regex character class of the one-character separators, when every separator ends with one.

    True of the defaults (all end in a space, tab or newline): the earliest boundary is then
    the position after the first such character. ``None`` when some separator does not.
    """
    seps = [sep for group in levels for sep in group if sep]
    singles = {sep for sep in seps if len(sep) == 1}
    if seps and all(sep[-1] in singles for sep in seps):
        return "[" + re.escape("".join(sorted(singles))) + "]"
    return None


def _boundary_finder(text: str, levels: Sequence[tuple[str, ...]]) -> _Finder:
    """A function giving the earliest separator boundary in ``[b, e)`` (``b`` if there is none).

    With :func:`_boundary_class`, one regex search; else one ``find`` per separator.
    """
    seps = [sep for group in levels for sep in group if sep]
    ends = _boundary_class(levels)
    if ends is not None:
        search = re.compile(ends).search

        def fast(b: int, e: int, s: int) -> int:
            m = search(text, b - 1, e - 1)
            return m.end() if m is not None else b

        return fast
    find = text.find
    widths = [(sep, len(sep)) for sep in seps]

    def general(b: int, e: int, s: int) -> int:
        cand = -1
        for sep, width in widths:
            p = find(sep, max(b - width, s), e)
            if p != -1 and b <= p + width < e and (cand == -1 or p + width < cand):
                cand = p + width
        return b if cand == -1 else cand

    return general


@renamed_keyword("max_chars", "max_size")
def pack_paragraphs(
    text: str,
    max_size: int,
    overlap_paragraphs: int = 1,
    doc_id: str = "doc",
    *,
    unit: str = "chars",
) -> list[Chunk]:
    """The course's paragraph packer: whole paragraphs per chunk and as overlap.

    Paragraphs (separated by blank lines) are packed greedily up to ``max_size``. A
    paragraph longer than ``max_size`` is split into sentences by
    :func:`chunklab.text.prose_sentences` (and a sentence longer than that by
    :func:`chunk_recursive`). Each chunk starts by repeating the last
    ``overlap_paragraphs`` units of the previous one, but fewer when repeating them
    would push the chunk past ``max_size``: the limit always wins. ``max_size`` counts
    characters, or the units of ``unit`` (``size(s, e)`` measures ``text[s:e]``).
    """
    text = check_text(text)
    max_size = check_positive_int(max_size, "max_size")
    check_non_negative_int(overlap_paragraphs, "overlap_paragraphs")
    doc_id = check_doc_id(doc_id)
    params = {
        "max_chars": max_size,
        "overlap_paragraphs": overlap_paragraphs,
        **unit_params(check_unit(unit)),
    }
    index = UnitIndex(text, unit)
    size = index.count
    units = paragraph_units(text, max_size, index)
    chunks: list[Chunk] = []
    i = 0
    reason = ""
    while i < len(units):
        j = i + 1
        while j < len(units) and size(units[i][0], units[j][1]) <= max_size:
            j += 1
        s, e = units[i][0], units[j - 1][1]
        meta: dict[str, object] = {
            "strategy": "paragraphs",
            "params": params,
            "index": len(chunks),
            "units": j - i,
        }
        if reason:
            meta["no_overlap_reason"] = reason
        # only a piece that re-tokenizes longer on its own
        if over_budget(text[s:e], max_size, unit):
            meta["oversize"] = True
        chunks.append(Chunk(text[s:e], s, e, doc_id, meta))
        if j >= len(units):
            break
        k = j
        while j - k < overlap_paragraphs and k - 1 > i:
            if size(units[k - 1][0], units[j][1]) > max_size:
                break
            k -= 1
        reason = ""
        if overlap_paragraphs and k == j:
            reason = "repeating a paragraph would push the next chunk past max_chars"
        i = k
    return chunks


_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")


def paragraph_units(text: str, max_size: int, index: UnitIndex) -> list[tuple[int, int]]:
    """Paragraph spans, with over-long paragraphs replaced by their sentences (or pieces)."""
    size = index.count
    units: list[tuple[int, int]] = []
    pos = 0
    bounds = [(m.start(), m.end()) for m in _PARAGRAPH_BREAK.finditer(text)] + [(len(text), len(text))]
    for brk_start, brk_end in bounds:
        seg = text[pos:brk_start]
        if seg.strip():
            ps = pos + len(seg) - len(seg.lstrip())
            pe = pos + len(seg.rstrip())
            if size(ps, pe) <= max_size:
                units.append((ps, pe))
            else:
                units.extend(_sentence_units(text, ps, pe, max_size, index))
        pos = brk_end
    return units


def _sentence_units(
    text: str, start: int, end: int, max_size: int, index: UnitIndex
) -> list[tuple[int, int]]:
    """The sentences of a paragraph (by :func:`chunklab.text.prose_sentences`), long ones cut."""
    out: list[tuple[int, int]] = []
    for ss, se in prose_sentences(text, start, end):
        if index.count(ss, se) <= max_size:
            out.append((ss, se))
        else:
            sub = None if index.unit == "chars" else index.slice(ss, se)
            for a, b, _lvl, _sh in recursive_spans(
                text[ss:se], max_size, 0, index.unit, _levels(None)[0], sub
            ):
                out.append((ss + a, ss + b))
    return out
