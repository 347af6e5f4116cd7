"""Where ``chunk_code``'s time goes on one language's files: tree-sitter's parse against the Python walk.

Used by ``benchmarks/code_poly.py --profile N``. Two measures of the same files:

- **phases** (no profiler): CPU seconds (``time.process_time``, best of 3) of ``chunk_code`` as a
  whole, of tree-sitter's ``Parser.parse`` alone on the same bytes (with the grammar ``chunk_code``
  picks: C++ for C that looks like C++, ``php_only`` for PHP without a tag), of the definition query
  (:func:`~chunklab.chunkers.structural.code.treesitter.definition_nodes`, matched in C, which names
  every definition for ``defines``) on the parsed trees, and of semantic-text-splitter's Rust
  ``CodeSplitter`` on the same files: ``walk = total - parse`` is the rest of ``chunk_code`` (the
  query, walking the tree, naming, offsets, metadata, building chunks), ``parse_over_rust`` says how
  much of the Rust splitter's whole time the parse alone takes, and the **ceilings** are the ratios
  chunklab / Rust that a walk costing nothing would reach: ``rust / parse``, and
  ``rust / (parse + query)`` with the query kept; and **spans alone**: the chunking walk without the
  metadata (parse, error regions, the cAST split and merge, the trim: the work the Rust splitter
  does, which names nothing), timed through the chunker's internals, its ratio ``rust / spans``
  saying how the walk itself compares and what the metadata (names, ``defines``, doc comments,
  headings) costs;
- **top functions** (``cProfile``): the functions with the most own time, in seconds under the
  profiler (which inflates small Python calls: read them as a ranking, not as timings).

On its own (the same sample as ``code_poly.py``, the first N files of each language's)::

    nice python benchmarks/code_poly_profile.py --corpus code-poly --per-language 800 --files 300
"""

from __future__ import annotations

import cProfile
import importlib
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

from chunklab.chunkers.structural.code import _CodeChunker, chunk_code, looks_like_cpp, php_grammar
from chunklab.chunkers.structural.code.languages import GRAMMARS, LANGUAGES
from chunklab.chunkers.structural.code.treesitter import definition_nodes, encode_for_parser, parse

__all__ = ["profile_language", "report"]

RESULTS = Path(__file__).parent / "results" / "code_poly_profile.json"

#: not the Python walk: tree-sitter's parse, and the harness loop (whose own time is mostly the
#: trees and chunks being freed as each file's result is dropped)
_NOT_THE_WALK = ("<method 'parse'", "code_poly_profile.py")


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
    grammars = [_grammar(language, t) for t in texts]

    def chunk_all() -> None:
        for t in texts:
            chunk_code(t, language, max_chars, engine="tree-sitter")

    def parse_all() -> None:
        for g, d in zip(grammars, datas):
            parse(g, d)

    roots = [parse(g, d).root_node for g, d in zip(grammars, datas)]

    def query_all() -> None:
        for g, root in zip(grammars, roots):
            definition_nodes(g, root)

    def spans_all() -> None:  # the chunking walk alone: what the Rust splitter does, no metadata
        for t, g, d in zip(texts, grammars, datas):
            root = parse(g, d).root_node
            walker = _CodeChunker(t, GRAMMARS[g], language, max_chars, "chars", None, {}, None)
            walker.errors_in(root, len(d))
            for piece in walker.merge_across_levels(walker.split(root, 0, len(t), [], 0)):
                walker.trim(piece.s, piece.e)

    rust = _rust_splitter(language, max_chars)

    def rust_all() -> None:
        for t in texts:
            rust.chunk_indices(t)

    chunk_all()  # warm: grammars loaded, caches filled
    total, parse_s, query_s, spans_s = _best(chunk_all), _best(parse_all), _best(query_all), _best(spans_all)
    rust_s = _best(rust_all) if rust is not None else None
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
        "rust_s": round(rust_s, 4) if rust_s is not None else None,
        "parse_over_rust": round(parse_s / rust_s, 3) if rust_s else None,
        "query_s": round(query_s, 4),
        "ceiling_parse": round(rust_s / parse_s, 2) if rust_s and parse_s else None,
        "ceiling_parse_query": round(rust_s / (parse_s + query_s), 2) if rust_s else None,
        "spans_s": round(spans_s, 4),
        "spans_ratio": round(rust_s / spans_s, 2) if rust_s and spans_s else None,
        "profiled_s": round(under, 4),
        "top": [
            {"function": _name(key), "calls": v[1], "own_s": round(v[2], 4), "cum_s": round(v[3], 4)}
            for key, v in rows
        ],
    }


def _grammar(language: str, text: str) -> str:
    """The grammar ``chunk_code`` parses ``text`` with first (C++ for C that looks like it, PHP's two)."""
    if language == "php":
        return php_grammar(text)
    return "cpp" if language == "c" and looks_like_cpp(text) else language


def _rust_splitter(language: str, max_chars: int) -> Any:
    """semantic-text-splitter's ``CodeSplitter`` on the same grammar wheel, or None if not installed."""
    try:
        from semantic_text_splitter import CodeSplitter
    except ImportError:
        return None
    spec = LANGUAGES[language]
    return CodeSplitter(getattr(importlib.import_module(spec.module), spec.function)(), max_chars)


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
        "| Rust CodeSplitter s | parse / Rust | definition query s | ceiling: Rust / parse "
        "| ceiling: Rust / (parse + query) | spans alone s | Rust / spans alone "
        "| top Python functions (own s under cProfile) |",
        "| --- " + "| ---: " * 13 + "| --- |",
    ]
    for language, row in results["languages"].items():
        p = row.get("profile")
        if not p:
            continue
        py = [t for t in p["top"] if not t["function"].startswith(_NOT_THE_WALK)]
        shown = ", ".join(f"{t['function'].split('(')[-1].rstrip(')')} {t['own_s']:.2f}" for t in py[:4])
        lines.append(
            f"| {language} | {p['files']} | {p['mb']:.2f} | {p['cpu_s']:.3f} | {p['parse_s']:.3f} "
            f"| {p['walk_s']:.3f} | {p['parse_share']:.0%} | {_num(p.get('rust_s'), '.3f')} "
            f"| {_num(p.get('parse_over_rust'), '.0%')} | {_num(p.get('query_s'), '.3f')} "
            f"| {_num(p.get('ceiling_parse'), '.2f')} | {_num(p.get('ceiling_parse_query'), '.2f')} "
            f"| {_num(p.get('spans_s'), '.3f')} | {_num(p.get('spans_ratio'), '.2f')} | {shown} |"
        )
    return "\n".join(lines)


def _num(value: float | None, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def main(argv: list[str] | None = None) -> int:
    """Profile chunk_code per language on code_poly.py's sample; write the JSON, print the table."""
    from code_poly import collect, sample_arguments  # a sibling: benchmarks/ is sys.path[0]

    ap = sample_arguments(__doc__, 800, RESULTS)
    ap.add_argument("--files", type=int, default=300, help="profile the first N files of each sample")
    args = ap.parse_args(argv)
    files = collect(args)
    results: dict[str, Any] = {
        "max_chars": args.max_chars,
        "per_language": args.per_language,
        "languages": {},
    }
    for language in sorted(files):
        print(f"{language}: {min(args.files, len(files[language]))} files", file=sys.stderr)
        texts = [t for _p, t in files[language][: args.files]]
        if texts:
            results["languages"][language] = {"profile": profile_language(language, texts, args.max_chars)}
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(report(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
