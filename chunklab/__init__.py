"""chunklab: chunking for retrieval-augmented generation, with exact offsets and real measurements.

Every name here loads on first use (the chunkers, the embedding model, the Chroma store, the
evaluation harness), so ``import chunklab`` and each command import only what they use:
``chunklab search`` loads no chunker.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chunklab.chunk import Chunk as Chunk
    from chunklab.chunk import check_chunks as check_chunks
    from chunklab.chunk import embedding_text as embedding_text
    from chunklab.chunkers.fixed import chunk_fixed as chunk_fixed
    from chunklab.chunkers.fixed import sliding_window as sliding_window
    from chunklab.chunkers.recursive import chunk_recursive as chunk_recursive
    from chunklab.chunkers.recursive import pack_paragraphs as pack_paragraphs

__version__ = "0.1.0"

_LAZY = {
    "Chunk": "chunklab.chunk",
    "check_chunks": "chunklab.chunk",
    "embedding_text": "chunklab.chunk",
    "chunk_fixed": "chunklab.chunkers.fixed",
    "sliding_window": "chunklab.chunkers.fixed",
    "chunk_recursive": "chunklab.chunkers.recursive",
    "pack_paragraphs": "chunklab.chunkers.recursive",
    "Document": "chunklab.documents",
    "load_document": "chunklab.documents",
    "iter_documents": "chunklab.documents",
    "chunk_python": "chunklab.chunkers.structural",
    "chunk_code": "chunklab.chunkers.structural",
    "chunk_html": "chunklab.chunkers.structural",
    "chunk_markdown": "chunklab.chunkers.structural",
    "chunk_document": "chunklab.chunkers.structural",
    "FallbackStats": "chunklab.chunkers.structural",
    "chunk_semantic": "chunklab.chunkers.semantic",
    "analyze_semantic": "chunklab.chunkers.semantic",
    "split_sentences": "chunklab.text",
    "chunk_hierarchical": "chunklab.chunkers.hierarchical",
    "chunk_markdown_hierarchy": "chunklab.chunkers.hierarchical",
    "auto_merge": "chunklab.chunkers.hierarchical",
    "HierarchicalRetriever": "chunklab.chunkers.hierarchical",
    "add_context": "chunklab.enrich.context",
    "Encoder": "chunklab.embed",
    "get_encoder": "chunklab.embed",
    "count_tokens": "chunklab.units",
    "ChunkStore": "chunklab.retrieval.chroma.store",
    "Benchmark": "chunklab.evaluate",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chunklab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
