"""Fixtures shared by the integration tests: a ``chroma run`` server, the folder-store fault corpora."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import store_faults  # the benchmark's harness, used here with a few trials
from tests.support.chroma_process import ChromaServer, chroma_command


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """A real ``chroma run`` on a free loopback port, one per test module (a test may kill and restart it)."""
    if chroma_command() is None:
        pytest.skip("the chroma command (chromadb's server) is not installed")
    chroma = ChromaServer(tmp_path_factory.mktemp("chroma-server"))
    try:
        chroma.start()
    except RuntimeError as err:
        chroma.kill()
        pytest.fail(str(err))
    yield chroma
    chroma.stop()


@pytest.fixture(scope="module")
def server(chroma_server):
    """The URL of a real ``chroma run`` on a free loopback port, one server per test module."""
    return chroma_server.url


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """``(docs, work, cache, clean)``: 6 documents indexed once here (filling the cache), then timed warm."""
    return _build(tmp_path_factory.mktemp("store-faults"), 6)


@pytest.fixture(scope="session")
def kill_corpus(tmp_path_factory):
    """The same for 64 documents: four upserts, so that a kill can land between them."""
    return _build(tmp_path_factory.mktemp("store-kills"), 64)


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
