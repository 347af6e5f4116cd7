"""Through the grader, for notebooks 04-06, 07-retrieval and 09: blank, faked and plausible wrong solutions
fail.

The same machinery as ``test_wrong_solutions.py`` (its ``Wrong`` patches, ``patched`` and
``faked`` helpers), with the wrong variants of these notebooks declared here. Each patch is a
literal replacement that must apply, so a change to a solution that makes it stale fails
loudly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_wrong_solutions import SOLUTIONS, Wrong, faked, patched

from chunklab.course.generate import make_exercise
from chunklab.course.grader import grade_notebooks
from chunklab.course.notebooks import read_notebook

ROOT = Path(__file__).resolve().parent.parent

WRONG_LATE: dict[str, list[Wrong]] = {
    "04-semantic": [
        Wrong("90th percentile by default", "rule", "percentile: float = 95", "percentile: float = 90"),
        Wrong(
            "breakpoint one sentence late",
            "rule",
            "return [i for i, d in enumerate(distances) if d > threshold]",
            "return [i + 1 for i, d in enumerate(distances) if d > threshold]",
        ),
        Wrong(
            "similarity instead of distance",
            "curve",
            "return 1.0 - np.sum(left * right, axis=1)",
            "return np.sum(left * right, axis=1)",
        ),
    ],
    "05-hierarchical": [
        Wrong(
            "merges at exactly the ratio (>= instead of >)",
            "merge",
            "len(found) / len(kids) > ratio",
            "len(found) / len(kids) >= ratio",
        ),
        Wrong("merges one level only", "merge", "                changed = True\n", ""),
        Wrong(
            "keeps chunks whose ancestor is returned",
            "merge",
            "result = [r for r in result if not has_ancestor_in_result(r)]",
            "pass",
        ),
    ],
    "06-evaluation": [
        Wrong(
            "recall counts gold characters twice",
            "spans",
            "covered = overlap_length(union, gold_union)",
            "covered = overlap_length(retrieved, gold_union)",
        ),
        Wrong(
            "precision over the union (repeats free)",
            "spans",
            '"precision": covered / total if total else 0.0',
            '"precision": covered / union_len if union_len else 0.0',
        ),
        Wrong(
            "unpaired bootstrap",
            "bootstrap",
            "means_b = counts @ b / len(b)",
            "means_b = resample_counts(len(b), n_resamples, seed + 1) @ b / len(b)",
        ),
    ],
    "07-retrieval": [
        Wrong("ranks counted from 0", "rrf", "enumerate(ranking, start=1)", "enumerate(ranking)"),
        Wrong("k ignored (1 / rank)", "rrf", "1.0 / (k + rank)", "1.0 / rank"),
        Wrong(
            "worst first",
            "rrf",
            "key=lambda chunk_id: -scores[chunk_id]",
            "key=lambda chunk_id: scores[chunk_id]",
        ),
        Wrong(
            "dense ranking only", "hybrid", "return rrf([dense_ids, lexical_ids])[:k]", "return dense_ids[:k]"
        ),
    ],
    "09-chroma-checkpoint": [
        Wrong(
            "no structural metadata (fixed windows)",
            "chunk",
            "for c in chunk_markdown(d.text, max_chars=1000, doc_id=d.doc_id):",
            "from chunklab import chunk_fixed\n"
            '        for c in chunk_fixed(d.text, 1000, 0, "chars", d.doc_id):',
        ),
        Wrong(
            "where filter ignored",
            "filter",
            "    if len(parts) == 1:",
            "    parts = []\n    if len(parts) == 1:",
        ),
        Wrong("chunks too large", "chunk", "max_chars=1000", "max_chars=4000"),
        Wrong(
            "index not persistent",
            "index",
            "return ChunkStore(path=path, collection=COLLECTION, encoder=encoder)",
            "return ChunkStore(collection=COLLECTION, encoder=encoder, in_memory=True)",
        ),
    ],
}


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
