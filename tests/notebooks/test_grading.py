"""The grader and the checkpoint helpers, on a tiny course built in a temporary folder."""

from __future__ import annotations

import copy
import csv
import re

import nbformat
import pytest

from chunklab.cli import main
from chunklab.course import at_least, at_most, band, describe_chunks, show
from chunklab.course.generate import make_exercise
from chunklab.course.graded import build_graded_notebook
from chunklab.course.notebooks import GradingError, read_notebook
from chunklab.course.paths import find_reference
from tests.support.tiny_course import SOLUTION_SOURCE, make_cell, stdout_output, tiny_solution

# ------------------------------------------------------------------------- checkpoint helpers


def test_band_names_the_interval_holding_the_value():
    edges = [0, 0.05, 0.1, 0.2]
    assert band(0.07, edges) == "0.05-0.1"
    assert band(0.05, edges) == "0.05-0.1"
    assert band(-1, edges) == "< 0"
    assert band(0.2, edges, unit="%") == ">= 0.2%"
    assert band(float("nan"), edges) == "undefined"
    with pytest.raises(ValueError):
        band(1, [2, 1])


def test_threshold_verdicts_name_the_quantity_and_threshold():
    assert at_least("recall@5", 0.81, 0.8) == "recall@5 >= 0.8: yes"
    assert at_least("recall@5", 0.79, 0.8) == "recall@5 >= 0.8: no"
    assert at_most("fallback rate", 0.2, 0.05) == "fallback rate <= 0.05: no"
    assert at_least("x", float("nan"), 0) == "x >= 0: no"


def test_show_rounds_floats(capsys):
    show("mean", 2 / 3)
    show("count", 7)
    assert capsys.readouterr().out == "mean: 0.667\ncount: 7\n"


def test_describe_chunks_reports_count_spans_and_contract_violations(capsys):
    from chunklab import Chunk

    text = "alpha beta gamma"
    describe_chunks([Chunk("alpha", 0, 5), Chunk("beta", 6, 10)], text)
    out = capsys.readouterr().out
    assert "chunks: 2" in out and "first spans: [(0, 5), (6, 10)]" in out
    assert "contract violations: 1" in out and "gamma" in out  # the lost word is named


# ------------------------------------------------------------------------- a tiny course


@pytest.fixture
def course(tmp_path):
    sol = tmp_path / "solutions"
    sol.mkdir()
    nbformat.write(tiny_solution(), sol / "00-tiny.ipynb")
    (sol / "nbval_sanitize.cfg").write_text(
        "[timings]\nregex: \\b\\d+(\\.\\d+)?\\s?s\\b\nreplace: TIME\n", encoding="utf-8"
    )
    return sol


# ------------------------------------------------------------------------- finding and reading


def test_reference_is_found_by_notebook_name(course, tmp_path):
    assert find_reference(tmp_path / "exercises" / "00-tiny.ipynb", course) == course / "00-tiny.ipynb"
    assert find_reference("submissions/alice-00-tiny.ipynb", course) == course / "00-tiny.ipynb"


def test_a_notebook_that_is_not_the_courses_is_named_as_such(course):
    with pytest.raises(GradingError, match="not one of the course's notebooks.*00-tiny"):
        find_reference("homework.ipynb", course)


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{not json", "not valid JSON"),
        ('{"cells": 3}', "malformed notebook"),
        (
            '{"cells": [{"cell_type": "code"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
            "malformed",
        ),
    ],
)
def test_missing_or_malformed_notebooks_give_a_clear_error(tmp_path, content, message):
    path = tmp_path / "00-tiny.ipynb"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(GradingError, match=message):
        read_notebook(path)


def test_a_folder_or_a_non_notebook_file_is_refused(tmp_path):
    with pytest.raises(GradingError, match="folder"):
        read_notebook(tmp_path)
    (tmp_path / "notes.txt").write_text("hi", encoding="utf-8")
    with pytest.raises(GradingError, match="not a notebook"):
        read_notebook(tmp_path / "notes.txt")


