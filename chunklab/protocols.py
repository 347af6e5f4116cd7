"""The seams of the pipeline as Protocols: what one part needs from another, and nothing more.

Two implementations meet at each seam, so each is typed by what it is used for rather than
by a class: an encoder is MiniLM, the static model or a test's random one; a strategy is
the catalog's or a learner's; a retriever is the Chroma store, BM25 or their fusion.

- :class:`EncoderLike`: what embeds text (:class:`chunklab.embed.Encoder` is one).
- :class:`GeneratorLike`: what writes text for a prompt (:class:`chunklab.generate.Generator` is one,
  a replay of recorded answers another).
- :class:`DocumentLike`: what a strategy chunks and a question is about (:class:`chunklab.documents.Document`
  is one).
- :class:`StrategyLike`: a named chunker (:class:`chunklab.chunkers.catalog.Strategy` is one).
- :class:`Retriever`: ranked ``(chunk, score)`` lists for queries (``ChunkStore``,
  ``BM25Index``, ``HybridRetriever``); :class:`StoreLike` adds fetching chunks by id.

The ``-Like`` names keep the plain names for the concrete classes the book and the chapters
use (``Encoder``, ``Strategy``). The ``Dataset`` protocol lives with the datasets
(:mod:`chunklab.datasets`). This module imports only the shared :class:`~chunklab.chunk.Chunk`,
so every part of the package may import it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from chunklab.chunk import Chunk

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DocumentLike", "EncoderLike", "GeneratorLike", "Hit", "Retriever", "StoreLike", "StrategyLike"]

#: one retrieved chunk and its score (higher is better)
Hit = tuple[Chunk, float]


@runtime_checkable
class EncoderLike(Protocol):
    """Embeds texts as unit vectors: ``name`` is recorded with the vectors, ``dim`` is their width."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], show_progress: bool | None = None) -> np.ndarray:
        """An ``(len(texts), dim)`` float32 array, one L2-normalized row per text."""
        ...


@runtime_checkable
class GeneratorLike(Protocol):
    """Answers prompts greedily: ``name`` is recorded with what its answers built."""

    @property
    def name(self) -> str: ...

    def generate(
        self, prompts: Sequence[str], *, max_new_tokens: int = 64, stop: Sequence[str] = ()
    ) -> list[str]:
        """One answer per prompt, at most ``max_new_tokens`` tokens, cut at the first ``stop`` string."""
        ...


@runtime_checkable
class DocumentLike(Protocol):
    """What a strategy chunks and a question is about: the exact text (gold spans index it) and its id.

    Strategies also read ``format``, ``title`` and ``path`` when a document has them.
    """

    @property
    def text(self) -> str: ...

    @property
    def doc_id(self) -> str: ...


@runtime_checkable
class StrategyLike(Protocol):
    """A named chunker: ``strategy(document)`` gives its chunks, ``index_chunks`` those to embed."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> Mapping[str, object]: ...

    def __call__(self, document: DocumentLike, encoder: EncoderLike | None = None) -> list[Chunk]: ...

    def index_chunks(self, chunks: Sequence[Chunk]) -> list[Chunk]: ...


@runtime_checkable
class Retriever(Protocol):
    """Ranks chunks for queries: ``search`` for one, ``search_many`` for a batch, same ``where`` filter."""

    def search(self, query: str, k: int = 5, where: Mapping[str, object] | None = None) -> list[Hit]: ...

    def search_many(
        self, queries: Sequence[str], k: int = 5, where: Mapping[str, object] | None = None
    ) -> list[list[Hit]]: ...


@runtime_checkable
class StoreLike(Retriever, Protocol):
    """A retriever that also gives back stored chunks by id (what auto-merging needs of a store)."""

    def get(self, ids: Sequence[str]) -> list[Chunk]: ...
