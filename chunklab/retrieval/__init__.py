"""Finding chunks again: the Chroma-backed ``store``, metadata ``filters``, BM25 (``lexical``),
the static tier's ``vectors`` index and ``hybrid`` fusion. Retrieval never imports ``chunklab.chunkers``.
"""
