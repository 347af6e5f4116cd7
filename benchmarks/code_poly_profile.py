"""Where ``chunk_code``'s time goes on one language's files: tree-sitter's parse against the Python walk.

Used by ``benchmarks/code_poly.py --profile N``. Two measures of the same files:

- **phases** (no profiler): CPU seconds (``time.process_time``, best of 3) of ``chunk_code`` as a
  whole and of tree-sitter's ``Parser.parse`` alone on the same bytes, so ``walk = total - parse``
  is the Python side (walking the tree, naming, offsets, metadata, building chunks);
- **top functions** (``cProfile``): the functions with the most own time, in seconds under the
  profiler (which inflates small Python calls: read them as a ranking, not as timings).
"""

from __future__ import annotations

import cProfile
import pstats
import time
from typing import Any

from chunklab.chunkers.structural._treesitter import encode_for_parser, parse
from chunklab.chunkers.structural.code import chunk_code

__all__ = ["profile_language"]


def _best(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def profile_language(language: str, texts: list[str], max_chars: int, top: int = 12) -> dict[str, Any]:
    """Phases and the top functions of ``chunk_code`` on ``texts`` (see the module docstring)."""
    datas = [encode_for_parser(t) for t in texts]
    grammar = language

    def chunk_all() -> None:
        for t in texts:
            chunk_code(t, language, max_chars, engine="tree-sitter")

    def parse_all() -> None:
        for d in datas:
            parse(grammar, d)

    chunk_all()  # warm: grammars loaded, caches filled
    total, parse_s = _best(chunk_all), _best(parse_all)
    prof = cProfile.Profile()
    prof.enable()
    chunk_all()
    prof.disable()
    stats = pstats.Stats(prof)
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]  # type: ignore[attr-defined]
    under = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    return {
        "files": len(texts),
        "mb": round(sum(map(len, datas)) / 1e6, 3),
        "cpu_s": round(total, 4),
        "parse_s": round(parse_s, 4),
        "walk_s": round(max(0.0, total - parse_s), 4),
        "parse_share": round(parse_s / total, 3) if total else None,
        "profiled_s": round(under, 4),
        "top": [
            {"function": _name(key), "calls": v[1], "own_s": round(v[2], 4), "cum_s": round(v[3], 4)}
            for key, v in rows
        ],
    }


def _name(key: tuple[str, int, str]) -> str:
    path, line, func = key
    if path == "~":
        return func  # a built-in, e.g. "<method 'parse' of 'tree_sitter.Parser' objects>"
    short = path.split("/chunklab/", 1)[-1] if "/chunklab/" in path else path.rsplit("/", 1)[-1]
    return f"{short}:{line}({func})"


def report(results: dict[str, Any]) -> str:
    """A Markdown table: per language, CPU seconds of parse and walk, and the top Python functions."""
    lines = [
        "| language | files | MB | chunk_code CPU s | tree-sitter parse s | Python walk s | parse share "
        "| top Python functions (own s under cProfile) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for language, row in results["languages"].items():
        p = row.get("profile")
        if not p:
            continue
        py = [t for t in p["top"] if "parse" not in t["function"] or "chunklab" in t["function"]]
        shown = ", ".join(f"{t['function'].split('(')[-1].rstrip(')')} {t['own_s']:.2f}" for t in py[:4])
        lines.append(
            f"| {language} | {p['files']} | {p['mb']:.2f} | {p['cpu_s']:.3f} | {p['parse_s']:.3f} "
            f"| {p['walk_s']:.3f} | {p['parse_share']:.0%} | {shown} |"
        )
    return "\n".join(lines)
