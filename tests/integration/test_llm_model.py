"""The LLM strategies with the real packaged model on a few short paragraphs, then again from the cache.

One model load for the module (the slow part: minutes on a busy CPU), a few short prompts, and
a second run answered entirely by the on-disk cache (kept under a temporary folder). Skipped,
with the install line, when the model package is absent.
"""

from __future__ import annotations

import pytest

from chunklab.chunk import check_chunks
from chunklab.chunkers.llm import LLMStats, chunk_llm_boundaries, chunk_propositions
from chunklab.generate import Generator, model_file
from chunklab.generate import model as generate_model

try:
    model_file()
except ImportError as exc:  # pragma: no cover - depends on the install
    pytest.skip(str(exc), allow_module_level=True)

TEXT = (
    "Cats are small carnivorous mammals. They were domesticated about ten thousand years ago.\n\n"
    "A cat sleeps for twelve to sixteen hours a day.\n\n"
    "The stock market fell sharply on Monday. Bank shares lost four percent.\n"
)
PASSAGE = "The Eiffel Tower, built in 1889, stands in Paris."


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("generations")


@pytest.fixture(scope="module")
def first_run(cache_dir):
    """Both strategies with a cold cache: the model is loaded and answers every prompt."""
    gen = Generator(cache_dir=cache_dir)
    stats = LLMStats()
    boundaries = chunk_llm_boundaries(TEXT, 200, generator=gen, stats=stats)
    propositions = chunk_propositions(PASSAGE, 200, generator=gen, stats=stats)
    return gen, stats, boundaries, propositions


def test_the_real_model_chunks_keep_the_contract_and_every_answer_is_counted(first_run):
    gen, stats, boundaries, propositions = first_run
    assert check_chunks(boundaries, TEXT, max_size=200) == []
    assert check_chunks(propositions, PASSAGE, max_size=200) == []
    assert gen.model_calls == stats.prompts and gen.cache_hits == 0
    assert (
        sum(stats.answers.values()) == stats.prompts - 1 >= 1
    )  # each boundary answer read one way or another
    assert stats.propositions == sum(stats.aligned.values()) + stats.unaligned
    assert gen.generated_tokens > 0 and gen.load_seconds > 0


def test_a_second_run_generates_nothing_and_gives_the_same_chunks(first_run, cache_dir):
    _gen, stats, boundaries, propositions = first_run
    again = Generator(cache_dir=cache_dir)
    assert chunk_llm_boundaries(TEXT, 200, generator=again) == boundaries
    assert chunk_propositions(PASSAGE, 200, generator=again) == propositions
    assert (again.model_calls, again.cache_hits, again.generated_tokens) == (0, stats.prompts, 0)
    assert [c.metadata for c in chunk_llm_boundaries(TEXT, 200, generator=again)] == [
        c.metadata for c in boundaries
    ]


def test_the_model_loads_again_from_its_converted_copy_and_answers_the_same(
    first_run, cache_dir, monkeypatch
):
    gen = first_run[0]
    assert gen.converted_dir is not None and (gen.converted_dir / "model.safetensors").is_file()
    prompt = "Name one colour."
    original = Generator(cache_dir=False).generate([prompt], max_new_tokens=6)  # the model read from the GGUF
    monkeypatch.setattr(generate_model, "_LOADED", {})  # as in a new process
    again = Generator(cache_dir=cache_dir)
    assert again.generate([prompt], max_new_tokens=6) == original
    assert again.model_calls == 1 and again.load_seconds > 0


def test_contexts_and_answers_from_the_real_model_keep_offsets_and_come_back_from_the_cache(cache_dir):
    from chunklab.chunk import Chunk
    from chunklab.datasets.corpora.docs import Question
    from chunklab.enrich.llm_context import ContextStats, add_llm_context
    from chunklab.evaluate.answers import generate_answers, score_answer

    cut = TEXT.index("\n\nThe stock")
    chunks = [Chunk(TEXT[:cut], 0, cut, "pets", {}), Chunk(TEXT[cut + 2 :], cut + 2, len(TEXT), "pets", {})]
    gold = [(TEXT.index("A cat"), cut)]
    question = Question(
        "q", "How long does a cat sleep?", "pets", gold, ["twelve to sixteen hours"], "prose", "dev", False
    )

    def run(gen: Generator) -> tuple[list[Chunk], list[dict[str, float]], ContextStats]:
        stats = ContextStats()
        out = add_llm_context(chunks, TEXT, title="Notes", generator=gen, max_new_tokens=16, stats=stats)
        answers = generate_answers([question], [chunks], k=2, generator=gen, max_new_tokens=16)
        return out, [score_answer(a, question) for a in answers], stats

    contexts, scores, stats = run(Generator(cache_dir=cache_dir))
    assert [(c.text, c.start, c.end) for c in contexts] == [(c.text, c.start, c.end) for c in chunks]
    assert stats.prompts == 2 and all(c.metadata["context"].startswith("Notes") for c in contexts)
    assert all(0.0 <= v <= 1.0 for v in scores[0].values())
    again = Generator(cache_dir=cache_dir)
    assert run(again)[:2] == (contexts, scores)
    assert (again.model_calls, again.cache_hits) == (0, 3)
