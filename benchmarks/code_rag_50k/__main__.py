"""``python -m benchmarks.code_rag_50k``: run the chunking and retrieval parts, write JSON + Markdown."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chunklab.datasets import corpus as named_corpus

from .chunking import chunking
from .config import Config, parse_args
from .report import render_markdown, write_results
from .resources import Memory, machine, measured
from .retrieval import retrieval_full, retrieval_sample


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the benchmark, write the results; a part skipped keeps its last numbers."""
    config = parse_args(argv)
    previous = config.out / f"{config.stem}.json"
    old = json.loads(previous.read_text(encoding="utf-8")) if previous.is_file() else {}

    def save(result: dict[str, Any]) -> None:
        """Write what is measured so far; a part skipped this time keeps its last measurement."""
        for part in ("chunking", "retrieval"):
            if part not in result and part in old and old.get("files") == result["files"]:
                result[part] = old[part]
        write_results(result, config.out, config.stem)

    result = run(config, save)
    print(render_markdown(result))
    return 0


def run(config: Config, save: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Both parts of the benchmark, as one JSON-ready dict (``save(result)`` after each part).

    The full-scale retrieval runs first (the scenario's question), then the chunking part, then
    the dense sample (MiniLM, the longest on a CPU): a run stopped early keeps what came first.
    """
    memory = Memory()
    save = save or (lambda result: None)
    if config.quick:
        corpus = named_corpus("installed").sample(config.files or 300, seed=0)
    else:
        corpus = named_corpus(config.corpus)
        if config.files:
            corpus = corpus.sample(config.files, seed=0)
    result: dict[str, Any] = {
        "corpus": config.corpus_label,
        "files": len(corpus),
        "projects": len(corpus.projects()),
        "source_mb": round(corpus.total_bytes / 1e6, 1),
        "machine": machine(),
        "measured": measured(),
        "workers": config.workers,
        "code": {"chunklab": str(Path(sys.modules["chunklab"].__file__ or "").parent), "note": config.note},
    }
    if not config.skip_retrieval:
        result["retrieval"] = retrieval_full(corpus, config, memory)
        save({**result, "machine_after": machine()})
    if not config.skip_chunking:
        result["chunking"] = chunking(corpus, config, memory)
        save({**result, "machine_after": machine()})
    if not config.skip_retrieval:
        result["retrieval"] = retrieval_sample(corpus, config, memory, result["retrieval"])
    result["machine_after"] = machine()
    save(result)
    return result


if __name__ == "__main__":
    sys.exit(main())
