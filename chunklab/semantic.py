"""Semantic chunking: cut where the meaning of consecutive sentences changes most.

The text is split into sentences (abbreviations, decimals, URLs, file names and fenced code
survive); each sentence is embedded together with ``buffer_size`` neighbours on each side;
the cosine distance between consecutive windows is the "distance curve"; a breakpoint rule
(fixed threshold, percentile, standard deviation, interquartile range or gradient, as in
Kamradt's "five levels" notebook, LangChain's SemanticChunker and LlamaIndex's
SemanticSplitterNodeParser) picks the cuts. Small groups merge into their more similar
neighbour; over-long groups split at their strongest internal cut, and a single sentence
longer than ``max_chars`` goes to :func:`chunklab.recursive.chunk_recursive`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chunklab._validate import check_doc_id, check_positive_int, check_text
from chunklab.chunk import Chunk, trim_span
from chunklab.recursive import chunk_recursive

__all__ = [
    "METHODS",
    "SemanticAnalysis",
    "analyze_semantic",
    "breakpoint_threshold",
    "chunk_semantic",
    "split_sentences",
]

#: breakpoint rules; the aliases on the right map to the names on the left
METHODS = ("threshold", "percentile", "standard_deviation", "interquartile", "gradient")
_ALIASES = {"fixed": "threshold", "std": "standard_deviation", "stddev": "standard_deviation", "iqr": "interquartile"}
_DEFAULT_AMOUNT = {"standard_deviation": 3.0, "interquartile": 1.5}


@dataclass
class SemanticAnalysis:
    """Everything the semantic chunker computed, for plotting and teaching.

    ``distances[i]`` is the cosine distance between the windows around sentences ``i`` and
    ``i + 1``; ``signal`` is what the rule compares with ``threshold`` (the distances, or
    their gradient); ``breakpoints`` are the sentence indices ``i`` after which the rule
    cuts (before the size limits merge or add cuts); ``chunks`` is the final result.
    """

    sentences: list[tuple[int, int]]
    distances: np.ndarray
    signal: np.ndarray
    threshold: float | None
    breakpoints: list[int]
    chunks: list[Chunk]
    method: str
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def cut_offsets(self) -> list[int]:
        """Character offsets where the final chunks start (after the first)."""
        return [c.start for c in self.chunks[1:]]


def chunk_semantic(
    text: str,
    threshold: float | None = None,
    percentile: float = 95,
    buffer_size: int = 1,
    min_chars: int = 100,
    max_chars: int = 2000,
    encoder: Any = None,
    method: str = "percentile",
    doc_id: str = "doc",
    *,
    amount: float | None = None,
    window: str = "centered",
) -> list[Chunk]:
    """Split ``text`` where consecutive sentence windows are least alike (see the module doc).

    ``threshold`` given means a fixed cosine-distance threshold. ``percentile`` serves the
    percentile and gradient rules; ``amount`` the standard-deviation (default 3) and
    interquartile (default 1.5) rules. ``window="centered"`` (Kamradt's) compares the
    windows centred on consecutive sentences; ``window="split"`` compares the ``buffer_size
    + 1`` sentences before each gap with those after it, which puts the peak right on the
    gap. Chunks are exact slices of ``text``.
    """
    return analyze_semantic(
        text,
        threshold=threshold,
        percentile=percentile,
        buffer_size=buffer_size,
        min_chars=min_chars,
        max_chars=max_chars,
        encoder=encoder,
        method=method,
        doc_id=doc_id,
        amount=amount,
        window=window,
    ).chunks


def analyze_semantic(
    text: str,
    threshold: float | None = None,
    percentile: float = 95,
    buffer_size: int = 1,
    min_chars: int = 100,
    max_chars: int = 2000,
    encoder: Any = None,
    method: str = "percentile",
    doc_id: str = "doc",
    *,
    amount: float | None = None,
    window: str = "centered",
) -> SemanticAnalysis:
    """Run the semantic chunker and return its sentences, distance curve, breakpoints and chunks."""
    text = check_text(text)
    doc_id = check_doc_id(doc_id)
    method = _check_method(method, threshold)
    if isinstance(buffer_size, bool) or not isinstance(buffer_size, int) or buffer_size < 0:
        raise ValueError(f"buffer_size must be a non-negative integer, got {buffer_size!r}")
    if isinstance(percentile, bool) or not isinstance(percentile, (int, float)) or not 0 <= percentile <= 100:
        raise ValueError(f"percentile must be a number in [0, 100], got {percentile!r}")
    if isinstance(min_chars, bool) or not isinstance(min_chars, int) or min_chars < 0:
        raise ValueError(f"min_chars must be a non-negative integer, got {min_chars!r}")
    max_chars = check_positive_int(max_chars, "max_chars")
    if min_chars > max_chars:
        raise ValueError(f"min_chars ({min_chars}) must not exceed max_chars ({max_chars})")
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, (int, float))):
        raise ValueError(f"amount must be a number, got {amount!r}")
    if window not in ("centered", "split"):
        raise ValueError(f"window must be 'centered' or 'split', got {window!r}")
    params: dict[str, Any] = {
        "method": method,
        "buffer_size": buffer_size,
        "min_chars": min_chars,
        "max_chars": max_chars,
    }
    if window != "centered":
        params["window"] = window
    if method == "threshold":
        params["threshold"] = float(threshold)  # type: ignore[arg-type]
    elif method in ("percentile", "gradient"):
        params["percentile"] = float(percentile)
    else:
        params["amount"] = float(amount if amount is not None else _DEFAULT_AMOUNT[method])

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    sentences = split_sentences(text)
    timings["segmentation"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    distances = _window_distances(text, sentences, buffer_size, encoder, window)
    timings["embedding"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    signal, thr = breakpoint_threshold(
        distances, method, threshold=threshold, percentile=percentile, amount=amount
    )
    breakpoints = [int(i) for i in np.flatnonzero(signal > thr)] if thr is not None else []
    groups = _groups(len(sentences), breakpoints)
    groups = _merge_small(groups, sentences, distances, min_chars)
    chunks = _build_chunks(text, sentences, distances, groups, min_chars, max_chars, doc_id, params)
    timings["breakpoints"] = time.perf_counter() - t0
    return SemanticAnalysis(sentences, distances, signal, thr, breakpoints, chunks, method, timings)


def breakpoint_threshold(
    distances: np.ndarray,
    method: str = "percentile",
    *,
    threshold: float | None = None,
    percentile: float = 95,
    amount: float | None = None,
) -> tuple[np.ndarray, float | None]:
    """``(signal, threshold)``: a cut falls after sentence ``i`` where ``signal[i] > threshold``.

    The signal is the distance curve itself, except for the gradient rule (its gradient).
    With no distances (fewer than two sentences) the threshold is None: nothing to cut.
    """
    method = _check_method(method, threshold)
    d = np.asarray(distances, dtype=np.float64)
    if d.size == 0:
        return d, None
    if method == "threshold":
        return d, float(threshold)  # type: ignore[arg-type]
    if method == "percentile":
        return d, float(np.percentile(d, percentile))
    if method == "standard_deviation":
        k = _DEFAULT_AMOUNT[method] if amount is None else amount
        return d, float(d.mean() + k * d.std())
    if method == "interquartile":
        k = _DEFAULT_AMOUNT[method] if amount is None else amount
        q1, q3 = np.percentile(d, [25, 75])
        return d, float(d.mean() + k * (q3 - q1))
    g = np.gradient(d) if d.size > 1 else np.zeros_like(d)
    return g, float(np.percentile(g, percentile))


def _check_method(method: str, threshold: float | None) -> str:
    if not isinstance(method, str):
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    method = _ALIASES.get(method, method)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not np.isfinite(threshold):
            raise ValueError(f"threshold must be a finite number (a cosine distance), got {threshold!r}")
        if method not in ("threshold", "percentile"):
            raise ValueError(f"threshold={threshold} is a fixed cut-off; it cannot be combined with method={method!r}")
        return "threshold"
    if method == "threshold":
        raise ValueError("method='threshold' needs threshold=<cosine distance>, e.g. threshold=0.3")
    return method


# -- sentences -----------------------------------------------------------------------------
_ABBREVIATIONS = frozenset(
    """mr mrs ms mx dr prof sr jr st vs etc e.g i.e cf approx ca mt gen col lt capt sgt rev hon dept
    ed eds al ph.d u.s u.k u.n e.u a.m p.m viz resp incl jan feb mar apr jun jul aug sep sept oct
    nov dec""".split()
)
#: abbreviations only when a number follows: "Fig. 3", "No. 5" (but "No. The app..." ends a sentence)
_NUMBER_ABBREVIATIONS = frozenset("no nos fig figs eq eqs vol vols p pp ref refs sec ch op art".split())
_DOTTED = re.compile(r"^(?:[A-Za-z]\.){1,}[A-Za-z]\.?$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+\S")
_TABLE_ROW = re.compile(r"^[ \t]*\|")
_CANDIDATE = re.compile(r"[.!?…]+[\"'”’)\]*_`]*(?=\s)|[。！？]+[」』”’)]*")
_CLOSERS = "\"'”’)]*_`"


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of ``text``, trimmed of whitespace, covering all its words.

    Blank lines, Markdown headings, list items, tables and fenced code blocks are always
    boundaries (a fenced block or a table is one unit); inside prose a sentence ends at
    ``.``, ``!`` or ``?`` followed by whitespace and not by a lowercase letter, unless the
    word before is an abbreviation (Dr., e.g., U.S., Fig.) or an initial. Periods with no
    whitespace after them (3.14, example.com/a.html, setup.py) never end a sentence.
    """
    text = check_text(text)
    spans: list[tuple[int, int]] = []
    for start, end, atomic in _blocks(text):
        if atomic:
            _append_trimmed(text, start, end, spans)
        else:
            _split_prose(text, start, end, spans)
    return spans


def _blocks(text: str) -> list[tuple[int, int, bool]]:
    """``(start, end, atomic)`` blocks: prose runs, and fenced code / tables kept whole."""
    blocks: list[tuple[int, int, bool]] = []
    pos = 0
    n = len(text)
    cur = None  # start of the open prose block
    fence: str | None = None
    fence_start = 0
    table_start: int | None = None
    while pos < n:
        nl = text.find("\n", pos)
        line_end = n if nl == -1 else nl + 1
        line = text[pos:line_end]
        if fence is not None:
            if line.strip().startswith(fence):
                blocks.append((fence_start, line_end, True))
                fence = None
            pos = line_end
            continue
        if table_start is not None and not _TABLE_ROW.match(line):
            blocks.append((table_start, pos, True))
            table_start = None
        m = _FENCE.match(line)
        if m:
            if cur is not None:
                blocks.append((cur, pos, False))
                cur = None
            fence, fence_start = m.group(1), pos
        elif _TABLE_ROW.match(line):
            if cur is not None:
                blocks.append((cur, pos, False))
                cur = None
            if table_start is None:
                table_start = pos
        elif not line.strip():
            if cur is not None:
                blocks.append((cur, pos, False))
                cur = None
        elif _HEADING.match(line):
            if cur is not None:
                blocks.append((cur, pos, False))
                cur = None
            blocks.append((pos, line_end, True))
        elif _LIST_ITEM.match(line):
            if cur is not None:
                blocks.append((cur, pos, False))
            cur = pos
        elif cur is None:
            cur = pos
        pos = line_end
    if fence is not None:  # unclosed fence: keep the rest whole
        blocks.append((fence_start, n, True))
    if table_start is not None:
        blocks.append((table_start, n, True))
    if cur is not None:
        blocks.append((cur, n, False))
    return blocks


def _split_prose(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    s = start
    for m in _CANDIDATE.finditer(text, start, end):
        cut = m.end()
        if not _ends_sentence(text, s, m.start(), m.group(), cut, end):
            continue
        _append_trimmed(text, s, cut, out)
        s = cut
    _append_trimmed(text, s, end, out)


def _ends_sentence(text: str, s: int, p: int, punct: str, cut: int, end: int) -> bool:
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
    if len(word) == 1 and word.isalpha() and word.isupper():
        return False  # an initial: "J. Smith"
    if _DOTTED.match(word + "."):
        return False  # U.S., e.g., Ph.D.
    return True


def _append_trimmed(text: str, s: int, e: int, out: list[tuple[int, int]]) -> None:
    s, e = trim_span(text, s, e)
    if s < e:
        out.append((s, e))


# -- distances and groups --------------------------------------------------------------------
def _window_distances(
    text: str, sentences: list[tuple[int, int]], buffer_size: int, encoder: Any, window: str = "centered"
) -> np.ndarray:
    n = len(sentences)
    if n < 2:
        return np.zeros(0, dtype=np.float64)
    if encoder is None:
        from chunklab.embed import get_encoder

        encoder = get_encoder()
    b = buffer_size
    if window == "centered":
        windows = [text[sentences[max(0, i - b)][0] : sentences[min(n - 1, i + b)][1]] for i in range(n)]
        vecs = _unit(encoder.encode(windows))
        left, right = vecs[:-1], vecs[1:]
    else:
        lefts = [text[sentences[max(0, i - b)][0] : sentences[i][1]] for i in range(n - 1)]
        rights = [text[sentences[i + 1][0] : sentences[min(n - 1, i + 1 + b)][1]] for i in range(n - 1)]
        vecs = _unit(encoder.encode(lefts + rights))
        left, right = vecs[: n - 1], vecs[n - 1 :]
    sims = np.einsum("ij,ij->i", left, right)
    return np.clip(1.0 - sims, 0.0, 2.0)


def _unit(vecs: Any) -> np.ndarray:
    vecs = np.asarray(vecs, dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1)
    norms[norms == 0] = 1.0
    return vecs / norms[:, None]


def _groups(n: int, breakpoints: list[int]) -> list[list[int]]:
    """Sentence index ranges ``[first, last]`` between breakpoints."""
    groups: list[list[int]] = []
    first = 0
    for b in breakpoints:
        groups.append([first, b])
        first = b + 1
    if first < n:
        groups.append([first, n - 1])
    return groups


def _merge_small(
    groups: list[list[int]], sentences: list[tuple[int, int]], distances: np.ndarray, min_chars: int
) -> list[list[int]]:
    """Merge groups shorter than ``min_chars`` into the neighbour they are more similar to."""
    if min_chars <= 0 or len(groups) < 2:
        return groups

    def size(g: list[int]) -> int:
        return sentences[g[1]][1] - sentences[g[0]][0]

    out: list[list[int]] = []
    for i, g in enumerate(groups):
        g = list(g)
        if out and size(out[-1]) < min_chars:
            out[-1][1] = g[1]
            continue
        if out and size(g) < min_chars:
            left = distances[g[0] - 1]
            right = distances[g[1]] if i + 1 < len(groups) else np.inf
            if left <= right:
                out[-1][1] = g[1]
                continue
        out.append(g)
    if len(out) > 1 and size(out[-1]) < min_chars:
        out[-2][1] = out[-1][1]
        out.pop()
    return out


def _build_chunks(
    text: str,
    sentences: list[tuple[int, int]],
    distances: np.ndarray,
    groups: list[list[int]],
    min_chars: int,
    max_chars: int,
    doc_id: str,
    params: dict[str, Any],
) -> list[Chunk]:
    spans: list[tuple[int, int, int, str]] = []  # start, end, sentences, cut reason
    for gi, (a, b) in enumerate(groups):
        reason = "breakpoint" if gi + 1 < len(groups) else "end"
        pieces = _split_long(sentences, distances, a, b, min_chars, max_chars)
        for pi, (pa, pb) in enumerate(pieces):
            s, e = sentences[pa][0], sentences[pb][1]
            why = reason if pi + 1 == len(pieces) else "max_chars"
            if e - s > max_chars:  # one sentence longer than max_chars
                for c in chunk_recursive(text[s:e], max_chars):
                    spans.append((s + c.start, s + c.end, 1, "max_chars"))
                spans[-1] = (*spans[-1][:3], why)
            else:
                spans.append((s, e, pb - pa + 1, why))
    chunks = []
    for i, (s, e, count, why) in enumerate(spans):
        meta = {"strategy": "semantic", "params": params, "index": i, "sentences": count, "cut": why}
        chunks.append(Chunk(text[s:e], s, e, doc_id, meta))
    return chunks


def _split_long(
    sentences: list[tuple[int, int]], distances: np.ndarray, a: int, b: int, min_chars: int, max_chars: int
) -> list[tuple[int, int]]:
    """Split sentence range ``[a, b]`` at its strongest internal cuts until each piece fits."""
    out: list[tuple[int, int]] = []
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if sentences[y][1] - sentences[x][0] <= max_chars or x == y:
            out.append((x, y))
            continue
        cuts = range(x, y)  # cut after sentence c
        good = [
            c
            for c in cuts
            if sentences[c][1] - sentences[x][0] >= min_chars and sentences[y][1] - sentences[c + 1][0] >= min_chars
        ]
        c = max(good or cuts, key=lambda i: distances[i])
        stack.append((c + 1, y))
        stack.append((x, c))
    return out
