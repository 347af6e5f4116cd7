"""The LLM strategies with recorded answers: where an answer cuts, and what happens when it is useless.

A :class:`ReplayGenerator` answers each prompt with a recorded output (no model runs), so each
behaviour is pinned exactly: a boundary where the model names it, the counted fallback to a size
cut, a model chunk cut to fit, propositions aligned to source spans with the unaligned ones
counted and dropped while the source stays covered.
"""

from __future__ import annotations

import pytest

from chunklab.chunk import check_chunks
from chunklab.chunkers.catalog import get_strategy
from chunklab.chunkers.llm import (
    LLMStats,
    boundary_prompt,
    chunk_llm_boundaries,
    chunk_propositions,
    propositions_prompt,
)
from chunklab.documents import Document
from chunklab.generate import REPLAY_PREFIX, ReplayGenerator
from chunklab.generate.replay import RECORDING

PARAGRAPHS = [
    "Cats are small carnivorous mammals. They were domesticated long ago.",
    "A cat sleeps for twelve to sixteen hours a day.",
    "The stock market fell sharply on Monday. Bank shares lost four percent.",
    "Investors moved their money into government bonds.",
]
TEXT = "\n\n".join(PARAGRAPHS) + "\n"


def _replay(*answers: tuple[list[str] | str, str]) -> ReplayGenerator:
    """Recorded answers by prompt: a list of units is a boundary question, a string a passage."""
    return ReplayGenerator(
        [(boundary_prompt(q) if isinstance(q, list) else propositions_prompt(q), a) for q, a in answers]
    )


def test_the_chunk_ends_before_the_unit_the_model_names():
    gen = _replay((PARAGRAPHS, "Paragraph 3"), (PARAGRAPHS[2:], "2"))
    stats = LLMStats()
    chunks = chunk_llm_boundaries(TEXT, 400, generator=gen, stats=stats)
    assert [c.text for c in chunks] == [TEXT[: TEXT.index("\n\nThe stock")], PARAGRAPHS[2], PARAGRAPHS[3]]
    assert [c.metadata["cut"] for c in chunks] == ["model", "model", "single"]
    assert (stats.prompts, stats.fallbacks, dict(stats.answers)) == (2, 0, {"number": 2})
    assert check_chunks(chunks, TEXT, max_size=400) == []


def test_an_unusable_answer_falls_back_to_a_size_cut_and_is_counted():
    gen = _replay((PARAGRAPHS, "I like turtles."), (PARAGRAPHS[2:], "Paragraph 1"))
    stats = LLMStats()
    chunks = chunk_llm_boundaries(TEXT, 130, generator=gen, stats=stats)
    assert chunks[0].metadata["cut"] == "fallback" and chunks[0].metadata["answer"] == "nonsense"
    assert chunks[0].text == TEXT[: TEXT.index("\n\nThe stock")]  # the two paragraphs that fit in 130
    assert chunks[1].metadata["answer"] == "out_of_range"
    assert (stats.fallbacks, stats.fallback_share) == (2, 1.0)
    assert all(c.metadata["fallbacks"] == 2 and c.metadata["prompts"] == 2 for c in chunks)
    assert check_chunks(chunks, TEXT, max_size=130) == []


def test_a_model_chunk_over_max_size_is_cut_to_fit_and_counted():
    gen = _replay((PARAGRAPHS, "4"), (PARAGRAPHS[2:], "2"))
    stats = LLMStats()
    chunks = chunk_llm_boundaries(TEXT, 130, generator=gen, stats=stats)
    assert chunks[0].metadata["cut"] == "size" and stats.size_cuts == 1
    assert check_chunks(chunks, TEXT, max_size=130) == []


