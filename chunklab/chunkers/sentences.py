"""Sentence packing: whole sentences up to a budget, whole sentences as overlap.

The survey's "sentence/paragraph" method. Sentences come from the kit's one sentence rule
(:func:`chunklab.text.split_sentences`: Markdown blocks are boundaries, a fenced code block
or a table is one unit, and inside prose ``_ends_sentence`` decides), so this strategy, the
semantic chunker and the recursive chunker's sentence level agree on where a sentence ends.

Sentences are packed greedily while the chunk, measured from its first character to its
last, stays within ``size`` units (characters, words or model tokens). Each chunk after the
first starts by repeating the last ``overlap_sentences`` sentences of the previous one,
fewer when repeating them would leave no room for a new sentence; then the chunk records
``no_overlap_reason``. A single sentence longer than ``size`` is cut by
:func:`chunklab.chunkers.recursive.chunk_recursive` into pieces that fit, and the chunks
made of those pieces say ``cut_sentence``.
"""

from __future__ import annotations

from chunklab._validate import check_doc_id, check_non_negative_int, check_positive_int, check_text
from chunklab.chunk import Chunk
from chunklab.text import split_sentences
from chunklab.units import UnitIndex, check_unit, over_budget, unit_params

__all__ = ["chunk_sentences", "sentence_units"]


def sentence_units(text: str, size: int, index: UnitIndex) -> list[tuple[int, int, bool]]:
    """``(start, end, cut)`` for each sentence of ``text``; a sentence over ``size`` comes in cut pieces."""
    from chunklab.chunkers.recursive import chunk_recursive

    out: list[tuple[int, int, bool]] = []
    for s, e in split_sentences(text):
        if index.count(s, e) <= size:
            out.append((s, e, False))
            continue
        for piece in chunk_recursive(text[s:e], size, 0, index.unit, doc_id="sentence"):
            out.append((s + piece.start, s + piece.end, True))
    return out


def chunk_sentences(
    text: str,
    size: int = 1000,
    overlap_sentences: int = 1,
    doc_id: str = "doc",
    *,
    unit: str = "chars",
) -> list[Chunk]:
    """Chunks of whole sentences, each at most ``size`` units, overlapping by whole sentences.

    ``size`` counts characters, words or model tokens (``unit``); a chunk spans from its
    first sentence's first character to its last sentence's last, and that span is what is
    measured. ``overlap_sentences`` sentences of a chunk's end open the next chunk, as many
    as fit with at least one new sentence. Metadata: ``strategy``, ``params``, ``index``,
    ``sentences`` (how many units), ``overlap`` (how many repeated), and where relevant
    ``cut_sentence``, ``oversize`` and ``no_overlap_reason``.
    """
    text = check_text(text)
    size = check_positive_int(size, "size")
    check_non_negative_int(overlap_sentences, "overlap_sentences")
    doc_id = check_doc_id(doc_id)
    params = {"size": size, "overlap_sentences": overlap_sentences, **unit_params(check_unit(unit))}
    index = UnitIndex(text, unit)
    units = sentence_units(text, size, index)
    chunks: list[Chunk] = []
    first, repeated, reason = 0, 0, ""
    while first < len(units):
        last = first  # the chunk holds units[first..last]
        while last + 1 < len(units) and index.count(units[first][0], units[last + 1][1]) <= size:
            last += 1
        start, end = units[first][0], units[last][1]
        meta: dict[str, object] = {
            "strategy": "sentences",
            "params": params,
            "index": len(chunks),
            "sentences": last - first + 1,
            "overlap": repeated,
        }
        if any(cut for _s, _e, cut in units[first : last + 1]):
            meta["cut_sentence"] = True
        if reason:
            meta["no_overlap_reason"] = reason
        if over_budget(text[start:end], size, unit):  # a piece that re-tokenizes longer alone
            meta["oversize"] = True
        chunks.append(Chunk(text[start:end], start, end, doc_id, meta))
        if last + 1 >= len(units):
            break
        first, repeated, reason = _next_start(units, first, last, overlap_sentences, size, index)
    return chunks


def _next_start(
    units: list[tuple[int, int, bool]], first: int, last: int, want: int, size: int, index: UnitIndex
) -> tuple[int, int, str]:
    """Where the next chunk starts: up to ``want`` units back from ``last``, leaving room for one more."""
    new = last + 1
    k = new
    while new - k < want and k - 1 > first and index.count(units[k - 1][0], units[new][1]) <= size:
        k -= 1
    reason = ""
    if want and k == new:
        reason = "repeating a sentence would leave no room for the next one within size"
    return k, new - k, reason
