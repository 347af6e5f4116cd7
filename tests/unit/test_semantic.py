"""Semantic chunking: sentence splitting, the distance curve, breakpoint rules, size limits, exact offsets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from chunklab.chunk import check_chunks, uncovered
from chunklab.chunkers.semantic import analyze_semantic, breakpoint_threshold, chunk_semantic, split_sentences
from chunklab.embed import Encoder
from tests.support.strategies import nasty_text

CATS = [
    "Cats are small domesticated felines.",
    "They purr when content and sleep most of the day.",
    "Many cats enjoy chasing mice and toys.",
    "A cat grooms its fur with its rough tongue.",
    "Kittens are born blind and open their eyes after a week.",
]
TAX = [
    "Income tax returns must be filed by April.",
    "Deductions reduce your taxable income.",
    "Capital gains are taxed at different rates.",
    "Keep receipts for every deductible expense.",
    "An accountant can help you file the return.",
]
PLANTED = " ".join(CATS) + " " + " ".join(TAX)
CHANGE_AT = len(" ".join(CATS)) + 1  # offset where the tax topic starts


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> Encoder:
    return Encoder(cache_dir=tmp_path_factory.mktemp("cache"))


def _sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


# -- sentence splitting ---------------------------------------------------------------------
def test_abbreviations_and_initials_do_not_end_sentences():
    text = "Dr. Smith met J. R. Tolkien in the U.S. last year. Fig. 3 shows e.g. the results. Next one."
    assert _sentences(text) == [
        "Dr. Smith met J. R. Tolkien in the U.S. last year.",
        "Fig. 3 shows e.g. the results.",
        "Next one.",
    ]


def test_decimals_urls_and_file_names_do_not_end_sentences():
    text = "Pi is 3.14 roughly. See https://example.com/docs/a.html for more. Edit setup.py now! Done?"
    assert _sentences(text) == [
        "Pi is 3.14 roughly.",
        "See https://example.com/docs/a.html for more.",
        "Edit setup.py now!",
        "Done?",
    ]


def test_fenced_code_and_tables_are_single_units_and_headings_are_boundaries():
    text = (
        "# Setup\nInstall it. Then run it.\n\n```python\nx = 1. \n\ny = 2\n```\n"
        "| a | b |\n|---|---|\n| 1. | 2 |\n- first item. Still first\n- second item"
    )
    assert _sentences(text) == [
        "# Setup",
        "Install it.",
        "Then run it.",
        "```python\nx = 1. \n\ny = 2\n```",
        "| a | b |\n|---|---|\n| 1. | 2 |",
        "- first item.",
        "Still first",
        "- second item",
    ]


def test_markdown_emphasis_closes_a_sentence_and_no_is_only_an_abbreviation_before_a_number():
    text = "**Q: Can I keep my phone?** No. The app is *great.* See Fig. 3 and No. 5 now."
    assert _sentences(text) == [
        "**Q: Can I keep my phone?**",
        "No.",
        "The app is *great.*",
        "See Fig. 3 and No. 5 now.",
    ]


def test_lowercase_after_a_period_continues_the_sentence():
    assert _sentences("It costs 5 p.m. tomorrow and etc. more. The end.") == [
        "It costs 5 p.m. tomorrow and etc. more.",
        "The end.",
    ]


@settings(max_examples=200, deadline=None)
@given(nasty_text)
def test_sentence_spans_are_ordered_trimmed_and_cover_every_word(text):
    spans = split_sentences(text)
    pos = 0
    for s, e in spans:
        assert pos <= s < e <= len(text)
        assert not text[s].isspace() and not text[e - 1].isspace()
        pos = e
    covered = "".join(text[s:e] for s, e in spans)
    assert "".join(covered.split()) == "".join(text.split())


# -- breakpoints ----------------------------------------------------------------------------
def test_breakpoint_lands_on_the_planted_topic_change(encoder):
    analysis = analyze_semantic(PLANTED, buffer_size=0, percentile=90, min_chars=0, encoder=encoder)
    assert analysis.breakpoints == [len(CATS) - 1]
    assert [c.start for c in analysis.chunks[1:]] == [CHANGE_AT]
    assert int(np.argmax(analysis.distances)) == len(CATS) - 1


def test_split_windows_put_the_peak_on_the_gap_with_a_buffer(encoder):
    analysis = analyze_semantic(
        PLANTED, buffer_size=1, window="split", percentile=90, min_chars=0, encoder=encoder
    )
    assert analysis.breakpoints == [len(CATS) - 1]


def test_centered_windows_find_the_change_within_one_sentence(encoder):
    analysis = analyze_semantic(PLANTED, buffer_size=1, percentile=90, min_chars=0, encoder=encoder)
    assert len(analysis.breakpoints) == 1
    assert abs(analysis.breakpoints[0] - (len(CATS) - 1)) <= 1


def test_distance_curve_has_one_value_per_gap_between_sentences(encoder):
    analysis = analyze_semantic(PLANTED, encoder=encoder)
    assert len(analysis.sentences) == len(CATS) + len(TAX)
    assert analysis.distances.shape == (len(CATS) + len(TAX) - 1,)
    assert np.all((analysis.distances >= 0) & (analysis.distances <= 2))
    assert set(analysis.timings) == {"segmentation", "embedding", "breakpoints"}


@pytest.mark.parametrize("method", ["percentile", "standard_deviation", "interquartile", "gradient"])
def test_each_rule_cuts_exactly_where_its_signal_exceeds_its_threshold(encoder, method):
    analysis = analyze_semantic(PLANTED, method=method, min_chars=0, encoder=encoder)
    expected = [i for i, v in enumerate(analysis.signal) if v > analysis.threshold]
    assert analysis.breakpoints == expected
    assert analysis.chunks[0].metadata["params"]["method"] == method


def test_rules_follow_their_definitions():
    d = np.array([0.1, 0.2, 0.15, 0.9, 0.12, 0.18])
    assert breakpoint_threshold(d, "percentile", percentile=50)[1] == pytest.approx(np.median(d))
    assert breakpoint_threshold(d, "standard_deviation", amount=1)[1] == pytest.approx(d.mean() + d.std())
    q1, q3 = np.quantile(d, [0.25, 0.75])
    assert breakpoint_threshold(d, "interquartile")[1] == pytest.approx(d.mean() + 1.5 * (q3 - q1))
    signal, _ = breakpoint_threshold(d, "gradient")
    assert np.allclose(signal, np.gradient(d))
    assert breakpoint_threshold(d, "threshold", threshold=0.5)[1] == 0.5
    assert breakpoint_threshold(np.array([]), "percentile")[1] is None


def test_fixed_threshold_below_every_distance_cuts_at_every_sentence(encoder):
    chunks = chunk_semantic(PLANTED, threshold=-1.0, min_chars=0, encoder=encoder)
    assert [(c.start, c.end) for c in chunks] == split_sentences(PLANTED)
    assert chunks[0].metadata["params"]["method"] == "threshold"


# -- sizes and the Chunk contract --------------------------------------------------------------
def test_min_chars_merges_small_groups(encoder):
    chunks = chunk_semantic(PLANTED, threshold=-1.0, min_chars=120, encoder=encoder)
    assert len(chunks) < len(CATS) + len(TAX)
    assert all(len(c.text) >= 120 for c in chunks)
    assert check_chunks(chunks, PLANTED) == []


def test_max_chars_bounds_every_chunk_even_a_huge_sentence(encoder):
    text = PLANTED + " " + "word " * 200 + "ends here. " + PLANTED
    chunks = chunk_semantic(text, threshold=5.0, min_chars=0, max_chars=150, encoder=encoder)
    assert check_chunks(chunks, text, max_size=150) == []
    assert any(c.metadata["cut"] == "max_chars" for c in chunks)


def test_chunks_are_exact_slices_with_strategy_metadata_and_nothing_lost(encoder):
    text = "# Title\n\n" + PLANTED + "\n\n```\ncode. block\n```\n\n" + PLANTED[::-1]
    chunks = chunk_semantic(text, encoder=encoder, doc_id="d1")
    assert check_chunks(chunks, text, max_size=2000) == []
    assert uncovered(chunks, text) == []
    assert all(c.metadata["strategy"] == "semantic" and c.doc_id == "d1" for c in chunks)
    assert [c.metadata["index"] for c in chunks] == list(range(len(chunks)))


def test_semantic_chunking_is_deterministic(encoder):
    a = chunk_semantic(PLANTED, encoder=encoder, min_chars=0)
    b = chunk_semantic(PLANTED, encoder=encoder, min_chars=0)
    assert [(c.start, c.end, c.id) for c in a] == [(c.start, c.end, c.id) for c in b]


@pytest.mark.parametrize("text", ["", "   \n\n ", "One lonely sentence."])
def test_empty_and_single_sentence_texts(encoder, text):
    chunks = chunk_semantic(text, encoder=encoder)
    assert check_chunks(chunks, text) == []
    assert len(chunks) == (1 if text.strip() else 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "magic"}, "method"),
        ({"method": "threshold"}, "threshold"),
        ({"threshold": 0.3, "method": "gradient"}, "threshold"),
        ({"buffer_size": -1}, "buffer_size"),
        ({"percentile": 120}, "percentile"),
        ({"min_chars": 500, "max_chars": 100}, "min_chars"),
        ({"max_chars": 0}, "max_chars"),
        ({"window": "sideways"}, "window"),
    ],
)
def test_bad_parameters_raise_value_errors(encoder, kwargs, match):
    with pytest.raises(ValueError, match=match):
        chunk_semantic(PLANTED, encoder=encoder, **kwargs)


def test_non_text_input_is_a_value_error():
    with pytest.raises(ValueError, match="text"):
        chunk_semantic(42)  # type: ignore[arg-type]


def test_semantic_chunking_without_an_encoder_says_to_pass_one():
    # chunkers sit below the embedding layer (the layers contract): the caller brings the model
    text = "The depot opens at seven. The bay opens at eight. The office closes at noon."
    with pytest.raises(ValueError, match="needs encoder="):
        chunk_semantic(text, min_chars=0)


def test_chunk_semantic_shows_and_takes_the_parameters_of_analyze_semantic():
    """One spelling of the twelve parameters (parameters_of): help() shows them, with chunks returned."""
    import inspect

    shown, model = inspect.signature(chunk_semantic), inspect.signature(analyze_semantic)
    assert list(shown.parameters.values()) == list(model.parameters.values())
    assert shown.return_annotation == "list[Chunk]" and chunk_semantic.__name__ == "chunk_semantic"
    with pytest.raises(TypeError):
        chunk_semantic("text", no_such_parameter=1)
