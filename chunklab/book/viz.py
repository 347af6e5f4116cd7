"""Seeing chunks: boundaries drawn on the source text, size histograms, boundary statistics.

:func:`render_chunks` colours each chunk's span of the source and draws the characters that
two chunks share as *overlap*, exactly where they are (tools that colour a chunk by
searching for its text attribute the shared characters to one chunk or the other). The
output is HTML with inline styles only, so it renders in the built book (no JavaScript) and
in JupyterLab. The explorer built on it lives in :mod:`chunklab.book.explorer`.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from chunklab._validate import check_non_negative_int, check_positive_int
from chunklab.book.labels import fmt_int, label, localize_axes
from chunklab.chunk import Chunk
from chunklab.text import sentence_end_before

__all__ = [
    "HTMLView",
    "STRATEGY_COLORS",
    "boundary_stats",
    "new_figure",
    "render_chunks",
    "size_histogram",
    "strategy_color",
]

#: Light fills and darker borders, distinguishable side by side (a colour-blind safe cycle).
PALETTE: tuple[tuple[str, str], ...] = (
    ("#cfe3f7", "#3b7dc4"),
    ("#fde2c4", "#d9822b"),
    ("#d4efd4", "#3f9b3f"),
    ("#eadcf4", "#8a55b5"),
    ("#f9d6dc", "#c4455e"),
    ("#fff3b8", "#b59b1c"),
)
#: One colour per strategy family across the book (Okabe-Ito, colour-blind safe); see :func:`strategy_color`.
STRATEGY_COLORS: dict[str, str] = {
    "fixed": "#E69F00",
    "recursive": "#56B4E9",
    "paragraphs": "#D55E00",
    "structural": "#009E73",
    "semantic": "#CC79A7",
    "hierarchical": "#0072B2",
    "other": "#999999",
}
_FAMILY_ALIASES = {
    "markdown-hierarchy": "hierarchical",
    "hierarchical_md": "hierarchical",
    "baseline": "other",
}


def strategy_color(name: str) -> str:
    """The colour of the strategy family a label belongs to, by its first word.

    ``"recursive 1000, overlap 200"`` and ``"recursive[size=400]"`` are recursive;
    ``"markdown-hierarchy"`` is hierarchical; anything unknown is ``STRATEGY_COLORS["other"]``.
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a str, got {type(name).__name__}")
    word = re.split(r"[\s\[(:,]", name.strip().lower(), maxsplit=1)[0]
    family = _FAMILY_ALIASES.get(word, word)
    return STRATEGY_COLORS.get(family, STRATEGY_COLORS["other"])


LOST_STYLE = "background:#ffffff;color:#b00020;text-decoration:underline wavy #b00020"


@dataclass(frozen=True)
class HTMLView:
    """An HTML fragment that Jupyter, JupyterLab and the built book display as HTML."""

    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.html


