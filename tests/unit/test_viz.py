"""chunklab.book.viz: boundaries drawn from offsets, overlaps where they are, labelled figures."""

from __future__ import annotations

import html
import re
from itertools import pairwise

import matplotlib
import pytest

matplotlib.use("Agg")

from chunklab import chunk_fixed, chunk_recursive  # noqa: E402
from chunklab.book.explorer import chunk_with, explorer, explorer_static  # noqa: E402
from chunklab.book.viz import (  # noqa: E402
    HTMLView,
    boundary_stats,
    render_chunks,
    size_histogram,
)
from chunklab.chunk import Chunk  # noqa: E402

TEXT = (
    "Returns are accepted within 30 days of delivery.\n\n"
    "Personalised items are the exception: they cannot be returned unless faulty.\n\n"
    "Refunds are paid within five working days of inspection."
)
_TAG = re.compile(r"<[^>]+>")


@pytest.fixture(autouse=True)
def _english_build(monkeypatch):
    """The English edition, whatever the calling shell's CHUNKLAB_LANG; Spanish tests set it."""
    monkeypatch.delenv("CHUNKLAB_LANG", raising=False)


def _segments(view: HTMLView) -> list[tuple[str, str]]:
    """(style, text) of each coloured text span, badges excluded."""
    out = []
    for m in re.finditer(r'<span style="([^"]*)"(?: title="[^"]*")?>([^<]*)</span>', view.html):
        style, body = m.group(1), html.unescape(m.group(2))
        if "display:inline-block" in style or "font-style:italic" in style:
            continue
        out.append((style, body))
    return out


def test_rendered_text_is_the_source_in_order():
    chunks = chunk_recursive(TEXT, 60, 15)
    view = render_chunks(TEXT, chunks, legend=False)
    shown = "".join(body for _, body in _segments(view))
    assert shown == TEXT


def test_overlap_characters_are_drawn_as_shared_where_they_are():
    chunks = chunk_recursive(TEXT, 60, 20)
    pairs = [(a, b) for a, b in pairwise(chunks) if b.start < a.end]
    assert pairs, "the example must have real overlap"
    view = render_chunks(TEXT, chunks, legend=False)
    shared_drawn = "".join(body for style, body in _segments(view) if "repeating-linear-gradient" in style)
    shared_true = "".join(TEXT[b.start : a.end] for a, b in pairs)
    assert shared_drawn == shared_true


def test_overlap_is_found_by_offsets_not_by_searching_text():
    # Two chunks with identical text at different places: a text search would put both on the first.
    text = "abc abc abc"
    chunks = [Chunk("abc", 4, 7, "d"), Chunk("abc", 0, 3, "d"), Chunk("abc abc", 4, 11, "d")]
    view = render_chunks(text, chunks, legend=False)
    segs = _segments(view)
    shared = [body for style, body in segs if "repeating-linear-gradient" in style]
    assert shared == ["abc"]
    assert "in chunks" in view.html


def test_legend_counts_characters_in_several_chunks_once_nested_children_included():
    """A parent with two children inside it shares exactly the children's characters (the legend once
    counted the parent's whole tail past the first child's start as shared with it)."""
    parent = Chunk(TEXT[:100], 0, 100, "d", {})
    children = [Chunk(TEXT[10:30], 10, 30, "d", {}), Chunk(TEXT[60:80], 60, 80, "d", {})]
    words = html.unescape(_TAG.sub("", render_chunks(TEXT, [parent, *children]).html))
    assert "40 characters in more than one chunk" in words
    consecutive = [
        Chunk(TEXT[0:50], 0, 50, "d", {}),
        Chunk(TEXT[40:90], 40, 90, "d", {}),
        Chunk(TEXT[80:120], 80, 120, "d", {}),
    ]
    words = html.unescape(_TAG.sub("", render_chunks(TEXT, consecutive).html))
    assert "20 characters in more than one chunk" in words  # 10 + 10, as two overlaps of consecutive chunks


