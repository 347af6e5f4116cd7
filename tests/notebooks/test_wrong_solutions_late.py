"""Through the grader, for notebooks 04-06, 07-retrieval and 09: blank, faked and plausible wrong solutions
fail.

The same machinery as ``test_wrong_solutions.py`` (``Wrong`` patches, ``patched`` and ``faked``),
with the wrong variants of these notebooks in ``WRONG_LATE`` (tests/support/wrong_solutions.py).
Each patch is a literal replacement that must apply, so a change to a solution that makes it
stale fails loudly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chunklab.course.generate import make_exercise
from chunklab.course.grader import grade_notebooks
from chunklab.course.notebooks import read_notebook
from tests.support.wrong_solutions import SOLUTIONS, WRONG_LATE, faked, patched

ROOT = Path(__file__).resolve().parents[2]


def test_late_wrong_variants_name_existing_solutions():
    assert set(WRONG_LATE) <= set(SOLUTIONS), sorted(set(WRONG_LATE) - set(SOLUTIONS))


@pytest.mark.parametrize("name", sorted(WRONG_LATE), ids=str)
def test_late_wrong_patches_apply_to_their_solution(name):
    solution = read_notebook(SOLUTIONS[name])
    for w in WRONG_LATE[name]:
        nb = patched(solution, w)  # asserts the cell exists and the old text is in it
        assert nb != solution, w.label


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WRONG_LATE), ids=str)
def test_blank_faked_and_wrong_late_notebooks_fail_their_checkpoints(name):
    ref_path = SOLUTIONS[name]
    solution = read_notebook(ref_path)
    items = [(f"blank/{name}.ipynb", make_exercise(solution)), (f"faked/{name}.ipynb", faked(solution))]
    items += [(f"wrong-{i}/{name}.ipynb", patched(solution, w)) for i, w in enumerate(WRONG_LATE[name])]
    items += [(f"solved/{name}.ipynb", solution)]
    results = grade_notebooks(items, reference=ref_path, timeout=600)
    blank, fake, *wrongs, solved = results
    for r in results:
        assert not r.error, f"{r.path}: {r.error}"
    assert solved.ok, f"the reference solution itself does not pass:\n{solved}"
    assert blank.total and blank.passed == 0, f"a blank exercise passed a checkpoint:\n{blank}"
    assert fake.passed == 0, f"edited outputs earned a pass:\n{fake}"
    for w, r in zip(WRONG_LATE[name], wrongs, strict=True):
        assert not r.ok, f"wrong solution {w.label!r} passed every checkpoint"