def render_chunks(
    text: str,
    chunks: Sequence[Chunk],
    max_chars: int | None = None,
    *,
    start: int = 0,
    title: str | None = None,
    legend: bool = True,
) -> HTMLView:
    """Draw ``chunks`` on ``text``: one colour per chunk, overlaps striped, lost text flagged.

    Positions come from each chunk's ``start``/``end`` offsets, never from searching for its
    text, so a character inside two chunks is drawn as shared by both (striped in both
    colours, with a tooltip naming them). Non-whitespace characters in no chunk are shown in
    red with a wavy underline. A small badge marks where each chunk starts. ``start`` and
    ``max_chars`` show only ``text[start:start + max_chars]`` (a window into a long text).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if max_chars is not None:
        check_positive_int(max_chars, "max_chars")
    for i, c in enumerate(chunks):
        if not isinstance(c, Chunk):
            raise ValueError(f"chunks[{i}] is not a Chunk ({type(c).__name__})")
        if not 0 <= c.start <= c.end <= len(text):
            raise ValueError(
                f"chunks[{i}] offsets [{c.start}, {c.end}) lie outside the text of length {len(text)}"
            )
    if check_non_negative_int(start, "start") > len(text):
        raise ValueError(f"start must be an offset into the text (0..{len(text)}), got {start!r}")
    lo = start
    hi = len(text) if max_chars is None else min(len(text), start + max_chars)
    order = sorted(range(len(chunks)), key=lambda i: (chunks[i].start, chunks[i].end))
    colour = {ci: PALETTE[rank % len(PALETTE)] for rank, ci in enumerate(order)}
    number = {ci: rank for rank, ci in enumerate(order)}
    visible = [ci for ci in order if chunks[ci].start < hi and chunks[ci].end > lo]
    # Cut points: every chunk start and end inside the shown range.
    cuts = {lo, hi}
    for ci in visible:
        for p in (chunks[ci].start, chunks[ci].end):
            if lo < p < hi:
                cuts.add(p)
    points = sorted(cuts)
    starts_at: dict[int, list[int]] = {}
    for ci in visible:
        if chunks[ci].end > chunks[ci].start:
            starts_at.setdefault(max(lo, chunks[ci].start), []).append(ci)
    parts: list[str] = []
    for a, b in pairwise(points):
        if a == b:
            continue
        for ci in starts_at.get(a, []):
            fill, border = colour[ci]
            parts.append(
                f'<span style="display:inline-block;font:bold 10px sans-serif;color:#fff;background:{border};'
                f'border-radius:3px;padding:0 3px;margin:0 2px 0 1px;line-height:13px;vertical-align:1px" '
                f'title="{label("viz_badge", n=number[ci], start=chunks[ci].start, end=chunks[ci].end)}">'
                f"{number[ci]}</span>"
            )
        covering = [ci for ci in visible if chunks[ci].start <= a and b <= chunks[ci].end]
        piece = _html.escape(text[a:b])
        if not covering:
            if text[a:b].strip():
                parts.append(f'<span style="{LOST_STYLE}" title="{label("viz_in_no_chunk")}">{piece}</span>')
            else:
                parts.append(f'<span style="color:#999">{piece}</span>')
        elif len(covering) == 1:
            fill, border = colour[covering[0]]
            parts.append(f'<span style="background:{fill};border-bottom:2px solid {border}">{piece}</span>')
        else:
            fills = [colour[ci][0] for ci in covering]
            stops = ",".join(f"{fill} {k * 6}px {(k + 1) * 6}px" for k, fill in enumerate(fills))
            names = label("viz_and").join(str(number[ci]) for ci in covering)
            parts.append(
                f'<span style="background:repeating-linear-gradient(135deg,{stops});'
                'outline:1px dashed #555;outline-offset:-1px" '
                f'title="{label("viz_overlap_in", names=names)}">'
                f"{piece}</span>"
            )
    note = '<span style="color:#777;font-style:italic">{}</span>'
    before = note.format(label("viz_before", n=fmt_int(lo))) if lo > 0 else ""
    more = note.format(label("viz_more", n=fmt_int(len(text) - hi))) if hi < len(text) else ""
    body = (
        "<div style=\"font-family:Menlo,Consolas,'DejaVu Sans Mono',monospace;font-size:12px;line-height:1.7;"
        "white-space:pre-wrap;word-break:break-word;text-align:left;border:1px solid #ccc;border-radius:4px;"
        "padding:8px;"
        f'background:#fff;color:#222;margin:4px 0">{before}{"".join(parts)}{more}</div>'
    )
    head = ""
    if title:
        head = (
            '<div style="font:600 13px sans-serif;margin:8px 0 2px;text-align:left">'
            f"{_html.escape(title)}</div>"
        )
    foot = ""
    if legend:
        foot = _legend(chunks, len(visible))
    return HTMLView(f'<div class="chunklab-chunks" style="text-align:left">{head}{body}{foot}</div>')


def _legend(chunks: Sequence[Chunk], visible: int) -> str:
    shared = _characters_in_several(chunks)
    swatch = (
        '<span style="display:inline-block;width:22px;height:11px;vertical-align:-1px;'
        "background:repeating-linear-gradient(135deg,#cfe3f7 0 6px,#fde2c4 6px 12px);"
        'outline:1px dashed #555;outline-offset:-1px"></span>'
    )
    lost = f'<span style="color:#b00020;text-decoration:underline wavy #b00020">{label("viz_red")}</span>'
    words = label(
        "viz_legend", n=len(chunks), shown=visible, shared=fmt_int(shared), swatch=swatch, lost=lost
    )
    return f'<div style="font:12px sans-serif;color:#444;margin:2px 0 10px;text-align:left">{words}</div>'


def _characters_in_several(chunks: Sequence[Chunk]) -> int:
    """How many characters lie inside two or more chunks: the overlap of consecutive chunks and
    the children nested in a parent alike, each character counted once."""
    events = sorted([(c.start, 1) for c in chunks] + [(c.end, -1) for c in chunks])
    shared, depth, last = 0, 0, 0
    for at, step in events:  # ends sort before starts at one offset: touching chunks share nothing
        if depth >= 2:
            shared += at - last
        depth, last = depth + step, at
    return shared


def new_figure(width: float = 7.0, height: float = 3.6, ncols: int = 1, nrows: int = 1):
    """A matplotlib ``(figure, axes)`` pair that a notebook displays once, when returned.

    The figure is detached from pyplot's state (``plt.close``), so it is not drawn a second
    time at the end of the cell and figures never leak between cells.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), constrained_layout=True)
    plt.close(fig)
    localize_axes(axes)  # decimal comma on the ticks of the Spanish edition
    return fig, axes


