"""ChunkStore over a real Chroma server (`chroma run` on a free loopback port): as the local store."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chunklab.chunk import Chunk
from chunklab.retrieval.chroma.retry import RetryPolicy
from chunklab.retrieval.chroma.store import ChunkStore
from tests.support.chroma_process import free_port
from tests.support.retrieval import HashEncoder, corpus_chunks

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_server_store_answers_like_the_local_store(server, tmp_path):
    remote = ChunkStore(url=server, collection="same-answers", encoder=HashEncoder())
    local = ChunkStore(path=tmp_path / "db", collection="same-answers", encoder=HashEncoder())
    for store in (remote, local):
        assert store.add(corpus_chunks(), show_progress=False) == 5
        assert store.add(corpus_chunks(), show_progress=False) == 5  # upsert by id: nothing doubles
        assert store.count() == 5
    for where in (None, {"kind": "doc"}, {"$or": [{"kind": "class"}, {"section": "Refunds"}]}):
        got = [
            [(c.id, round(s, 5)) for c, s in store.search("refund card", k=3, where=where)]
            for store in (remote, local)
        ]
        assert got[0] == got[1]
    chunks = corpus_chunks()
    assert [c.metadata for c in remote.get([c.id for c in chunks])] == [c.metadata for c in chunks]


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
            url=f"http://127.0.0.1:{free_port()}", encoder=HashEncoder(), retry=RetryPolicy(budget_s=0.5)
        )


def test_two_processes_writing_at_once_lose_nothing(server):
    code = textwrap.dedent(
        """
        import sys
        from tests.support.retrieval import HashEncoder
        from chunklab.chunk import Chunk
        from chunklab.retrieval.chroma.store import ChunkStore
        store = ChunkStore(url=sys.argv[1], collection="concurrent", encoder=HashEncoder())
        tag = sys.argv[2]
        for batch in range(10):
            store.add([Chunk(f"{tag} chunk {batch} {i}", 0, 20, f"{tag}-{batch}-{i}") for i in range(40)],
                      show_progress=False)
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, server, tag],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
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
