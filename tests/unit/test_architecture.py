"""The package's shape is checked, not assumed: no import cycle, the import contracts, small modules.

The contracts themselves (chunkers and retrieval independent; the library never imports the
course, the commands or the book helpers) live in pyproject.toml under ``[tool.importlinter]``;
``make lint`` runs them too, with ruff and mypy.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "chunklab"

#: module size is a review signal, not a reason to split a module mid-thought: over REVIEW_LINES a
#: module is named in a warning (look at it when you next touch it), over MAX_MODULE_LINES it fails
REVIEW_LINES = 400
MAX_MODULE_LINES = 600


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_planted_cycle(tmp_path, monkeypatch):
    package = tmp_path / "cyclepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from cyclepkg import b\n")
    (package / "b.py").write_text("def f():\n    from cyclepkg import a\n")
    (package / "c.py").write_text("from cyclepkg import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles(grimp.build_graph("cyclepkg", cache_dir=None)) == [["cyclepkg.a", "cyclepkg.b"]]


def test_no_import_cycle_between_modules_of_chunklab():
    cycles = _cycles(grimp.build_graph("chunklab", cache_dir=None))
    assert cycles == [], f"import cycles (deferred imports count too): {cycles}"


def test_import_contracts_hold():
    from importlinter.cli import lint_imports

    # import-linter configures logging with dictConfig, which disables every logger that exists by then
    # (chunklab's among them): the rest of the run must keep the logging it had
    loggers = logging.Logger.manager.loggerDict
    enabled = [name for name, lg in loggers.items() if isinstance(lg, logging.Logger) and not lg.disabled]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    finally:
        for name in enabled:
            logging.getLogger(name).disabled = False
    assert code == 0, out.getvalue()[-3000:]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_longer_than_600_lines_and_those_over_400_are_named(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(ROOT)} has {lines} lines: it does several jobs"
    if lines > REVIEW_LINES:
        warnings.warn(
            f"{path.relative_to(ROOT)} has {lines} lines (over {REVIEW_LINES}): worth a look", stacklevel=1
        )


def test_the_layers_contract_is_declared_in_the_order_of_the_design():
    """The layers contract lists the package's roles from the top down, as DESIGN.md orders them."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = [c for c in contracts if c["type"] == "layers"]
    assert len(layers) == 1, "one layers contract"
    order = [layer.replace(" ", "") for layer in layers[0]["layers"]]
    tops = [next(part for part in layer.replace(":", "|").split("|")) for layer in order]
    expected = [
        "chunklab.cli",
        "chunklab.evaluate",
        "chunklab.ingest",
        "chunklab.retrieval",
        "chunklab.embed",
        "chunklab.chunkers",
        "chunklab.documents",
    ]
    assert [t for t in tops if t in expected] == expected
    listed = {m for layer in order for m in layer.replace(":", "|").split("|")}
    packages = {f"chunklab.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    modules = {f"chunklab.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert packages | modules <= listed, f"not in any layer: {sorted((packages | modules) - listed)}"
