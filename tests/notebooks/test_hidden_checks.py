"""Hidden checks in the grader's own process: comparison, argument rebuilding, reference set-up.

The grader runs the learner's side in a sealed kernel (``test_grader_attacks.py``); here the
"learner" is a patched copy of the reference, run in this process, so every plausible wrong
variant of a function that a hidden check covers can be tried on that check's fresh inputs
cheaply: each one must differ from the reference on at least one kind of input.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab import Chunk
from chunklab.course import hidden
from chunklab.course.notebooks import read_notebook
from chunklab.documents import Document
from tests.support.tiny_course import make_cell
from tests.support.wrong_solutions import WRONG, WRONG_LATE, patched

ROOT = Path(__file__).resolve().parents[2]
#: checks whose reference loads MiniLM (the semantic curve, a fresh store)
NEEDS_MODEL = {"distance_curve", "filtered_search", "retrieve"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(-1e6, 1e6) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)


@given(json_values)
def test_a_summary_is_the_same_as_itself_with_or_without_tolerance(value):
    assert hidden.same(value, value) and hidden.same(value, value, 1e-4)


def test_same_allows_the_tolerance_on_numbers_only():
    assert hidden.same([0.5, {"a": 1.0}], [0.50004, {"a": 0.99995}], 1e-4)
    assert not hidden.same([0.5], [0.5002], 1e-4)
    assert not hidden.same([0.5], [0.50004])  # no tolerance: exact
    assert not hidden.same([1, 2], [1, 2, 3], 1.0) and not hidden.same({"a": 1}, {"b": 1}, 1.0)
    assert not hidden.same(True, 1, 0.5) and not hidden.same("1", 1, 0.5)


def test_arguments_rebuilds_the_named_arguments_and_builds_equal_values_once():
    cases = [{"distances": [0.1, 0.2], "p": 5}, {"distances": [0.1, 0.2], "p": 6}, {"distances": [], "p": 7}]
    built = hidden.arguments(cases, {"distances": "array"})
    assert [type(b["distances"]) for b in built] == [np.ndarray] * 3
    assert built[0]["distances"] is built[1]["distances"] and built[2]["distances"].shape == (0,)
    assert [b["p"] for b in built] == [5, 6, 7] and cases[0]["distances"] == [0.1, 0.2]  # inputs untouched
    (docs,) = hidden.arguments(
        [{"documents": [{"doc_id": "a", "text": "# A\n", "title": "A"}]}], {"documents": "documents"}
    )
    assert docs["documents"] == [Document("a", "# A\n", title="A")]


def test_summaries_keep_the_metadata_keys_asked_for():
    chunks = [Chunk("bc", 1, 3, "d", {"kind": "section", "title": "T", "other": 1})]
    assert hidden.summarize(chunks, "chunks") == [[1, 3, "section", "bc"]]
    assert hidden.summarize(chunks, "chunks+title,missing") == [
        ["d", 1, 3, "bc", {"title": "T", "missing": None}]
    ]
    assert hidden.summarize(np.array([0.5, 1.0]), "value") == [0.5, 1.0]
    with pytest.raises(ValueError, match="summary must be"):
        hidden.summarize(chunks, "rows")


def test_a_count_summary_keeps_how_many_chunks_and_distinct_spans_only():
    """09's retrieve is tuned by the learner: its hidden check compares how many distinct chunks come
    back (k of them), not which ones, so a tuning other than the reference's passes it."""
    a, b = Chunk("ab", 0, 2, "d"), Chunk("cd", 3, 5, "d", {"kind": "table"})
    assert hidden.summarize([a, b], "count") == [2, 2]
    assert hidden.summarize([b, a], "count") == hidden.summarize([a, Chunk("xy", 7, 9, "e")], "count")
    assert hidden.summarize([a, a], "count") == [2, 1]  # the same chunk twice is caught
    (check,) = [c for c in hidden.HIDDEN["09-chroma-checkpoint"] if c.function == "retrieve"]
    assert check.summary == "count"


