"""Package code the chapters include (``literalinclude`` + ``:pyobject:``) fits the book's column.

The chapters show chunklab's own source by object name; a line wider than the visible code
column (88 characters, ``VISIBLE_CODE_WIDTH`` of tests/notebooks/test_book.py) wraps on the page. Every
line of every included object is checked here, and a failure names the file and line to wrap.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
#: the width the chapters' visible code is read in (tests/notebooks/test_book.py: VISIBLE_CODE_WIDTH)
WIDTH = 88

_INCLUDE = re.compile(r"^(`{3,}|~{3,})\{literalinclude\}\s+(\S+)\s*\n(.*?)^\1\s*$", re.M | re.S)
_PYOBJECT = re.compile(r"^:pyobject:\s*(\S+)\s*$", re.M)


def _includes() -> list[tuple[str, Path, str]]:
    """``(chapter:line, included file, object path)`` for every pyobject include of chapters/*.md."""
    found = []
    for page in sorted(CHAPTERS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in _INCLUDE.finditer(text):
            obj = _PYOBJECT.search(match.group(3))
            if obj is None:
                continue
            where = f"{page.name}:{text.count(chr(10), 0, match.start()) + 1}"
            found.append((where, (page.parent / match.group(2)).resolve(), obj.group(1)))
    return found


def _object_lines(source: str, dotted: str) -> tuple[int, list[str]]:
    """The first line number and the lines of ``dotted`` (``name`` or ``Class.method``), with decorators."""
    nodes: list[ast.stmt] = ast.parse(source).body
    node: ast.stmt | None = None
    for part in dotted.split("."):
        node = next((n for n in nodes if getattr(n, "name", None) == part), None)
        if node is None:
            raise LookupError(dotted)
        nodes = getattr(node, "body", [])
    assert node is not None and node.end_lineno is not None
    decorators = getattr(node, "decorator_list", [])
    first = min([d.lineno for d in decorators] + [node.lineno])
    return first, source.splitlines()[first - 1 : node.end_lineno]


INCLUDES = _includes()


def test_the_chapters_include_package_objects():
    assert len(INCLUDES) >= 20, [i[0] for i in INCLUDES]


@pytest.mark.parametrize(("where", "target", "dotted"), INCLUDES, ids=[f"{i[0]}:{i[2]}" for i in INCLUDES])
def test_included_object_fits_the_column(where: str, target: Path, dotted: str):
    assert target.is_file(), f"{where}: includes {target}, which does not exist"
    try:
        first, lines = _object_lines(target.read_text(encoding="utf-8"), dotted)
    except LookupError:
        pytest.fail(f"{where}: {target.relative_to(ROOT)} has no object {dotted!r}")
    wide = [
        f"{target.relative_to(ROOT)}:{first + i} ({len(line)} chars)"
        for i, line in enumerate(lines)
        if len(line) > WIDTH
    ]
    assert not wide, f"{where} includes {dotted}, wider than {WIDTH} columns at: " + ", ".join(wide)
