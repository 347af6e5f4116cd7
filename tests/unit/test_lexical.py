"""BM25 over chunks and over token counts: the code-aware tokenizer, exact BM25 scores, the store's where
semantics, persistence."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.chunk import Chunk
from chunklab.retrieval import bm25_counts
from chunklab.retrieval.bm25_counts import CountsBM25
from chunklab.retrieval.filters import matches
from chunklab.retrieval.lexical import BM25Index, tokenize
from tests.support.retrieval import HashEncoder, corpus_chunks


@pytest.fixture(scope="module")
def index() -> BM25Index:
    return BM25Index(corpus_chunks())


def test_identifiers_are_split_on_snake_and_camel_case_keeping_the_whole():
    assert tokenize("parse_config(path)") == ["parse_config", "parse", "config", "path"]
    assert tokenize("getUserName") == ["getusername", "get", "user", "name"]
    assert tokenize("HTTPServer v2") == ["httpserver", "http", "server", "v2"]
    assert tokenize("a b 7 Zoo") == ["7", "zoo"]  # single letters dropped, digits kept
    assert tokenize("parse_config", "words") == ["parse_config"]


_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)


@given(st.lists(_WORDS, min_size=2, max_size=4), st.sampled_from(["snake", "camel"]))
def test_every_part_of_an_identifier_and_the_whole_are_tokens(parts, style):
    ident = "_".join(parts) if style == "snake" else parts[0] + "".join(p.capitalize() for p in parts[1:])
    tokens = tokenize(f"call {ident}() now")
    assert ident.lower() in tokens
    assert all(p in tokens for p in parts)


def test_an_exact_identifier_query_finds_its_function_first(index):
    assert index.search("parse_config", k=1)[0][0].doc_id == "config"
    assert index.search("user name lookup", k=1)[0][0].doc_id == "user"
    assert index.search("getUserName", k=1)[0][0].doc_id == "user"


def test_scores_are_lucene_bm25_computed_by_hand():
    docs = ["apple banana apple", "banana cherry", "cherry cherry cherry date"]
    idx = BM25Index([Chunk(t, 0, len(t), f"d{i}") for i, t in enumerate(docs)], k1=1.2, b=0.75)
    toks = [t.split() for t in docs]
    avgdl = sum(map(len, toks)) / len(toks)

    def bm25(term: str, doc: list[str]) -> float:
        df = sum(term in d for d in toks)
        idf = math.log(1 + (len(toks) - df + 0.5) / (df + 0.5))
        tf = doc.count(term)
        # Lucene's form: the constant (k1 + 1) numerator factor dropped (rankings unchanged)
        return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * len(doc) / avgdl))

    expected = [bm25("apple", d) + bm25("cherry", d) for d in toks]
    assert np.allclose(idx.scores("apple cherry"), expected, rtol=1e-5)
    hits = idx.search("apple cherry", k=3)
    assert [c.doc_id for c, _ in hits] == [f"d{i}" for i in np.argsort(expected)[::-1]]


def test_only_chunks_sharing_a_token_come_back(index):
    hits = index.search("volcano eruption", k=5)
    assert hits == []
    assert len(index.search("weather", k=5)) == 1


def test_contextual_bm25_indexes_the_section_path():
    chunk = Chunk("They reach the card in five days.", 0, 34, "faq", {"headings": ["Payments", "Refunds"]})
    assert BM25Index([chunk], context=True).search("refunds", k=1)[0][0] == chunk
    assert BM25Index([chunk], context=False).search("refunds", k=1) == []


def test_parents_are_skipped_and_duplicate_ids_kept_once():
    leaf = Chunk("leaf text about bananas", 0, 23, "d", {"parent_id": "p"})
    parent = Chunk("parent text about bananas", 0, 25, "d", {"child_ids": ["x"]})
    idx = BM25Index([leaf, parent, leaf])
    assert len(idx) == 1
    assert [c for c, _ in idx.search("bananas")] == [leaf]


WHERES = [
    {"kind": "doc"},
    {"kind": {"$ne": "doc"}},
    {"kind": {"$in": ["class", "function"]}},
    {"doc_id": {"$nin": ["weather", "http"]}},
    {"score": {"$gt": 0.1}},
    {"draft": True},
    {"draft": {"$ne": True}},
    {"line_start": {"$lte": 3}},
    {"section": "Refunds"},
    {"$or": [{"kind": "class"}, {"headings_path": "Payments > Refunds"}]},
    {"$and": [{"kind": "doc"}, {"doc_id": {"$ne": "http"}}]},
]


@pytest.mark.parametrize("where", WHERES, ids=[str(w) for w in WHERES])
def test_where_filters_select_what_the_store_selects(where, index):
    from chunklab.retrieval.chroma.store import ChunkStore

    store = ChunkStore(in_memory=True, encoder=HashEncoder())
    store.add(corpus_chunks(), show_progress=False)
    try:
        dense = {c.doc_id for c, _ in store.search("anything", k=10, where=where)}
    finally:
        store.close()
    ours = {c.doc_id for c, keep in zip(index.chunks, index._mask(where), strict=True) if keep}
    assert ours == dense
    assert {
        c.doc_id for c, _ in index.search("parse user refunds weather httpserver", k=10, where=where)
    } <= dense


_VALUES = st.one_of(
    st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, 1.0, 2.5, -1.5]), st.sampled_from(["a", "b"])
)
_RECORDS = st.lists(st.dictionaries(st.sampled_from(["x", "y"]), _VALUES, max_size=2), min_size=1, max_size=6)
_OPS = st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"])


@st.composite
def _where(draw):
    key, op = draw(st.sampled_from(["x", "y"])), draw(_OPS)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        return {key: {op: draw(st.sampled_from([-1, 0, 1.0, 2, 2.5, -1.5]))}}
    if op in ("$in", "$nin"):
        same_type = st.one_of(  # Chroma wants one type per list
            st.lists(st.booleans(), min_size=1, max_size=2, unique=True),
            st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True),
            st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2, unique=True),
        )
        return {key: {op: draw(same_type)}}
    return {key: {op: draw(_VALUES)}}


@given(_RECORDS, _where())
def test_python_filters_agree_with_chroma_on_random_records(records, where):
    from chunklab.retrieval.chroma.backend import make_client

    client = make_client(None, None, in_memory=True)
    coll = client.get_or_create_collection("filters-agree", embedding_function=None)
    try:
        ids = [str(i) for i in range(len(records))]
        coll.add(
            ids=ids,
            embeddings=np.eye(len(records), 8, dtype=np.float32) + 0.1,
            metadatas=[dict(r, always=1) for r in records],
        )
        chroma = set(coll.get(where=where)["ids"])
        ours = {i for i, r in zip(ids, records, strict=True) if matches(where, dict(r, always=1))}
        assert ours == chroma
    finally:
        client.delete_collection("filters-agree")


def test_filtered_search_is_the_unfiltered_ranking_restricted(index):
    where = {"kind": "doc"}
    full = index.search("the card in a thread with sunny weather", k=10)
    filtered = index.search("the card in a thread with sunny weather", k=10, where=where)
    assert filtered == [(c, s) for c, s in full if c.metadata["kind"] == "doc"]


def test_saved_index_reloads_in_another_process_with_the_same_results(index, tmp_path):
    index.save(tmp_path / "bm25")
    query = "parse the config for the user name"
    code = textwrap.dedent(
        f"""
        from chunklab.retrieval.lexical import BM25Index
        idx = BM25Index.load({str(tmp_path / "bm25")!r})
        for chunk, score in idx.search({query!r}, k=3, where={{"kind": {{"$ne": "doc"}}}}):
            print(chunk.id, chunk.doc_id, round(score, 5), chunk.metadata.get("line_start"))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    here = index.search(query, k=3, where={"kind": {"$ne": "doc"}})
    assert here
    assert done.stdout.split("\n")[:-1] == [
        f"{c.id} {c.doc_id} {round(s, 5)} {c.metadata.get('line_start')}" for c, s in here
    ]


