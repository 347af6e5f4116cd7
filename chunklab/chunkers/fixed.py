"""Fixed-size chunking: windows of N characters, words or model tokens, with overlap.

The baseline every other strategy has to beat. Offsets are exact in every unit: a chunk's
text is always ``text[start:end]``.
"""

from __future__ import annotations

from chunklab._validate import check_doc_id, check_overlap, check_positive_int, check_text
from chunklab.chunk import Chunk
from chunklab.units import UnitIndex, check_unit, count_tokens, tokenizer_for


def chunk_fixed(
    text: str,
    size: int,
    overlap: int = 0,
    unit: str = "chars",
    doc_id: str = "doc",
    *,
    strategy: str = "fixed",
) -> list[Chunk]:
    """Split ``text`` into windows of ``size`` units; each repeats ``overlap`` units.

    ``unit`` is ``"chars"``, ``"words"`` (whitespace-separated), ``"tokens"`` (tokens of
    the packaged MiniLM tokenizer) or ``"tokenizer:PATH"`` (of a ``tokenizer.json``).
    Token windows cut between words, never inside one, so a chunk re-tokenizes to the
    count it was built with; a single word longer than ``size`` tokens is cut between
    its word pieces and marked ``oversize`` if it then re-tokenizes longer. Windows
    holding only whitespace are skipped.
    """
    text, size, overlap, doc_id = check_window_args(text, size, overlap, unit, doc_id)
    params = {"size": size, "overlap": overlap, "unit": unit}
    if unit == "chars":
        spans = _char_windows(text, size, overlap)
    elif unit == "words":
        spans = _word_windows(text, size, overlap)
    else:
        spans = _token_windows(text, size, overlap, unit)
    chunks: list[Chunk] = []
    prev_end = -1
    for i, (s, e, extra) in enumerate(spans):
        meta: dict[str, object] = {
            "strategy": strategy,
            "params": params,
            "index": i,
            "unit": unit,
        }
        if extra:
            meta.update(extra)
        if overlap and chunks and s >= prev_end and "no_overlap_reason" not in meta:
            why = "the text between the windows is whitespace only"
            meta["no_overlap_reason"] = why
        chunks.append(Chunk(text[s:e], s, e, doc_id, meta))
        prev_end = e
    return chunks


def check_window_args(
    text: str, size: int, overlap: int, unit: str, doc_id: str
) -> tuple[str, int, int, str]:
    """The arguments of the window chunkers (fixed, recursive), checked: ``(text, size, overlap, doc_id)``.

    A ValueError names the parameter and value refused; ``overlap`` may not reach ``size``.
    """
    text = check_text(text)
    size = check_positive_int(size, "size")
    overlap = check_overlap(overlap, size)
    check_unit(unit)
    return text, size, overlap, check_doc_id(doc_id)


def sliding_window(
    text: str, window: int, stride: int, unit: str = "chars", doc_id: str = "doc"
) -> list[Chunk]:
    """Windows of ``window`` units, one every ``stride`` (overlap ``window - stride``).

    ``stride`` must be in ``[1, window]``: a longer stride would skip text.
    """
    window = check_positive_int(window, "window")
    stride = check_positive_int(stride, "stride")
    if stride > window:
        why = "text would be skipped"
        raise ValueError(f"stride ({stride}) must not exceed window ({window}): {why}")
    return chunk_fixed(text, window, window - stride, unit, doc_id, strategy="sliding")


def _char_windows(text: str, size: int, overlap: int):
    n = len(text)
    step = size - overlap
    start = 0
    while start < n:
        end = min(start + size, n)
        if not text[start:end].isspace():
            yield start, end, None
        if end == n:
            break
        start += step


def _word_windows(text: str, size: int, overlap: int):
    index = UnitIndex(text, "words")  # the words every unit of chunklab.units counts
    words = list(zip(index.starts, index.ends, strict=True))
    step = size - overlap
    i = 0
    while i < len(words):
        j = min(i + size, len(words))
        yield words[i][0], words[j - 1][1], None
        if j == len(words):
            break
        i += step


