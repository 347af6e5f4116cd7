"""Faults on a Chroma server: a restart mid-ingest, a server gone past the retry budget, concurrent writers.

A real ``chroma run`` (tests/support/chroma_process.py) is killed with SIGKILL in the middle of an
ingest and started again on the same path; the collection must end equal to a clean run's
(ids, texts, metadata, vectors). Skipped when the chroma CLI is not installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.chunkers.catalog import get_strategy
from chunklab.cli import main
from chunklab.ingest.engines.local import LocalEngine
from chunklab.ingest.pipeline import IngestOptions, run
from chunklab.retrieval.chroma import retry
from chunklab.retrieval.chroma.retry import RetryPolicy, ServerUnavailableError
from tests.support.chroma_process import ChromaServer, free_port

REPO = Path(__file__).resolve().parents[2]
DOWN = re.compile(
    r"wrote [\d,]+ of [\d,]+ chunks embedded so far to http://127\.0\.0\.1:\d+; "
    r"the server did not answer for \d+ s; re-run to finish"
)


# -- the retry policy, without a server ----------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    budget=st.floats(0, 120),
    base=st.floats(0.001, 2),
    cap=st.floats(0.001, 10),
    jitter=st.floats(0, 1),
    seed=st.integers(0, 2**16),
)
def test_delays_stay_within_the_budget_and_the_cap(budget, base, cap, jitter, seed):
    delays = RetryPolicy(budget, base, cap, jitter, seed).delays()
    assert sum(delays) <= budget + 1e-9
    assert all(0 < d <= max(cap, base) + 1e-9 for d in delays)
    assert all(d <= cap + 1e-9 for d in delays)
    if jitter == 0 and len(delays) > 2:  # without jitter the waits double until the cap
        assert all(b >= min(a * 2, cap) - 1e-9 or b == delays[-1] for a, b in zip(delays, delays[1:]))


def test_call_repeats_connection_errors_and_gives_up_with_the_budget():
    import httpx

    slept: list[float] = []
    failures = iter([httpx.ConnectError("refused")] * 3)

    def flaky() -> str:
        err = next(failures, None)
        if err is not None:
            raise err
        return "answered"

    policy = RetryPolicy(budget_s=10, base_s=0.5, max_s=2, jitter=0.0)
    assert retry.call(flaky, policy, "http://x:1", sleep=slept.append) == "answered"
    assert slept == [0.5, 1.0, 2.0]

    def down() -> None:
        raise httpx.ReadError("connection reset")

    slept.clear()
    with pytest.raises(ServerUnavailableError, match="did not answer the upsert") as err:
        retry.call(down, policy, "http://x:1", "upsert", sleep=slept.append)
    assert sum(slept) == pytest.approx(10) and err.value.exit_code == retry.EXIT_SERVER_DOWN


def test_an_answer_that_is_an_error_is_not_retried():
    slept: list[float] = []

    def refuses() -> None:
        raise ValueError("bad where filter")

    with pytest.raises(ValueError, match="bad where filter"):
        retry.call(refuses, RetryPolicy(budget_s=10), "http://x:1", sleep=slept.append)
    assert slept == []


@pytest.mark.parametrize("bad", [{"budget_s": -1}, {"base_s": "1"}, {"jitter": 2.0}])
def test_a_bad_policy_is_a_value_error(bad):
    with pytest.raises(ValueError):
        RetryPolicy(**bad)


def test_the_cli_exits_75_with_one_line_when_no_server_answers(tmp_path, capsys):
    (tmp_path / "a.md").write_text("# A\n\nsome text to index\n")
    url = f"http://127.0.0.1:{free_port()}"
    argv = ["index", str(tmp_path), "--server", url, "--model", "static", "--retry-budget", "1"]
    assert main(argv + ["--no-progress"]) == retry.EXIT_SERVER_DOWN
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"wrote 0 chunks to {url}; the server did not answer for" in err[0], err


# -- a real server -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(chroma_server) -> ChromaServer:
    """The server itself (not only its URL): these tests kill and restart it."""
    return chroma_server


def write_corpus(root: Path, docs: int = 12, prefix: str = "") -> Path:
    """Markdown notes with a few sections each (deterministic)."""
    root.mkdir(parents=True, exist_ok=True)
    for d in range(docs):
        sections = "\n\n".join(
            f"## Part {s}\n\n"
            + " ".join(f"{prefix}note {d} part {s} line {w} about topic {w % 7}." for w in range(12))
            for s in range(4)
        )
        (root / f"{prefix}note-{d:03d}.md").write_text(f"# Note {d}\n\n{sections}\n")
    return root


def options(url: str, collection: str, **more: Any) -> IngestOptions:
    base: dict[str, Any] = {
        "strategy": get_strategy("recursive", size=200),
        "model": "static",
        "chroma_url": url,
        "collection": collection,
        "batch_size": 8,
        "progress": False,
        "workers": 1,
    }
    return IngestOptions(**{**base, **more})


def snapshot(url: str, collection: str) -> dict[str, tuple[str, str, tuple[float, ...]]]:
    """id -> (text, metadata, rounded vector) of every record of ``collection``."""
    import json

    import chromadb

    from chunklab.retrieval.chroma.backend import parse_url

    host, port, _ = parse_url(url)
    coll = chromadb.HttpClient(host=host, port=port).get_collection(collection)
    got = coll.get(include=["documents", "metadatas", "embeddings"])
    return {
        cid: (doc, json.dumps(meta, sort_keys=True), tuple(np.round(np.asarray(vec), 5)))
        for cid, doc, meta, vec in zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"])
    }


class KillAfterFirstWrite:
    """An engine around the local one: after the first table is written, SIGKILL the server.

    The server is started again ``down_s`` later (never, when None).
    """

    name = "local"

    def __init__(self, srv: ChromaServer, down_s: float | None) -> None:
        self.srv, self.down_s = srv, down_s
        self.inner = LocalEngine()
        self.restarted = threading.Event()

    def schedule(self, job: Any, report: Any) -> Iterator[Any]:
        for i, table in enumerate(self.inner.schedule(job, report)):
            yield table  # the sink writes it before the generator resumes
            if i == 0:
                self.srv.kill()
                if self.down_s is not None:
                    threading.Timer(self.down_s, self._restart).start()

    def _restart(self) -> None:
        self.srv.start()
        self.restarted.set()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus") / "notes")


@pytest.fixture(scope="module")
def clean(server, corpus) -> dict:
    report = run(corpus, options(server.url, "clean-run"), LocalEngine())
    assert report.added > 24  # several batches of 8: the kill lands mid-ingest
    return snapshot(server.url, "clean-run")


def test_a_server_restarted_mid_ingest_is_ridden_through(server, corpus, clean):
    engine = KillAfterFirstWrite(server, down_s=0.5)
    report = run(corpus, options(server.url, "restarted"), engine)
    assert engine.restarted.is_set() and server.starts >= 2
    assert report.added == len(clean)
    assert snapshot(server.url, "restarted") == clean


def test_a_server_down_past_the_budget_stops_clearly_and_a_rerun_completes(server, corpus, clean):
    engine = KillAfterFirstWrite(server, down_s=None)
    with pytest.raises(ServerUnavailableError) as err:
        run(corpus, options(server.url, "gave-up", retry_budget=1.0), engine)
    assert DOWN.fullmatch(str(err.value)), str(err.value)
    written = int(str(err.value).split()[1].replace(",", ""))
    assert 0 < written < len(clean)
    server.start()
    report = run(corpus, options(server.url, "gave-up"), LocalEngine())
    assert report.added == len(clean) - written  # only what was not yet written is embedded again
    assert snapshot(server.url, "gave-up") == clean


@pytest.mark.heavy  # three CLI start-ups: make test-heavy and make faults-server run it
def test_three_index_processes_at_once_lose_nothing(server, tmp_path):
    root = tmp_path / "root"
    write_corpus(root / "a", docs=3, prefix="a")
    write_corpus(root / "b", docs=3, prefix="b")
    run([root / "a", root / "b"], options(server.url, "three-clean", root=str(root)), LocalEngine())
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    base = [sys.executable, "-m", "chunklab.cli", "index", "--root", str(root), "--server", server.url]
    base += ["--collection", "three", "--model", "static", "--strategy", "recursive", "--size", "200"]
    folders = [[root / "a"], [root / "b"], [root / "a", root / "b"]]  # disjoint, and overlapping both
    procs = [
        subprocess.Popen([*base, *map(str, f), "--no-progress"], env=env, stderr=subprocess.PIPE, text=True)
        for f in folders
    ]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    assert snapshot(server.url, "three") == snapshot(server.url, "three-clean")


def test_search_during_a_rebuild_never_mixes_two_chunker_configs(server, corpus):
    from chunklab.embed import get_encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    run(corpus, options(server.url, "swapped"), LocalEngine())
    reader = ChunkStore(url=server.url, collection="swapped", encoder=get_encoder("static"), create=False)
    query = reader.encoder.encode(["note part line about topic"], show_progress=False)
    seen: list[frozenset[str]] = []
    stop, rebuilt, answered_after = threading.Event(), threading.Event(), threading.Event()

    failed: list[str] = []

    def read() -> None:
        while not stop.is_set():
            late = rebuilt.is_set()  # this query starts after the rebuild finished
            try:
                hits = reader.search_vectors(query, k=10)[0]
            except Exception as exc:  # recorded: the assertion below names it
                failed.append(f"{type(exc).__name__}: {exc}")
                continue
            seen.append(frozenset(str(c.metadata.get("strategy")) for c, _ in hits))
            if late:
                answered_after.set()

    thread = threading.Thread(target=read)
    thread.start()
    try:
        run(
            corpus,
            options(server.url, "swapped", strategy=get_strategy("fixed", size=150), clear=True),
            LocalEngine(),
        )
        rebuilt.set()
        answered_after.wait(timeout=300)  # one answer to a query begun after the rebuild, however slow
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not failed, failed[:3]
    assert seen and all(len(s) == 1 for s in seen), [s for s in seen if len(s) != 1][:3]
    assert seen[0] != seen[-1]  # the reader really went from the old chunking to the new one
