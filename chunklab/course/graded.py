"""The notebook a submission is graded as, and how its outputs are compared.

:func:`build_graded_notebook` takes the learner's code cells and the reference's checkpoint
cells; :func:`output_text` and :func:`sanitizer` turn outputs into the text that is compared
(the course's nbval sanitize file applied); the name scans tell the guard what to rebind.
"""

from __future__ import annotations

import ast
import configparser
import copy
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chunklab.course.notebooks import checkpoint_cells, is_checkpoint

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from chunklab.course.messages import NotebookOutput

__all__ = [
    "assigned_names",
    "build_graded_notebook",
    "chunklab_imports",
    "loaded_names",
    "output_text",
    "sanitizer",
]

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def build_graded_notebook(learner: NotebookNode, reference: NotebookNode) -> NotebookNode:
    """The notebook that gets executed: learner code cells + the reference's checkpoint cells.

    Learner code cells keep their source only (no outputs, no tags, unrun, so nbval checks
    them for errors but never compares outputs). Each reference checkpoint cell replaces the
    learner cell with the same id (or, for notebooks saved without ids, the same source) and
    brings its stored outputs; a checkpoint the learner deleted is inserted after the
    nearest preceding reference cell that is still there.
    """
    import nbformat

    ref_cps = checkpoint_cells(reference)
    by_id = {c.get("id"): c for c in ref_cps}
    by_source = {c.source.strip(): c for c in ref_cps}
    cells: list[NotebookNode] = []
    placed: set[str] = set()
    used_ids: set[str] = set()
    counter = 0

    def fresh_id(wanted: str | None) -> str:
        nonlocal counter
        cid = wanted or ""
        while not cid or cid in used_ids or cid in by_id:
            counter += 1
            cid = f"learner-{counter}"
        used_ids.add(cid)
        return cid

    for cell in learner.cells:
        ref = by_id.get(cell.get("id"))
        if ref is None and cell.get("cell_type") == "code":
            ref = by_source.get(_without_banner(cell.source).strip())
        if ref is not None:
            if ref["id"] not in placed:
                cells.append(copy.deepcopy(ref))
                placed.add(ref["id"])
                used_ids.add(ref["id"])
            continue
        if cell.get("cell_type") == "code":
            new = nbformat.v4.new_code_cell(source=cell.source)
            new["id"] = fresh_id(cell.get("id"))
            cells.append(new)
        elif cell.get("cell_type") == "markdown":
            new = nbformat.v4.new_markdown_cell(source=cell.source)
            new["id"] = fresh_id(cell.get("id"))
            cells.append(new)

    # Put back the checkpoints the learner deleted, after their nearest surviving predecessor.
    anchor: str | None = None
    for ref_cell in reference.cells:
        rid = ref_cell.get("id")
        if is_checkpoint(ref_cell) and rid not in placed:
            pos = _index_of(cells, anchor) + 1 if anchor is not None else len(cells)
            cells.insert(pos, copy.deepcopy(ref_cell))
            placed.add(rid)
            anchor = rid
        elif _index_of(cells, rid) >= 0:
            anchor = rid
    graded = nbformat.v4.new_notebook()
    graded.metadata = copy.deepcopy(reference.metadata)
    graded.cells = cells
    return graded


def _without_banner(source: str) -> str:
    """A checkpoint's source without the lock banner the exercise generator puts first."""
    first, _, rest = source.partition("\n")
    return rest if first.startswith("# 🔒") else source


def _index_of(cells: list[NotebookNode], cell_id: str | None) -> int:
    for i, c in enumerate(cells):
        if c.get("id") == cell_id:
            return i
    return -1


def output_text(outputs: Sequence[NotebookOutput], clean: Callable[[str], str]) -> str:
    """What a cell showed, as compared: stdout, text results and errors (stderr is not compared)."""
    parts: list[str] = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            parts.append(
                data["text/plain"] + "\n" if "text/plain" in data else f"<{', '.join(sorted(data))}>\n"
            )
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}\n")
    return clean("".join(parts))


def sanitizer(path: Path) -> Callable[[str], str]:
    """The nbval sanitize file's ``regex``/``replace`` pairs as one function (identity without a file)."""
    rules: list[tuple[re.Pattern[str], str]] = []
    if path.is_file():
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(path, encoding="utf-8")
        rules = [
            (re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections() if "regex" in cfg[s]
        ]

    def clean(text: str) -> str:
        text = ANSI.sub("", text)
        for pattern, replacement in rules:
            text = pattern.sub(replacement, text)
        return text

    return clean


def chunklab_imports(nb: NotebookNode) -> dict[str, tuple[str, str]]:
    """``name -> (module, attribute)`` for every ``from chunklab... import`` in the notebook's cells."""
    found: dict[str, tuple[str, str]] = {}
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        for node in _parse(cell.source):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").split(".")[0] == "chunklab"
            ):
                for alias in node.names:
                    if alias.name != "*":
                        found[alias.asname or alias.name] = (node.module or "", alias.name)
    return found


def assigned_names(nb: NotebookNode) -> set[str]:
    names: set[str] = set()
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            for node in _parse(cell.source):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
                elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
                    names.add(node.name)
    return names


def loaded_names(source: str) -> set[str]:
    return {n.id for n in _parse(source) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _parse(source: str) -> list[ast.AST]:
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        return list(ast.walk(ast.parse("\n".join(lines))))
    except SyntaxError:
        return []
