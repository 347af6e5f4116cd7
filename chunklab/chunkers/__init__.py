"""Chunking strategies: one per module, all returning :class:`chunklab.chunk.Chunk` lists.

``fixed``, ``recursive``, ``semantic``, ``hierarchical`` and ``context`` (what gets embedded),
``structural/`` (Python via ast, HTML, Markdown, reStructuredText), ``llm/`` (boundaries and
propositions by the local generative model of :mod:`chunklab.generate`) and ``catalog``, the one table
of strategy names (:func:`chunklab.chunkers.catalog.get_strategy`). Chunkers never import
``chunklab.retrieval``.
"""
