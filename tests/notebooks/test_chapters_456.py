"""Fast static checks of chapters 04-06 (nothing is executed): every reference resolves.

A glued number that no cell glues, a ``{numref}`` to a figure that does not exist, or a
``literalinclude`` of a function that was renamed in chunklab would each break the book
build (``-W``) only after minutes of execution; these tests catch them in milliseconds.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ["04-semantic", "05-hierarchical", "06-evaluation"]

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
_GLUE_REF = re.compile(r"\{glue(?::text|:md|:any)?\}`([^`]+)`")
_GLUE_CALL = re.compile(r"""glue\(\s*(f?)(["'])(.+?)\2""")
_NUMREF = re.compile(r"\{numref\}`(?:[^`<]*<)?([^`>]+)>?`")
_NAME = re.compile(r"^\s*name:\s*(\S+)\s*$", re.M)
_INCLUDE = re.compile(r"^```\{literalinclude\}\s+(\S+)\s*\n(.*?)^```", re.S | re.M)


def _source(chapter: str) -> str:
    return (ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")


def _cells(text: str) -> list[str]:
    return _CELL.findall(text)


def _glued_patterns(text: str) -> list[re.Pattern[str]]:
    patterns = []
    for cell in _cells(text):
        for is_f, _q, name in _GLUE_CALL.findall(cell):
            if is_f:  # f"diff_{label}" glues a family of names
                parts = re.split(r"\{[^}]*\}", name)
                patterns.append(re.compile(".+".join(re.escape(p) for p in parts) + "$"))
            else:
                patterns.append(re.compile(re.escape(name) + "$"))
    return patterns


def _prose(text: str) -> str:
    return _CELL.sub("", text)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_glue_reference_is_glued_by_a_code_cell(chapter: str) -> None:
    text = _source(chapter)
    patterns = _glued_patterns(text)
    refs = set(_GLUE_REF.findall(_prose(text)))
    assert refs, f"{chapter} quotes no measured number"
    missing = sorted(r for r in refs if not any(p.match(r) for p in patterns))
    assert not missing, f"{chapter}: glue references with no glue() call: {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_numref_names_a_captioned_figure_of_the_chapter(chapter: str) -> None:
    text = _source(chapter)
    names = set()
    for cell in _cells(text):
        if "mystnb:" in cell:
            assert "caption:" in cell, f"{chapter}: a figure cell without a caption:\n{cell[:200]}"
            names.update(_NAME.findall(cell))
    assert names, f"{chapter} has no captioned figure or table"
    for name in names:
        assert re.fullmatch(r"(fig|tbl)-[a-z0-9-]+", name), f"{chapter}: figure name {name!r}"
    refs = set(_NUMREF.findall(_prose(text)))
    assert refs <= names, f"{chapter}: numref to unknown names {sorted(refs - names)}"


def _defined(path: Path, dotted: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scope: list[ast.stmt] = tree.body
    for part in dotted.split("."):
        found = [
            n
            for n in scope
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part
        ]
        if not found:
            return False
        scope = found[0].body if isinstance(found[0], ast.ClassDef) else []
    return True


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_literalincluded_chunklab_objects_exist(chapter: str) -> None:
    text = _source(chapter)
    includes = _INCLUDE.findall(text)
    assert includes, f"{chapter} shows none of chunklab's own code"
    for rel, options in includes:
        path = (ROOT / "chapters" / rel).resolve()
        assert path.is_file(), f"{chapter}: literalinclude of missing file {rel}"
        match = re.search(r":pyobject:\s*(\S+)", options)
        assert match, f"{chapter}: literalinclude of {rel} without :pyobject: (line numbers drift)"
        assert _defined(path, match.group(1)), f"{chapter}: {rel} defines no {match.group(1)}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_points_to_its_exercise_notebook_and_grader(chapter: str) -> None:
    text = _source(chapter)
    assert f"exercises/{chapter}.ipynb" in text
    assert f"make grade NB=exercises/{chapter}.ipynb" in text


def test_glue_pattern_check_can_fail() -> None:
    text = '```{code-cell} ipython3\nglue(f"diff_{x}", 1)\n```\n\n{glue:text}`other`\n'
    patterns = _glued_patterns(text)
    assert not any(p.match("other") for p in patterns)
    assert any(p.match("diff_clean") for p in patterns)
