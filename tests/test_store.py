"""The Chroma store: upsert by id, metadata round trip, where filters, parents, persistence across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from chunklab.chunk import Chunk, embedding_text
from chunklab.embed import Encoder
from chunklab.store import ChunkStore, decode_metadata, encode_metadata

pytestmark = pytest.mark.slow

DOCS = {
    "install": "Install the package with pip install chunklab and check the version.",
    "weather": "The weather in Paris is sunny with a light breeze from the west.",
    "parse": "def parse_config(path):\n    return json.loads(open(path).read())",
    "refund": "Refunds are issued to the original card within five business days.",
}


def _chunks() -> list[Chunk]:
    metas = {
        "install": {"kind": "doc", "headings": ["Guide", "Install"], "params": {"size": 200, "seps": ["\n\n", "\n"]}},
        "weather": {"kind": "doc", "headings": ["News", "Weather"], "parent_id": None, "score": 0.5},
        "parse": {"kind": "function", "name": "parse_config", "line_start": 1, "tags": ["io", "json"]},
        "refund": {"kind": "doc", "headings": ["Payments", "Refunds"], "title": "Payments runbook"},
    }
    return [Chunk(text, 10, 10 + len(text), doc_id, metas[doc_id]) for doc_id, text in DOCS.items()]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> Encoder:
    return Encoder(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture()
def store(tmp_path, encoder) -> ChunkStore:
    s = ChunkStore(path=tmp_path / "chroma", collection="test-chunks", encoder=encoder)
    s.add(_chunks())
    return s


def test_search_finds_the_relevant_chunk_with_offsets_and_metadata_restored(store):
    hits = store.search("how do I install the library with pip", k=2)
    assert len(hits) == 2
    best, score = hits[0]
    original = _chunks()[0]
    assert best == original  # text, start, end, doc_id
    assert best.metadata == original.metadata  # lists, dicts and nested values restored
    assert best.id == original.id
    assert -1.0 <= hits[1][1] <= score <= 1.0


def test_score_is_the_cosine_similarity_of_query_and_chunk(store, encoder):
    chunk, score = store.search("sunny weather in Paris", k=1)[0]
    q, c = encoder.encode(["sunny weather in Paris", embedding_text(chunk)])
    assert score == pytest.approx(float(q @ c), abs=1e-4)


def test_reindexing_the_same_chunks_leaves_the_count_unchanged(store):
    assert store.count() == 4
    store.add(_chunks())
    store.add(_chunks() + _chunks())  # duplicates inside one call too
    assert store.count() == 4


def test_where_filter_on_a_scalar_metadata_key(store):
    hits = store.search("install the package", k=4, where={"kind": "function"})
    assert [c.doc_id for c, _ in hits] == ["parse"]


def test_where_filter_on_section_and_doc_id(store):
    hits = store.search("anything at all", k=4, where={"section": "Refunds"})
    assert [c.doc_id for c, _ in hits] == ["refund"]
    hits = store.search("anything at all", k=4, where={"doc_id": {"$in": ["weather", "install"]}})
    assert sorted(c.doc_id for c, _ in hits) == ["install", "weather"]


def test_search_many_matches_search_one_by_one(store):
    queries = ["card refund", "parse a json config file"]
    many = store.search_many(queries, k=2)
    for q, hits in zip(queries, many, strict=True):
        assert [c.id for c, _ in hits] == [c.id for c, _ in store.search(q, k=2)]


def test_embed_context_embeds_title_and_section_path(tmp_path, encoder):
    chunk = _chunks()[3]
    with_ctx = ChunkStore(in_memory=True, collection="ctx", encoder=encoder)
    bare = ChunkStore(in_memory=True, collection="ctx", encoder=encoder, embed_context=False)
    with_ctx.add([chunk])
    bare.add([chunk])
    v_ctx = np.asarray(with_ctx.collection.get(ids=[chunk.id], include=["embeddings"])["embeddings"][0])
    v_bare = np.asarray(bare.collection.get(ids=[chunk.id], include=["embeddings"])["embeddings"][0])
    expected_ctx, expected_bare = encoder.encode([embedding_text(chunk), chunk.text])
    assert embedding_text(chunk).startswith("Payments runbook > Payments > Refunds")
    assert np.allclose(v_ctx, expected_ctx, atol=1e-5)
    assert np.allclose(v_bare, expected_bare, atol=1e-5)
    assert not np.allclose(v_ctx, v_bare, atol=1e-3)


def test_in_memory_stores_do_not_share_data(encoder):
    a = ChunkStore(in_memory=True, collection="same-name", encoder=encoder)
    b = ChunkStore(in_memory=True, collection="same-name", encoder=encoder)
    a.add(_chunks()[:2])
    assert a.count() == 2
    assert b.count() == 0
    a.close()


def test_parents_are_kept_apart_from_leaf_search_and_found_by_get_parent(tmp_path, encoder):
    source = "Alpha paragraph about billing.\n\nBeta paragraph about shipping."
    parent = Chunk(source, 0, len(source), "d", {"strategy": "t", "level": 0, "parent_id": None})
    kids = [
        Chunk(source[0:30], 0, 30, "d", {"strategy": "t", "level": 1, "parent_id": parent.id}),
        Chunk(source[32:], 32, len(source), "d", {"strategy": "t", "level": 1, "parent_id": parent.id}),
    ]
    parent.metadata["child_ids"] = [k.id for k in kids]
    s = ChunkStore(in_memory=True, encoder=encoder)
    s.add([parent, *kids])
    assert s.count() == 2
    assert s.count(parents=True) == 1
    hits = s.search("billing", k=5)
    assert {c.id for c, _ in hits} == {k.id for k in kids}
    got = s.get_parent(hits[0][0])
    assert got == parent and got.metadata["child_ids"] == parent.metadata["child_ids"]
    assert s.get_parent(parent) is None


def test_delete_by_doc_id_removes_only_that_document(store):
    removed = store.delete(doc_id="weather")
    assert removed == 1
    assert store.count() == 3
    assert all(c.doc_id != "weather" for c, _ in store.search("weather in Paris", k=4))


def test_clear_removes_every_chunk_and_the_store_stays_usable(store):
    store.clear()
    assert store.count() == 0
    store.add(_chunks()[:1])
    assert [c.doc_id for c, _ in store.search("install", k=3)] == ["install"]


def test_stats_report_vectors_dimension_and_bytes(store):
    stats = store.stats()
    assert stats["vectors"] == 4
    assert stats["dim"] == 384
    assert stats["raw_vector_bytes"] == 4 * 4 * 384
    assert stats["bytes_on_disk"] > stats["raw_vector_bytes"]


def test_store_reopened_in_a_fresh_process_answers_the_same_query(store, tmp_path, encoder):
    query = "money back to my credit card"
    here = [(c.id, round(s, 4)) for c, s in store.search(query, k=3)]
    code = """
        import json, sys
        from chunklab.embed import Encoder
        from chunklab.store import ChunkStore
        store = ChunkStore(path=sys.argv[1], collection="test-chunks", encoder=Encoder(cache_dir=sys.argv[2]))
        hits = store.search(sys.argv[3], k=3)
        # plain chromadb, once chunklab.store is imported, finds chunklab's embedding function by name
        import chromadb
        from chromadb.config import Settings
        raw = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
        raw = raw.get_collection("test-chunks")
        res = raw.query(query_texts=[sys.argv[3]], n_results=1)
        print(json.dumps({"hits": [[c.id, round(s, 4)] for c, s in hits], "raw": res["ids"][0]}))
    """
    env = {**os.environ, "CHUNKLAB_TORCH_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(store.path), str(encoder.cache.directory), query],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert [tuple(h) for h in out["hits"]] == here
    assert out["raw"] == [here[0][0]]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"query": ""}, "query"),
        ({"query": "x", "k": 0}, "k must"),
        ({"query": "x", "where": "kind=doc"}, "where"),
        ({"query": "x", "where": {"headings": "Install"}}, "section"),
        ({"query": "x", "where": {"$and": [{"kind": "doc"}, {"params": {"size": 1}}]}}, "params"),
    ],
)
def test_search_rejects_bad_arguments(store, kwargs, match):
    with pytest.raises(ValueError, match=match):
        store.search(**kwargs)


def test_bad_collection_name_and_bad_items_are_value_errors(tmp_path, encoder):
    with pytest.raises(ValueError, match="collection"):
        ChunkStore(path=tmp_path, collection="x", encoder=encoder)
    s = ChunkStore(in_memory=True, encoder=encoder)
    with pytest.raises(ValueError, match="expected Chunk"):
        s.add(["not a chunk"])
    with pytest.raises(ValueError, match="exactly one"):
        s.delete()


def test_metadata_encoding_round_trips_awkward_values():
    meta = {
        "none": None,
        "list": [1, "two", None],
        "dict": {"a": [1.5]},
        "flag": True,
        "doc_id": "shadowed",
        "chunklab_meta": "a key that collides",
        "text": "__json__: looks like a marker",
        "big": 2**70,
        "nan": float("nan"),
    }
    chunk = Chunk("t", 3, 4, "d", meta)
    stored = encode_metadata(chunk)
    assert all(isinstance(v, (str, int, float, bool)) for v in stored.values())
    assert stored["doc_id"] == "d" and stored["flag"] is True
    assert "big" not in stored and "nan" not in stored  # not queryable, but kept in the JSON copy
    doc_id, start, end, back = decode_metadata(stored)
    assert (doc_id, start, end) == ("d", 3, 4)
    assert {k: v for k, v in back.items() if k != "nan"} == {k: v for k, v in meta.items() if k != "nan"}


def test_cli_index_then_query_finds_the_indexed_file(tmp_path, monkeypatch, capsys, encoder):
    from chunklab.cli import main

    monkeypatch.setenv("CHUNKLAB_CACHE", str(encoder.cache.directory))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Refunds\n\nRefunds reach the card in five days.\n")
    (docs / "other.txt").write_text("The weather in Paris is sunny.\n")
    args = ["index", str(docs), "--strategy", "recursive", "--store", str(tmp_path / "db"), "--no-progress"]
    assert main(args) == 0
    assert main(args + ["--query", "when do I get my money back", "-k", "1", "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("indexed 2 chunks from 2 files")
    assert "holds 2 leaves" in lines[1]  # the second run upserted the same ids
    hit = json.loads(lines[-1])
    assert hit["doc_id"].endswith("guide.md") and "Refunds" in hit["text"]
