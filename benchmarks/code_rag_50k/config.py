"""Every setting of the benchmark in one frozen, picklable dataclass, and the command line that makes it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent.parent / "results"
#: the two strategies compared, as ``(name, catalog parameters)``; the name's first word is the catalog name
STRATEGIES: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = (
    ("structural", ()),
    ("recursive 800/80", (("size", 800), ("overlap", 80))),
)
PERCENTILES = (5, 25, 50, 75, 90, 95, 99)
RETRIEVERS_FULL = ("bm25", "static", "hybrid", "bm25_ctx", "hybrid_ctx")
#: each plain retriever and its contextual twin (the chunk's header indexed too, :mod:`.index`)
CONTEXTUAL = {"bm25": "bm25_ctx", "hybrid": "hybrid_ctx"}
#: per question; ``retrieved_chars`` is the characters the top k chunks hand on (chapter 6's cost column)
METRIC_NAMES = ("precision", "recall", "mrr", "char_recall", "not_compiling", "retrieved_chars")


@dataclass(frozen=True)
class Config:
    """One run's settings: what the command line chose, and the constants the results depend on."""

    corpus: str = "code-50k"
    quick: bool = False  # the installed-files corpus, a few hundred files
    files: int | None = None  # a seeded sample of this many files
    workers: int = 2
    question_files: int = 800
    dense_files: int = 500
    minilm_full: str = "auto"  # "auto" | "yes" | "no"
    static_index: str = "auto"  # "auto" | "exact" | "ivf"
    skip_chunking: bool = False
    skip_retrieval: bool = False
    out: Path = RESULTS
    note: str = ""
    strategies: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = STRATEGIES
    k: int = 5  # top k scored
    rrf_k: int = 60  # reciprocal-rank fusion constant (Cormack et al.)
    fuse_depth: int = 50  # how deep each list is read when fusing
    window: int = 256  # all-MiniLM-L6-v2's max_seq_length, special tokens included
    latency_queries: int = 200  # single-query latencies are timed on this many questions
    nprobes: tuple[int, ...] = (1, 4, 16, 64, 256, 1024)  # the IVF sweep: cells scanned per query

    @property
    def stem(self) -> str:
        """The results' file name without its suffix."""
        return "code_rag_50k" + ("-quick" if self.quick else "")

    @property
    def corpus_label(self) -> str:
        """The corpus as the results name it."""
        return "installed (quick)" if self.quick else self.corpus

    @property
    def strategy_names(self) -> list[str]:
        """The compared strategies' names, in order."""
        return [name for name, _ in self.strategies]

    def params(self, strategy: str) -> dict[str, int]:
        """The catalog parameters of strategy ``strategy`` (one of :attr:`strategy_names`)."""
        return dict(dict(self.strategies)[strategy])


def parse_args(argv: list[str] | None = None) -> Config:
    """The :class:`Config` the command line asks for (``--quick`` caps the question and dense files)."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.code_rag_50k",
        description="The 50,000-file code-RAG scenario, measured: chunking and retrieval.",
    )
    p.add_argument("--corpus", default="code-50k", help="code_corpus name (default code-50k)")
    p.add_argument("--quick", action="store_true", help="the installed-files corpus, a few hundred files")
    p.add_argument("--files", type=int, default=None, help="use a seeded sample of this many files")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument(
        "--question-files",
        type=int,
        default=800,
        help="files questions are drawn from (default 800; 700 gave 1,008 questions on code-50k)",
    )
    p.add_argument(
        "--dense-files", type=int, default=500, help="stratified sample for MiniLM (default 500; 0 = skip)"
    )
    p.add_argument(
        "--minilm-full",
        choices=("auto", "yes", "no"),
        default="auto",
        help="MiniLM over every chunk too (auto: when a CUDA GPU is present; on 2 CPU cores it takes hours)",
    )
    p.add_argument(
        "--static-index",
        choices=("auto", "exact", "ivf"),
        default="auto",
        help="how the static tier is searched (auto: faiss IVF from 100,000 chunks, else the exact scan)",
    )
    p.add_argument("--skip-chunking", action="store_true")
    p.add_argument("--skip-retrieval", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument(
        "--note", default="", help="a line stored with the results (e.g. which commit's chunklab ran)"
    )
    args: dict[str, Any] = vars(p.parse_args(argv))
    config = Config(**args)
    if config.quick:
        config = replace(
            config, question_files=min(config.question_files, 40), dense_files=min(config.dense_files, 60)
        )
    return config
