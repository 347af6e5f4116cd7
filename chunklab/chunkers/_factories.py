"""The course's strategies: for each, a factory from its parameter dataclass to the parts it runs.

:mod:`chunklab.chunkers.catalog` registers every entry of :data:`COURSE_STRATEGIES` under its
name; nothing else builds strategies. A factory imports its chunker when it is first built,
so importing the catalog stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from chunklab.chunk import Chunk, is_leaf
from chunklab.chunkers._params import (
    FixedParams,
    HierarchicalParams,
    LLMBoundariesParams,
    MarkdownHierarchyParams,
    ParagraphsParams,
    PropositionsParams,
    RecursiveParams,
    SemanticParams,
    SentencesParams,
    StrategyParams,
    StructuralParams,
)
from chunklab.documents import document_format
from chunklab.protocols import DocumentLike, EncoderLike, Hit

__all__ = ["COURSE_STRATEGIES", "StrategyParts"]

ChunkFn = Callable[..., list[Chunk]]
PostFn = Callable[[list[Hit], Mapping[str, Chunk]], list[Hit]]


@dataclass(frozen=True)
class StrategyParts:
    """What a strategy's factory builds from its parameters: the chunk function and its extra steps."""

    chunker: ChunkFn
    index_filter: Callable[[Chunk], bool] | None = None
    postprocess: PostFn | None = None
    needs_encoder: bool = False


def _on_text(chunk_text: ChunkFn, *args: object, **kwargs: object) -> ChunkFn:
    """A document's chunks by ``chunk_text(document.text, *args, doc_id=document.doc_id, **kwargs)``."""

    def chunk(document: DocumentLike) -> list[Chunk]:
        return chunk_text(document.text, *args, doc_id=document.doc_id, **kwargs)

    return chunk


def _fixed(p: FixedParams) -> StrategyParts:
    from chunklab.chunkers.fixed import chunk_fixed

    return StrategyParts(_on_text(chunk_fixed, p.size, p.overlap, p.unit))


def _recursive(p: RecursiveParams) -> StrategyParts:
    from chunklab.chunkers.recursive import chunk_recursive

    return StrategyParts(_on_text(chunk_recursive, p.size, p.overlap, p.unit))


def _structural(p: StructuralParams) -> StrategyParts:
    """``max_chars``/``min_chars`` are measured in ``unit`` (characters unless told)."""
    from chunklab.chunkers.structural import chunk_document

    def chunk(document: DocumentLike) -> list[Chunk]:
        return chunk_document(
            document,
            max_size=p.max_chars,
            min_chars=p.min_chars,
            keep_boilerplate=p.keep_boilerplate,
            unit=p.unit,
        )

    return StrategyParts(chunk)


def _semantic(p: SemanticParams) -> StrategyParts:
    """``min_chars``/``max_chars`` are measured in ``unit`` (characters unless told)."""

    def chunk(document: DocumentLike, encoder: EncoderLike | None = None) -> list[Chunk]:
        from chunklab.chunkers.semantic import chunk_semantic

        return chunk_semantic(document.text, doc_id=document.doc_id, encoder=encoder, **p.as_dict())

    return StrategyParts(chunk, needs_encoder=True)


def _hierarchical(p: HierarchicalParams) -> StrategyParts:
    from chunklab.chunkers.hierarchical import chunk_hierarchical

    chunk = _on_text(chunk_hierarchical, levels=p.levels, unit=p.unit)
    return StrategyParts(chunk, index_filter=is_leaf, postprocess=_merger(p.merge_ratio))


def _markdown_hierarchy(p: MarkdownHierarchyParams) -> StrategyParts:
    """Not Markdown: token levels 2048/512/128 (in MiniLM tokens, or in ``unit`` when that is not chars)."""
    from chunklab.chunkers.hierarchical import chunk_markdown_hierarchy

    levels = HierarchicalParams(unit="tokens" if p.unit == "chars" else p.unit, merge_ratio=p.merge_ratio)
    other = _hierarchical(levels).chunker

    def chunk(document: DocumentLike) -> list[Chunk]:
        if document_format(document) != "markdown":
            return other(document)
        return chunk_markdown_hierarchy(
            document.text,
            max_size=p.max_chars,
            doc_id=document.doc_id,
            title=getattr(document, "title", None),
            unit=p.unit,
        )

    return StrategyParts(chunk, index_filter=is_leaf, postprocess=_merger(p.merge_ratio))


def _paragraphs(p: ParagraphsParams) -> StrategyParts:
    from chunklab.chunkers.recursive import pack_paragraphs

    return StrategyParts(_on_text(pack_paragraphs, p.max_chars, p.overlap_paragraphs, unit=p.unit))


def _sentences(p: SentencesParams) -> StrategyParts:
    from chunklab.chunkers.sentences import chunk_sentences

    return StrategyParts(_on_text(chunk_sentences, p.size, p.overlap_sentences, unit=p.unit))


def _llm_boundaries(p: LLMBoundariesParams) -> StrategyParts:
    """The model is the shared generator of ``p.model``, loaded when the first document is chunked."""
    from chunklab.chunkers.llm import LLMChunker, chunk_llm_boundaries

    return StrategyParts(
        LLMChunker(chunk_llm_boundaries, p.model, max_size=p.max_chars, window=p.window, unit=p.unit)
    )


def _propositions(p: PropositionsParams) -> StrategyParts:
    from chunklab.chunkers.llm import LLMChunker, chunk_propositions

    return StrategyParts(LLMChunker(chunk_propositions, p.model, max_size=p.max_chars, unit=p.unit))


def _merger(ratio: float) -> PostFn:
    """Auto-merging of retrieved leaves into parents at ``ratio`` (the hierarchical strategies' step)."""
    from chunklab.chunkers.hierarchical import auto_merge

    def merge(hits: list[Hit], by_id: Mapping[str, Chunk]) -> list[Hit]:
        return auto_merge(hits, by_id, ratio=ratio)

    return merge


#: ``(name, parameter dataclass, description, factory)`` in the order the catalog lists them
COURSE_STRATEGIES: list[tuple[str, type[StrategyParams], str, Callable[[Any], StrategyParts]]] = [
    ("fixed", FixedParams, "fixed windows", _fixed),
    ("recursive", RecursiveParams, "separator hierarchy", _recursive),
    ("structural", StructuralParams, "headings / AST / DOM", _structural),
    ("semantic", SemanticParams, "embedding breakpoints", _semantic),
    (
        "hierarchical",
        HierarchicalParams,
        "nested token levels; leaves searched, auto-merged into parents",
        _hierarchical,
    ),
    (
        "markdown-hierarchy",
        MarkdownHierarchyParams,
        "Markdown sections as parents, paragraphs as children; auto-merge",
        _markdown_hierarchy,
    ),
    ("paragraphs", ParagraphsParams, "whole paragraphs, whole paragraphs as overlap", _paragraphs),
    ("sentences", SentencesParams, "whole sentences, whole sentences as overlap", _sentences),
    (
        "llm-boundaries",
        LLMBoundariesParams,
        "paragraphs cut where a local LLM sees the topic shift",
        _llm_boundaries,
    ),
    ("propositions", PropositionsParams, "source spans of a local LLM's propositions", _propositions),
]