def test_text_in_no_chunk_is_flagged_as_lost():
    chunks = [Chunk(TEXT[:20], 0, 20, "d")]
    view = render_chunks(TEXT, chunks, legend=False)
    lost = [body for style, body in _segments(view) if "wavy" in style]
    assert "".join(lost).strip() == TEXT[20:].strip()


def test_max_chars_limits_what_is_shown_and_says_so():
    chunks = chunk_fixed(TEXT, 40)
    view = render_chunks(TEXT, chunks, max_chars=50, legend=False)
    shown = "".join(body for _, body in _segments(view))
    assert shown == TEXT[:50]
    assert f"{len(TEXT) - 50:,} more characters" in view.html


def test_markup_in_the_source_is_escaped():
    text = "<script>alert(1)</script> & more"
    view = render_chunks(text, chunk_fixed(text, 10))
    assert "<script>" not in view.html
    assert "&lt;script&gt;" in view.html


def test_each_chunk_gets_a_numbered_badge_in_reading_order():
    chunks = list(reversed(chunk_fixed(TEXT, 50)))
    view = render_chunks(TEXT, chunks, legend=False)
    badges = re.findall(r'title="chunk (\d+): characters (\d+)-(\d+)">(\d+)</span>', view.html)
    assert [int(b[0]) for b in badges] == list(range(len(chunks)))
    starts = [int(b[1]) for b in badges]
    assert starts == sorted(c.start for c in chunks)


def test_html_output_needs_no_javascript_or_external_resources():
    view = render_chunks(TEXT, chunk_recursive(TEXT, 50, 10))
    assert view._repr_html_() == view.html
    assert "<script" not in view.html and "http" not in view.html
    assert "class=" in view.html and "style=" in view.html


@pytest.mark.parametrize(
    "bad",
    [
        lambda: render_chunks(b"bytes", []),
        lambda: render_chunks(TEXT, ["not a chunk"]),
        lambda: render_chunks(TEXT, [Chunk("x", 0, len(TEXT) + 5, "d")]),
        lambda: render_chunks(TEXT, [], max_chars=0),
        lambda: size_histogram({}),
        lambda: chunk_with("nope", TEXT, 100),
        lambda: chunk_with("paragraphs", TEXT, 100, 1, "tokens"),
    ],
)
def test_bad_input_raises_value_error(bad):
    with pytest.raises(ValueError):
        bad()


def test_size_histogram_has_labelled_axes_one_series_per_strategy_and_the_limit():
    fig = size_histogram(
        {"fixed": chunk_fixed(TEXT, 40), "recursive": chunk_recursive(TEXT, 40)},
        unit="words",
        limit=8,
        limit_label="limit",
    )
    ax = fig.axes[0]
    assert ax.get_xlabel() == "chunk size (words)"
    assert ax.get_ylabel() == "number of chunks"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("fixed (n=") and labels[1].startswith("recursive (n=")
    assert any(line.get_xdata()[0] == 8 for line in ax.get_lines())


def test_in_the_spanish_build_axes_legend_and_notes_are_spanish(monkeypatch):
    monkeypatch.setenv("CHUNKLAB_LANG", "es")
    ax = size_histogram({"fixed": chunk_fixed(TEXT, 40)}, unit="chars", limit=30).axes[0]
    assert ax.get_xlabel() == "tamaño de fragmento (caracteres)"
    assert ax.get_ylabel() == "número de fragmentos"
    assert any(t.get_text().strip() == "límite 30" for t in ax.texts)
    view = render_chunks(TEXT, chunk_recursive(TEXT, 60, 20), max_chars=50)
    words = html.unescape(_TAG.sub("", view.html))
    assert "caracteres más sin mostrar" in words and "solapamiento: texto en dos o más fragmentos" in words
    assert "chunks" not in words and "overlap" not in words
    static = html.unescape(_TAG.sub("", explorer_static(TEXT, [("fixed", 60, 10)]).html))
    assert (
        "tamaño 60 caracteres · solapamiento 10 caracteres" in static
        and "Cada color es un fragmento" in static
    )


