"""The committed runs of benchmarks/llm_answers.py, replayed from the model outputs each recorded.

``chunklab/data/recorded/smollm2-135m-answers.json`` holds what SmolLM2-135M-Instruct answered in
the quick run, ``benchmarks/results/recorded/llm_answers-docs1-q12.json`` in the docs1-q12 run.
Replaying one through today's prompts must find every prompt recorded (a changed prompt means the
recording and the result are stale: re-run ``make llm-answers`` and re-record) and must give back
the answers, the scores and the failure counts the result says, so the tables' numbers are checked
offline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunklab.chunk import Chunk, check_chunks
from chunklab.chunkers.catalog import get_strategy
from chunklab.chunkers.llm import LLMStats, chunk_llm_boundaries, chunk_propositions
from chunklab.enrich.llm_context import ContextStats, add_llm_context
from chunklab.evaluate import load_dataset
from chunklab.evaluate.answers import generate_answers, score_answer
from chunklab.generate import ReplayGenerator

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "benchmarks" / "results" / "llm_answers-quick.json"
RECORDING = ROOT / "chunklab" / "data" / "recorded" / "smollm2-135m-answers.json"
#: every committed run and the recording of its model outputs (chapter 8 reads the largest run)
RUNS = {
    "quick": (RESULT, RECORDING),
    "docs1-q12": (
        RESULT.with_name("llm_answers-docs1-q12.json"),
        RESULT.parent / "recorded" / "llm_answers-docs1-q12.json",
    ),
}


@pytest.fixture(scope="module", params=sorted(RUNS))
def quick(request):
    result_path, recording = RUNS[request.param]
    result = json.loads(result_path.read_text(encoding="utf-8"))
    return result, load_dataset("docs"), ReplayGenerator.from_file(recording)


def test_the_recorded_answers_give_back_the_quick_pass_answers_and_scores(quick):
    result, data, gen = quick
    questions = {q.id: q for q in data.questions}
    scores = {(r["strategy"], r["question_id"]): r for r in result["per_question"]}
    for name, by_question in result["passages"].items():
        asked = [questions[qid] for qid in by_question]
        shown = [[Chunk(data.doc(d).text[s:e], s, e, d, {}) for d, s, e in by_question[q.id]] for q in asked]
        answers = generate_answers(
            asked, shown, k=result["k"], generator=gen, max_new_tokens=result["answer_tokens"]
        )
        assert [a.text for a in answers] == [a["answer"] for a in result["answers"][name]]
        for q, a in zip(asked, answers, strict=True):
            for metric, value in score_answer(a, q).items():
                assert value == pytest.approx(scores[name, q.id][metric], abs=1e-4), (name, q.id, metric)
    assert gen.unrecorded == 0


def test_the_recorded_contexts_and_boundaries_answer_todays_prompts_on_the_real_document(quick):
    result, data, gen = quick
    doc = data.doc(result["questions"][0].rsplit("-q", 1)[0])
    chunks = get_strategy("recursive", size=result["size"])(doc)
    stats = ContextStats()
    before = gen.unrecorded
    out = add_llm_context(chunks, doc.text, title=doc.title, markdown=True, generator=gen, stats=stats)
    assert [(c.start, c.end) for c in out] == [(c.start, c.end) for c in chunks]
    assert stats.as_dict() == result["context_stats"]
    boundaries = chunk_llm_boundaries(doc.text, result["size"], doc.doc_id, generator=gen)
    assert check_chunks(boundaries, doc.text, max_size=result["size"]) == []
    for name, recorded in result.get("llm_stats", {}).items():  # the failure counts chapter 8 shows
        chunker = chunk_llm_boundaries if name == "llm-boundaries" else chunk_propositions
        counted = LLMStats()
        chunks = chunker(doc.text, result["size"], doc.doc_id, generator=gen, stats=counted)
        assert check_chunks(chunks, doc.text, max_size=result["size"]) == []
        assert counted.as_dict() == recorded, name
    assert gen.unrecorded == before