def test_loading_a_folder_without_an_index_names_the_problem(tmp_path):
    with pytest.raises(ValueError, match="no BM25 index"):
        BM25Index.load(tmp_path)


def test_an_empty_index_answers_nothing(tmp_path):
    idx = BM25Index([])
    assert idx.search("anything") == []
    idx.save(tmp_path / "empty")
    assert BM25Index.load(tmp_path / "empty").search("anything") == []


def test_chunks_without_a_single_token_are_kept_and_answer_nothing(tmp_path):
    chunks = [
        Chunk(text="!!! ... ---", doc_id="a.md", start=0, end=11),
        Chunk(text="   ", doc_id="b.md", start=0, end=3),
    ]
    idx = BM25Index(chunks, context=False)
    assert len(idx) == 2 and idx.search("anything") == [] and idx.search("!!!") == []
    idx.save(tmp_path / "tokenless")
    again = BM25Index.load(tmp_path / "tokenless")
    assert len(again) == 2 and again.search("anything") == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"tokenizer": "stems"}, "tokenizer"), ({"k1": -1}, "k1"), ({"b": "x"}, "b")],
)
def test_bad_arguments_are_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BM25Index(corpus_chunks(), **kwargs)


@pytest.mark.parametrize(("query", "k"), [("", 5), ("ok", 0), ("ok", True)])
def test_bad_queries_are_value_errors(index, query, k):
    with pytest.raises(ValueError):
        index.search(query, k=k)


