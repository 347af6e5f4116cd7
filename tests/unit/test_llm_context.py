"""Contextual retrieval with recorded answers: the model's context is embedded, the chunk text is not touched.

The replayed outputs are ones SmolLM2-135M-Instruct really gave for chunks of the docs corpus
(a generic sentence, and an echo of the prompt's tags), so both the normal path and the counted
fallback are pinned without running the model.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.chunk import check_chunks, embedding_text
from chunklab.chunkers.catalog import get_strategy
from chunklab.documents import Document
from chunklab.enrich.llm_context import (
    CONTEXT_CHARS,
    ContextStats,
    add_llm_context,
    clean_context,
    document_excerpt,
    situate_prompt,
)
from chunklab.generate import ReplayGenerator

SOURCE = (
    "# Access policy\n\nEvery account belongs to one named person.\n\n"
    "## Account types\n\nContractor accounts end with the contract, at most 6 months.\n"
)
GENERIC = "The document is structured as a list of rules, with a short sentence that explains the process."
ECHO = "<chunk> <document> <document> <document>"


def _chunks():
    return get_strategy("recursive", size=60)(Document("policy", SOURCE, format="markdown"))


def _replay(chunks, answers):
    return ReplayGenerator(
        [(situate_prompt(document_excerpt(SOURCE, c.start), c.text), a) for c, a in zip(chunks, answers)]
    )


def test_the_model_context_is_embedded_after_the_title_and_the_text_stays_the_source_slice():
    chunks = _chunks()
    answers = [GENERIC] * (len(chunks) - 1) + [ECHO]
    gen, stats = _replay(chunks, answers), ContextStats()
    out = add_llm_context(chunks, SOURCE, title="Access policy", markdown=True, generator=gen, stats=stats)
    assert gen.unrecorded == 0
    assert [(c.text, c.start, c.end, c.id) for c in out] == [(c.text, c.start, c.end, c.id) for c in chunks]
    assert check_chunks(out, SOURCE) == []
    last = out[-1]
    assert out[0].metadata["context"] == f"Access policy\n{GENERIC}"
    assert out[0].metadata["context_from"] == "llm"
    assert embedding_text(out[0]) == f"Access policy\n{GENERIC}\n\n{out[0].text}"
    # the echoed tags are no context: the chunk keeps its title and section path, and it is counted
    assert last.metadata["context"] == "Access policy > Account types"
    assert (last.metadata["context_from"], last.metadata["llm_context"]) == ("fallback", "")
    assert (stats.prompts, stats.fallbacks) == (len(chunks), 1)


def test_without_the_title_only_the_model_context_is_embedded():
    chunks = _chunks()
    out = add_llm_context(
        chunks, SOURCE, with_title=False, generator=_replay(chunks, [GENERIC] * len(chunks))
    )
    assert all(c.metadata["context"] == GENERIC for c in out)


def test_bad_arguments_are_refused_by_name():
    chunks = _chunks()
    gen = _replay(chunks, [GENERIC] * len(chunks))
    with pytest.raises(ValueError, match="source"):
        add_llm_context(chunks, SOURCE[:10], generator=gen)
    with pytest.raises(ValueError, match="doc_chars"):
        add_llm_context(chunks, SOURCE, generator=gen, doc_chars=0)
    with pytest.raises(ValueError, match="generator"):
        add_llm_context(chunks, SOURCE, generator=object())  # type: ignore[arg-type]


def test_the_excerpt_is_the_opening_and_what_comes_just_before_the_chunk():
    text = "".join(f"{i:04d} " for i in range(1000))  # 5,000 characters
    assert document_excerpt(text[:900], 500, 1000) == text[:900]
    excerpt = document_excerpt(text, 4000, 1000)
    assert excerpt == f"{text[:500]}\n[...]\n{text[3500:4000]}"
    assert document_excerpt(text, 700, 1000) == text[:700]  # the two parts meet: no gap marker


@given(st.text(max_size=500))
def test_a_cleaned_context_is_one_line_within_the_limit_and_from_the_answer(answer):
    clean = clean_context(answer)
    assert "\n" not in clean and len(clean) <= CONTEXT_CHARS
    assert clean == "" or any(ch.isalnum() for ch in clean)
    source = unicodedata.normalize("NFC", answer)
    assert all(word in source for word in clean.split())


def test_labels_quotes_and_later_paragraphs_are_cleaned_away():
    assert clean_context('Context: "This chunk lists the account types."\n\nMore text.') == (
        "This chunk lists the account types."
    )
    assert clean_context(ECHO) == clean_context("") == clean_context(None) == ""
