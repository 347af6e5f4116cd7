"""chunklab: chunking for retrieval-augmented generation, with exact offsets and real measurements."""

from chunklab.chunk import Chunk, check_chunks, embedding_text
from chunklab.fixed import chunk_fixed, sliding_window
from chunklab.recursive import chunk_recursive, pack_paragraphs

__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "check_chunks",
    "chunk_fixed",
    "chunk_recursive",
    "embedding_text",
    "pack_paragraphs",
    "sliding_window",
]
