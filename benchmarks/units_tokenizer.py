"""Chunking speed in characters against tokens (MiniLM's, and any ``tokenizer.json``) on the standard library.

Every catalog strategy with one size budget runs over a deterministic sample of the standard
library's ``.py`` files three times: budget in characters, in MiniLM tokens
(``unit="tokens"``) and in the tokens of a ``tokenizer.json`` file (``unit="tokenizer:PATH"``;
by default the MiniLM file itself, so the two token rows must agree). A last row times a
single ``encode`` of every file, the floor for any token-measured chunker: candidates are
measured by bisection over that one encoding, and each finished chunk is encoded once more
to check it; the benchmark also counts the candidate spans structural chunking measured,
each of which a chunker that re-encoded candidates would encode. Prints a table and writes
``benchmarks/results/units_tokenizer.json``.

    nice python benchmarks/units_tokenizer.py [--every 5] [--limit 400] [--tokenizer PATH]
"""

from __future__ import annotations

import argparse
import json
import sysconfig
import time
from pathlib import Path

from chunklab.chunkers.catalog import get_strategy
from chunklab.documents import Document
from chunklab.units import get_tokenizer, length_function, model_path

#: strategy -> (its size parameter, budget in characters, budget in tokens)
BUDGETS = {
    "structural": ("max_chars", 1500, 400),
    "recursive": ("size", 1500, 400),
    "fixed": ("size", 1500, 400),
    "paragraphs": ("max_chars", 1500, 400),
}


def stdlib_files(every: int, limit: int) -> list[Path]:
    """Every ``every``-th ``.py`` file of the standard library (no tests, no site-packages), sorted."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and "test" not in p.parts)
    return files[::every][:limit]


def run(docs: list[Document], name: str, unit: str) -> dict:
    key, chars, tokens = BUDGETS[name]
    budget = chars if unit == "chars" else tokens
    strategy = get_strategy(name, unit=unit, **{key: budget})
    t0 = time.perf_counter()
    chunks = [c for d in docs for c in strategy(d)]
    seconds = time.perf_counter() - t0
    measure = length_function(unit)
    sizes = [measure(c.text) for c in chunks]
    return {
        "strategy": name,
        "unit": unit if len(unit) < 30 else "tokenizer:" + Path(unit[10:]).name,
        "budget": budget,
        "seconds": round(seconds, 2),
        "chunks": len(chunks),
        "mean_size": round(sum(sizes) / max(1, len(sizes)), 1),
        "over_budget": sum(s > budget for s in sizes),
        "marked_oversize": sum(bool(c.metadata.get("oversize")) for c in chunks),
    }


def candidate_spans(docs: list[Document], name: str, unit: str) -> tuple[int, int]:
    """How many spans the strategy measured, and their characters: what re-encoding each would cost."""
    from chunklab import units

    calls = [0, 0]
    real = units.UnitIndex.count

    def counting(self, start: int, end: int) -> int:
        calls[0] += 1
        calls[1] += max(0, end - start)
        return real(self, start, end)

    key, _chars, tokens = BUDGETS[name]
    strategy = get_strategy(name, unit=unit, **{key: tokens})
    units.UnitIndex.count = counting
    try:
        for d in docs:
            strategy(d)
    finally:
        units.UnitIndex.count = real
    return calls[0], calls[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--limit", type=int, default=400)
    parser.add_argument("--tokenizer", default=str(model_path() / "tokenizer.json"))
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "units_tokenizer.json"
    )
    args = parser.parse_args()
    files = stdlib_files(args.every, args.limit)
    docs = [
        Document(p.name, p.read_text(encoding="utf-8", errors="replace"), str(p), "python") for p in files
    ]
    mb = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    units = ["chars", "tokens", f"tokenizer:{Path(args.tokenizer).resolve()}"]
    rows = [run(docs, name, unit) for name in BUDGETS for unit in units]
    tok = get_tokenizer(str(Path(args.tokenizer).resolve()))
    t0 = time.perf_counter()
    for d in docs:
        tok.encode(d.text, add_special_tokens=False)
    encode_s = time.perf_counter() - t0
    n_spans, span_chars = candidate_spans(docs, "structural", "tokens")
    print(
        f"{len(docs)} files, {mb:.1f} MB of the standard library; one encode of every file: {encode_s:.2f} s"
    )
    print(
        f"structural in tokens measured {n_spans:,} candidate spans ({span_chars / 1e6:.1f} M characters, "
        f"{span_chars / 1e6 / mb:.0f}x the corpus) by bisection: encoding each instead would cost about "
        f"{encode_s * span_chars / 1e6 / mb:.0f} s"
    )
    print(
        f"{'strategy':11s} {'unit':24s} {'budget':>6s} {'seconds':>8s} {'MB/s':>6s} {'chunks':>7s} "
        f"{'mean':>7s} {'over':>5s} {'marked':>6s}"
    )
    for r in rows:
        print(
            f"{r['strategy']:11s} {r['unit']:24s} {r['budget']:6d} {r['seconds']:8.2f} "
            f"{mb / max(r['seconds'], 1e-9):6.2f} "
            f"{r['chunks']:7d} {r['mean_size']:7.1f} {r['over_budget']:5d} {r['marked_oversize']:6d}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "files": len(docs),
                "mb": round(mb, 2),
                "encode_once_s": round(encode_s, 2),
                "structural_token_candidates": n_spans,
                "candidate_chars": span_chars,
                "results": rows,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