def _notebook(tmp_path, source: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [make_cell("code", "impl", source)]
    path = tmp_path / "00-ref.ipynb"
    nbformat.write(nb, path)
    return path


def test_the_reference_gets_its_setup_and_may_skip_its_cells_heavy_statements(tmp_path):
    path = _notebook(
        tmp_path, "def spread(xs):\n    return float(np.ptp(xs))\n\nresult = spread(load_the_corpus())"
    )
    inputs = lambda rng: [("a list", {"xs": [1, 5]})]  # noqa: E731
    whole = hidden.HiddenCheck("cp", "spread", ("impl",), inputs, "value", setup="import numpy as np")
    with pytest.raises(NameError, match="load_the_corpus"):
        hidden.reference_function(path, whole)  # the cell's last line needs the notebook's heavy set-up
    lean = hidden.HiddenCheck(
        "cp", "spread", ("impl",), inputs, "value", setup="import numpy as np", definitions_only=True
    )
    hidden._REFERENCES.clear()
    assert hidden.reference_function(path, lean)(xs=[1, 5]) == 4.0
    hidden._REFERENCES.clear()
    without_setup = hidden.HiddenCheck("cp", "spread", ("impl",), inputs, "value", definitions_only=True)
    with pytest.raises(NameError, match="np"):
        hidden.reference_function(path, without_setup)(xs=[1, 5])
    hidden._REFERENCES.clear()


def _wrong_cases():
    wrongs = {**WRONG, **WRONG_LATE}
    for name, checks in sorted(hidden.HIDDEN.items()):
        for check in checks:
            for w in wrongs.get(name, []):
                if w.cell_id in check.reference_cells and not (w.absent_only or w.visible_only):
                    marks = [pytest.mark.slow] if check.function in NEEDS_MODEL else []
                    yield pytest.param(name, check, w, id=f"{name}:{check.function}:{w.label}", marks=marks)


def _results(path: Path, check: hidden.HiddenCheck, cases) -> list:
    func = hidden.reference_function(path, check)
    out = []
    for kwargs in hidden.arguments([kw for _, kw in cases], check.convert):
        try:
            out.append(json.loads(json.dumps(hidden.summarize(func(**kwargs), check.summary), default=str)))
        except Exception as exc:  # a wrong variant may raise: that is a different result too
            out.append({"error": type(exc).__name__})
    return out


@pytest.mark.parametrize(("name", "check", "wrong"), list(_wrong_cases()))
def test_every_wrong_variant_of_a_checked_function_fails_its_hidden_check(tmp_path, name, check, wrong):
    ref_path = ROOT / "solutions" / f"{name}.ipynb"
    wrong_path = tmp_path / f"{name}.ipynb"
    nbformat.write(patched(read_notebook(ref_path), wrong), wrong_path)
    cases = check.inputs(random.Random(11))
    hidden._REFERENCES.clear()
    try:
        expected, got = _results(ref_path, check, cases), _results(wrong_path, check, cases)
    finally:
        hidden._REFERENCES.clear()
    differ = {
        kind
        for (kind, _), g, e in zip(cases, got, expected, strict=True)
        if not hidden.same(g, e, check.tolerance)
    }
    assert differ, f"{wrong.label!r} gives the reference's results on every fresh input of {check.function}"


@pytest.mark.parametrize("name", ["03b-documents", "04-semantic", "09-chroma-checkpoint", "10-llm"])
def test_the_new_notebooks_check_each_learner_function_of_their_checkpoints(name):
    functions = {c.function for c in hidden.HIDDEN[name]}
    expected = {
        "03b-documents": {"remove_margins"},
        "04-semantic": {"percentile_breakpoints", "chunks_from_breakpoints", "distance_curve"},
        "09-chroma-checkpoint": {"chunk_corpus", "filtered_search", "retrieve"},
        "10-llm": {"parse_boundary_answer", "align_proposition"},
    }[name]
    assert functions == expected
    for check in hidden.HIDDEN[name]:
        cases = check.inputs(random.Random(5))
        assert cases != check.inputs(random.Random(6)), "another seed, other inputs"
