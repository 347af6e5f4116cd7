"""Embeddings: the :class:`Encoder` (local MiniLM or a static model distilled from it), token
counting and the on-disk embedding cache.

``models`` loads the models offline; ``encoder`` holds the encoder and its cache.
"""

from chunklab.embed.encoder import (
    DEFAULT_MODEL,
    DEFAULT_MODEL_NAME,
    DIM,
    MAX_SEQ_LENGTH,
    EmbeddingCache,
    Encoder,
    count_tokens,
    get_encoder,
)

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_NAME",
    "DIM",
    "MAX_SEQ_LENGTH",
    "EmbeddingCache",
    "Encoder",
    "count_tokens",
    "get_encoder",
]
