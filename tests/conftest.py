"""Shared test setup: offline model loading, one torch thread, hypothesis profiles, a module's cache, layers.

The tests live in four layers, one folder each: ``unit`` (one module, in-process), ``integration``
(CLI runs, stores and servers, Ray, pipelines, wheels, faults), ``notebooks`` (solutions, exercises,
the grader, the book's sources) and ``browser`` (Chromium). Each test gets its layer as a marker
(``pytest -m unit``), and the end of a run prints one summary line per layer.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("CHUNKLAB_TORCH_THREADS", "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# `make test` (the "ci" profile) draws the same 300 examples per test on every machine, so a green
# run is reproducible and a red one is a real regression; `make fuzz` ("explore") draws new random
# examples, many more of them, to look for bugs nobody has hit yet (the failing case it prints is
# then pinned with @example).
settings.register_profile(
    "ci",
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "explore",
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory):
    """A fresh ``CHUNKLAB_CACHE`` for one test module (its embeddings and stores), restored after."""
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHUNKLAB_CACHE", str(folder))
        yield folder


# ----------------------------------------------------------------------------------------------- layers

#: the test layers, in the order the summary lists them (a folder of tests/ each)
LAYERS = ("unit", "integration", "notebooks", "browser")
_TESTS = Path(__file__).resolve().parent
#: per layer: outcome -> count (the words of pytest's own summary), and the seconds its tests took
_OUTCOMES: defaultdict[str, Counter[str]] = defaultdict(Counter)
_SECONDS: defaultdict[str, float] = defaultdict(float)


def layer_of(path: Path) -> str:
    """The layer of a test file: the folder of tests/ it lies in (``"other"`` outside the four)."""
    try:
        folder = Path(path).resolve().relative_to(_TESTS).parts[0]
    except (ValueError, IndexError):
        return "other"
    return folder if folder in LAYERS else "other"


def pytest_configure(config: pytest.Config) -> None:
    for layer in LAYERS:
        config.addinivalue_line("markers", f"{layer}: a test of tests/{layer}/ (set from its folder)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        layer = layer_of(item.path)
        if layer in LAYERS:
            item.add_marker(layer)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    layer = layer_of(_TESTS.parent / report.location[0])
    _SECONDS[layer] += report.duration
    outcome = _outcome(report)
    if outcome:
        _OUTCOMES[layer][outcome] += 1


def _outcome(report: pytest.TestReport) -> str | None:
    """The word pytest's summary counts this report under, or None when it counts nothing."""
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            return "xfailed" if report.skipped else "xpassed"
        return report.outcome
    if report.failed:
        return "error"  # a fixture's set-up or teardown failed
    if report.when == "setup" and report.skipped:
        return "skipped"
    return None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """One line per layer: its counts by outcome and the seconds its tests took."""
    if not _OUTCOMES:
        return
    terminalreporter.section("tests by layer")
    for layer in (*LAYERS, "other"):
        counts = _OUTCOMES.get(layer)
        if counts:
            order = ("failed", "error", "passed", "skipped", "xfailed", "xpassed")
            words = ", ".join(f"{counts[k]} {k}" for k in order if counts[k])
            terminalreporter.write_line(f"{layer:<12} {words} in {_SECONDS[layer]:.1f} s")
