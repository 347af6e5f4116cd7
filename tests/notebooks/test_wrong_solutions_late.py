"""Through the grader, for notebooks 04-06, 07-retrieval, 09 and 10-llm: blank, faked and plausible wrong
solutions fail.

The same machinery as ``test_wrong_solutions.py`` (``Wrong`` patches, ``patched`` and ``faked``),
with the wrong variants of these notebooks in ``WRONG_LATE`` (tests/support/wrong_solutions.py).
Each patch is a literal replacement that must apply, so a change to a solution that makes it
stale fails loudly. A notebook's batch (``graded_late``) also holds its hard-coded cheat when
``CHEATS`` has one, whose grade test_grader_attacks.py reads: the reference is graded once for both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chunklab.course import hidden
from chunklab.course.notebooks import read_notebook
from tests.support.wrong_solutions import CHEATS, SOLUTIONS, WRONG_LATE, graded_late, patched

ROOT = Path(__file__).resolve().parents[2]


def test_late_wrong_variants_name_existing_solutions():
    assert set(WRONG_LATE) <= set(SOLUTIONS), sorted(set(WRONG_LATE) - set(SOLUTIONS))
    assert set(CHEATS) <= set(WRONG_LATE), "a cheat is graded in its notebook's WRONG_LATE batch"


@pytest.mark.parametrize("name", sorted(WRONG_LATE), ids=str)
def test_late_wrong_patches_apply_to_their_solution(name):
    solution = read_notebook(SOLUTIONS[name])
    labels = {w.label: w for w in WRONG_LATE[name]}
    for w in WRONG_LATE[name]:
        nb = patched(solution, w)  # asserts the cell exists and the old text is in it
        assert nb != solution, w.label
        if w.graded_as:  # left out of the batch: a graded variant of the same cell stands for it
            assert w.graded_as in labels and not labels[w.graded_as].graded_as, w.label
            assert labels[w.graded_as].cell_id == w.cell_id, w.label
            assert not (w.absent_only or w.visible_only), f"{w.label}: its hidden check must catch it"
            checked = [c for c in hidden.HIDDEN.get(name, []) if w.cell_id in c.reference_cells]
            assert checked, f"{w.label}: no hidden check reads cell {w.cell_id} (test_hidden_checks.py)"
    if name in CHEATS:
        assert patched(solution, *CHEATS[name]) != solution  # every patch of the cheat applies


def _late(name: str):
    """``name`` as a parameter; a notebook with a cheat shares its grades with test_grader_attacks.py (one
    xdist group, so one worker grades the batch for both)."""
    marks = [pytest.mark.xdist_group(f"graded-{name}")] if name in CHEATS else []
    return pytest.param(name, id=name, marks=marks)


@pytest.mark.slow
@pytest.mark.parametrize("name", [_late(n) for n in sorted(WRONG_LATE)])
def test_blank_faked_and_wrong_late_notebooks_fail_their_checkpoints(name):
    graded = graded_late(name)
    blank, fake, solved = graded["blank"], graded["faked"], graded["solved"]
    wrongs = {w.label: graded[f"wrong-{i}"] for i, w in enumerate(WRONG_LATE[name]) if not w.graded_as}
    for r in (blank, fake, *wrongs.values(), solved):
        assert not r.error, f"{r.path}: {r.error}"
    assert solved.ok, f"the reference solution itself does not pass:\n{solved}"
    assert blank.total and blank.passed == 0, f"a blank exercise passed a checkpoint:\n{blank}"
    assert fake.passed == 0, f"edited outputs earned a pass:\n{fake}"
    for label, r in wrongs.items():
        assert not r.ok, f"wrong solution {label!r} passed every checkpoint"
