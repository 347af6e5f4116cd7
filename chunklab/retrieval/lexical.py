"""Lexical retrieval: BM25 over chunks with ``bm25s``, a tokenizer for prose and code, the store's filters.

Dense vectors match meaning; BM25 matches words, which is what wins on exact identifiers
(``parse_config``), error codes and rare terms, and what loses on paraphrase. The ``"auto"``
tokenizer lowercases word runs and splits identifiers on ``snake_case`` and ``camelCase``
while keeping the whole identifier too, so ``getUserName`` matches the query
``get user name`` and the query ``getUserName`` alike. With ``context=True`` (the default,
as in :class:`chunklab.retrieval.chroma.store.ChunkStore`) each chunk is indexed with its contextual header
(title > section path, :func:`chunklab.chunk.embedding_text`) in front of its text:
"contextual BM25". ``where`` filters behave exactly like ``ChunkStore.search``'s.
"""

from __future__ import annotations

import functools
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chunklab._validate import check_positive_int
from chunklab.chunk import Chunk, embedding_text, is_leaf
from chunklab.retrieval.filters import (
    META_KEY,
    BatchRetriever,
    check_queries,
    check_where,
    chunk_from_stored,
    encode_metadata,
    matches,
)

__all__ = ["TOKENIZERS", "BM25Index", "lexical_dir", "tokenize"]

#: the named tokenizers; a callable ``str -> list[str]`` works too (but is not saved)
TOKENIZERS = ("auto", "words")
_FORMAT = 1
_WORD = re.compile(r"\w+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
_MASK_CACHE = 32
Tokenizer = str | Callable[[str], list[str]]


def tokenize(text: str, tokenizer: str = "auto") -> list[str]:
    """The BM25 tokens of ``text``: lowercase word runs; ``"auto"`` adds identifier parts.

    ``"auto"`` turns ``parse_config`` into ``parse_config, parse, config`` and ``HTTPServer``
    into ``httpserver, http, server``; ``"words"`` keeps whole word runs only. Single letters
    are dropped (digits are kept), as they match almost everything.
    """
    _check_tokenizer(tokenizer, allow_callable=False)
    split = _identifier_tokens if tokenizer == "auto" else _word_token
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(split(word))
    return out


@functools.lru_cache(maxsize=1 << 18)
def _identifier_tokens(word: str) -> tuple[str, ...]:
    whole = word.strip("_").lower()
    parts = [p.lower() for piece in word.split("_") if piece for p in _CAMEL.findall(piece)]
    tokens = [whole] if _keep(whole) else []
    if len(parts) > 1:
        tokens.extend(p for p in parts if _keep(p))
    return tuple(tokens)


@functools.lru_cache(maxsize=1 << 18)
def _word_token(word: str) -> tuple[str, ...]:
    whole = word.lower()
    return (whole,) if _keep(whole) else ()


def _keep(token: str) -> bool:
    return len(token) > 1 or token.isdigit()


def _check_tokenizer(tokenizer: object, allow_callable: bool = True) -> None:
    if not (allow_callable and callable(tokenizer)) and tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)} or a callable; got {tokenizer!r}")


def _check_knobs(k1: object, b: object) -> None:
    for name, value in (("k1", k1), ("b", b)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"{name} must be a non-negative number, got {value!r}")


def _tokens_of(text: str, tokenizer: Tokenizer) -> list[str]:
    return list(tokenizer(text)) if callable(tokenizer) else tokenize(text, tokenizer)


def _query_ids(tokens: Iterable[str], vocab: Mapping[str, int]) -> list[int]:
    """The vocabulary ids of a query's distinct tokens, in order (unknown tokens dropped)."""
    return [vocab[t] for t in dict.fromkeys(tokens) if t in vocab]


