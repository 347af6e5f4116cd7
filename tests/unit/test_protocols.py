"""The seams are Protocols: every implementation the package ships (and a test's own) fits them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest

from chunklab.chunk import Chunk
from chunklab.chunkers.catalog import get_strategy
from chunklab.documents import Document
from chunklab.embed import Encoder
from chunklab.protocols import DocumentLike, EncoderLike, Retriever, StoreLike, StrategyLike
from chunklab.retrieval.chroma.store import ChunkStore
from chunklab.retrieval.hybrid import HybridRetriever
from chunklab.retrieval.lexical import BM25Index


class HashEncoder:
    """A second encoder: unit vectors from a hash of each text (no model), 16 dimensions."""

    name = "test:hash16"
    dim = 16

    def encode(self, texts: Sequence[str], show_progress: bool | None = None) -> np.ndarray:
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.uint8) for t in texts]
        vecs = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim) + 1.0
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def _chunks() -> list[Chunk]:
    text = "alpha beta gamma. delta epsilon zeta. eta theta iota."
    return get_strategy("recursive", size=20)(Document.from_text(text, doc_id="greek.txt"))


def test_the_packaged_encoder_and_a_test_encoder_are_both_encoders():
    assert isinstance(Encoder(), EncoderLike)  # the packaged MiniLM: dim known without loading
    assert isinstance(HashEncoder(), EncoderLike)
    assert not isinstance(object(), EncoderLike)


def test_a_catalog_strategy_is_a_strategy_and_a_document_is_a_document():
    strategy = get_strategy("fixed", size=10)
    document = Document.from_text("one two three four five", doc_id="d.txt")
    assert isinstance(strategy, StrategyLike)
    assert isinstance(document, DocumentLike)
    assert [c.text for c in strategy(document)] == ["one two th", "ree four f", "ive"]


def test_the_store_takes_any_encoder_and_is_a_store_and_a_retriever():
    chunks = _chunks()
    store = ChunkStore(collection="protocols", encoder=HashEncoder(), in_memory=True)
    try:
        assert store.add(chunks) == len(chunks)
        assert isinstance(store, StoreLike) and isinstance(store, Retriever)
        # a hash vector of the exact embedded text is that chunk's own vector: cosine 1
        hit, score = store.search(store.embedded_text(chunks[1]), k=1)[0]
        assert hit.id == chunks[1].id and score == pytest.approx(1.0, abs=1e-5)
        assert store.stats()["dim"] == 16
    finally:
        store.close()


def test_bm25_and_their_fusion_are_retrievers():
    chunks = _chunks()
    lexical = BM25Index(chunks)
    store = ChunkStore(collection="protocols-hybrid", encoder=HashEncoder(), in_memory=True)
    try:
        store.add(chunks)
        fused = HybridRetriever(store, lexical)
        for retriever in (lexical, fused):
            assert isinstance(retriever, Retriever)
        assert lexical.search("theta", k=1)[0][0].text.startswith("eta theta")
    finally:
        store.close()
