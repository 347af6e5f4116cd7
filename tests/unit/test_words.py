"""Counts printed by the CLI and the course agree with their noun: "1 chunk", "2 chunks"."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from chunklab.cli import main
from chunklab.course.answers import _hidden_problem
from chunklab.words import counted, plural

ROOT = Path(__file__).resolve().parents[2]


@given(st.integers(min_value=0, max_value=10**7))
def test_exactly_one_takes_the_singular_every_other_count_the_plural(n):
    text = counted(n, "chunk")
    number, noun = text.split(" ")
    assert int(number.replace(",", "")) == n
    assert noun == ("chunk" if n == 1 else "chunks")


def test_irregular_plurals_and_thousands_separators():
    assert counted(1, "query", "queries") == "1 query"
    assert counted(2, "query", "queries") == "2 queries"
    assert counted(1500, "file") == "1,500 files"
    assert plural(0, "file") == "files"


def test_a_hidden_check_that_got_one_chunk_says_one_chunk():
    assert _hidden_problem([object()], [1, 2]) == "returned 1 chunk, not the reference's number"


def test_make_exercises_counts_one_notebook_in_the_singular(tmp_path, capsys):
    sol, ex = tmp_path / "solutions", tmp_path / "exercises"
    sol.mkdir()
    shutil.copy(ROOT / "solutions" / "01-fixed.ipynb", sol)
    assert main(["course", "make-exercises", "--solutions", str(sol), "--exercises", str(ex)]) == 0
    assert "1 exercise notebook checked, 1 changed" in capsys.readouterr().out
    assert main(["course", "make-exercises", "--check", "--solutions", str(sol), "--exercises", str(ex)]) == 0
    assert "1 exercise notebook up to date" in capsys.readouterr().out
