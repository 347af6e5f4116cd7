"""Cost and failure shares of the LLM strategies with the packaged SmolLM2-135M-Instruct, on the CPU.

Text: the first ``--chars`` characters (whole paragraphs) of the first ``--docs`` documents of
the kit's docs corpus. Each LLM strategy (``llm-boundaries``, ``propositions``) chunks them
twice with a fresh generation cache: cold (the model answers every prompt) and warm (every
answer from the cache: nothing generated). Reported per strategy: prompts, prompt and generated
tokens, generated tokens per second (of generation time), seconds and generated tokens per
1,000 chunks, the model's load time, peak memory (max RSS of the process), the share of
boundary answers that needed the fallback and of propositions that could not be aligned, and
contract problems (must be 0). ``estimate_code_50k`` scales the measured cold seconds per 1,000
chunks to the number of structural chunks of the code-50k corpus (read from
``results/code_rag_50k.json``): an estimate from measured rates, not a measurement. Run with ``nice``:

    nice .venv/bin/python benchmarks/llm_chunking.py --docs 2 --chars 1500 --label quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
DOCS = Path(__file__).resolve().parents[1] / "chunklab" / "data" / "docs"
STRATEGIES = ("llm-boundaries", "propositions")


def doc_texts(docs: int, chars: int) -> list[tuple[str, str]]:
    """``(doc_id, text)`` for the first ``docs`` documents: their first whole paragraphs up to ``chars``."""
    from chunklab.documents import load_document

    out = []
    for path in sorted(p for p in DOCS.glob("*.md") if p.name != "FORMAT.md")[:docs]:
        text = load_document(path).text
        cut = text.rfind("\n\n", 0, chars)
        out.append((path.name, text[: cut if cut > 0 else chars]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=2)
    parser.add_argument("--chars", type=int, default=1500)
    parser.add_argument("--max-chars", type=int, default=1000, help="the strategies' max_chars")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--label", default="quick")
    parser.add_argument("--only", choices=STRATEGIES, default=None)
    parser.add_argument(
        "--reestimate", action="store_true", help="only recompute the estimate of an existing result"
    )
    args = parser.parse_args()
    out = RESULTS / f"llm_chunking-{args.label}.json"
    if args.reestimate:
        result = json.loads(out.read_text(encoding="utf-8"))
        result["estimate_code_50k"] = estimate_code_50k(result["rows"])
        out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(result["estimate_code_50k"], indent=1))
        return
    from chunklab.chunk import check_chunks
    from chunklab.chunkers.llm import LLMStats, chunk_llm_boundaries, chunk_propositions
    from chunklab.generate import Generator

    chunkers = {"llm-boundaries": chunk_llm_boundaries, "propositions": chunk_propositions}
    texts = doc_texts(args.docs, args.chars)
    work = Path(tempfile.mkdtemp(prefix="chunklab-llm-bench-"))
    rows = []
    try:
        for name in [args.only] if args.only else STRATEGIES:
            for run in ("cold", "warm"):
                gen = Generator(cache_dir=work / name, threads=args.threads)
                stats = LLMStats()
                t0 = time.perf_counter()
                chunks = [
                    c
                    for doc_id, text in texts
                    for c in chunkers[name](text, args.max_chars, doc_id, generator=gen, stats=stats)
                ]
                seconds = time.perf_counter() - t0
                problems = sum(
                    len(check_chunks([c for c in chunks if c.doc_id == d], t, max_size=args.max_chars))
                    for d, t in texts
                )
                n = max(len(chunks), 1)
                row = {
                    "strategy": name,
                    "run": run,
                    "chunks": len(chunks),
                    "prompts": stats.prompts,
                    "model_calls": gen.model_calls,
                    "cache_hits": gen.cache_hits,
                    "prompt_tokens": gen.prompt_tokens,
                    "generated_tokens": gen.generated_tokens,
                    "load_s": round(gen.load_seconds, 1),
                    "generate_s": round(gen.generate_seconds, 1),
                    "wall_s": round(seconds, 1),
                    "tokens_per_s": round(gen.generated_tokens / gen.generate_seconds, 2)
                    if gen.generate_seconds
                    else None,
                    "seconds_per_1000_chunks": round((seconds - gen.load_seconds) / n * 1000, 1),
                    "generated_tokens_per_1000_chunks": round(gen.generated_tokens / n * 1000),
                    "fallback_share": round(stats.fallback_share, 3),
                    "unaligned_share": round(stats.unaligned_share, 3),
                    "stats": stats.as_dict(),
                    "contract_problems": problems,
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "benchmark": "llm_chunking",
        "label": args.label,
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine_info(args.threads),
        "model": Generator().model_id,
        "docs": [d for d, _t in texts],
        "chars": sum(len(t) for _d, t in texts),
        "max_chars": args.max_chars,
        "rows": rows,
        "estimate_code_50k": estimate_code_50k(rows),
    }
    RESULTS.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")


def machine_info(threads: int) -> dict[str, object]:
    """The machine a result was measured on, with the load average (a shared machine: other work slows it)."""
    return {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "threads": threads,
        "load_average_1m": round(os.getloadavg()[0], 1),
    }


def estimate_code_50k(rows: list[dict]) -> dict[str, object]:
    """Hours on one thread to chunk code-50k with each LLM strategy, from the measured cold rates."""
    source = RESULTS / "code_rag_50k.json"
    chunks = json.loads(source.read_text(encoding="utf-8"))["chunking"]["strategies"]["structural"]["chunks"]
    hours = {
        r["strategy"]: round(r["seconds_per_1000_chunks"] * chunks / 1000 / 3600, 1)
        for r in rows
        if r["run"] == "cold"
    }
    return {
        "kind": "estimate from measured rates (not measured)",
        "chunks": chunks,
        "chunks_from": "structural chunks of code-50k, results/code_rag_50k.json",
        "hours_one_thread": hours,
    }


if __name__ == "__main__":
    main()
