"""Semantic chunking: cut where the meaning of consecutive sentences changes most.

The text is split into sentences by :func:`chunklab.text.split_sentences` (abbreviations,
decimals, URLs, file names and fenced code survive); each sentence is embedded together with
``buffer_size`` neighbours on each side;
the cosine distance between consecutive windows is the "distance curve"; a breakpoint rule
(fixed threshold, percentile, standard deviation, interquartile range or gradient, as in
Kamradt's "five levels" notebook, LangChain's SemanticChunker and LlamaIndex's
SemanticSplitterNodeParser) picks the cuts. Small groups merge into their more similar
neighbour; over-long groups split at their strongest internal cut, and a single sentence
longer than ``max_size`` is cut by the recursive separators
(:func:`chunklab.chunkers.recursive.recursive_spans`). ``min_chars`` and ``max_size`` are characters
unless ``unit`` names another unit of :mod:`chunklab.units` (``"tokens"``,
``"tokenizer:PATH"``, ``"words"``); spans are then measured on one encoding of the whole text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from chunklab._validate import (
    check_doc_id,
    check_text,
    parameters_of,
    renamed_keyword,
)
from chunklab.chunk import Chunk
from chunklab.chunkers._params import METHODS, check_method, check_semantic_params
from chunklab.chunkers.recursive import DEFAULT_SEPARATORS, recursive_spans
from chunklab.protocols import EncoderLike
from chunklab.text import split_sentences
from chunklab.units import UnitIndex, over_budget, unit_params

__all__ = [
    "METHODS",
    "SemanticAnalysis",
    "analyze_semantic",
    "breakpoint_threshold",
    "chunk_semantic",
    "split_sentences",
]

_LEVELS = [s if isinstance(s, tuple) else (s,) for s in DEFAULT_SEPARATORS]
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


@renamed_keyword("max_chars", "max_size")
def analyze_semantic(
    text: str,
    threshold: float | None = None,
    percentile: float = 95,
    buffer_size: int = 1,
    min_chars: int = 100,
    max_size: int = 2000,
    encoder: EncoderLike | None = None,
    method: str = "percentile",
    doc_id: str = "doc",
    *,
    amount: float | None = None,
    window: str = "centered",
    unit: str = "chars",
) -> SemanticAnalysis:
    """Run the semantic chunker and return its sentences, distance curve, breakpoints and chunks."""
    text = check_text(text)
    doc_id = check_doc_id(doc_id)
    method = check_semantic_params(
        method, threshold, percentile, buffer_size, min_chars, max_size, amount, window, unit
    )
    params: dict[str, object] = {
        "method": method,
        "buffer_size": buffer_size,
        "min_chars": min_chars,
        "max_chars": max_size,
    }
    if window != "centered":
        params["window"] = window
    params.update(unit_params(unit))
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
    index = UnitIndex(text, unit)
    groups = _merge_small(groups, sentences, distances, min_chars, index.count)
    chunks = _build_chunks(text, sentences, distances, groups, min_chars, max_size, doc_id, params, index)
    timings["breakpoints"] = time.perf_counter() - t0
    return SemanticAnalysis(sentences, distances, signal, thr, breakpoints, chunks, method, timings)


@parameters_of(analyze_semantic)
def chunk_semantic(*args: Any, **kwargs: Any) -> list[Chunk]:
    """Split ``text`` where consecutive sentence windows are least alike (see the module doc).

    The parameters are :func:`analyze_semantic`'s; only its final chunks are returned.
    ``threshold`` given means a fixed cosine-distance threshold. ``percentile`` serves the
    percentile and gradient rules; ``amount`` the standard-deviation (default 3) and
    interquartile (default 1.5) rules. ``window="centered"`` (Kamradt's) compares the
    windows centred on consecutive sentences; ``window="split"`` compares the ``buffer_size
    + 1`` sentences before each gap with those after it, which puts the peak right on the
    gap. ``unit`` measures ``min_chars``/``max_size`` (characters by default). Chunks are
    exact slices of ``text``.
    """
    return analyze_semantic(*args, **kwargs).chunks


def breakpoint_threshold(
    distances: np.ndarray,
    method: str = "percentile",
    *,
    threshold: float | None = None,
    percentile: float = 95,
    amount: float | None = None,
) -> tuple[np.ndarray, float | None]:
    """``(signal, threshold)``: cut after sentence ``i`` when ``signal[i] > threshold``.

    The signal is the distance curve itself, except for the gradient rule (its
    gradient). With no distances (fewer than two sentences) the threshold is None:
    nothing to cut.
    """
    method = check_method(method, threshold)
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


# -- distances and groups --------------------------------------------------------------------
def _window_distances(
    text: str,
    sentences: list[tuple[int, int]],
    buffer_size: int,
    encoder: EncoderLike | None,
    window: str = "centered",
) -> np.ndarray:
    n = len(sentences)
    if n < 2:
        return np.zeros(0, dtype=np.float64)
    if encoder is None:  # chunkers sit below embed: the caller brings the model
        raise ValueError("semantic chunking needs encoder=chunklab.embed.get_encoder()")
    b = buffer_size

    def joined(lo: int, hi: int) -> str:  # sentences lo..hi (inclusive) as one window
        return text[sentences[lo][0] : sentences[hi][1]]

    if window == "centered":
        windows = [joined(max(0, i - b), min(n - 1, i + b)) for i in range(n)]
        vecs = _unit(encoder.encode(windows))
        left, right = vecs[:-1], vecs[1:]
    else:
        lefts = [joined(max(0, i - b), i) for i in range(n - 1)]
        rights = [joined(i + 1, min(n - 1, i + 1 + b)) for i in range(n - 1)]
        vecs = _unit(encoder.encode(lefts + rights))
        left, right = vecs[: n - 1], vecs[n - 1 :]
    sims = np.einsum("ij,ij->i", left, right)
    return np.clip(1.0 - sims, 0.0, 2.0)


def _unit(vecs: ArrayLike) -> np.ndarray:
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
    groups: list[list[int]],
    sentences: list[tuple[int, int]],
    distances: np.ndarray,
    min_chars: int,
    measure: Callable[[int, int], int],
) -> list[list[int]]:
    """Merge groups shorter than ``min_chars`` (by ``measure``) into the more similar neighbour."""
    if min_chars <= 0 or len(groups) < 2:
        return groups

    def size(g: list[int]) -> int:
        return measure(sentences[g[0]][0], sentences[g[1]][1])

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
    max_size: int,
    doc_id: str,
    params: Mapping[str, object],
    index: UnitIndex,
) -> list[Chunk]:
    unit, measure = index.unit, index.count
    spans: list[tuple[int, int, int, str]] = []  # start, end, sentences, cut reason
    for gi, (a, b) in enumerate(groups):
        reason = "breakpoint" if gi + 1 < len(groups) else "end"
        pieces = _split_long(sentences, distances, a, b, min_chars, max_size, measure)
        for pi, (pa, pb) in enumerate(pieces):
            s, e = sentences[pa][0], sentences[pb][1]
            why = reason if pi + 1 == len(pieces) else "max_chars"
            if measure(s, e) > max_size:  # one sentence longer than max_size
                sub = None if unit == "chars" else index.slice(s, e)
                for a, b, _lv, _sh in recursive_spans(text[s:e], max_size, 0, unit, _LEVELS, sub):
                    spans.append((s + a, s + b, 1, "max_chars"))
                spans[-1] = (*spans[-1][:3], why)
            else:
                spans.append((s, e, pb - pa + 1, why))
    chunks = []
    for i, (s, e, count, why) in enumerate(spans):
        meta = {"strategy": "semantic", "params": params, "index": i, "sentences": count, "cut": why}
        if unit != "chars" and over_budget(text[s:e], max_size, unit):
            meta["oversize"] = True
            meta["oversize_reason"] = "longer on its own than in the text (re-tokenized)"
        chunks.append(Chunk(text[s:e], s, e, doc_id, meta))
    return chunks


def _split_long(
    sentences: list[tuple[int, int]],
    distances: np.ndarray,
    a: int,
    b: int,
    min_chars: int,
    max_size: int,
    measure: Callable[[int, int], int],
) -> list[tuple[int, int]]:
    """Split sentence range ``[a, b]`` at its strongest internal cuts until each piece fits."""
    out: list[tuple[int, int]] = []
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if measure(sentences[x][0], sentences[y][1]) <= max_size or x == y:
            out.append((x, y))
            continue
        cuts = range(x, y)  # cut after sentence c
        good = [
            c
            for c in cuts
            if measure(sentences[x][0], sentences[c][1]) >= min_chars
            and measure(sentences[c + 1][0], sentences[y][1]) >= min_chars
        ]
        c = max(good or cuts, key=lambda i: distances[i])
        stack.append((c + 1, y))
        stack.append((x, c))
    return out
