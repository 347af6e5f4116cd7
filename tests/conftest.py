"""Shared test setup: offline model loading, one torch thread, hypothesis profiles, a module's cache, layers.

The tests live in four layers, one folder each: ``unit`` (one module, in-process), ``integration``
(CLI runs, stores and servers, Ray, pipelines, wheels, faults), ``notebooks`` (solutions, exercises,
the grader, the book's sources) and ``browser`` (Chromium). Each test gets its layer as a marker
(``pytest -m unit``), and the end of a run prints one summary line per layer.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("CHUNKLAB_TORCH_THREADS", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # a worker of `make test`'s xdist run embeds into a cache of its own (a sub-folder of the usual one):
    # the grader copies the cache's files into each kernel it starts, and must never copy them while
    # another worker's notebook is writing them
    from chunklab.paths import cache_dir

    os.environ["CHUNKLAB_CACHE"] = str(cache_dir() / "xdist" / os.environ["PYTEST_XDIST_WORKER"])

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# the layers: each test marked with its folder's (unit, integration, notebooks, browser), a summary line each
from tests.support.layers import (  # noqa: E402, F401  (hooks of this conftest)
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_terminal_summary,
)

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


@pytest.fixture(autouse=True)
def _ocr_settings_per_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from the default OCR settings and leaves none behind: a command run in a test
    sets them for its whole process (``os.environ``, which its workers inherit)."""
    monkeypatch.delenv("CHUNKLAB_OCR", raising=False)
    monkeypatch.delenv("CHUNKLAB_OCR_ENGINE", raising=False)