def test_a_custom_tokenizer_is_used_but_cannot_be_saved(tmp_path):
    idx = BM25Index(corpus_chunks(), tokenizer=lambda s: s.lower().split())
    assert idx.search("paris", k=1)[0][0].doc_id == "weather"
    with pytest.raises(ValueError, match="custom tokenizer"):
        idx.save(tmp_path)


# --------------------------------------------------------------------------- BM25 from token counts

_CODE_WORDS = st.sampled_from(
    "parse config parse_config HTTPServer get_user x 42 self return value read_file path def userName".split()
)
_TEXTS = st.lists(st.lists(_CODE_WORDS, max_size=25).map(" ".join), min_size=1, max_size=30)
_QUERIES = st.lists(st.lists(_CODE_WORDS, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=5)


@given(_TEXTS, _QUERIES)
def test_bm25_from_token_counts_scores_and_ranks_as_bm25_from_text(texts, queries):
    chunks = [Chunk(t, 10 * i, 10 * i + len(t), f"doc{i % 3}", {}) for i, t in enumerate(texts)]
    from_text = BM25Index(chunks, context=False)
    from_counts = CountsBM25.from_tokens(tokenize(t) for t in texts)
    assert len(from_counts) == len(texts)
    for q in queries:
        np.testing.assert_allclose(from_counts.scores(q), from_text.scores(q), rtol=1e-5, atol=1e-6)
        by_text = [chunks.index(c) for c, _ in from_text.search(q, k=5)]
        assert [i for i, _ in from_counts.search(q, k=5)] == by_text


@given(_TEXTS, st.randoms(use_true_random=False))
def test_weights_do_not_depend_on_term_ids_order_or_the_slice_size(texts, rng):
    """Counts given by hand, under a shuffled vocabulary and weighed 3 postings at a time, score the same."""
    tokens = [tokenize(t) for t in texts]
    reference = CountsBM25.from_tokens(tokens)
    words = sorted({t for doc in tokens for t in doc})
    rng.shuffle(words)
    vocab = {w: i for i, w in enumerate(words)}
    counts = [{t: doc.count(t) for t in sorted(set(doc))} for doc in tokens]
    term = np.array([vocab[t] for c in counts for t in c], dtype=np.int32)
    tf = np.array([n for c in counts for n in c.values()], dtype=np.uint16)
    nuniq = np.array([len(c) for c in counts])
    length = np.array([len(doc) for doc in tokens])
    slice_before = bm25_counts._SLICE
    bm25_counts._SLICE = 3
    try:
        by_hand = CountsBM25(term, tf, nuniq, length, vocab)
    finally:
        bm25_counts._SLICE = slice_before
    assert by_hand.postings == reference.postings == len(term)
    for q in ("parse config", "HTTPServer value", "x 42 userName"):
        np.testing.assert_allclose(by_hand.scores(q), reference.scores(q), rtol=1e-6)


def test_counts_without_a_single_token_answer_nothing():
    assert CountsBM25.from_tokens([]).search("anything") == []
    idx = CountsBM25.from_tokens([[], []])
    assert len(idx) == 2 and idx.postings == 0 and idx.search("anything") == []


def test_a_custom_tokenizer_tokenizes_the_queries_of_a_counts_index():
    idx = CountsBM25.from_tokens([["Paris"], ["Rome"]], tokenizer=lambda s: s.split())
    assert idx.search("Rome", k=2) == [(1, pytest.approx(float(idx.scores("Rome")[1])))]
    assert idx.search("rome") == []  # the default tokenizer would have lowercased


@pytest.mark.parametrize(
    ("arrays", "match"),
    [
        (([0, 1], [1], [2], [2]), "sum\\(nuniq\\)"),
        (([0], [1], [1], [1, 1]), "one per document"),
        (([5], [1], [1], [1]), "vocabulary"),
        (([0.5], [1], [1], [1]), "term must be a flat array of integers"),
    ],
)
def test_inconsistent_counts_are_value_errors(arrays, match):
    with pytest.raises(ValueError, match=match):
        CountsBM25(*(np.array(a) for a in arrays), {"a": 0, "b": 1})


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"tokenizer": "stems"}, "tokenizer"), ({"k1": -1}, "k1"), ({"b": "x"}, "b")]
)
def test_bad_counts_index_arguments_are_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CountsBM25.from_tokens([["a", "b"]], **kwargs)


@pytest.mark.parametrize(("query", "k"), [("", 5), ("ok", 0), ("ok", True)])
def test_bad_counts_index_queries_are_value_errors(query, k):
    with pytest.raises(ValueError):
        CountsBM25.from_tokens([["ok"]]).search(query, k=k)
