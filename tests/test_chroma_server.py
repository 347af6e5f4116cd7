"""ChunkStore over a real Chroma server (`chroma run` on a free loopback port): as the local store."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
from test_lexical import HashEncoder, _chunks

from chunklab.chunk import Chunk
from chunklab.retrieval.retry import RetryPolicy
from chunklab.retrieval.store import ChunkStore

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        pytest.skip("the chroma command (chromadb's server) is not installed")
    port = _free_port()
    folder = tmp_path_factory.mktemp("chroma-server")
    log = (folder / "server.log").open("w")
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"chroma server did not start: {(folder / 'server.log').read_text()[-2000:]}")
            time.sleep(0.3)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def test_server_store_answers_like_the_local_store(server, tmp_path):
    remote = ChunkStore(url=server, collection="same-answers", encoder=HashEncoder())
    local = ChunkStore(path=tmp_path / "db", collection="same-answers", encoder=HashEncoder())
    for store in (remote, local):
        assert store.add(_chunks(), show_progress=False) == 5
        assert store.add(_chunks(), show_progress=False) == 5  # upsert by id: nothing doubles
        assert store.count() == 5
    for where in (None, {"kind": "doc"}, {"$or": [{"kind": "class"}, {"section": "Refunds"}]}):
        got = [
            [(c.id, round(s, 5)) for c, s in store.search("refund card", k=3, where=where)]
            for store in (remote, local)
        ]
        assert got[0] == got[1]
    assert [c.metadata for c in remote.get([c.id for c in _chunks()])] == [c.metadata for c in _chunks()]


def test_server_store_keeps_parents_and_survives_a_reopen(server):
    parent = Chunk(
        "a parent section about bananas and apples", 0, 41, "fruit", {"child_ids": ["x"], "level": 0}
    )
    child = Chunk("bananas", 0, 7, "fruit", {"parent_id": parent.id, "level": 1})
    store = ChunkStore(url=server, collection="parents-test", encoder=HashEncoder())
    store.add([parent, child], show_progress=False)
    again = ChunkStore(url=server, collection="parents-test", encoder=HashEncoder(), create=False)
    assert again.count() == 1 and again.count(parents=True) == 1
    hit = again.search("bananas", k=5)[0][0]
    assert hit == child and again.get_parent(hit) == parent


def test_opening_a_missing_server_collection_for_reading_lists_what_exists(server):
    ChunkStore(url=server, collection="listed-one", encoder=HashEncoder())
    with pytest.raises(ValueError, match="no collection 'missing-one'.*'listed-one'"):
        ChunkStore(url=server, collection="missing-one", encoder=HashEncoder(), create=False)


def test_an_unreachable_server_is_a_clear_error():
    with pytest.raises(ValueError, match="no Chroma server answers"):
        ChunkStore(
            url=f"http://127.0.0.1:{_free_port()}", encoder=HashEncoder(), retry=RetryPolicy(budget_s=0.5)
        )


def test_two_processes_writing_at_once_lose_nothing(server):
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[3])
        from test_lexical import HashEncoder
        from chunklab.chunk import Chunk
        from chunklab.retrieval.store import ChunkStore
        store = ChunkStore(url=sys.argv[1], collection="concurrent", encoder=HashEncoder())
        tag = sys.argv[2]
        for batch in range(10):
            store.add([Chunk(f"{tag} chunk {batch} {i}", 0, 20, f"{tag}-{batch}-{i}") for i in range(40)],
                      show_progress=False)
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, server, tag, str(TESTS)], stderr=subprocess.PIPE, text=True
        )
        for tag in ("left", "right")
    ]
    errors = [p.communicate(timeout=600)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    store = ChunkStore(url=server, collection="concurrent", encoder=HashEncoder(), create=False)
    assert store.count() == 2 * 10 * 40
    assert len(store.doc_ids()) == 800


@pytest.mark.parametrize("bad", ["127.0.0.1:8000", "ftp://host:1", "http://:80", "http://h:notaport"])
def test_bad_urls_are_value_errors(bad):
    with pytest.raises(ValueError, match="url"):
        ChunkStore(url=bad, encoder=HashEncoder())