def test_explorer_static_shows_each_setting_with_its_chunk_count():
    view = explorer_static(TEXT, [("fixed", 60, 10), ("recursive", 60, 10), ("paragraphs", 90, 1)])
    titles = re.findall(r"font:600 13px sans-serif;margin:8px 0 2px;text-align:left\">([^<]*)<", view.html)
    assert len(titles) == 3
    n_fixed = len(chunk_fixed(TEXT, 60, 10))
    assert titles[0].startswith("fixed") and f"→ {n_fixed} chunks" in html.unescape(titles[0])


def test_explorer_widget_redraws_when_a_slider_moves():
    widget = explorer(TEXT, strategy="fixed", size=60, overlap=0)
    size_slider = widget.children[1].children[0]
    view = widget.children[3]
    before = view.value.count('title="chunk ')
    size_slider.value = 30
    after = view.value.count('title="chunk ')
    assert after == len(chunk_fixed(TEXT, 30)) and after > before


def test_start_shows_a_window_with_chunks_that_began_before_it():
    chunks = chunk_fixed(TEXT, 40, 10)
    view = render_chunks(TEXT, chunks, 60, start=45, legend=False)
    shown = "".join(body for _, body in _segments(view))
    assert shown == TEXT[45:105]
    first_badge = re.search(r'title="chunk (\d+): characters (\d+)-(\d+)"', view.html)
    covering_45 = [i for i, c in enumerate(chunks) if c.start <= 45 < c.end]
    assert int(first_badge.group(1)) == covering_45[0]
    assert "45 characters before" in view.html
    with pytest.raises(ValueError):
        render_chunks(TEXT, chunks, start=len(TEXT) + 1)


def test_boundary_stats_counts_cuts_inside_words_and_sentences():
    text = "One two three. Four five six.\nSeven eight."
    cut_word = [Chunk(text[:6], 0, 6, "d"), Chunk(text[6:], 6, len(text), "d")]  # "One tw|o"
    cut_sentence = [Chunk(text[:8], 0, 8, "d"), Chunk(text[8:], 8, len(text), "d")]  # "One two |three"
    clean = [Chunk(text[:14], 0, 14, "d"), Chunk(text[15:], 15, len(text), "d")]  # after "three."
    at_line = [Chunk(text[:29], 0, 29, "d"), Chunk(text[30:], 30, len(text), "d")]
    assert boundary_stats(text, cut_word) == {"cuts": 1, "mid_word": 1.0, "mid_sentence": 1.0}
    assert boundary_stats(text, cut_sentence) == {"cuts": 1, "mid_word": 0.0, "mid_sentence": 1.0}
    assert boundary_stats(text, clean) == {"cuts": 1, "mid_word": 0.0, "mid_sentence": 0.0}
    assert boundary_stats(text, at_line)["mid_sentence"] == 0.0
    assert boundary_stats(text, [Chunk(text, 0, len(text), "d")])["cuts"] == 0


def test_strategy_color_maps_a_label_to_its_family_colour():
    from chunklab.book.viz import STRATEGY_COLORS, strategy_color

    assert strategy_color("recursive 1000, overlap 200") == STRATEGY_COLORS["recursive"]
    assert strategy_color("Recursive[size=400]") == STRATEGY_COLORS["recursive"]
    assert strategy_color("markdown-hierarchy") == STRATEGY_COLORS["hierarchical"]
    assert strategy_color("fixed") != strategy_color("recursive")
    assert strategy_color("something else") == STRATEGY_COLORS["other"]
    assert len(set(STRATEGY_COLORS.values())) == len(STRATEGY_COLORS)
    with pytest.raises(ValueError, match="name"):
        strategy_color(3)  # type: ignore[arg-type]
