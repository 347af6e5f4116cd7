"""Adapters that put chunklab's strategies and encoder into pipelines people already have.

- :mod:`chunklab.integrations.langchain`: ``ChunklabTextSplitter`` (a LangChain ``TextSplitter``,
  ``start_index`` exact) and ``ChunklabEmbeddings`` (LangChain ``Embeddings`` over the local model).
- :mod:`chunklab.integrations.llamaindex`: ``ChunklabNodeParser`` (a LlamaIndex ``NodeParser``,
  ``start_char_idx``/``end_char_idx`` exact, parent/child relationships for hierarchical chunking)
  and ``ChunklabEmbedding`` (a LlamaIndex embedding model over the local model).

Each adapter wraps the one catalog (:func:`chunklab.chunkers.catalog.get_strategy`): every
strategy is available under its catalog name and parameters. The frameworks are optional extras
(``pip install 'chunklab-kit[langchain]'`` / ``[llamaindex]``); importing this package imports
neither.
"""

from __future__ import annotations

from chunklab.integrations._core import chunk_text

__all__ = ["chunk_text"]
