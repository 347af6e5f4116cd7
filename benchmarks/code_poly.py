"""Code chunkers on real code in many languages, in one run, on the same tree-sitter grammar wheels.

- ``chunklab``: :func:`chunklab.chunkers.structural.code.chunk_code` (tree-sitter; Python also by ``ast``);
- ``semantic-text-splitter``: its Rust ``CodeSplitter(<grammar wheel>.language(), SIZE)``, offsets from
  ``chunk_indices``;
- ``llamaindex``: ``CodeSplitter(language, max_chars=SIZE, parser=tree_sitter.Parser(<same grammar>))``;
  speed from ``split_text``, offsets from the nodes of ``get_nodes_from_documents`` (untimed).
- Chonkie's ``CodeChunker`` (1.7) is **not** measured: it hands parsing and chunking to
  ``tree_sitter_language_pack.process``, which downloads its grammars at run time; no parser can be
  given to it offline (and its ``start_index`` is ``start_byte``: byte offsets passed as characters).

Per chunker and language: MB/s (UTF-8 bytes / seconds of chunking, files in memory), chunks, offset
errors (``source[start:end] != text``), non-whitespace characters lost, chunks over budget (and, for
chunklab, those not marked ``oversize``), the share of chunks that parse on their own with the same
grammar, and for chunklab two rates per language: files with a parse error (tree-sitter left an
ERROR or MISSING node; the file is still chunked on syntax around it, and the chunks over an error
region are marked ``parse_error``) and files that fell back (more than half the bytes in error
regions: the whole file chunked without syntax). ``--profile N`` adds where chunklab's time goes
on N files per language (``cProfile``: tree-sitter's parse against the Python walk).

Corpus: ``--corpus NAME`` (the corpus registry, e.g. ``code-poly``: files with a ``path`` and, if they
have one, a ``language``), or ``--dir DIR`` (repeatable; language from the extension or ``#!`` line),
plus ``--manifest TSV`` (``path<TAB>language`` lines, relative to the manifest, for files without
either). ``make``-free: ``benchmarks/requirements.txt`` pins the peers.

    nice python benchmarks/code_poly.py --dir SRC [--per-language 200] [--max-chars 1500] [--out FILE]
    nice python benchmarks/code_poly.py --corpus code-poly --per-language 1000 --profile 300
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chunklab.chunk import uncovered
from chunklab.chunkers.structural.code import chunk_code
from chunklab.chunkers.structural.code.languages import LANGUAGES
from chunklab.chunkers.structural.code.treesitter import get_language
from chunklab.documents import decode_bytes, detect_format, shebang_format

Span = tuple[int, int, str]
RESULTS = Path(__file__).parent / "results" / "code_poly.json"
MAX_FILE_BYTES = 1_000_000


def main(argv: list[str] | None = None) -> int:
    ap = sample_arguments(__doc__, 200, RESULTS)
    ap.add_argument("--profile", type=int, default=0, help="profile chunklab on this many files per language")
    args = ap.parse_args(argv)
    files = collect(args)
    if not files:
        ap.error("no source files found: give --corpus, --dir or --manifest")
    results = {"max_chars": args.max_chars, "per_language": args.per_language, "languages": {}}
    for language in sorted(files):
        texts = files[language]
        print(f"{language}: {len(texts)} files", file=sys.stderr)
        results["languages"][language] = measure_language(language, texts, args.max_chars)
        if args.profile:
            from code_poly_profile import profile_language  # a sibling: benchmarks/ is sys.path[0]

            results["languages"][language]["profile"] = profile_language(
                language, [t for _p, t in texts[: args.profile]], args.max_chars
            )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(report(results))
    if args.profile:
        from code_poly_profile import report as profile_report

        print("\nWhere chunklab's time goes (--profile):\n\n" + profile_report(results))
    return 0


# -- corpus -----------------------------------------------------------------------------
def sample_arguments(doc: str | None, per_language: int, out: Path) -> argparse.ArgumentParser:
    """The arguments that say which files are sampled (read by :func:`collect`), and ``--out``."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n", 1)[0])
    ap.add_argument("--corpus", help="a corpus of the registry (chunklab.datasets.corpus), e.g. code-poly")
    ap.add_argument("--dir", action="append", default=[], help="a folder of source files (repeatable)")
    ap.add_argument("--manifest", help="TSV of path<TAB>language for files the extension does not name")
    ap.add_argument(
        "--per-language", type=int, default=per_language, help="files per language (evenly spaced; 0: all)"
    )
    ap.add_argument("--max-chars", type=int, default=1500)
    ap.add_argument("--languages", help="comma-separated subset")
    ap.add_argument("--out", default=str(out))
    return ap


