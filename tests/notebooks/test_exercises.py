"""The exercise generator: exercises/ is generated from solutions/ and must be up to date."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from chunklab.cli import main
from chunklab.course.generate import (
    LOCK_BANNER,
    lint_solution,
    make_exercise,
    make_exercises,
    strip_solutions,
)
from chunklab.course.notebooks import notebook_text

ROOT = Path(__file__).resolve().parents[2]


def test_exercises_are_up_to_date_with_solutions():
    statuses = make_exercises(ROOT / "solutions", ROOT / "exercises", check=True)
    stale = [f"{s.state}: {s.path}" for s in statuses if s.state != "ok"]
    assert not stale, "exercises/ is stale; run `make exercises`:\n" + "\n".join(stale)
    assert statuses, "no solution notebooks found"


def test_region_becomes_hint_and_stub_at_the_marker_indent():
    src = (
        "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    # HINT: add y\n"
        "    return x + y\n    ### END SOLUTION\n"
    )
    out = strip_solutions(src)
    stub = "    raise NotImplementedError('write f() in this cell')\n"
    assert out == "def f(x):\n    y = 1\n    # HINT: add y\n" + stub
    assert "return x + y" not in out


def test_region_without_hint_gets_your_code_here():
    out = strip_solutions("### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION")
    assert (
        out == "# YOUR CODE HERE\nraise NotImplementedError('write the code that sets answer in this cell')"
    )


def test_stub_says_which_function_to_write_under_which_heading():
    src = (
        "def chunk_by_pages(\n    doc,\n) -> list:\n    out = []\n    ### BEGIN SOLUTION\n"
        "    out.append(doc)\n    ### END SOLUTION\n    return out\n"
    )
    out = strip_solutions(src, heading="2. Pages as chunks")
    with pytest.raises(NotImplementedError) as raised:
        exec(out + "chunk_by_pages(1)", {})  # noqa: S102 - the stub as a learner runs it
    assert str(raised.value) == 'write chunk_by_pages() in the cell under "2. Pages as chunks"'


def test_stub_outside_a_function_names_what_the_code_sets():
    src = "rows = []\nfor o in (1, 2):\n    ### BEGIN SOLUTION\n    a = b = 0\n    c, d = 1, 2\n"
    src += "    ### END SOLUTION\n"
    out = strip_solutions(src, heading="3. Costs")
    assert (
        "NotImplementedError('write the code that sets a, b, c and d in the cell under \"3. Costs\"')" in out
    )
    out = strip_solutions("### BEGIN SOLUTION\ncounts[0] += 1\n### END SOLUTION", heading="It's here")
    with pytest.raises(NotImplementedError, match='write the missing code in the cell under "It\'s here"'):
        exec(out, {})  # noqa: S102


def test_every_exercise_stub_names_its_cell_heading():
    for path in sorted((ROOT / "exercises").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for line in cell.source.split("\n"):
                if "raise NotImplementedError" in line:
                    assert "in the cell under" in line, f"{path.name} {cell.id}: {line.strip()}"


def test_markdown_region_becomes_answer_placeholder():
    out = strip_solutions("Decide:\n### BEGIN SOLUTION\nYes, because...\n### END SOLUTION", "markdown")
    assert "Yes, because" not in out and "Your answer here" in out


@pytest.mark.parametrize(
    "src",
    [
        "### BEGIN SOLUTION\nx = 1\n",
        "x = 1\n### END SOLUTION\n",
        "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n",
    ],
)
def test_unbalanced_markers_are_an_error(src):
    with pytest.raises(ValueError, match="SOLUTION"):
        strip_solutions(src)


def _solution_notebook():
    nb = new_notebook()
    md = new_markdown_cell("# Title")
    md["id"] = "intro"
    data = new_code_cell(
        "print('data the learner must see')", execution_count=1, metadata={"tags": ["keep-output"]}
    )
    data["id"] = "data"
    data.outputs = [new_output("stream", name="stdout", text="data the learner must see\n")]
    impl = new_code_cell(
        "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", execution_count=2
    )
    impl["id"] = "impl"
    cp = new_code_cell(
        "print('f():', f())",
        execution_count=3,
        metadata={"tags": ["checkpoint"], "editable": False, "deletable": False},
    )
    cp["id"] = "cp-f"
    cp.outputs = [new_output("stream", name="stdout", text="f(): 1\n")]
    nb.cells = [md, data, impl, cp]
    return nb


def test_exercise_keeps_ids_locks_checkpoints_and_clears_their_outputs():
    sol = _solution_notebook()
    ex = make_exercise(sol)
    assert [c.id for c in ex.cells] == [c.id for c in sol.cells]
    cp = ex.cells[3]
    assert cp.outputs == [] and cp.execution_count is None
    assert cp.metadata["editable"] is False and cp.metadata["deletable"] is False
    assert cp.source == f"{LOCK_BANNER}\n{sol.cells[3].source}"  # JupyterLab draws no lock: the cell says it
    assert ex.cells[1].outputs[0]["text"] == "data the learner must see\n"  # keep-output
    assert "raise NotImplementedError" in ex.cells[2].source and "return 1" not in ex.cells[2].source
    assert sol.cells[3].outputs and "return 1" in sol.cells[2].source  # the solution is untouched


def test_a_kept_output_loses_its_progress_bar_widget_and_keeps_its_text():
    """A progress bar in a keep-output cell (a tqdm widget) is dropped from the exercise: its state is
    not saved with the notebook, so Lab would show "model not found" where the bar was."""
    sol = _solution_notebook()
    bar = new_output(
        "display_data",
        data={
            "text/plain": "indexing:   0%|          | 0/585 [00:00<?, ?chunk/s]",
            "application/vnd.jupyter.widget-view+json": {
                "version_major": 2,
                "version_minor": 0,
                "model_id": "x",
            },
        },
    )
    sol.cells[1].outputs = [bar, *sol.cells[1].outputs]
    ex = make_exercise(sol)
    assert [o.get("text") for o in ex.cells[1].outputs] == ["data the learner must see\n"]
    assert len(sol.cells[1].outputs) == 2  # the solution keeps its bar


def test_lint_accepts_a_proper_solution_and_flags_each_fault():
    sol = _solution_notebook()
    assert lint_solution(sol) == []
    sol.cells[2].execution_count = None
    sol.cells[3].metadata["editable"] = True
    sol.cells[3].outputs = [new_output("stream", name="stdout", text="PASS\n")]
    problems = "\n".join(lint_solution(sol))
    assert "not executed" in problems
    assert "locked" in problems
    assert "bare verdict" in problems


def _course(tmp_path):
    sol, exe = tmp_path / "solutions", tmp_path / "exercises"
    sol.mkdir()
    nbformat.write(_solution_notebook(), sol / "00-demo.ipynb")
    return sol, exe


def test_check_mode_lists_missing_stale_and_orphaned_exercises_and_writes_nothing(tmp_path):
    sol, exe = _course(tmp_path)
    assert [s.state for s in make_exercises(sol, exe, check=True)] == ["missing"]
    assert not exe.exists()
    assert [s.state for s in make_exercises(sol, exe)] == ["written"]
    assert [s.state for s in make_exercises(sol, exe, check=True)] == ["ok"]
    (exe / "00-demo.ipynb").write_text(notebook_text(_solution_notebook()), encoding="utf-8")
    (exe / "99-gone.ipynb").write_text("{}", encoding="utf-8")
    states = {s.path.name: s.state for s in make_exercises(sol, exe, check=True)}
    assert states == {"00-demo.ipynb": "stale", "99-gone.ipynb": "orphan"}


def test_cli_check_exits_non_zero_and_names_the_stale_file(tmp_path, capsys):
    sol, exe = _course(tmp_path)
    rc = main(["course", "make-exercises", "--check", "--solutions", str(sol), "--exercises", str(exe)])
    out = capsys.readouterr()
    assert rc == 1
    assert "00-demo.ipynb" in out.out and "out of date" in out.err
    assert main(["course", "make-exercises", "--solutions", str(sol), "--exercises", str(exe)]) == 0
    assert (
        main(["course", "make-exercises", "--check", "--solutions", str(sol), "--exercises", str(exe)]) == 0
    )


def test_generation_refuses_a_faulty_solution(tmp_path):
    sol, exe = _course(tmp_path)
    nb = _solution_notebook()
    nb.cells[3].metadata["tags"] = []  # no checkpoint left
    nbformat.write(nb, sol / "00-demo.ipynb")
    with pytest.raises(ValueError, match="checkpoint"):
        make_exercises(sol, exe)


def test_notebook_titles_use_the_books_names_for_exercises_and_capstones():
    """One scheme across notebooks, book and README: "Exercise N — ..." for a chapter's notebook, and for
    a capstone the title the book's exercise table gives it ("Capstone: code RAG — ...")."""
    from chunklab.book.labels import label

    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        title = nbformat.read(path, as_version=4).cells[0].source.split("\n")[0]
        book = label(f"exercise_{path.stem.replace('-', '_')}_title", "en")
        if book.startswith("Capstone:"):
            assert title.startswith(f"# {book} — "), (path.name, title, book)
        else:
            assert re.match(r"# Exercise \d+b? — ", title), (path.name, title)


def test_no_notebook_writes_into_a_chunks_metadata():
    """One rule across the course: a Chunk is built with its final metadata; a notebook that adds to it
    makes a copy (``dataclasses.replace(c, metadata={**c.metadata, ...})``), in code and in hints."""
    writes = re.compile(r"\.metadata\.(update|setdefault|pop)\(|\.metadata\[[^\]]+\]\s*=(?!=)")
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                found = [line.strip() for line in cell.source.split("\n") if writes.search(line)]
                assert not found, f"{path.name} {cell.id}: {found}"
