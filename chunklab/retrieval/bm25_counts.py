"""BM25 from term counts: the lexical tier of a corpus too big for lists of token lists.

:class:`CountsBM25` takes documents as (term id, count) postings, as worker processes send them
for 50,000 files, and weighs them exactly as :class:`chunklab.retrieval.lexical.BM25Index`
(bm25s's Lucene variant, same tokenizer, same query scoring), by position instead of by chunk.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from chunklab._validate import check_positive_int
from chunklab.retrieval.filters import check_query
from chunklab.retrieval.lexical import (
    Tokenizer,
    _check_knobs,
    _check_tokenizer,
    _query_ids,
    _tokens_of,
    _top,
)

__all__ = ["CountsBM25"]

_SLICE = 1 << 24  # postings weighed per numpy step (bounds the float temporaries)


class CountsBM25:
    """BM25 over documents given as term counts, found by position: for corpora too big for lists of
    token lists (50,000 files whose workers send counts, not text).

    Document ``d`` holds ``nuniq[d]`` distinct terms, in order in ``term`` (ids of ``vocab``,
    token -> id) with their counts in ``tf``; ``length[d]`` is its token count. The weights are
    bm25s's Lucene variant, as :class:`BM25Index` gets them: ``idf * tf / (tf + k1 * (1 - b + b *
    len / avg_len))``, ``idf = log(1 + (N - df + 0.5) / (df + 0.5))``. bm25s's public API builds
    only from token lists, so numpy computes them here, term-major as bm25s keeps them, and a
    query (tokenized with ``tokenizer``) is scored as bm25s scores one.
    """

    def __init__(
        self,
        term: np.ndarray,
        tf: np.ndarray,
        nuniq: np.ndarray,
        length: np.ndarray,
        vocab: Mapping[str, int],
        *,
        tokenizer: Tokenizer = "auto",
        k1: float = 1.5,
        b: float = 0.75,
    ) -> None:
        _check_tokenizer(tokenizer)
        _check_knobs(k1, b)
        term, tf, nuniq, length = (_integers(a, name) for a, name in zip((term, tf, nuniq, length), _COUNTS))
        if not (len(term) == len(tf) == int(nuniq.sum())) or len(length) != len(nuniq):
            raise ValueError(
                f"term ({len(term)}) and tf ({len(tf)}) must hold sum(nuniq) ({int(nuniq.sum())}) entries "
                f"and length ({len(length)}) one per document ({len(nuniq)})"
            )
        if len(term) and (int(term.min()) < 0 or int(term.max()) >= len(vocab)):
            raise ValueError(
                f"term ids must lie in [0, {len(vocab)}) (the vocabulary), got {term.min()}..{term.max()}"
            )
        self.tokenizer = tokenizer
        self.vocab = vocab
        self.k1, self.b = float(k1), float(b)
        self.weights = _lucene_weights(term, tf, nuniq, length, len(vocab), self.k1, self.b)

    @classmethod
    def from_tokens(cls, documents: Iterable[Iterable[str]], **options: Any) -> CountsBM25:
        """The index of tokenized ``documents`` (one token list each); ``options`` as for the class."""
        vocab: dict[str, int] = {}
        counts = [Counter(doc) for doc in documents]
        term = np.fromiter((vocab.setdefault(t, len(vocab)) for c in counts for t in c), np.int32)
        tf = np.fromiter((n for c in counts for n in c.values()), np.int32)
        nuniq = np.fromiter((len(c) for c in counts), np.int32, len(counts))
        length = np.fromiter((c.total() for c in counts), np.int64, len(counts))
        return cls(term, tf, nuniq, length, vocab, **options)

    def __len__(self) -> int:
        return int(self.weights.shape[0])

    @property
    def postings(self) -> int:
        """How many (document, term) weights are stored."""
        return int(self.weights.nnz)

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document for ``query`` (float32, by position)."""
        w, out = self.weights, np.zeros(len(self), dtype=np.float32)
        for t in _query_ids(_tokens_of(query, self.tokenizer), self.vocab):
            lo, hi = w.indptr[t], w.indptr[t + 1]
            out[w.indices[lo:hi]] += w.data[lo:hi]  # a column's rows are distinct
        return out

    def search(self, query: str, k: int = 5) -> list[tuple[int, float]]:
        """The ``k`` best documents for ``query`` as ``(position, score)``, best first, ties by position.

        Only documents sharing a token with the query come back, as in :meth:`BM25Index.search`.
        """
        check_positive_int(k, "k")
        scores = self.scores(check_query(query))
        return [(i, float(scores[i])) for i in _top(scores, k)]


_COUNTS = ("term", "tf", "nuniq", "length")


def _integers(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.size == 0:
        return array.astype(np.int32)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be a flat array of integers, got {array.dtype} of shape {array.shape}")
    return array


def _lucene_weights(
    term: np.ndarray, tf: np.ndarray, nuniq: np.ndarray, length: np.ndarray, n_terms: int, k1: float, b: float
) -> Any:
    """The (documents x terms) CSC matrix of Lucene BM25 weights, computed in slices of postings."""
    import scipy.sparse as sp

    n_docs = len(nuniq)
    df = np.bincount(term, minlength=n_terms).astype(np.float64)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
    avg = np.float32(length.mean()) if n_docs else np.float32(1.0)
    data = np.empty(len(term), dtype=np.float32)
    doc_of = np.repeat(np.arange(n_docs, dtype=np.int32), nuniq)
    for lo in range(0, len(term), _SLICE):
        sl = slice(lo, lo + _SLICE)
        f = tf[sl].astype(np.float32)
        l_d = length[doc_of[sl]].astype(np.float32)
        data[sl] = idf[term[sl]] * (f / (k1 * ((1 - b) + b * l_d / avg) + f))
    del doc_of
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(nuniq, out=indptr[1:])
    shape = (n_docs, n_terms)
    return sp.csr_matrix((data, term.astype(np.int32, copy=False), indptr), shape=shape).tocsc()
