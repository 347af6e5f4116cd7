"""Why recall@5 is where it is: a reading of a stored run's per-question ranks, no new retrieval.

    python -m benchmarks.code_rag_50k.analysis            # reads code_rag_50k.json + -questions.json
    python -m benchmarks.code_rag_50k.analysis --quick    # the quick run's files

For the full-scale scope, per strategy and retriever: recall at 1, 5, 10, 20 and 50 chunks (how
deep the gold function lies), the share of questions whose gold *file* has a chunk in the top 5
and in the top 50 (found the file, missed the function, or never reached the file), and
recall@5 by kind of question (a method, ``Class.method``, or a module-level function) and by the
gold function's size against the chunkers' budgets. Each share comes with its 95 % bootstrap
interval over the questions (2,000 resamples). Writes ``<stem>-analysis.json`` (+ ``.md``) with
the run's own ``measured`` block: the numbers are that run's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from chunklab.evaluate.bootstrap import bootstrap_means, confidence_interval, resample_counts

from .config import RESULTS

#: how deep recall is read (fuse_depth, the depth the run kept, is the last)
DEPTHS = (1, 5, 10, 20, 50)
#: gold function sizes in characters, cut at the two chunkers' budgets (recursive 800, structural 1,500)
SIZE_BINS = ((0, 800), (800, 1500), (1500, 10**9))


def share(flags: np.ndarray, counts: np.ndarray | None) -> dict[str, Any]:
    """The share of true ``flags`` with its 95 % bootstrap interval (``counts``: the resamples)."""
    mean = round(float(flags.mean()), 4) if len(flags) else 0.0
    out: dict[str, Any] = {"n": int(len(flags)), "share": mean}
    if counts is not None and len(flags):
        lo, hi = confidence_interval(bootstrap_means(flags[None, :].astype(float), counts))
        out["interval"] = [round(float(lo[0]), 4), round(float(hi[0]), 4)]
    return out


def analyse(per_question: dict[str, Any], scope: str = "full") -> dict[str, Any]:
    """The reading of one scope's per-question columns (``<stem>-questions.json``)."""
    qid = per_question[f"{scope} | qid"]
    gold = np.asarray(per_question[f"{scope} | gold_chars"])
    method = np.array(["." in q.split("::", 1)[1] for q in qid])
    counts = resample_counts(len(qid), 2000, seed=0) if qid else None
    groups: dict[str, np.ndarray] = {"method": method, "function": ~method}
    for lo, hi in SIZE_BINS:
        groups[f"gold {lo}-{hi if hi < 10**9 else ''} chars"] = (gold > lo) & (gold <= hi)
    prefix = f"{scope} | ranks | "
    out: dict[str, Any] = {
        "questions": len(qid),
        "methods": int(method.sum()),
        "gold_chars_p50_p90": [float(np.percentile(gold, 50)), float(np.percentile(gold, 90))]
        if len(gold)
        else [],
        "retrievers": {},
    }
    for key in sorted({k[len(prefix) :].rsplit(" | ", 1)[0] for k in per_question if k.startswith(prefix)}):
        hit = np.asarray(per_question[f"{prefix}{key} | hit"])
        file = np.asarray(per_question[f"{prefix}{key} | file"])
        found = (hit >= 1) & (hit <= 5)
        entry: dict[str, Any] = {
            "recall_at": {str(d): share((hit >= 1) & (hit <= d), counts) for d in DEPTHS},
            "file_at_5": share((file >= 1) & (file <= 5), counts),
            "file_at_50": share(file >= 1, counts),
            "file_at_5_function_missed": share((file >= 1) & (file <= 5) & ~found, counts),
            "recall_at_5_by_group": {},
        }
        for name, mask in groups.items():
            sub = resample_counts(int(mask.sum()), 2000, seed=0) if mask.any() else None
            entry["recall_at_5_by_group"][name] = share(found[mask], sub)
        out["retrievers"][key] = entry
    return out


def render(result: dict[str, Any]) -> str:
    """The reading as Markdown: one table per retriever."""

    def cell(s: dict[str, Any]) -> str:
        iv = s.get("interval")
        return f"{s['share']:.3f}" + (f" [{iv[0]:.3f}, {iv[1]:.3f}]" if iv else "") + f" (n={s['n']})"

    lines = [
        f"# Why recall@5 is where it is ({result['source']})",
        "",
        f"{result['questions']} questions, {result['methods']} of them methods; gold function "
        f"p50/p90 {result['gold_chars_p50_p90']} characters.",
        "",
    ]
    for key, e in result["retrievers"].items():
        lines += [f"## {key}", "", "| measure | share [95 % CI] |", "|---|---|"]
        lines += [f"| recall@{d} | {cell(s)} |" for d, s in e["recall_at"].items()]
        lines += [
            f"| gold file in top 5 | {cell(e['file_at_5'])} |",
            f"| gold file in top 50 | {cell(e['file_at_50'])} |",
            f"| gold file in top 5, function not | {cell(e['file_at_5_function_missed'])} |",
        ]
        lines += [f"| recall@5, {g} | {cell(s)} |" for g, s in e["recall_at_5_by_group"].items()]
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Read a stored run, write ``<stem>-analysis.json`` and ``.md`` beside it."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.code_rag_50k.analysis", description=__doc__)
    p.add_argument("--quick", action="store_true", help="the quick run's files")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    stem = "code_rag_50k" + ("-quick" if args.quick else "")
    run = json.loads((args.out / f"{stem}.json").read_text(encoding="utf-8"))
    per_question = json.loads((args.out / f"{stem}-questions.json").read_text(encoding="utf-8"))
    result = {
        "source": f"{stem}.json",
        "measured": run["measured"],
        "machine": run["machine"],
        "code": run.get("code", {}),
        **analyse(per_question),
    }
    (args.out / f"{stem}-analysis.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (args.out / f"{stem}-analysis.md").write_text(render(result), encoding="utf-8")
    print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
