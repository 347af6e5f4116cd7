"""A stand-in encoder and a five-chunk corpus for the tests that need a store or an index but no model."""

from __future__ import annotations

import hashlib

import numpy as np

from chunklab.chunk import Chunk

#: doc_id -> (text, metadata): code, prose and metadata of each type the where filters handle
CORPUS = {
    "config": (
        "def parse_config(path):\n    return json.loads(open(path).read())",
        {"kind": "function", "line_start": 3},
    ),
    "user": (
        "class UserStore:\n    def getUserName(self, uid):\n        return self.names[uid]",
        {"kind": "class"},
    ),
    "refund": (
        "Refunds are issued to the original card within five business days.",
        {"kind": "doc", "headings": ["Payments", "Refunds"]},
    ),
    "weather": ("The weather in Paris is sunny with a light breeze.", {"kind": "doc", "score": 0.5}),
    "http": ("HTTPServer handles each request in a thread.", {"kind": "doc", "draft": True}),
}


class HashEncoder:
    """A stand-in encoder for tests that need a store but not a model: a seeded unit vector per text."""

    name = "test-hash-encoder"
    model_kind = "minilm"
    dim = 16
    max_seq_length = 256

    def encode(self, texts, show_progress=None):
        """One unit vector per text, seeded by the text's hash (the same text, the same vector)."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


def corpus_chunks() -> list[Chunk]:
    """The corpus as one whole-text chunk per document (strategy ``"t"``)."""
    return [
        Chunk(text, 0, len(text), doc_id, dict(meta, strategy="t")) for doc_id, (text, meta) in CORPUS.items()
    ]
