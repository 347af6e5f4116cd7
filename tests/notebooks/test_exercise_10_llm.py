"""Exercise 10-llm: its reference reads the recorded model answers as the kit does, and grading runs no model.

The exercise's hidden checks compare the learner's ``parse_boundary_answer`` and
``align_proposition`` with the solution notebook's; these tests pin that the solution's are the
kit's (:mod:`chunklab.chunkers.llm.parse`) on every recorded answer and on the hidden inputs of
many seeds, that those inputs reach every way an answer is read, and that the notebook's set-up
(which the grader runs) loads no generative model.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from chunklab.chunkers.llm import align_proposition, parse_boundary_answer, parse_propositions
from chunklab.course import hidden
from chunklab.course.hidden import inputs_llm
from chunklab.course.notebooks import read_notebook
from chunklab.text import prose_sentences

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "10-llm.ipynb"
CHECKS = {c.function: c for c in hidden.HIDDEN["10-llm"]}


@pytest.fixture(scope="module")
def reference():
    hidden._REFERENCES.clear()
    try:
        yield {name: hidden.reference_function(SOLUTION, check) for name, check in CHECKS.items()}
    finally:
        hidden._REFERENCES.clear()


def _kit_parse(answer: str, units: list[str]) -> list:
    return list(parse_boundary_answer(answer, units))


def _kit_align(proposition: str, source: str) -> list[int] | None:
    found = align_proposition(proposition, source, prose_sentences(source, 0, len(source)))
    return None if found is None else [found.start, found.end]


def test_the_recording_holds_real_answers_of_the_packaged_model():
    data = inputs_llm.load_recording()
    assert data["model"] == "SmolLM2-135M-Instruct.Q4_1"
    assert len(data["boundaries"]) >= 20 and len(data["propositions"]) >= 20
    assert all(2 <= len(w["units"]) <= 8 and isinstance(w["answer"], str) for w in data["boundaries"])
    assert all(p["passage"] and isinstance(p["answer"], str) for p in data["propositions"])


def test_the_reference_reads_every_recorded_answer_as_the_kit_does(reference):
    data = inputs_llm.load_recording()
    for w in data["boundaries"]:
        got = hidden.summarize(reference["parse_boundary_answer"](w["answer"], w["units"]), "value")
        assert got == _kit_parse(w["answer"], w["units"]), w["answer"]
    for p in data["propositions"]:
        for prop in parse_propositions(p["answer"]):
            got = hidden.summarize(reference["align_proposition"](prop, p["passage"]), "value")
            assert got == _kit_align(prop, p["passage"]), prop


def test_the_reference_agrees_with_the_kit_on_the_hidden_inputs_of_many_seeds(reference):
    kit = {"parse_boundary_answer": _kit_parse, "align_proposition": _kit_align}
    for seed in range(40):
        for name, check in CHECKS.items():
            for kind, kwargs in check.inputs(random.Random(seed)):
                got = hidden.summarize(reference[name](**kwargs), "value")
                assert got == kit[name](**kwargs), (seed, kind, kwargs)


def test_the_hidden_inputs_reach_every_way_an_answer_is_read():
    reads: Counter[str] = Counter()
    aligned: Counter[str] = Counter()
    for seed in range(20):
        for _, kw in CHECKS["parse_boundary_answer"].inputs(random.Random(seed)):
            reads[parse_boundary_answer(kw["answer"], kw["units"]).how] += 1
        for _, kw in CHECKS["align_proposition"].inputs(random.Random(seed)):
            src = kw["source"]
            found = align_proposition(kw["proposition"], src, prose_sentences(src, 0, len(src)))
            aligned["none" if found is None else found.how] += 1
    assert set(reads) == {"number", "quote", "empty", "out_of_range", "nonsense"}, reads
    assert set(aligned) == {"exact", "overlap", "none"}, aligned


def test_the_notebooks_set_up_and_functions_load_no_generative_model():
    cells = {c.id: c.source for c in read_notebook(SOLUTION).cells}
    code = "\n".join(cells[i] for i in ("setup", "parse", "align", "shares"))
    probe = code + "\nimport sys\nprint(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT / "solutions"
    )
    assert json.loads(out.stdout.strip().splitlines()[-1].replace("'", '"')) == []
