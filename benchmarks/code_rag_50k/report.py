"""The results: ``<stem>.json`` (read by the book page ``chapters/code-rag-50k.md``) and ``<stem>.md``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .config import METRIC_NAMES


def write_results(result: dict[str, Any], out: Path, stem: str) -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.md`` under ``out``; each scope's ``per_question`` ranks go
    to ``<stem>-questions.json`` (one line per list), out of the file the book reads."""
    out.mkdir(parents=True, exist_ok=True)
    js, md = out / f"{stem}.json", out / f"{stem}.md"
    result, per_question = split_per_question(result)
    js.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    md.write_text(render_markdown(result), encoding="utf-8")
    if per_question:
        lines = [
            f'  "{scope} | {key}": {json.dumps(values)}'
            for scope, columns in per_question.items()
            for key, values in _flatten(columns)
        ]
        (out / f"{stem}-questions.json").write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return js, md


def split_per_question(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``result`` without its scopes' ``per_question`` blocks, and those blocks by scope name."""
    scopes = result.get("retrieval", {}).get("scopes", {})
    kept = {name: {k: v for k, v in s.items() if k != "per_question"} for name, s in scopes.items()}
    per_question = {name: s["per_question"] for name, s in scopes.items() if "per_question" in s}
    if not per_question:
        return result, {}
    return {**result, "retrieval": {**result["retrieval"], "scopes": kept}}, per_question


def _flatten(columns: dict[str, Any], prefix: str = "") -> list[tuple[str, list[Any]]]:
    """Nested lists as ``("ranks | structural | bm25 | hit", [...])`` pairs."""
    out: list[tuple[str, list[Any]]] = []
    for key, value in columns.items():
        name = f"{prefix}{key}"
        out += _flatten(value, name + " | ") if isinstance(value, dict) else [(name, value)]
    return out


def render_markdown(result: dict[str, Any]) -> str:
    """The result as Markdown tables: chunking per strategy, then retrieval per retriever."""
    lines = [
        f"# Code RAG at scale: {result['corpus']}",
        "",
        f"{result['files']:,} files, {result['projects']} projects, {result['source_mb']} MB of source; "
        f"{result['workers']} workers; load average {result['machine']['loadavg']} before, "
        f"{result.get('machine_after', {}).get('loadavg')} after ({result['machine']['cpus']} CPUs).",
        "",
    ]
    ch = result.get("chunking")
    if ch:
        lines += [
            f"## Chunking (wall {ch['wall_s']} s, peak RSS {ch['peak_rss_mb']} MB)",
            "",
            "| strategy | chunks | fallback files | p50 | p90 | p99 | max | compile alone | over 256 tokens "
            "| chunk CPU s |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, s in ch["strategies"].items():
            q = s["size_percentiles"]
            lines.append(
                f"| {name} | {s['chunks']:,} | {s['fallback_files']} ({s['fallback_rate']:.2%}) | "
                f"{q.get('50')} | "
                f"{q.get('90')} | {q.get('99')} | {s['size_max']} | {s['compile_share']:.1%} | "
                f"{s['over_window_share']:.1%} | {s['chunk_cpu_s']} |"
            )
        for name, s in ch["strategies"].items():
            if s["fallback_reasons"]:
                lines.append(
                    f"\nFallback reasons ({name}): "
                    + ", ".join(f"{k} ×{v}" for k, v in s["fallback_reasons"].items())
                )
        lines.append("")
    rt = result.get("retrieval")
    if rt:
        lines += render_retrieval(rt)
    return "\n".join(lines) + "\n"


#: how a metric is written in the report (the rest: three decimals)
_FORMATS = {"not_compiling": ".1%", "retrieved_chars": ",.0f"}


def _cell(m: dict[str, Any], key: str, fmt: str) -> str:
    """A mean with its own 95 % interval when the result has one."""
    lo_hi = m.get("interval", {}).get(key)
    return f"{m[key]:{fmt}}" + (f" [{lo_hi[0]:{fmt}}, {lo_hi[1]:{fmt}}]" if lo_hi else "")


def _diff(c: dict[str, float]) -> str:
    """A paired difference with its interval: ``+0.034 [+0.017, +0.051]``."""
    return f"{c['diff']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}]"


def render_retrieval(rt: dict[str, Any]) -> list[str]:
    """Markdown for the retrieval part: one table per scope, then the paired differences."""
    lines = [
        f"## Retrieval ({rt['questions']} questions from {rt['question_files']} files, top {rt['k']})",
        "",
    ]
    for scope_name, scope in rt["scopes"].items():
        lines += [
            f"### {scope_name}: {scope['files']:,} files indexed, {scope['questions']} questions",
            "",
            "| strategy | retriever | chunks | P@5 | R@5 | MRR | char recall | retrieved not compiling "
            "| chars returned |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for name, entry in scope["strategies"].items():
            for r, m in entry["retrievers"].items():
                lines.append(
                    f"| {name} | {r} | {entry['chunks']:,} | "
                    + " | ".join(_cell(m, k, _FORMATS.get(k, ".3f")) for k in METRIC_NAMES if k in m)
                    + " |"
                )
        lines += [
            "",
            "Structural minus recursive, paired 95 % bootstrap interval:",
            "",
            "| retriever | " + " | ".join(METRIC_NAMES) + " |",
            "|---" * (len(METRIC_NAMES) + 1) + "|",
        ]
        for r, cmp in scope["paired"].items():
            lines.append(f"| {r} | " + " | ".join(_diff(c) for c in cmp.values()) + " |")
        for name, entry in scope["strategies"].items():
            for plain, cmp in entry.get("contextual_minus_plain", {}).items():
                lines.append(
                    f"\nContextual minus plain {plain} ({name}), paired 95 % bootstrap interval: "
                    + ", ".join(f"{m} {_diff(c)}" for m, c in cmp.items())
                )
        for name, entry in scope["strategies"].items():
            timings = dict(entry["timings"])
            ivf = timings.pop("static_index", None)
            lines.append(f"\nTimings ({name}): " + ", ".join(f"{k} {v}" for k, v in timings.items()))
            if ivf and ivf.get("sweep"):
                lines += [
                    f"\nStatic index ({name}): faiss IVF, {ivf['nlist']:,} cells, {ivf['nprobe']} "
                    f"scanned by default, built in {ivf['build_s']} s; exact scan of every vector: "
                    f"query p95 {ivf['exact_query_ms_p50_p95'][1]} ms, "
                    f"{ivf['exact_batched_ms_mean']} ms/query batched.",
                    "",
                    "| cells scanned | exact top-5 returned | query p50 (ms) | query p95 (ms) |",
                    "|---|---|---|---|",
                ]
                lines += [
                    f"| {row['nprobe']} | {row['agreement_at_5']:.1%} | {row['query_ms_p50_p95'][0]} | "
                    f"{row['query_ms_p50_p95'][1]} |"
                    for row in ivf["sweep"]
                ]
            exact = entry.get("static_exact")
            if exact:
                d = exact["recall_minus_ivf"]
                lines.append(
                    f"\nStatic retriever with the exact scan instead ({name}): "
                    f"R@5 {_cell(exact, 'recall', '.3f')}, "
                    f"MRR {_cell(exact, 'mrr', '.3f')}; exact minus IVF R@5 {d['diff']:+.3f} "
                    f"[{d['lo']:+.3f}, {d['hi']:+.3f}]"
                )
        lines.append("")
    return lines
