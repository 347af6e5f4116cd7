"""The layers of the test tree: each test marked with its folder's layer, one summary line per layer.

The layers are the folders of ``tests/``: ``unit`` (one module, in-process), ``integration`` (CLI
runs, stores and servers, Ray, pipelines, wheels, faults), ``notebooks`` (solutions, exercises, the
grader, the book's sources) and ``browser`` (Chromium). A pytest plugin: tests/conftest.py takes
its hooks, ``pytest -p tests.support.layers`` loads it on its own.

Under pytest-xdist (``make test`` runs ``-n 2 --dist loadgroup``) it also says which tests may run
side by side: every ``integration`` and ``browser`` test is in one ``xdist_group`` (``serial``), so
they run one at a time, in their usual order, on one worker, as in a serial run (servers, Ray
clusters, ports); a ``unit`` or ``notebooks`` test that uses a fixture of module or class scope is
grouped with the rest of its file (the fixture is built once); every other test goes to whichever
worker is free, the ``slow`` ones first (a long test last would leave one worker idle). Each
worker has its own tmp_path tree (xdist's) and its own embedding cache (tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: the test layers, in the order the summary lists them (a folder of tests/ each)
LAYERS = ("unit", "integration", "notebooks", "browser")
#: the outcomes of pytest's own summary line, in its order
OUTCOMES = ("failed", "error", "passed", "skipped", "xfailed", "xpassed")
#: the layers whose tests never run beside each other under xdist (one worker, in order)
SERIAL_LAYERS = ("integration", "browser")
#: the xdist group of those tests
SERIAL_GROUP = "serial"


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


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        layer = layer_of(item.path, config.rootpath)
        if layer in LAYERS:
            item.add_marker(layer)
    if _distributed(config):
        for item in items:
            marked = item.get_closest_marker("xdist_group")
            if marked is not None:  # a group the test names itself (tests that share a session fixture)
                _suffix(item, str(marked.args[0] if marked.args else marked.kwargs.get("name", "default")))
                continue
            group = xdist_group(item, layer_of(item.path, config.rootpath))
            if group:
                item.add_marker(pytest.mark.xdist_group(group))
                _suffix(item, group)
        # the slow tests that may go anywhere first (a long one last would leave the other worker idle);
        # stable, and a group's tests keep their order
        items.sort(
            key=lambda item: (
                item.get_closest_marker("xdist_group") is not None or item.get_closest_marker("slow") is None
            )
        )


def _distributed(config: pytest.Config) -> bool:
    """Whether this is a worker of an ``xdist --dist loadgroup`` run (where the groups matter)."""
    return bool(getattr(config.option, "loadgroup", False)) and hasattr(config, "workerinput")


def _suffix(item: pytest.Item, group: str) -> None:
    """Put ``@group`` after the test's node id, which is how xdist's loadgroup scheduler reads the group.

    xdist 3.8 does this itself by setting ``item._nodeid``, which pytest 9 no longer reads (the id
    is ``item._id``, a ``NodeId``): without this the groups would be ignored and the integration
    tests spread over both workers.
    """
    from _pytest.nodeid import NodeId

    if not item.nodeid.endswith(f"@{group}"):
        item._id = NodeId.parse(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]


def xdist_group(item: pytest.Item, layer: str) -> str:
    """The xdist group a test runs in: ``serial`` for the integration and browser layers, its file for
    a test that uses a fixture of module or class scope, else ``""`` (any free worker)."""
    if layer in SERIAL_LAYERS or layer == "other":
        return SERIAL_GROUP
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    if any(d[-1].scope in ("module", "class", "package") for d in defs if d):
        return item.nodeid.split("::", 1)[0]
    return ""


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """One line per layer: its tests by outcome, as pytest counts them, and the seconds they took (under
    xdist, the seconds of its tests added up over the workers, which ran side by side)."""
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
    workers = getattr(config.option, "numprocesses", None) or 0
    terminalreporter.section(
        "tests by layer" + (f" (seconds summed over {workers} workers)" if workers else "")
    )
    for layer in (*LAYERS, "other"):
        if layer in counts:
            words = ", ".join(f"{counts[layer][k]} {k}" for k in OUTCOMES if k in counts[layer])
            terminalreporter.write_line(f"{layer:<12} {words} in {seconds[layer]:.1f} s")
