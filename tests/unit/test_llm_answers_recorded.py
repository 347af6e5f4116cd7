"""The committed runs of benchmarks/llm_answers.py, replayed from the model outputs each recorded.

``chunklab/data/recorded/smollm2-135m-answers.json`` holds what SmolLM2-135M-Instruct answered in
the quick run, ``benchmarks/results/recorded/llm_answers-<label>.json`` in the docs1-q12 run and in
the code-q16 run (the code question set over standard-library files: replayed only where this
interpreter's standard library gives the documents measured, by their SHA-256, else skipped).
Replaying one through today's prompts must find every prompt recorded (a changed prompt means the
recording and the result are stale: re-run ``make llm-answers`` and re-record) and must give back
the answers, the scores and the failure counts the result says, so the tables' numbers are checked
offline.
"""

from __future__ import annotations

import hashlib
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
    "code-q16": (
        RESULT.with_name("llm_answers-code-q16.json"),
        RESULT.parent / "recorded" / "llm_answers-code-q16.json",
    ),
}


def question_set(result: dict) -> object:
    """The question set a run asked: the docs set, or the code set its ``source`` says how to draw."""
    source = result.get("source", {"set": "docs"})
    if source["set"] == "docs":
        return load_dataset("docs")
    from chunklab.datasets.questions.code import code_questions
    from chunklab.datasets.registry import corpus

    data = code_questions(
        n_files=source["n_files"],
        seed=source["seed"],
        max_file_chars=source["max_file_chars"],
        corpus=corpus(source["corpus"]),
    )
    here = {d.doc_id: hashlib.sha256(d.text.encode("utf-8")).hexdigest() for d in data.documents}
    if here != source["sha256"]:
        pytest.skip(f"this interpreter's {source['corpus']} files are not the ones the run measured")
    return data


@pytest.fixture(scope="module", params=sorted(RUNS))
def quick(request):
    result_path, recording = RUNS[request.param]
    result = json.loads(result_path.read_text(encoding="utf-8"))
    return result, question_set(result), ReplayGenerator.from_file(recording)


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
    doc = data.doc({q.id: q for q in data.questions}[result["questions"][0]].doc_id)
    before = gen.unrecorded
    if "recursive+llm-context" in result["model_cost"]:  # the code run wrote no contexts
        chunks = get_strategy("recursive", size=result["size"])(doc)
        stats = ContextStats()
        out = add_llm_context(chunks, doc.text, title=doc.title, markdown=True, generator=gen, stats=stats)
        assert [(c.start, c.end) for c in out] == [(c.start, c.end) for c in chunks]
        assert stats.as_dict() == result["context_stats"]
    if "llm-boundaries" in result["model_cost"]:
        boundaries = chunk_llm_boundaries(doc.text, result["size"], doc.doc_id, generator=gen)
        assert check_chunks(boundaries, doc.text, max_size=result["size"]) == []
    # the failure counts chapter 8 shows, summed over every document the run chunked
    searched = list(result.get("source", {}).get("sha256", {}))  # a code run: the files it drew
    searched = searched or result["dataset"].split(":")[1].split("+")  # a docs run: "docs:<ids>[:sample]"
    for name, recorded in result.get("llm_stats", {}).items():
        chunker = chunk_llm_boundaries if name == "llm-boundaries" else chunk_propositions
        counted = LLMStats()
        for one in map(data.doc, searched):
            chunks = chunker(one.text, result["size"], one.doc_id, generator=gen, stats=counted)
            assert check_chunks(chunks, one.text, max_size=result["size"]) == []
        assert counted.as_dict() == recorded, name
    assert gen.unrecorded == before