def collect(args: argparse.Namespace) -> dict[str, list[tuple[str, str]]]:
    """Files by language (only languages chunk_code knows), an even sample of each, decoded once."""
    found: dict[str, list[tuple[str, Callable[[], bytes]]]] = defaultdict(list)
    wanted = set(args.languages.split(",")) if args.languages else None
    if args.corpus:
        from chunklab.datasets import corpus

        for f in corpus(args.corpus):
            path = str(getattr(f, "path", f))
            language = getattr(f, "language", None) or detect_format(path)
            reader = f.read_bytes if hasattr(f, "read_bytes") else (lambda p=path: Path(p).read_bytes())
            found[language].append((path, reader))
    for root in args.dir:
        for dirpath, dirs, names in os.walk(root):
            dirs.sort()
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                if (
                    os.path.isfile(path)
                    and not os.path.islink(path)
                    and 0 < os.path.getsize(path) <= MAX_FILE_BYTES
                ):
                    language = detect_format(path)  # by extension; a file without one by its #! line
                    if "." not in name:
                        language = shebang_format(_head(path)) or language
                    found[language].append((path, lambda p=path: Path(p).read_bytes()))
    if args.manifest:
        base = Path(args.manifest).parent
        for line in Path(args.manifest).read_text().splitlines():
            if "\t" in line:
                path, language = line.split("\t", 1)
                path = str(base / path)
                found[language.strip()].append((path, lambda p=path: Path(p).read_bytes()))
    out: dict[str, list[tuple[str, str]]] = {}
    for language, entries in found.items():
        if language not in LANGUAGES or (wanted and language not in wanted):
            continue
        entries = sorted(dict(entries).items())
        wanted_n = args.per_language or len(entries)
        step = max(1, len(entries) // wanted_n)
        texts = []
        for path, read in entries[::step][:wanted_n]:
            try:
                raw = read()
            except OSError:  # a dangling link, a file gone
                continue
            if len(raw) <= MAX_FILE_BYTES and b"\0" not in raw[:8192]:
                texts.append((path, decode_bytes(raw, language).text))
        out[language] = texts
    return out


def _head(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read(256).decode("utf-8", "replace")


# -- chunkers -----------------------------------------------------------------------------
def chunkers(language: str, max_chars: int) -> dict[str, Callable[[str], list[Any]]]:
    """name -> function(text) returning its chunks (whatever the library returns)."""
    spec = LANGUAGES[language]
    capsule = getattr(importlib.import_module(spec.module), spec.function)()
    out: dict[str, Callable[[str], list[Any]]] = {
        "chunklab": lambda t: chunk_code(t, language, max_chars, engine="tree-sitter")
    }
    if language == "python":
        out["chunklab-ast"] = lambda t: chunk_code(t, "python", max_chars)
    try:
        from semantic_text_splitter import CodeSplitter as RustSplitter

        rust = RustSplitter(capsule, max_chars)
        out["semantic-text-splitter"] = rust.chunk_indices
    except ImportError:
        pass
    try:
        import tree_sitter
        from llama_index.core.node_parser import CodeSplitter as LlamaSplitter

        llama = LlamaSplitter(
            language, max_chars=max_chars, parser=tree_sitter.Parser(get_language(language))
        )
        out["llamaindex"] = llama.split_text
        out["llamaindex:nodes"] = lambda t: _llama_nodes(llama, t)
    except ImportError:
        pass
    return out


def _llama_nodes(splitter: Any, text: str) -> list[Span]:
    from llama_index.core import Document

    nodes = splitter.get_nodes_from_documents([Document(text=text)])
    return [(n.start_char_idx, n.end_char_idx, n.get_content()) for n in nodes]


def spans(name: str, chunks: list[Any]) -> list[Span] | None:
    """``(start, end, text)`` of each chunk, or None where the library gives no offsets."""
    if name.startswith("chunklab"):
        return [(c.start, c.end, c.text) for c in chunks]
    if name == "semantic-text-splitter":
        return [(off, off + len(t), t) for off, t in chunks]
    if name == "llamaindex:nodes":
        return chunks
    return None


def texts_of(name: str, chunks: list[Any]) -> list[str]:
    if name.startswith("chunklab"):
        return [c.text for c in chunks]
    if name == "semantic-text-splitter":
        return [t for _o, t in chunks]
    if name == "llamaindex:nodes":
        return [t for _s, _e, t in chunks]
    return list(chunks)


# -- measuring -----------------------------------------------------------------------------
def measure_language(language: str, texts: list[tuple[str, str]], max_chars: int) -> dict[str, Any]:
    import tree_sitter

    parser = tree_sitter.Parser(get_language(language))
    mb = sum(len(t.encode("utf-8", "surrogatepass")) for _p, t in texts) / 1e6
    row: dict[str, Any] = {"files": len(texts), "mb": round(mb, 3)}
    fns = chunkers(language, max_chars)
    for fn in fns.values():  # warm up: grammar loading and imports are not chunking
        try:
            fn(texts[0][1][:2000] if texts else "x\n")
        except Exception:  # noqa: S110 - counted below, file by file
            pass
    stats: dict[str, dict[str, Any]] = {name: defaultdict(int) for name in fns}
    seconds = dict.fromkeys(fns, 0.0)
    failures: dict[str, list[str]] = {name: [] for name in fns}
    fallback_files: dict[str, list[str]] = {name: [] for name in fns}
    error_files: dict[str, list[str]] = {name: [] for name in fns}
    for path, text in texts:  # the chunkers interleaved file by file: a busy machine slows them alike
        for name, fn in fns.items():
            t0 = time.perf_counter()
            try:
                chunks = fn(text)
            except Exception as exc:  # a peer that raises on real code is a finding, not a crash
                stats[name]["exceptions"] += 1
                failures[name].append(f"{path}: {type(exc).__name__}: {str(exc)[:80]}")
                continue
            seconds[name] += time.perf_counter() - t0
            add_file(stats[name], name, chunks, text, max_chars, parser)
            if name.startswith("chunklab"):
                marked = sum(bool(c.metadata.get("fallback")) for c in chunks)
                stats[name]["fallback_chunks"] += marked
                stats[name]["parse_error_chunks"] += sum(bool(c.metadata.get("parse_error")) for c in chunks)
                if marked:
                    fallback_files[name].append(path)
                if any(c.metadata.get("parse_errors") for c in chunks):
                    error_files[name].append(path)
    for name in fns:
        entry = dict(stats[name])
        entry["seconds"] = round(seconds[name], 4)
        timed = seconds[name] and not name.endswith(":nodes")
        entry["mb_s"] = round(mb / seconds[name], 3) if timed else None
        n = entry.get("chunks", 0)
        entry["parse_alone"] = round(entry.get("parse_ok", 0) / n, 4) if n else None
        if name.startswith("chunklab"):
            entry["fallback_rate"] = round(len(fallback_files[name]) / len(texts), 4) if texts else 0.0
            entry["fallback_chunk_rate"] = round(entry.get("fallback_chunks", 0) / n, 4) if n else 0.0
            entry["fallback_examples"] = fallback_files[name][:5]
            entry["parse_error_rate"] = round(len(error_files[name]) / len(texts), 4) if texts else 0.0
            entry["parse_error_chunk_rate"] = round(entry.get("parse_error_chunks", 0) / n, 4) if n else 0.0
            entry["parse_error_examples"] = error_files[name][:5]
        entry["failures"] = failures[name][:5]
        row[name] = entry
    return row


def add_file(stats: dict[str, Any], name: str, chunks: list[Any], text: str, max_chars: int, parser) -> None:
    """Add one file's chunks to the counts: sizes, offsets, what is lost, what parses alone."""
    pieces = texts_of(name, chunks)
    stats["chunks"] += len(pieces)
    stats["over_budget"] += sum(len(p) > max_chars for p in pieces)
    if name.startswith("chunklab"):
        stats["over_budget_unmarked"] += sum(
            len(c.text) > max_chars and not c.metadata.get("oversize") for c in chunks
        )
    stats["parse_ok"] += sum(
        not parser.parse(p.encode("utf-8", "surrogatepass")).root_node.has_error for p in pieces
    )
    located = spans(name, chunks)
    if located is None:
        return
    stats["offset_errors"] += sum(
        s is None or e is None or text[s:e] != t for s, e, t in located
    )  # fmt: skip
    good = [_Span(s, e) for s, e, t in located if s is not None and e is not None and text[s:e] == t]
    stats["lost_chars"] += sum(e - s for s, e in uncovered(good, text))  # type: ignore[arg-type]


class _Span:
    """Just the offsets :func:`chunklab.chunk.uncovered` reads."""

    __slots__ = ("start", "end")

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


# -- report ---------------------------------------------------------------------------------
def report(results: dict[str, Any]) -> str:
    """A Markdown table per language, then chunklab's speed ratio to each peer."""
    lines = [
        f"max_chars={results['max_chars']}",
        "",
        "| language | chunker | MB/s | chunks | offset errors | lost chars | over budget (unmarked) "
        "| parse alone | parse-error files (chunks) | fallback files (chunks) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    ratios = []
    for language, row in results["languages"].items():
        for name, e in row.items():
            if not isinstance(e, dict) or name == "profile":
                continue
            unmarked = f" ({e.get('over_budget_unmarked', 0)})" if name.startswith("chunklab") else ""
            offsets = e.get("offset_errors", "n/a") if name != "llamaindex" else "n/a"
            lost = e.get("lost_chars", "n/a") if name != "llamaindex" else "n/a"
            fb = f"{e['fallback_rate']:.1%} ({e['fallback_chunk_rate']:.1%})" if "fallback_rate" in e else ""
            pe = (
                f"{e['parse_error_rate']:.1%} ({e['parse_error_chunk_rate']:.1%})"
                if "parse_error_rate" in e
                else ""
            )
            mb_s = f"{e['mb_s']:.2f}" if e.get("mb_s") else "—"
            lines.append(
                f"| {language} | {name} | {mb_s} | {e.get('chunks', 0)} | {offsets} | {lost} "
                f"| {e.get('over_budget', 0)}{unmarked} | {e['parse_alone'] or 0:.1%} | {pe} | {fb} |"
            )
        ours = row.get("chunklab", {}).get("mb_s")
        for peer in ("semantic-text-splitter", "llamaindex"):
            theirs = row.get(peer, {}).get("mb_s")
            if ours and theirs:
                ratios.append(f"{language}: chunklab / {peer} = {ours / theirs:.2f}x")
    return "\n".join([*lines, "", "Speed ratios (chunklab tree-sitter MB/s over the peer's):", *ratios])


if __name__ == "__main__":
    raise SystemExit(main())
