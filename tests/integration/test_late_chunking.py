"""Late chunking with the packaged MiniLM: pooled token embeddings of the whole window, per chunk.

The reference for every expected vector is sentence-transformers itself: its ordinary
(mean-pooled, normalized) embedding of a text, and its token embeddings of that text.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

os.environ.setdefault("CHUNKLAB_TORCH_THREADS", "1")

from chunklab.chunkers.catalog import get_strategy  # noqa: E402
from chunklab.embed import Encoder  # noqa: E402
from chunklab.embed.late import LATE_OVERLAP, LateEncoder  # noqa: E402

pytestmark = pytest.mark.slow

#: a token-boundary zoo: CRLF, accents precomposed and combining, CJK, an emoji, a word past
#: WordPiece's 100 characters (one [UNK]), tabs, a NUL (dropped by the tokenizer)
PIECES = [
    "\r\n",
    "\n\n",
    "\t",
    " ",
    "é",
    "e\u0301",
    "naïve",
    "日本語",
    "😀",
    "a" * 120,
    "\x00",
    "Ünïcödé",
    "x",
]
nasty_text = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(st.characters(exclude_categories=("Cs",)), max_size=8)),
    max_size=25,
).map("".join)


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder(cache_dir=False)


@pytest.fixture(scope="module")
def late(encoder) -> LateEncoder:
    return LateEncoder(encoder)


def _tokens(encoder: Encoder, text: str) -> int:
    return len(encoder.model.tokenizer(text, add_special_tokens=False)["input_ids"])


def test_the_window_is_the_packaged_models_max_seq_length_less_cls_and_sep(late, encoder):
    assert encoder.model.max_seq_length == 256
    assert late.window == 254
    assert late.overlap == LATE_OVERLAP == 64
    assert late.name.endswith("|late[window=254,overlap=64]")


@settings(max_examples=25)
@given(text=nasty_text)
def test_a_chunk_that_is_the_whole_window_gets_its_ordinary_embedding(late, encoder, text):
    if not text or _tokens(encoder, text) > late.window:  # no span, or longer than one window
        return
    alone = encoder.encode([text])[0]
    whole = late.encode_spans(text, [(0, len(text))])[0]
    np.testing.assert_allclose(whole, alone, atol=1e-5)


def test_spans_holding_the_same_tokens_get_the_same_vector(late):
    text = "Restart the scanner.\r\nHold the power key for ten seconds."
    start = text.index("power")
    a, b, c = late.encode_spans(text, [(start, start + 5), (start - 1, start + 6), (start + 1, start + 3)])
    np.testing.assert_allclose(a, b, atol=1e-6)  # the spaces around a word add no token
    np.testing.assert_allclose(a, c, atol=1e-6)  # a span inside a word pools that word's token


def test_offsets_pick_the_right_tokens_on_unicode_crlf_and_long_words(late, encoder):
    text = "naïve\r\n日本語 😀 " + "a" * 120 + " ok"
    # tokens: naive (0, 5), 日 (7, 8), 本 (8, 9), 語 (9, 10), [UNK] 😀 (11, 12), [UNK] a*120 (13, 133), ok
    # (134, 136); sentence-transformers' token embeddings put [CLS] first and [SEP] last
    rows = encoder.model.encode([text], output_value="token_embeddings")[0].float().numpy()
    assert rows.shape[0] == 9
    cases = {
        (3, 8): [0, 1, 2],  # "ve\r\n日": [CLS] (it holds the first token), naive (cut), 日
        (8, 9): [3],  # 本 alone
        (50, 60): [6],  # inside the 120-letter word: its one [UNK]
        (9, 14): [4, 5, 6],  # "語 😀 a": 語, the emoji's [UNK], the long word (cut)
        (133, 136): [7, 8],  # " ok": ok and [SEP] (it holds the last token)
    }
    vecs = late.encode_spans(text, list(cases))
    for vec, (span, picked) in zip(vecs, cases.items(), strict=True):
        want = rows[picked].mean(axis=0)
        np.testing.assert_allclose(vec, want / np.linalg.norm(want), atol=1e-5, err_msg=str(span))


def test_a_chunk_without_tokens_gets_its_ordinary_vector_and_is_counted(encoder):
    late = LateEncoder(encoder)
    text = "First line.\r\n\t \r\nSecond line."
    gap = (11, 17)  # "\r\n\t \r\n": no token
    vec = late.encode_spans(text, [gap, (0, 11)])
    np.testing.assert_allclose(vec[0], encoder.encode([text[11:17]])[0], atol=1e-6)
    assert late.fallbacks == 1 and late.chunks == 2


def test_every_chunk_of_a_long_document_gets_a_finite_unit_vector(encoder):
    from chunklab.evaluate import load_dataset

    doc = max(load_dataset("docs").documents, key=lambda d: len(d.text))
    chunks = get_strategy("recursive", size=300)(doc)
    spans = [(c.start, c.end) for c in chunks]
    spans.append((0, len(doc.text)))  # one chunk longer than the window: pooled over every window
    late = LateEncoder(encoder)
    vecs = late.encode_spans(doc.text, spans)
    assert _tokens(encoder, doc.text) > 3 * late.window
    assert late.windows >= 4
    assert vecs.shape == (len(spans), 384)
    assert np.isfinite(vecs).all()
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    alone = encoder.encode([c.text for c in chunks])
    # context moves every vector, yet each stays closer to its own chunk than to the average chunk
    own = np.sum(vecs[:-1] * alone, axis=1)
    assert np.all(own < 1 - 1e-4)
    assert np.mean(own) > np.mean(vecs[:-1] @ alone.T)


def test_windows_of_several_documents_run_together_and_match_one_by_one(encoder, monkeypatch):
    from chunklab.embed import late as late_module

    monkeypatch.setattr(late_module, "GROUP_WINDOWS", 2)  # groups of documents: one, then two
    texts = ["Rail timetables change in May. " * 40, "Short note about bees.", "Bake at 250 degrees."]
    spans = [[(0, 31), (31 * 20, 31 * 21)], [(0, 10), (11, 22)], [(0, 4)]]
    together = LateEncoder(encoder).encode_documents(list(zip(texts, spans, strict=True)))
    for text, sp, vecs in zip(texts, spans, together, strict=True):
        np.testing.assert_allclose(vecs, LateEncoder(encoder).encode_spans(text, sp), atol=1e-5)


def test_a_second_run_reads_the_cache_and_runs_no_window(tmp_path):
    cached = Encoder(cache_dir=tmp_path)
    text = "Depot doors open at six. " * 30
    spans = [(0, 25), (25, 50), (100, 300)]
    first = LateEncoder(cached)
    v1 = first.encode_spans(text, spans)
    second = LateEncoder(cached)
    v2 = second.encode_spans(text, spans)
    assert first.windows == 1 and second.windows == 0 and second.cache_hits == 3
    np.testing.assert_array_equal(v1, v2)
    other = LateEncoder(cached, overlap=32)  # another window rule is another key
    other.encode_spans(text, spans)
    assert other.windows == 1


@pytest.mark.parametrize(
    "documents, match",
    [
        ([("abc", [(0, 4)])], "spans"),
        ([("abc", [(2, 2)])], "spans"),
        ([("abc", [(-1, 2)])], "spans"),
        ([("abc", [(0.0, 2)])], "spans"),
        ([(b"abc", [(0, 2)])], "text"),
        (["abc"], "pair"),
    ],
)
def test_bad_spans_and_documents_are_value_errors(late, documents, match):
    with pytest.raises(ValueError, match=match):
        late.encode_documents(documents)


def test_late_chunking_refuses_a_static_model_and_a_bad_overlap(encoder):
    with pytest.raises(ValueError, match="MiniLM"):
        LateEncoder(Encoder("static", cache_dir=False))
    with pytest.raises(ValueError, match="overlap"):
        LateEncoder(encoder, overlap=-1)
    with pytest.raises(ValueError, match="overlap"):
        _ = LateEncoder(encoder, overlap=254).window


def test_benchmark_late_indexes_each_chunks_late_vector(encoder, tmp_path):
    from chunklab.datasets.model import QuestionSet
    from chunklab.evaluate import Benchmark, load_dataset

    data = load_dataset("docs")
    docs = sorted(data.documents, key=lambda d: d.doc_id)[:2]
    ids = {d.doc_id for d in docs}
    subset = QuestionSet("two-docs", docs, [q for q in data.questions if q.doc_id in ids])
    bench = Benchmark(subset, ["recursive"], k=3, encoder=encoder, n_resamples=200, late=True)
    strategy = bench.strategies[0]
    indexed = bench.index(strategy, bench.open_store(strategy, 0, tmp_path, encoder), encoder)
    late = LateEncoder(encoder)
    # the late vector of every chunk, computed apart from the benchmark: one pass per document for all of
    # its chunks (a span's vector depends on its document's windows only, not on the other spans asked)
    leaves = {d.doc_id: [c for c in indexed.leaves if c.doc_id == d.doc_id] for d in docs}
    vectors = late.encode_documents([(d.text, [(c.start, c.end) for c in leaves[d.doc_id]]) for d in docs])
    assert sum(map(len, leaves.values())) == len(indexed.leaves) > len(docs)
    for d, found_vectors in zip(docs, vectors, strict=True):
        for leaf, vec in zip(leaves[d.doc_id], found_vectors, strict=True):
            # the vector stored for a chunk is its late vector: it finds itself
            (found, score), *_ = indexed.store.search_vectors(vec[None, :], k=1)[0]
            assert found.id == leaf.id and score > 0.999
    result = bench.run(progress=False)
    assert len(result.per_question) == len(subset.questions)
    assert result.summary.loc["recursive", "truncated_chunks"] == 0  # every token is pooled


def test_benchmark_late_must_be_a_bool_and_needs_minilm(encoder):
    from chunklab.cli import main
    from chunklab.evaluate import Benchmark, load_dataset

    with pytest.raises(ValueError, match="late"):
        Benchmark(load_dataset("docs"), ["recursive"], encoder=encoder, late="yes")
    assert main(["evaluate", "--late", "--model", "static", "--no-progress"]) == 2
