"""A tiny course for the grader tests: one solution notebook (two checkpoints) and ways to alter it.

The notebook is made here, at test time: ``double(x)`` between solution markers and two locked
checkpoint cells whose stored outputs only the right ``double`` reproduces.
"""

from __future__ import annotations

import copy

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from chunklab.course.generate import make_exercise
from chunklab.course.grader import GradeOptions, grade_notebooks

SOLUTION_SOURCE = (
    "def double(x):\n    ### BEGIN SOLUTION\n    # HINT: twice x\n    return 2 * x\n    ### END SOLUTION"
)
#: short limits and a fixed seed: one small kernel per submission
FAST = GradeOptions(timeout=20, seed=7)


def make_cell(kind, cid, source, outputs=(), tags=(), count=None):
    """A code cell (``kind="code"``) or a Markdown cell with id ``cid``; checkpoints come locked."""
    cell = new_code_cell(source, execution_count=count) if kind == "code" else new_markdown_cell(source)
    cell["id"] = cid
    if kind == "code":
        cell.outputs = list(outputs)
        if tags:
            cell.metadata["tags"] = list(tags)
        if "checkpoint" in tags:
            cell.metadata.update(editable=False, deletable=False)
    return cell


def stdout_output(text):
    """A stored stdout stream output holding ``text``."""
    return new_output("stream", name="stdout", text=text)


def tiny_solution():
    """The reference notebook: markdown, the solution cell, two checkpoints around a computation."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        make_cell("md", "intro", "# Tiny"),
        make_cell("code", "impl", SOLUTION_SOURCE, count=1),
        make_cell(
            "code",
            "cp-one",
            "print('double(21):', double(21))",
            [stdout_output("double(21): 42\n")],
            ["checkpoint"],
            2,
        ),
        make_cell("code", "more", "values = [double(i) for i in range(4)]", count=3),
        make_cell(
            "code",
            "cp-two",
            "from chunklab.course import show\n\nshow('values', values)\nprint(f'took {0.25:.2f} s')",
            [stdout_output("values: [0, 2, 4, 6]\ntook 0.25 s\n")],
            ["checkpoint"],
            4,
        ),
    ]
    return nb


def blank_with(*sources: str, at: int = 2):
    """The blank exercise with learner cells inserted before cell ``at`` (the first checkpoint)."""
    nb = make_exercise(tiny_solution())
    for i, src in enumerate(sources):
        nb.cells.insert(at + i, make_cell("code", f"attack-{i}", src))
    return nb


def solution_with(*sources: str, at: int = 2):
    """The solved notebook with extra cells inserted before cell ``at``."""
    nb = copy.deepcopy(tiny_solution())
    for i, src in enumerate(sources):
        nb.cells.insert(at + i, make_cell("code", f"extra-{i}", src))
    return nb


def grade(course, *notebooks, options=FAST):
    """Grade ``(name, notebook)`` pairs against the course folder ``course``."""
    items = [(f"{name}-00-tiny.ipynb", nb) for name, nb in notebooks]
    return grade_notebooks(items, solutions_dir=course, options=options)