def size_histogram(
    chunks_by_strategy: Mapping[str, Sequence[Chunk] | Sequence[str]],
    unit: str = "chars",
    *,
    bins: int = 30,
    limit: int | None = None,
    limit_label: str | None = None,
    title: str | None = None,
    log: bool = False,
):
    """Overlaid histograms of chunk sizes (in ``unit``), one per strategy; returns the Figure.

    ``chunks_by_strategy`` maps a label to chunks (or plain strings). ``limit`` draws a dashed
    vertical line, e.g. the embedding model's 256-token input limit.
    """
    from chunklab.units import length_function

    if not isinstance(chunks_by_strategy, Mapping) or not chunks_by_strategy:
        raise ValueError("chunks_by_strategy must be a non-empty mapping of label -> chunks")
    measure = length_function(unit)
    sizes = {
        name: [measure(c.text if isinstance(c, Chunk) else str(c)) for c in chunks]
        for name, chunks in chunks_by_strategy.items()
    }
    everything = [s for values in sizes.values() for s in values]
    if not everything:
        raise ValueError("no chunks to plot")
    hi = max(everything + ([limit] if limit else []))
    edges = _edges(0, hi, bins)
    fig, ax = new_figure()
    for k, (name, values) in enumerate(sizes.items()):
        border = PALETTE[k % len(PALETTE)][1]
        ax.hist(
            values, bins=edges, histtype="step", linewidth=2, color=border, label=f"{name} (n={len(values)})"
        )
    if limit:
        ax.axvline(limit, color="#222", linestyle="--", linewidth=1.2)
        ax.text(
            limit,
            0.97,
            f" {limit_label or label('viz_limit', limit=limit)}",
            transform=ax.get_xaxis_transform(),
            va="top",
            ha="left",
            fontsize=9,
            color="#222",
        )
    ax.set_xlabel(label("viz_chunk_size", unit=label(f"unit_{unit}")))
    ax.set_ylabel(label("viz_number_of_chunks"))
    if log:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.legend(frameon=False, fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def _edges(lo: float, hi: float, bins: int) -> list[float]:
    hi = max(hi, lo + 1)
    step = (hi - lo) / bins
    return [lo + step * i for i in range(bins + 1)]


_CLAUSE_END = re.compile(r"[:;|`)\]]\s*$")


def boundary_stats(text: str, chunks: Sequence[Chunk]) -> dict[str, float]:
    """Where a chunker's cuts fall: the share of chunk ends that split a word or a sentence.

    A cut is a chunk's ``end`` that is not the end of the text. It is *mid-word* when the
    characters on both sides are letters or digits, and *mid-sentence* when it is not at a
    line break, no sentence ends there (by :func:`chunklab.text.sentence_end_before`, the
    rule the semantic chunker splits by: "Dr." or "e.g." end none) and the text before it
    does not end with clause punctuation (``: ;``), a table pipe, a closing bracket or a
    backtick. Returns
    ``{"cuts": n, "mid_word": share, "mid_sentence": share}`` (shares are 0 when n is 0).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    ends = sorted({c.end for c in chunks if 0 < c.end < len(text.rstrip())})
    mid_word = mid_sentence = 0
    for e in ends:
        if text[e - 1].isalnum() and text[e].isalnum():
            mid_word += 1
        at_line_break = text[e] == "\n" or text[e - 1] == "\n"
        if not (at_line_break or sentence_end_before(text, e) or _CLAUSE_END.search(text[max(0, e - 3) : e])):
            mid_sentence += 1
    n = len(ends)
    return {"cuts": n, "mid_word": mid_word / n if n else 0.0, "mid_sentence": mid_sentence / n if n else 0.0}
