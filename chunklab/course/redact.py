"""The redacted view of chunklab a graded kernel imports: what the exercise asks for is not in it.

For each exercise, :mod:`chunklab.course.shortcuts` declares the library functions that compute
what the learner must write (``Shortcut.absent``). :func:`build_view` copies the package
(sources only, then compiled afresh) and replaces each such function's definition by a stub of
the same name that computes nothing: called, it raises
:class:`chunklab.course.guard.ShortcutError` naming it ("rrf calls
chunklab.retrieval.hybrid.reciprocal_rank_fusion, which this exercise asks you to write"). The
sandbox binds the copy over the package's own folder (:func:`chunklab.course.sandbox.sandbox_command`),
so the kernel, and every thread, fork, child process or ``ctypes`` call it makes, finds no source,
byte code or function object of the original to import, exec or reach. The grader's own process
keeps the whole library: the reference solutions and the expected values are computed there.
"""

from __future__ import annotations

import ast
import compileall
import importlib.util
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

__all__ = ["Views", "build_view", "redact_source"]

_STUB = (
    "def {name}(*args, **kwargs):  # redacted by the grader: not in the grading sandbox\n"
    '    """Not in the grading sandbox: the exercise being graded asks you to write it."""\n'
    '    raise __import__("chunklab.course.guard", fromlist=["absent"]).absent("{dotted}")\n'
)


def redact_source(source: str, module: str, names: Sequence[str]) -> str:
    """``source`` (module ``module``) with each top-level function in ``names`` replaced by a stub.

    ValueError naming the function when ``module`` defines no such top-level function.
    """
    tree = ast.parse(source)
    found = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names
    }
    missing = sorted(set(names) - set(found))
    if missing:
        raise ValueError(f"names must be top-level functions of {module}, got {', '.join(missing)}")
    lines = source.splitlines(keepends=True)
    for node in sorted(found.values(), key=lambda n: n.lineno, reverse=True):
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        assert node.end_lineno is not None
        stub = _STUB.format(name=node.name, dotted=f"{module}.{node.name}")
        lines[first : node.end_lineno] = [stub]
    return "".join(lines)


def build_view(absent: Sequence[str], dest: Path) -> Path:
    """The package copied into ``dest`` with the ``module:function`` entries of ``absent`` redacted.

    Returns the copy's package folder (``dest/chunklab``), compiled so a read-only kernel need not.
    """
    import chunklab

    package = Path(chunklab.__file__).resolve().parent
    view = Path(dest) / package.name
    shutil.copytree(package, view, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    by_module: dict[str, list[str]] = {}
    for entry in absent:
        module, sep, name = entry.partition(":")
        if not sep or not module.startswith(f"{package.name}.") or not name:
            raise ValueError(f"absent entries must be 'chunklab.module:function', got {entry!r}")
        by_module.setdefault(module, []).append(name)
    for module, names in by_module.items():
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise ValueError(f"absent entries must name an existing module, got {module!r}")
        target = view / Path(spec.origin).resolve().relative_to(package)
        target.write_text(redact_source(target.read_text(encoding="utf-8"), module, names), encoding="utf-8")
    compileall.compile_dir(str(view), quiet=1)
    return view


class Views:
    """The redacted views one grading batch uses, each built once (use as a context manager)."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="chunklab-view-")
        self._built: dict[tuple[str, ...], Path] = {}
        self._lock = threading.Lock()

    def get(self, absent: Sequence[str]) -> Path | None:
        """The view without ``absent`` (None when nothing is absent: the package as it is)."""
        key = tuple(sorted(absent))
        if not key:
            return None
        with self._lock:
            if key not in self._built:
                dest = Path(self._tmp.name, str(len(self._built)))
                dest.mkdir()
                self._built[key] = build_view(key, dest)
            return self._built[key]

    def __enter__(self) -> Views:
        return self

    def __exit__(self, *exc: object) -> None:
        self._tmp.cleanup()
