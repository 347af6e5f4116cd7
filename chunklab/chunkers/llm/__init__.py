"""Chunkers that ask a local generative model: LLM boundaries (LumberChunker) and propositions (Dense X).

Both keep the Chunk contract whatever the model answers: chunks are exact source spans within
``max_size``, nothing is lost, and every answer that could not be used is counted
(:class:`LLMStats`) and said in the chunks' metadata. The answers are read by the pure
functions of :mod:`chunklab.chunkers.llm.parse`. The model is
:func:`chunklab.generate.get_generator`'s (the packaged SmolLM2 by default, cached on disk);
``generator=`` takes any :class:`chunklab.protocols.GeneratorLike`, such as a replay of recorded
answers.
"""

from __future__ import annotations

from collections.abc import Callable

from chunklab.chunk import Chunk
from chunklab.chunkers.llm.boundaries import boundary_prompt, chunk_llm_boundaries
from chunklab.chunkers.llm.parse import (
    Alignment,
    BoundaryAnswer,
    align_proposition,
    parse_boundary_answer,
    parse_propositions,
)
from chunklab.chunkers.llm.propositions import chunk_propositions, propositions_prompt
from chunklab.chunkers.llm.stats import LLMStats
from chunklab.protocols import DocumentLike

__all__ = [
    "Alignment",
    "BoundaryAnswer",
    "LLMChunker",
    "LLMStats",
    "align_proposition",
    "boundary_prompt",
    "chunk_llm_boundaries",
    "chunk_propositions",
    "parse_boundary_answer",
    "parse_propositions",
    "propositions_prompt",
]


class LLMChunker:
    """A catalog strategy's chunk function for an LLM chunker; ``stats`` counts over every document.

    ``chunk_text(text, doc_id=..., model=..., stats=..., **options)`` is
    :func:`chunk_llm_boundaries` or :func:`chunk_propositions`; the model (the shared generator
    of ``model``) is loaded when the first document needs it.
    """

    def __init__(self, chunk_text: Callable[..., list[Chunk]], model: str, **options: object) -> None:
        self.chunk_text = chunk_text
        self.model = model
        self.options = options
        self.stats = LLMStats()

    def __repr__(self) -> str:
        return f"LLMChunker({self.chunk_text.__name__}, model={self.model!r})"

    def __call__(self, document: DocumentLike) -> list[Chunk]:
        """The chunks of ``document`` (its counts added to :attr:`stats`)."""
        return self.chunk_text(
            document.text, doc_id=document.doc_id, model=self.model, stats=self.stats, **self.options
        )