def test_propositions_are_chunks_at_their_source_spans_and_the_rest_stays_covered():
    passage = PARAGRAPHS[2]
    answer = (
        "- The stock market fell sharply on Monday.\n"  # exact
        "- Bank shares lost four percent on Monday.\n"  # reworded: the sentence it came from
        "- Penguins live in Antarctica.\n"  # about nothing in the passage
    )
    gen = _replay((passage, answer))
    stats = LLMStats()
    chunks = chunk_propositions(passage, 400, generator=gen, stats=stats)
    assert [(c.text, c.metadata["aligned"]) for c in chunks] == [
        ("The stock market fell sharply on Monday.", "exact"),
        ("Bank shares lost four percent.", "overlap"),
    ]
    assert chunks[1].metadata["proposition"] == "Bank shares lost four percent on Monday."
    assert (stats.propositions, stats.unaligned, dict(stats.aligned)) == (3, 1, {"exact": 1, "overlap": 1})
    assert stats.unaligned_share == pytest.approx(1 / 3)


def test_a_passage_without_usable_propositions_is_kept_whole():
    gen = _replay((PARAGRAPHS[1], ""))
    chunks = chunk_propositions(PARAGRAPHS[1], 400, generator=gen)
    assert [(c.text, c.metadata["kind"]) for c in chunks] == [(PARAGRAPHS[1], "uncovered")]


def test_propositions_of_one_span_share_one_chunk():
    passage = PARAGRAPHS[1]
    gen = _replay((passage, "A cat sleeps for twelve hours.\nA cat sleeps sixteen hours a day."))
    chunks = chunk_propositions(passage, 400, generator=gen)
    assert len(chunks) == 1 and chunks[0].text == passage
    assert chunks[0].metadata["proposition"].splitlines() == [
        "A cat sleeps for twelve hours.",
        "A cat sleeps sixteen hours a day.",
    ]


def test_catalog_strategies_run_on_a_recording_and_count_over_documents():
    doc = Document.from_text(TEXT, doc_id="animals.txt")
    for name in ("llm-boundaries", "propositions"):
        strategy = get_strategy(name, max_chars=120, model=f"{REPLAY_PREFIX}{RECORDING}")
        chunks = strategy(doc)
        assert check_chunks(chunks, TEXT, max_size=120) == []
        assert strategy(doc) == chunks  # the same recorded answers, the same chunks
        assert strategy.chunker.stats.prompts > 0
        assert chunks[0].metadata["params"]["model"] == f"{REPLAY_PREFIX}{RECORDING.name}"


def test_bad_models_and_generators_are_refused_by_name():
    with pytest.raises(ValueError, match="model must be one of smollm2-135m"):
        get_strategy("llm-boundaries", model="gpt-5")
    with pytest.raises(ValueError, match="window"):
        get_strategy("llm-boundaries", window=0)
    with pytest.raises(ValueError, match="generator must have"):
        chunk_propositions("text", generator=object())


def test_short_paragraphs_share_one_passage_and_one_prompt():
    passage = f"{PARAGRAPHS[0]}\n\n{PARAGRAPHS[1]}"
    gen = _replay((passage, "A cat sleeps for twelve to sixteen hours a day."))
    stats = LLMStats()
    chunks = chunk_propositions(passage, 400, generator=gen, stats=stats)
    assert (stats.prompts, gen.cache_hits, gen.unrecorded) == (1, 1, 0)
    assert [(c.text, c.metadata["kind"]) for c in chunks] == [
        (PARAGRAPHS[0], "uncovered"),
        (PARAGRAPHS[1], "proposition"),
    ]


def test_empty_text_and_a_single_paragraph_ask_the_model_nothing():
    gen = _replay((PARAGRAPHS, "2"))
    assert chunk_llm_boundaries("", 400, generator=gen) == []
    assert chunk_llm_boundaries(" \n\n\t", 400, generator=gen) == []
    one = chunk_llm_boundaries(PARAGRAPHS[0], 400, generator=gen)
    assert [(c.text, c.metadata["cut"], c.metadata["prompts"]) for c in one] == [(PARAGRAPHS[0], "single", 0)]
    assert chunk_propositions("", 400, generator=gen) == []
    assert gen.cache_hits == gen.unrecorded == 0
