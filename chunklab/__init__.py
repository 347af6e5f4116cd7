"""chunklab: chunking for retrieval-augmented generation, with exact offsets and real measurements.

The chunkers are imported eagerly (they are light); the embedding model, the Chroma store and
the evaluation harness load on first use, so ``import chunklab`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from chunklab.chunk import Chunk, check_chunks, embedding_text
from chunklab.chunkers.fixed import chunk_fixed, sliding_window
from chunklab.chunkers.recursive import chunk_recursive, pack_paragraphs

__version__ = "0.1.0"

_LAZY = {
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

__all__ = [
    "Chunk",
    "check_chunks",
    "chunk_fixed",
    "chunk_recursive",
    "embedding_text",
    "pack_paragraphs",
    "sliding_window",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chunklab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
