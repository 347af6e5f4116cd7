"""Cost of the semantic chunker per MB of text, split into segmentation, embedding and breakpoints.

Text: the docstrings of the Python standard library (prose with code, abbreviations,
decimals and URLs), in path order, until ``--mb`` megabytes. The chunker runs twice with
a fresh embedding cache: cold (every sentence window embedded by the model) and warm (all
windows from the cache). Seconds are scaled to one MB of text. Run with ``nice``:

    nice .venv/bin/python benchmarks/semantic_cost.py --mb 0.25 --threads 1
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import stdlib_files  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def docstring_text(mb: float) -> str:
    """Standard-library docstrings joined by blank lines, about ``mb`` megabytes of UTF-8."""
    from chunklab.documents import load_document

    limit = int(mb * 1_000_000)
    parts: list[str] = []
    total = 0
    for path in stdlib_files():
        try:
            tree = ast.parse(load_document(path).text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 80:
                    parts.append(doc)
                    total += len(doc.encode("utf-8")) + 2
                    if total >= limit:
                        return "\n\n".join(parts)
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=0.25)
    parser.add_argument("--buffer-size", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        os.environ["CHUNKLAB_TORCH_THREADS"] = str(args.threads)
    from chunklab.chunk import check_chunks
    from chunklab.chunkers.semantic import analyze_semantic
    from chunklab.embed import Encoder

    text = docstring_text(args.mb)
    mb = len(text.encode("utf-8")) / 1e6
    work = Path(tempfile.mkdtemp(prefix="chunklab-semantic-"))
    runs = []
    try:
        encoder = Encoder(cache_dir=work / "cache", show_progress=False)
        encoder.encode(["load the model outside the measurement"])
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            analysis = analyze_semantic(text, buffer_size=args.buffer_size, encoder=encoder)
            total = time.perf_counter() - t0
            problems = check_chunks(analysis.chunks, text, max_size=2000)
            run = {
                "run": label,
                "mb": round(mb, 3),
                "sentences": len(analysis.sentences),
                "chunks": len(analysis.chunks),
                "contract_problems": len(problems),
                "seconds": round(total, 3),
                "seconds_per_mb": {k: round(v / mb, 3) for k, v in analysis.timings.items()},
                "total_seconds_per_mb": round(total / mb, 3),
            }
            runs.append(run)
            per = run["seconds_per_mb"]
            print(
                f"{label}: {mb:.3f} MB, {run['sentences']} sentences -> {run['chunks']} chunks; per MB: "
                f"segmentation {per['segmentation']:.2f}s, embedding {per['embedding']:.2f}s, "
                f"breakpoints {per['breakpoints']:.2f}s, total {run['total_seconds_per_mb']:.2f}s "
                f"(contract problems: {run['contract_problems']})"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "semantic_cost.json").write_text(json.dumps({"runs": runs, "cpus": os.cpu_count()}, indent=2))
    print(f"wrote {RESULTS / 'semantic_cost.json'}")


if __name__ == "__main__":
    main()