def _top(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the ``k`` best positive scores, best first; ties by position (deterministic)."""
    k = min(k, len(scores))
    if k == 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    top = top[np.lexsort((top, -scores[top]))]
    return [int(i) for i in top if scores[i] > 0]


def lexical_dir(store: Any) -> Path:
    """Where a local :class:`~chunklab.retrieval.chroma.store.ChunkStore`'s BM25 index lives:
    ``<store>/bm25/<collection>``."""
    if getattr(store, "path", None) is None:
        raise ValueError(
            "only a local-folder ChunkStore (path=...) has a folder to keep a BM25 index next to"
        )
    return Path(store.path) / "bm25" / store.name


class BM25Index(BatchRetriever):
    """A BM25 index over the leaves of ``chunks`` (parents are skipped, as the store's search does).

    ``tokenizer`` is ``"auto"`` (prose and code), ``"words"`` or a callable. ``context``
    indexes each chunk's contextual header too. ``k1`` and ``b`` are BM25's usual knobs
    (term-frequency saturation, length normalization). Chunks with the same id are kept once
    (the last wins), as an upsert would.
    """

    def __init__(
        self,
        chunks: Iterable[Chunk],
        tokenizer: Tokenizer = "auto",
        *,
        context: bool = True,
        k1: float = 1.5,
        b: float = 0.75,
        show_progress: bool = False,
    ) -> None:
        import bm25s

        _check_tokenizer(tokenizer)
        if isinstance(chunks, Chunk):
            raise ValueError("BM25Index expects an iterable of Chunk, not a single Chunk")
        _check_knobs(k1, b)
        self.tokenizer = tokenizer
        self.context = bool(context)
        unique: dict[str, Chunk] = {}
        for i, c in enumerate(chunks):
            if not isinstance(c, Chunk):
                raise ValueError(f"BM25Index: item {i} is {type(c).__name__}, expected Chunk")
            if is_leaf(c):
                unique[c.id] = c
        self.chunks: list[Chunk] = list(unique.values())
        vocab: dict[str, int] = {}
        ids = [
            [vocab.setdefault(t, len(vocab)) for t in self._tokens(self.lexical_text(c))] for c in self.chunks
        ]
        self.bm25 = bm25s.BM25(k1=float(k1), b=float(b))
        if vocab:  # chunks with no token at all (punctuation only) leave nothing to index
            self.bm25.index((ids, vocab), show_progress=show_progress)
        self._vocab = vocab
        self._records: list[dict[str, str | int | float | bool]] | None = None
        self._masks: OrderedDict[str, np.ndarray] = OrderedDict()

    def __len__(self) -> int:
        return len(self.chunks)

    def __repr__(self) -> str:
        name = (
            self.tokenizer
            if isinstance(self.tokenizer, str)
            else getattr(self.tokenizer, "__name__", "callable")
        )
        return f"BM25Index(chunks={len(self)}, tokenizer={name!r}, context={self.context})"

    def lexical_text(self, chunk: Chunk) -> str:
        """What is indexed for ``chunk``: its contextual header and text, or the bare text."""
        return embedding_text(chunk) if self.context else chunk.text

    def _tokens(self, text: str) -> list[str]:
        return _tokens_of(text, self.tokenizer)

    # -- searching ---------------------------------------------------------------------
    def search_many(
        self, queries: Sequence[str], k: int = 5, where: Mapping[str, Any] | None = None
    ) -> list[list[tuple[Chunk, float]]]:
        """The ``k`` best chunks for each query as ``(chunk, BM25 score)``, best first.

        Only chunks sharing at least one token with the query are returned (BM25 scores the
        rest 0), so fewer than ``k`` may come back. ``where`` is a Chroma-style metadata
        filter, with the semantics of :meth:`chunklab.retrieval.chroma.store.ChunkStore.search`,
        evaluated once for all the queries. :meth:`search` asks one query.
        """
        check_positive_int(k, "k")
        queries = check_queries(queries)
        where = check_where(where)
        mask = self._mask(where) if where else None
        return [self._search_one(q, k, mask) for q in queries]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of each indexed chunk for ``query``, in ``self.chunks`` order."""
        ids = _query_ids(self._tokens(query), self._vocab)
        if not ids:  # no query token is in the vocabulary (or nothing is indexed)
            return np.zeros(len(self.chunks), dtype=np.float32)
        return np.asarray(self.bm25.get_scores(ids), dtype=np.float32)

    def _search_one(
        self,
        query: str,
        k: int,
        mask: np.ndarray | None,
    ) -> list[tuple[Chunk, float]]:
        scores = self.scores(query)
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        return [(self.chunks[i], float(scores[i])) for i in _top(scores, k)]

    def _mask(self, where: Mapping[str, object]) -> np.ndarray:
        key = json.dumps(where, sort_keys=True, default=str)
        if key not in self._masks:
            if self._records is None:
                self._records = [_record(c) for c in self.chunks]
            self._masks[key] = np.fromiter(
                (matches(where, r) for r in self._records), dtype=bool, count=len(self)
            )
            while len(self._masks) > _MASK_CACHE:
                self._masks.popitem(last=False)
        self._masks.move_to_end(key)
        return self._masks[key]

    # -- persistence -------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write the index to ``directory`` (created): bm25s's matrices, the chunks, the settings."""
        if callable(self.tokenizer):
            raise ValueError(
                "an index with a custom tokenizer cannot be saved: use tokenizer='auto' or 'words'"
            )
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        if self._vocab:
            self.bm25.save(str(folder), show_progress=False)
        with (folder / "chunks.jsonl").open("w", encoding="utf-8") as fh:
            for c in self.chunks:
                fh.write(json.dumps({"text": c.text, **encode_metadata(c)}, ensure_ascii=False) + "\n")
        settings = {
            "format": _FORMAT,
            "tokenizer": self.tokenizer,
            "context": self.context,
            "k1": self.bm25.k1,
            "b": self.bm25.b,
            "chunks": len(self),
            "vocab": self._vocab,
        }
        (folder / "chunklab_bm25.json").write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
        return folder

    @classmethod
    def load(cls, directory: str | Path, mmap: bool = False) -> BM25Index:
        """An index written by :meth:`save`, in this or another process (``mmap`` keeps the matrices
        on disk)."""
        import bm25s

        folder = Path(directory)
        settings_path = folder / "chunklab_bm25.json"
        if not settings_path.is_file():
            raise ValueError(
                f"no BM25 index at {folder} (expected {settings_path.name}; build one and save it)"
            )
        settings = json.loads(settings_path.read_text(encoding="utf-8"))
        if settings.get("format") != _FORMAT:
            raise ValueError(
                f"BM25 index at {folder} has format {settings.get('format')!r}, expected {_FORMAT}"
            )
        self = cls.__new__(cls)
        self.tokenizer = settings["tokenizer"]
        self.context = bool(settings["context"])
        self._vocab = settings["vocab"]
        self.chunks = []
        with (folder / "chunks.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                self.chunks.append(chunk_from_stored(row["text"], row))
        if len(self.chunks) != settings["chunks"]:
            raise ValueError(
                f"BM25 index at {folder} is incomplete: {len(self.chunks)} of {settings['chunks']} chunks"
            )
        if self._vocab:
            self.bm25 = bm25s.BM25.load(
                str(folder), mmap=mmap, load_vocab=False, show_progress=False, verbosity=0
            )
        else:
            self.bm25 = bm25s.BM25(k1=settings["k1"], b=settings["b"])
        self._records = None
        self._masks = OrderedDict()
        return self


def _record(chunk: Chunk) -> dict[str, str | int | float | bool]:
    """The flat, filterable metadata of ``chunk``, exactly as the store keeps it."""
    record = encode_metadata(chunk)
    record.pop(META_KEY, None)
    return record
