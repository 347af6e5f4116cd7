"""Answers and their scores: token F1, support, citations, and the paired bootstrap over questions.

The scoring functions are pure; properties pin what the chapter says about them (F1 is symmetric,
in [0, 1], 1 on texts that normalize alike). Answers come from a replay of recorded outputs, so
no model runs.
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.chunk import Chunk
from chunklab.datasets.corpora.docs import Question
from chunklab.evaluate.answers import (
    ANSWER_METRICS,
    Answer,
    answer_differences,
    answer_prompt,
    answer_summary,
    answer_tokens,
    citation_scores,
    generate_answers,
    parse_citations,
    score_answer,
    strip_citations,
    supported_share,
    token_f1,
)
from chunklab.generate import ReplayGenerator

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


def Q(
    qid: str, question: str, doc_id: str, gold_spans: list[tuple[int, int]], answers: list[str]
) -> Question:
    """A question of the docs set's kind, with its gold spans and quotes."""
    return Question(
        qid, question, doc_id, gold_spans, answers, kind="prose", split="dev", needs_context=False
    )


@given(texts, texts)
def test_token_f1_is_symmetric_and_between_zero_and_one(a, b):
    f1 = token_f1(a, b)
    assert 0.0 <= f1 <= 1.0
    assert f1 == pytest.approx(token_f1(b, a))


@given(texts)
def test_token_f1_is_one_on_texts_that_normalize_alike(a):
    assert token_f1(a, a) == 1.0
    assert token_f1(a.upper() + " the .", "An " + a) == pytest.approx(token_f1(a, a))


@given(texts, texts)
def test_token_f1_is_zero_without_a_shared_token_unless_both_are_empty(a, b):
    if not set(answer_tokens(a)) & set(answer_tokens(b)):
        assert token_f1(a, b) == float(not answer_tokens(a) and not answer_tokens(b))


def test_token_f1_counts_shared_tokens_as_squad_does():
    # prediction 4 tokens ("the" dropped), reference 2, both shared: P=1/2, R=1, F1=2/3
    assert token_f1("The login lasts six months", "six months.") == pytest.approx(2 / 3)
    assert answer_tokens("| Contractor | End of contract, at most 6 months |") == [
        "contractor",
        "end",
        "of",
        "contract",
        "at",
        "most",
        "6",
        "months",
    ]


@given(texts, st.integers(min_value=0, max_value=5))
def test_citations_are_valid_passage_numbers_each_once(answer, n):
    cites = parse_citations(answer, n)
    assert all(1 <= c <= n for c in cites)
    assert len(set(cites)) == len(cites)


def test_citations_are_read_in_order_from_brackets_and_lists():
    assert parse_citations("Six months [2]. Renewal needs a manager [1, 3] [2] [7].", 3) == (2, 1, 3)
    assert parse_citations("Paragraph 2 says so.", 3) == ()
    assert parse_citations(None, 3) == ()
    assert strip_citations("Six months [2].") == "Six months  ."


def test_a_sentence_is_supported_when_half_its_tokens_are_in_the_passages():
    passages = ["Contractor accounts end with the contract, at most 6 months."]
    assert supported_share("Contractor accounts last at most 6 months [1].", passages) == 1.0
    assert supported_share("Contractor accounts end. Penguins dance on ice floes.", passages) == 0.5
    assert supported_share("", passages) == 0.0
    with pytest.raises(ValueError, match="min_share"):
        supported_share("x", passages, min_share=2)


@given(texts, st.lists(texts, max_size=3))
def test_support_is_a_share(answer, passages):
    assert 0.0 <= supported_share(answer, passages) <= 1.0


def _chunk(start: int, end: int, doc_id: str = "d") -> Chunk:
    return Chunk("x" * (end - start), start, end, doc_id, {})


def test_a_citation_is_correct_when_the_cited_chunk_overlaps_a_gold_span():
    passages = (_chunk(0, 100), _chunk(100, 200), _chunk(150, 250, "other"))
    gold = [(120, 140)]
    assert citation_scores(Answer("q", "", (2,), passages), "d", gold) == {
        "cites_gold": 1.0,
        "citation_precision": 1.0,
    }
    assert citation_scores(Answer("q", "", (1, 2), passages), "d", gold)["citation_precision"] == 0.5
    # the same offsets in another document are not the gold
    assert citation_scores(Answer("q", "", (3,), passages), "d", [(150, 160)])["cites_gold"] == 0.0
    # touching is not overlapping; no citation scores 0
    assert citation_scores(Answer("q", "", (1,), passages), "d", [(100, 110)])["cites_gold"] == 0.0
    assert citation_scores(Answer("q", "", (), passages), "d", gold) == {
        "cites_gold": 0.0,
        "citation_precision": 0.0,
    }


def test_answers_come_from_the_top_k_chunks_with_their_citations_read():
    q = Q("q1", "How long does a contractor login last?", "d", [(0, 20)], ["at most 6 months"])
    top = [Chunk("Contractor logins last at most 6 months.", 0, 40, "d", {}), _chunk(40, 80), _chunk(80, 99)]
    gen = ReplayGenerator([(answer_prompt(q.question, [c.text for c in top[:2]]), "At most 6 months [1].")])
    (answer,) = generate_answers([q], [top], k=2, generator=gen)
    assert (answer.text, answer.cites, len(answer.passages)) == ("At most 6 months [1].", (1,), 2)
    assert gen.cache_hits == 1 and gen.unrecorded == 0
    scores = score_answer(answer, q)
    assert list(scores) == list(ANSWER_METRICS)
    assert scores == {"answer_f1": 1.0, "supported": 1.0, "cites_gold": 1.0, "citation_precision": 1.0}
    with pytest.raises(ValueError, match="one list per question"):
        generate_answers([q], [], generator=gen)
    with pytest.raises(ValueError, match="not 'q2'"):
        score_answer(answer, Q("q2", "?", "d", [(0, 1)], ["x"]))


def test_the_summary_bootstraps_every_strategy_on_the_same_questions():
    rows = [
        {"strategy": s, "question_id": f"q{i}", **dict.fromkeys(ANSWER_METRICS, v)}
        for s, vals in (("a", [1, 1, 0, 1]), ("b", [0, 0, 0, 1]))
        for i, v in enumerate(vals)
    ]
    frame = pd.DataFrame(rows)
    summary = answer_summary(frame, n_resamples=500)
    assert summary.loc["a", "answer_f1"] == 0.75 and summary.loc["b", "answer_f1"] == 0.25
    assert summary.loc["a", "answer_f1_lo"] <= 0.75 <= summary.loc["a", "answer_f1_hi"]
    (diff, *_rest) = answer_differences(frame, [("a", "b")], n_resamples=500)
    assert (diff["metric"], diff["diff"]) == ("answer_f1", 0.5)
    assert diff["lo"] <= 0.5 <= diff["hi"]
    assert diff["established"] == (diff["lo"] > 0)
    with pytest.raises(ValueError, match="same questions"):
        answer_summary(frame.iloc[:-1])
    with pytest.raises(ValueError, match="'c'"):
        answer_differences(frame, [("a", "c")])