def test_cli_reports_a_missing_path_without_a_traceback(course, capsys, monkeypatch):
    monkeypatch.chdir(course.parent)
    rc = main(["grade", str(course.parent / "exercises" / "00-tiny.ipynb")])
    out = capsys.readouterr()
    assert rc == 2
    assert "no such file" in out.out + out.err
    assert "Traceback" not in out.out + out.err


def test_cli_reports_an_empty_folder(tmp_path, capsys):
    rc = main(["grade", str(tmp_path)])
    assert rc == 2
    assert "holds no .ipynb" in capsys.readouterr().err


# ------------------------------------------------------------------------- the graded notebook


def test_checkpoints_come_from_the_reference_with_their_outputs():
    ref = tiny_solution()
    learner = make_exercise(ref)
    learner.cells[2].source = "print('double(21): 42')"  # edited checkpoint source
    learner.cells[2].outputs = [stdout_output("double(21): 42\n")]  # and faked output
    learner.cells[1].outputs = [stdout_output("whatever\n")]
    graded = build_graded_notebook(learner, ref)
    by_id = {c.id: c for c in graded.cells}
    assert by_id["cp-one"].source == ref.cells[2].source
    assert by_id["cp-one"].outputs == ref.cells[2].outputs
    assert by_id["impl"].outputs == [] and by_id["impl"].execution_count is None
    assert "raise NotImplementedError" in by_id["impl"].source


def test_a_deleted_checkpoint_is_put_back_after_its_predecessor():
    ref = tiny_solution()
    learner = copy.deepcopy(ref)
    del learner.cells[4]  # cp-two
    del learner.cells[2]  # cp-one
    graded = build_graded_notebook(learner, ref)
    assert [c.id for c in graded.cells] == ["intro", "impl", "cp-one", "more", "cp-two"]


def test_learner_cells_tagged_checkpoint_do_not_count_and_ids_never_clash():
    ref = tiny_solution()
    learner = copy.deepcopy(ref)
    fake = make_cell("code", "cp-mine", "print('x')", [stdout_output("x\n")], ["checkpoint"], 9)
    learner.cells.append(fake)
    graded = build_graded_notebook(learner, ref)
    mine = [c for c in graded.cells if c.source == "print('x')"][0]
    assert "tags" not in mine.metadata and mine.outputs == []
    ids = [c.id for c in graded.cells]
    assert len(ids) == len(set(ids))


def test_exercises_saved_without_ids_are_matched_despite_the_lock_banner():
    ref = tiny_solution()
    learner = make_exercise(ref)
    for i, cell in enumerate(learner.cells):
        cell["id"] = f"random{i}"
    graded = build_graded_notebook(learner, ref)
    assert [c.id for c in graded.cells] == ["random0", "random1", "cp-one", "random3", "cp-two"]


def test_notebooks_saved_without_ids_are_matched_by_checkpoint_source():
    ref = tiny_solution()
    learner = copy.deepcopy(ref)
    for i, cell in enumerate(learner.cells):
        cell["id"] = f"random{i}"
    graded = build_graded_notebook(learner, ref)
    assert [c.id for c in graded.cells] == ["random0", "random1", "cp-one", "random3", "cp-two"]


# ------------------------------------------------------------------------- grading end to end


