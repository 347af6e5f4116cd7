"""The kit's benchmarks (run each script by path, or ``python -m benchmarks.code_rag_50k``).

A regular package, so that ``benchmarks`` here wins over a top-level ``benchmarks`` some installed
distribution ships (pysbd 0.3.4 does).
"""
