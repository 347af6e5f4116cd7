"""Embeddings: the :class:`Encoder` (local MiniLM or a static model distilled from it), token
counting and the on-disk embedding cache.

``models`` loads the models offline; ``encoder`` holds the encoder and its cache; ``numpy_minilm``
embeds an encoder's first few texts in NumPy (MiniLM's forward pass, the static table), so a
one-shot query imports neither torch nor model2vec.
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