@pytest.mark.slow
def test_bulk_grading_of_a_mixed_folder_writes_the_gradebook_and_a_feedback_page_each(
    course, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    subs = tmp_path / "submissions"
    subs.mkdir()
    ref = tiny_solution()
    nbformat.write(ref, subs / "good-00-tiny.ipynb")
    blank = make_exercise(ref)
    nbformat.write(blank, subs / "blank-00-tiny.ipynb")
    faked = make_exercise(ref)
    for cell, ref_cell in zip(faked.cells, ref.cells, strict=True):
        if ref_cell.metadata.get("tags") == ["checkpoint"]:
            cell.outputs, cell.execution_count = copy.deepcopy(ref_cell.outputs), ref_cell.execution_count
    nbformat.write(faked, subs / "faked-00-tiny.ipynb")
    wrong = copy.deepcopy(ref)
    wrong.cells[1].source = SOLUTION_SOURCE.replace("2 * x", "2 * x + 1")
    del wrong.cells[4]  # and the learner deleted a checkpoint: it is still run
    nbformat.write(wrong, subs / "wrong-00-tiny.ipynb")
    (subs / "broken-00-tiny.ipynb").write_text("{oops", encoding="utf-8")
    report = tmp_path / "grades.csv"

    rc = main(["grade", str(subs), "--report", str(report), "--timeout", "120"])
    out = capsys.readouterr().out

    assert rc == 1
    rows = {row["notebook"].split("/")[-1]: row for row in csv.DictReader(report.open())}
    assert rows["good-00-tiny.ipynb"]["passed"] == "2" and rows["good-00-tiny.ipynb"]["score"] == "1.000"
    assert rows["blank-00-tiny.ipynb"]["passed"] == "0"
    assert rows["blank-00-tiny.ipynb"]["failed_checkpoints"] == "cp-one cp-two"
    assert rows["faked-00-tiny.ipynb"]["passed"] == "0"
    assert rows["wrong-00-tiny.ipynb"]["total"] == "2" and rows["wrong-00-tiny.ipynb"]["passed"] == "0"
    assert "not valid JSON" in rows["broken-00-tiny.ipynb"]["error"]
    # one line per checkpoint, the diff for a wrong value, the error for a blank stub, a score
    assert "passed  cp-one" in out and "score: 2/2 checkpoints passed (100%)" in out
    assert "-double(21): 42" in out and "+double(21): 43" in out
    assert "raised NotImplementedError" in out
    assert "1/5 notebooks passed every checkpoint" in out
    # beside the gradebook: one feedback page per submission and an index of students' totals
    feedback = tmp_path / "grades-feedback"
    pages = {p.name: p.read_text(encoding="utf-8") for p in feedback.glob("*.html")}
    assert len(pages) == 6 and "index.html" in pages, sorted(pages)
    for student in ("good", "blank", "faked", "wrong", "broken"):
        assert f"<td>{student}</td>" in pages["index.html"]
    good_page = next(
        text for name, text in pages.items() if re.search(r"good-00-tiny-[0-9a-f]{8}\.html$", name)
    )
    blank_page = next(
        text for name, text in pages.items() if re.search(r"blank-00-tiny-[0-9a-f]{8}\.html$", name)
    )
    broken_page = next(
        text for name, text in pages.items() if re.search(r"broken-00-tiny-[0-9a-f]{8}\.html$", name)
    )
    assert "Score: 2/2 checkpoints (100%)" in good_page
    assert "raised NotImplementedError" in blank_page and "Not graded" in broken_page


def test_the_student_is_the_file_name_without_the_notebook_or_the_folder():
    from pathlib import Path

    from chunklab.course.results import student_of

    ref = Path("solutions/01-fixed.ipynb")
    assert student_of(Path("subs/alice-01-fixed.ipynb"), ref) == "alice"
    assert student_of(Path("subs/bob_smith_01-fixed.ipynb"), ref) == "bob_smith"
    assert student_of(Path("subs/carol/01-fixed.ipynb"), ref) == "carol"
    # unmatched (unreadable, ambiguous): the trailing course-like name goes, lettered ones (03b-) too
    assert student_of(Path("subs/dora-03b-documents.ipynb"), None) == "dora"


def test_a_name_holding_two_course_notebooks_is_ambiguous(course):
    nbformat.write(tiny_solution(), course / "01-other.ipynb")
    with pytest.raises(GradingError, match="ambiguous.*00-tiny, 01-other"):
        find_reference("alice-00-tiny-01-other.ipynb", course)
