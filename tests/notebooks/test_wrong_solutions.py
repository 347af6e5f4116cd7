"""Through the grader: blank exercises, faked outputs and plausible wrong solutions all fail.

Each wrong solution is the reference with one code cell patched (a literal replacement that
must apply, so a change to the solution that makes a patch stale fails loudly). Adding a
notebook means adding its entry to WRONG (tests/support/wrong_solutions.py). One grader call per
notebook grades the blank exercise, the faked notebook and every wrong variant together.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chunklab.course.generate import make_exercise
from chunklab.course.grader import grade_notebooks
from chunklab.course.notebooks import is_checkpoint, read_notebook
from tests.support.nbval import nbval_run
from tests.support.wrong_solutions import GRADE_JOBS, SOLUTIONS, WRONG, WRONG_LATE, faked, patched

ROOT = Path(__file__).resolve().parents[2]


def test_every_solution_has_wrong_variants():
    assert set(WRONG) | set(WRONG_LATE) == set(SOLUTIONS), (
        "each solution notebook needs at least one wrong variant here"
    )


#: notebooks whose full run takes minutes: the solved copy is graded by test_grader_attacks.py (and nbval'd by
#: test_solutions.py), its mistakes here in one notebook
EXPENSIVE = {"08-code-rag"}


@pytest.mark.parametrize("name", sorted(WRONG), ids=str)
def test_wrong_patches_apply_to_their_solution(name):
    solution = read_notebook(SOLUTIONS[name])
    checkpoints = {c.id for c in solution.cells if is_checkpoint(c)}
    for w in WRONG[name]:
        assert patched(solution, w) != solution, w.label
        assert not w.fails or w.fails in checkpoints, f"{w.label}: no checkpoint {w.fails!r}"
        assert w.fails or name not in EXPENSIVE, f"{w.label}: say which checkpoint catches it"
    if name in EXPENSIVE:
        patched(solution, *WRONG[name])  # the combined patches apply too


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WRONG), ids=str)
def test_blank_faked_and_wrong_notebooks_fail_their_checkpoints(name):
    ref_path = SOLUTIONS[name]
    solution = read_notebook(ref_path)
    items = [(f"blank/{name}.ipynb", make_exercise(solution)), (f"faked/{name}.ipynb", faked(solution))]
    if name in EXPENSIVE:
        items.append((f"wrong-all/{name}.ipynb", patched(solution, *WRONG[name])))
    else:
        items += [(f"wrong-{i}/{name}.ipynb", patched(solution, w)) for i, w in enumerate(WRONG[name])]
        items.append((f"solved/{name}.ipynb", solution))
    nbval_run(ref_path)  # the reference's run fills the cache the batch's kernels start from
    results = grade_notebooks(items, reference=ref_path, timeout=600, jobs=GRADE_JOBS)
    blank, fake, *rest = results
    for r in results:
        assert not r.error, f"{r.path}: {r.error}"
    assert blank.total and blank.passed == 0, f"a blank exercise passed a checkpoint:\n{blank}"
    assert fake.passed == 0, f"edited outputs earned a pass:\n{fake}"
    if name in EXPENSIVE:
        failed = {c.cell_id for c in rest[0].checkpoints if not c.passed}
        for w in WRONG[name]:
            assert w.fails in failed, f"wrong solution {w.label!r} was not caught by {w.fails}:\n{rest[0]}"
        return
    assert rest[-1].ok, f"the reference solution itself does not pass through the grader:\n{rest[-1]}"
    for w, r in zip(WRONG[name], rest[:-1], strict=True):
        assert not r.ok, f"wrong solution {w.label!r} passed every checkpoint"
        if w.fails:
            assert w.fails in {c.cell_id for c in r.checkpoints if not c.passed}, f"{w.label}: {r}"
