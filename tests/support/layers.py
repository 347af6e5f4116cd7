"""The layers of the test tree: each test marked with its folder's layer, one summary line per layer.

The layers are the folders of ``tests/``: ``unit`` (one module, in-process), ``integration`` (CLI
runs, stores and servers, Ray, pipelines, wheels, faults), ``notebooks`` (solutions, exercises, the
grader, the book's sources) and ``browser`` (Chromium). A pytest plugin: tests/conftest.py takes
its hooks, ``pytest -p tests.support.layers`` loads it on its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: the test layers, in the order the summary lists them (a folder of tests/ each)
LAYERS = ("unit", "integration", "notebooks", "browser")
#: the outcomes of pytest's own summary line, in its order
OUTCOMES = ("failed", "error", "passed", "skipped", "xfailed", "xpassed")


def layer_of(path: str | Path, root: Path) -> str:
    """The layer of a test file: the folder of ``root/tests`` it lies in (``"other"`` outside the four)."""
    try:
        folder = (root / path).resolve().relative_to((root / "tests").resolve()).parts[0]
    except (ValueError, IndexError):
        return "other"
    return folder if folder in LAYERS else "other"


def pytest_configure(config: pytest.Config) -> None:
    for layer in LAYERS:
        config.addinivalue_line("markers", f"{layer}: a test of tests/{layer}/ (set from its folder)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        layer = layer_of(item.path, config.rootpath)
        if layer in LAYERS:
            item.add_marker(layer)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """One line per layer: its tests by outcome, as pytest counts them, and the seconds they took."""
    counts: dict[str, dict[str, int]] = {}
    seconds: dict[str, float] = {}
    for outcome, reports in terminalreporter.stats.items():
        for report in reports:
            nodeid = getattr(report, "nodeid", None)
            if nodeid is None:  # a warning, not a test's report
                continue
            layer = layer_of(nodeid.split("::", 1)[0], config.rootpath)
            seconds[layer] = seconds.get(layer, 0.0) + getattr(report, "duration", 0.0)
            if outcome in OUTCOMES:
                counts.setdefault(layer, {}).setdefault(outcome, 0)
                counts[layer][outcome] += 1
    if not counts:
        return
    terminalreporter.section("tests by layer")
    for layer in (*LAYERS, "other"):
        if layer in counts:
            words = ", ".join(f"{counts[layer][k]} {k}" for k in OUTCOMES if k in counts[layer])
            terminalreporter.write_line(f"{layer:<12} {words} in {seconds[layer]:.1f} s")
