"""The shared state of the folder-store fault tests: a tiny corpus, a warm cache, the clean run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import store_faults  # noqa: E402  (the benchmark's harness, used with a few trials)

_BUILT: dict[str, tuple] = {}  # one state per test process, whichever module asks first


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """``(docs, work, cache, clean)``: 6 documents indexed once here (filling the cache), then timed warm."""
    if "small" not in _BUILT:
        _BUILT["small"] = _build(tmp_path_factory.mktemp("store-faults"), 6)
    return _BUILT["small"]


@pytest.fixture(scope="session")
def kill_corpus(tmp_path_factory):
    """The same for 64 documents: four upserts, so that a kill can land between them."""
    if "kill" not in _BUILT:
        _BUILT["kill"] = _build(tmp_path_factory.mktemp("store-kills"), 64)
    return _BUILT["kill"]


def _build(work: Path, n: int) -> tuple:
    from chunklab.cli import main

    cache = work / "cache"
    docs = store_faults.make_corpus(work / "docs", n)
    patch = pytest.MonkeyPatch()
    patch.setenv("CHUNKLAB_CACHE", str(cache))
    try:
        argv = ["index", str(docs), "--store", str(work / "first"), "--root", str(docs)]
        assert main([*argv, "--model", "minilm", "--no-progress"]) == 0
        clean = store_faults.clean_run(docs, work, cache, first=work / "first")
    finally:
        patch.undo()
    return docs, work, cache, clean
