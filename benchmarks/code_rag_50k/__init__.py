"""The 50,000-file code-RAG scenario, measured: chunking and retrieval over the pinned wheel corpus.

    python -m benchmarks.code_rag_50k              # code-50k (run `chunklab corpus fetch code-50k` first)
    python -m benchmarks.code_rag_50k --quick      # a few hundred installed files, minutes
    python -m benchmarks.code_rag_50k --skip-retrieval --workers 2

**Chunking** (:mod:`.chunking`; every file, both strategies, ``--workers`` processes, streamed:
a worker returns per-file numbers, never chunks): structural (the catalog's defaults) and
recursive 800/80. Reported per strategy: chunks, fallback rate with every reason, size
percentiles, share of chunks that compile on their own (``compile(textwrap.dedent(text))``,
the capstone's test), chunks over MiniLM's 256-token window ([CLS] and [SEP] counted), CPU
seconds spent chunking vs measuring, wall time, peak resident memory.

**Retrieval** (:mod:`.index`, :mod:`.retrieval`): CodeSearchNet-style questions
(:func:`chunklab.datasets.questions.code`: the first docstring sentence asks, the function's
span answers, docstrings stripped from the indexed copy) drawn from the whole corpus; every
chunk of every file indexed with BM25 built from the workers' token counts
(:class:`chunklab.retrieval.bm25_counts.CountsBM25`), once over the chunk's text and once over
its contextual header and text ("contextual BM25": file path > qualified name, built by
:func:`chunklab.enrich.context.add_context`), and the static embedding (``Encoder("static")``),
reciprocal-rank fusion of the static ranking with each BM25 on top
(:func:`chunklab.retrieval.hybrid.reciprocal_rank_fusion_ids`), and MiniLM on a stratified
sample of files (over every chunk too with ``--minilm-full``, the default when a CUDA GPU is
present). The parent keeps no chunk text: workers return offsets, compile flags, static vectors
and BM25 token counts. P@5, R@5, MRR, character recall and the share of retrieved chunks that do
not compile, structural vs recursive with paired 95 % bootstrap intervals
(:mod:`chunklab.evaluate.bootstrap`).

Every setting is one frozen :class:`.config.Config`, handed to the workers explicitly.
Results (:mod:`.report`): ``benchmarks/results/code_rag_50k[-quick].json`` and ``.md``, each
retriever's per-question ranks in ``code_rag_50k[-quick]-questions.json``, and their reading
(:mod:`.analysis`: how deep the gold function lies, by kind and size) in ``-analysis.json``.
The full-scale retrieval runs first, then the chunking part, then the MiniLM sample.
"""