def _token_windows(text: str, size: int, overlap: int, unit: str = "tokens"):
    """Pack whole pre-tokenized words into windows of at most ``size`` tokens."""
    if not text.strip():
        return
    enc = tokenizer_for(unit).encode(text, add_special_tokens=False)
    # Group tokens into the tokenizer's own words (whitespace and punctuation split).
    words: list[list[int]] = []  # [start, end, tokens]
    pieces: list[list[tuple[int, int]]] = []
    last_wid = None
    for (s, e), wid in zip(enc.offsets, enc.word_ids):
        if e <= s:
            continue
        if wid is not None and wid == last_wid and words:
            words[-1][1] = e
            words[-1][2] += 1
            pieces[-1].append((s, e))
        else:
            words.append([s, e, 1])
            pieces.append([(s, e)])
        last_wid = wid
    # Characters the tokenizer drops (control characters, for instance) must not be lost:
    # extend each word to the start of the next non-space character run it owns.
    units: list[tuple[int, int, int, bool]] = []  # start, end, tokens, split piece
    for (s, e, t), toks in zip(words, pieces):
        if t <= size:
            units.append((s, e, t, False))
        else:
            units.extend(_split_word(toks, size))
    units = _absorb_untokenized(text, units)
    i = 0
    n_units = len(units)
    carry: dict | None = None
    while i < n_units:
        total = 0
        j = i
        while j < n_units and total + units[j][2] <= size:
            total += units[j][2]
            j += 1
        j = max(j, i + 1)  # every unit holds at most `size` tokens; guard against loops
        s, e = units[i][0], units[j - 1][1]
        extra = dict(carry) if carry else {}
        carry = None
        if any(u[3] for u in units[i:j]) and count_tokens(text[s:e], unit) > size:
            extra["oversize"] = True
            extra["oversize_reason"] = f"a single word of more than {size} tokens"
        if not text[s:e].isspace():  # byte-level tokenizers have tokens of whitespace only
            yield s, e, extra or None
        if j >= n_units:
            break
        k = j
        if overlap:
            back = 0
            while k - 1 > i and back + units[k - 1][2] <= overlap:
                back += units[k - 1][2]
                k -= 1
            if k == j:
                carry = {"no_overlap_reason": "the last word is longer than the overlap"}
        i = k


def _split_word(toks: list[tuple[int, int]], size: int) -> list[tuple[int, int, int, bool]]:
    """A word's tokens in groups of at most ``size``, never cut inside a character.

    Byte-level tokenizers give one character several tokens with the same offsets: those
    stay together (alone over ``size`` when there are more of them than that).
    """
    atoms: list[list[int]] = []  # start, end, tokens
    for s, e in toks:
        if atoms and s < atoms[-1][1]:
            atoms[-1][1] = max(atoms[-1][1], e)
            atoms[-1][2] += 1
        else:
            atoms.append([s, e, 1])
    out: list[tuple[int, int, int, bool]] = []
    for s, e, t in atoms:
        if out and out[-1][2] + t <= size:
            out[-1] = (out[-1][0], e, out[-1][2] + t, True)
        else:
            out.append((s, e, t, True))
    return out


def _absorb_untokenized(text: str, units: list[tuple[int, int, int, bool]]):
    """Stretch units over characters the tokenizer skipped, so nothing is lost."""
    if not units:
        stripped = text.strip()
        if not stripped:
            return units
        start = len(text) - len(text.lstrip())
        return [(start, start + len(stripped), 0, False)]
    out: list[tuple[int, int, int, bool]] = []
    for idx, (s, e, t, split) in enumerate(units):
        if idx == 0:
            s = len(text) - len(text.lstrip()) if s > 0 else s
        nxt = units[idx + 1][0] if idx + 1 < len(units) else len(text)
        gap = text[e:nxt]
        if gap.strip():
            e = e + len(gap.rstrip())
        out.append((min(s, e), e, t, split))
    return out
