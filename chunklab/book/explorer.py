"""The chunk explorer: pick a strategy, a size, an overlap and a unit, and see where the cuts fall.

:func:`explorer` is an ipywidgets widget for JupyterLab (sliders redraw
:func:`chunklab.book.viz.render_chunks`); :func:`explorer_static` renders a few of its settings
side by side for the book, which has no kernel.
"""

from __future__ import annotations

import html as _html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chunklab.book.labels import label
from chunklab.book.viz import HTMLView, render_chunks
from chunklab.chunk import Chunk

if TYPE_CHECKING:
    from ipywidgets import VBox

__all__ = ["EXPLORER_STRATEGIES", "chunk_with", "explorer", "explorer_static"]

#: the strategies of :mod:`chunklab.chunkers.catalog` the explorer offers (sized in units, overlapping)
EXPLORER_STRATEGIES: tuple[str, ...] = ("fixed", "recursive", "paragraphs")


def chunk_with(strategy: str, text: str, size: int, overlap: int = 0, unit: str = "chars") -> list[Chunk]:
    """Chunk ``text`` with one of :data:`EXPLORER_STRATEGIES`, built by
    :func:`chunklab.chunkers.catalog.get_strategy`.

    ``overlap`` is in ``unit`` and capped below ``size``; for ``paragraphs`` (characters
    only) any overlap > 0 means one whole paragraph.
    """
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.documents import Document

    if strategy not in EXPLORER_STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(EXPLORER_STRATEGIES)}; got {strategy!r}")
    if strategy == "paragraphs":
        if unit != "chars":
            raise ValueError("the paragraph packer measures in characters only (unit='chars')")
        params: dict[str, int | str] = {"max_chars": size, "overlap_paragraphs": 1 if overlap else 0}
    else:
        overlap = min(overlap, size - 1) if isinstance(size, int) and isinstance(overlap, int) else overlap
        params = {"size": size, "overlap": overlap, "unit": unit}
    return get_strategy(strategy, **params)(Document.from_text(text))


def _describe(strategy: str, size: int, overlap: int, unit: str, chunks: Sequence[Chunk]) -> str:
    sizes = [len(c.text) for c in chunks]
    mean = sum(sizes) / len(sizes) if sizes else 0
    shown_unit = label(f"unit_{unit}")
    ov = label("viz_one_paragraph") if strategy == "paragraphs" and overlap else f"{overlap} {shown_unit}"
    return label(
        "viz_describe",
        strategy=strategy,
        size=size,
        unit=shown_unit,
        overlap=ov,
        n=len(chunks),
        mean=f"{mean:.0f}",
    )


def explorer_static(
    text: str,
    settings: Sequence[tuple[str, int, int]] | None = None,
    *,
    unit: str = "chars",
    max_chars: int | None = 1200,
) -> HTMLView:
    """The explorer, frozen for the book: one rendering per ``(strategy, size, overlap)``.

    Defaults to fixed, recursive and paragraph packing at the same size and overlap, so the
    same text shows how each strategy places its cuts and its overlap.
    """
    if settings is None:
        settings = [("fixed", 300, 60), ("recursive", 300, 60), ("paragraphs", 300, 1)]
    panels = []
    for strategy, size, overlap in settings:
        chunks = chunk_with(strategy, text, size, overlap, unit)
        panels.append(
            render_chunks(
                text, chunks, max_chars, title=_describe(strategy, size, overlap, unit, chunks), legend=False
            ).html
        )
    note = (
        '<div style="font:12px sans-serif;color:#444;margin:2px 0 10px;text-align:left">'
        f"{label('viz_explorer_note')}</div>"
    )
    return HTMLView(
        '<div class="chunklab-chunks" style="text-align:left">' + "".join(panels) + note + "</div>"
    )


def explorer(
    text: str,
    *,
    strategy: str = "recursive",
    size: int = 300,
    overlap: int = 50,
    unit: str = "chars",
    max_chars: int | None = 3000,
) -> VBox:
    """An ipywidgets explorer for JupyterLab: pick a strategy, size, overlap and unit.

    Returns the widget (display it as a cell's last expression). Needs a running kernel, so
    the book shows :func:`explorer_static` instead.
    """
    import ipywidgets as widgets

    if not isinstance(text, str) or not text.strip():
        raise ValueError("explorer needs a non-empty text")
    pick = widgets.Dropdown(options=list(EXPLORER_STRATEGIES), value=strategy, description=label("strategy"))
    units = widgets.Dropdown(options=["chars", "words", "tokens"], value=unit, description=label("unit"))
    size_s = widgets.IntSlider(
        value=size, min=20, max=2000, step=10, description=label("size"), continuous_update=False
    )
    overlap_s = widgets.IntSlider(
        value=overlap, min=0, max=500, step=5, description=label("overlap"), continuous_update=False
    )
    status = widgets.HTML()
    view = widgets.HTML()

    def redraw(_change: object = None) -> None:
        s, o, u = size_s.value, min(overlap_s.value, size_s.value - 1), units.value
        try:
            chunks = chunk_with(pick.value, text, s, o, u)
        except ValueError as exc:
            status.value = f'<span style="color:#b00020">{_html.escape(str(exc))}</span>'
            view.value = ""
            return
        status.value = _html.escape(_describe(pick.value, s, o, u, chunks))
        view.value = render_chunks(text, chunks, max_chars).html

    for w in (pick, units, size_s, overlap_s):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([pick, units]), widgets.HBox([size_s, overlap_s]), status, view])
