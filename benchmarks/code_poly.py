"""Code chunkers on real code in many languages, in one run, on the same tree-sitter grammar wheels.

- ``chunklab``: :func:`chunklab.chunkers.structural.code.chunk_code` (tree-sitter; Python also by ``ast``);
- ``semantic-text-splitter``: its Rust ``CodeSplitter(<grammar wheel>.language(), SIZE)``, offsets from
  ``chunk_indices``;
- ``llamaindex``: ``CodeSplitter(language, max_chars=SIZE, parser=tree_sitter.Parser(<same grammar>))``;
  speed from ``split_text``, offsets from the nodes of ``get_nodes_from_documents`` (untimed).
- Chonkie's ``CodeChunker`` (1.7) is **not** measured: it hands parsing and chunking to
  ``tree_sitter_language_pack.process``, which downloads its grammars at run time; no parser can be
  given to it offline (and its ``start_index`` is ``start_byte``: byte offsets passed as characters).

Speed is measured in wall-clock **and** CPU seconds (``time.process_time``) of each call, the chunkers
interleaved file by file (a busy machine slows them alike), ``--repeat`` passes over the files; the
ratio chunklab / Rust ``CodeSplitter`` comes with a 95% interval from a bootstrap over the files
(``ratio_cpu_ci``, ``ratio_wall_ci``), so a ratio whose interval holds 1 is not resolved. ``--peers``
picks the peers timed (``semantic-text-splitter,llamaindex`` by default). ``--md FILE`` writes the
report (with the command, commit, date and load average) beside the JSON.

Per chunker and language: MB/s (UTF-8 bytes / seconds of chunking, files in memory), chunks, offset
errors (``source[start:end] != text``), non-whitespace characters lost, chunks over budget (and, for
chunklab, those not marked ``oversize``), the share of chunks that parse on their own with the same
grammar, and for chunklab two rates per language: files with a parse error (tree-sitter left an
ERROR or MISSING node; the file is still chunked on syntax around it, and the chunks over an error
region are marked ``parse_error``) and files that fell back (more than half the bytes in error
regions: the whole file chunked without syntax); ``chunks_sha256`` hashes chunklab's chunks (offsets
and metadata) over the files, so a run after a speed-up says whether the chunks stayed the same.
``--profile N`` adds where chunklab's time goes on N files per language (``cProfile``: tree-sitter's
parse against the Python walk, the ceilings a free walk would reach, and the chunking walk alone
without the metadata, the Rust splitter's work).

Corpus: ``--corpus NAME`` (the corpus registry, e.g. ``code-poly``: files with a ``path`` and, if they
have one, a ``language``), or ``--dir DIR`` (repeatable; language from the extension or ``#!`` line),
plus ``--manifest TSV`` (``path<TAB>language`` lines, relative to the manifest, for files without
either). ``make``-free: ``benchmarks/requirements.txt`` pins the peers.

    nice python benchmarks/code_poly.py --dir SRC [--per-language 200] [--max-chars 1500] [--out FILE]
    nice python benchmarks/code_poly.py --corpus code-poly --per-language 1000 --profile 300
"""

from __future__ import annotations

import argparse
import hashlib
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
    ap.add_argument("--repeat", type=int, default=1, help="timed passes over the files (interleaved)")
    ap.add_argument(
        "--peers", default="semantic-text-splitter,llamaindex", help="peers timed (comma-separated)"
    )
    ap.add_argument("--md", help="also write the report as Markdown to this file")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")
    files = collect(args)
    if not files:
        ap.error("no source files found: give --corpus, --dir or --manifest")
    peers = {p for p in args.peers.split(",") if p}
    results: dict[str, Any] = {
        "max_chars": args.max_chars,
        "per_language": args.per_language,
        "repeat": args.repeat,
        "run": run_facts(argv),
        "languages": {},
    }
    for language in sorted(files):
        texts = files[language]
        print(f"{language}: {len(texts)} files", file=sys.stderr)
        results["languages"][language] = measure_language(
            language, texts, args.max_chars, peers=peers, repeat=args.repeat
        )
        if args.profile:
            from code_poly_profile import profile_language  # a sibling: benchmarks/ is sys.path[0]

            results["languages"][language]["profile"] = profile_language(
                language, [t for _p, t in texts[: args.profile]], args.max_chars
            )
    results["run"]["loadavg_end"] = _loadavg()
    results["measured"] = measured_block(results["run"])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    text = report(results)
    if args.profile:
        from code_poly_profile import report as profile_report

        text += "\n\nWhere chunklab's time goes (--profile):\n\n" + profile_report(results)
    print(text)
    if args.md:
        Path(args.md).write_text(markdown(results, text))
    return 0


def run_facts(argv: list[str] | None) -> dict[str, Any]:
    """What the run was: command, commit, UTC date, CPUs and the load average at its start."""
    import subprocess
    from datetime import UTC, datetime

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "command": " ".join(["python", "benchmarks/code_poly.py", *(sys.argv[1:] if argv is None else argv)]),
        "commit": commit or None,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": os.cpu_count(),
        "loadavg_start": _loadavg(),
    }


def measured_block(run: dict[str, Any]) -> dict[str, Any]:
    """The ``measured`` block the book's pages name beside a number: date, machine, load, from ``run``."""
    import platform

    cpu = f"{platform.machine()}, {platform.system()}"
    try:
        names = [ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("model name")]
        if names:
            cpu = f"{names[0].split(':', 1)[1].strip()} ({cpu})"
    except OSError:
        pass
    return {
        "date": str(run["date"])[:10],
        "chunklab_commit": run.get("commit"),
        "command": run.get("command"),
        "machine": {"cpu": cpu, "cores": run.get("cpus")},
        "loadavg_start": run.get("loadavg_start"),
        "loadavg_end": run.get("loadavg_end"),
    }


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


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
def chunkers(
    language: str, max_chars: int, peers: set[str] | None = None
) -> dict[str, Callable[[str], list[Any]]]:
    """name -> function(text) returning its chunks (whatever the library returns); ``peers``: which."""
    peers = {"semantic-text-splitter", "llamaindex"} if peers is None else peers
    spec = LANGUAGES[language]
    capsule = getattr(importlib.import_module(spec.module), spec.function)()
    out: dict[str, Callable[[str], list[Any]]] = {
        "chunklab": lambda t: chunk_code(t, language, max_chars, engine="tree-sitter")
    }
    if language == "python":
        out["chunklab-ast"] = lambda t: chunk_code(t, "python", max_chars)
    try:
        if "semantic-text-splitter" not in peers:
            raise ImportError
        from semantic_text_splitter import CodeSplitter as RustSplitter

        rust = RustSplitter(capsule, max_chars)
        out["semantic-text-splitter"] = rust.chunk_indices
    except ImportError:
        pass
    try:
        if "llamaindex" not in peers:
            raise ImportError
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
def measure_language(
    language: str,
    texts: list[tuple[str, str]],
    max_chars: int,
    *,
    peers: set[str] | None = None,
    repeat: int = 1,
) -> dict[str, Any]:
    import tree_sitter

    parser = tree_sitter.Parser(get_language(language))
    mb = sum(len(t.encode("utf-8", "surrogatepass")) for _p, t in texts) / 1e6
    row: dict[str, Any] = {"files": len(texts), "mb": round(mb, 3)}
    fns = chunkers(language, max_chars, peers)
    for fn in fns.values():  # warm up: grammar loading and imports are not chunking
        try:
            fn(texts[0][1][:2000] if texts else "x\n")
        except Exception:  # noqa: S110 - counted below, file by file
            pass
    stats: dict[str, dict[str, Any]] = {name: defaultdict(int) for name in fns}
    seconds = dict.fromkeys(fns, 0.0)
    cpu = dict.fromkeys(fns, 0.0)
    # per file and chunker, summed over the passes: the bootstrap resamples files
    file_wall: dict[str, list[float]] = {name: [0.0] * len(texts) for name in fns}
    file_cpu: dict[str, list[float]] = {name: [0.0] * len(texts) for name in fns}
    failures: dict[str, list[str]] = {name: [] for name in fns}
    fallback_files: dict[str, list[str]] = {name: [] for name in fns}
    error_files: dict[str, list[str]] = {name: [] for name in fns}
    digests = {name: hashlib.sha256() for name in fns if name.startswith("chunklab")}
    for rep in range(repeat):
        for i, (path, text) in enumerate(texts):  # the chunkers interleaved file by file
            for name, fn in fns.items():
                c0, t0 = time.process_time(), time.perf_counter()
                try:
                    chunks = fn(text)
                except Exception as exc:  # a peer that raises on real code is a finding, not a crash
                    if rep == 0:
                        stats[name]["exceptions"] += 1
                        failures[name].append(f"{path}: {type(exc).__name__}: {str(exc)[:80]}")
                    continue
                wall, used = time.perf_counter() - t0, time.process_time() - c0
                seconds[name] += wall
                cpu[name] += used
                file_wall[name][i] += wall
                file_cpu[name][i] += used
                if rep == 0:
                    _count_file(
                        stats, name, chunks, text, max_chars, parser, path, fallback_files, error_files
                    )
                    if name in digests:
                        digests[name].update(chunks_key(chunks))
    for name in fns:
        entry = _entry(name, stats, seconds, cpu, mb * repeat, texts, fallback_files, error_files)
        entry["failures"] = failures[name][:5]
        if name in digests:
            entry["chunks_sha256"] = digests[name].hexdigest()
        row[name] = entry
    rust = "semantic-text-splitter"
    if rust in fns and "chunklab" in fns:
        for kind, per_file in (("cpu", file_cpu), ("wall", file_wall)):
            ratio, low, high = ratio_interval(per_file[rust], per_file["chunklab"])
            row["chunklab"][f"ratio_{kind}"] = ratio
            row["chunklab"][f"ratio_{kind}_ci"] = [low, high]
    return row


def ratio_interval(
    theirs: list[float], ours: list[float], resamples: int = 1000, seed: int = 0
) -> tuple[float, float, float]:
    """Their seconds over ours (our speed ratio) and its 95% interval, bootstrapping the files."""
    import random

    if not ours or not sum(ours):
        return 0.0, 0.0, 0.0
    rng = random.Random(seed)
    n = len(ours)
    ratios = []
    for _ in range(resamples):
        picks = rng.choices(range(n), k=n)
        mine = sum(ours[i] for i in picks)
        ratios.append(sum(theirs[i] for i in picks) / mine if mine else 0.0)
    ratios.sort()
    return (
        round(sum(theirs) / sum(ours), 3),
        round(ratios[int(0.025 * resamples)], 3),
        round(ratios[int(0.975 * resamples) - 1], 3),
    )


def chunks_key(chunks: list[Any]) -> bytes:
    """One file's chunks (offsets and metadata) as bytes: ``chunks_sha256`` hashes them over the files,
    so two runs on the same files say whether a faster chunker still gives the same chunks."""
    rows = [(c.start, c.end, c.metadata) for c in chunks]
    return json.dumps(rows, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _count_file(stats, name, chunks, text, max_chars, parser, path, fallback_files, error_files) -> None:
    """One file's quality counts (taken on the first pass only)."""
    add_file(stats[name], name, chunks, text, max_chars, parser)
    if name.startswith("chunklab"):
        marked = sum(bool(c.metadata.get("fallback")) for c in chunks)
        stats[name]["fallback_chunks"] += marked
        stats[name]["parse_error_chunks"] += sum(bool(c.metadata.get("parse_error")) for c in chunks)
        if marked:
            fallback_files[name].append(path)
        if any(c.metadata.get("parse_errors") for c in chunks):
            error_files[name].append(path)


def _entry(name, stats, seconds, cpu, mb, texts, fallback_files, error_files) -> dict[str, Any]:
    """One chunker's row: counts, seconds (wall and CPU) and MB/s over all passes, rates."""
    entry = dict(stats[name])
    entry["seconds"] = round(seconds[name], 4)
    entry["cpu_seconds"] = round(cpu[name], 4)
    timed = seconds[name] and not name.endswith(":nodes")
    entry["mb_s"] = round(mb / seconds[name], 3) if timed else None
    entry["mb_s_cpu"] = round(mb / cpu[name], 3) if timed and cpu[name] else None
    n = entry.get("chunks", 0)
    entry["parse_alone"] = round(entry.get("parse_ok", 0) / n, 4) if n else None
    if name.startswith("chunklab"):
        entry["fallback_rate"] = round(len(fallback_files[name]) / len(texts), 4) if texts else 0.0
        entry["fallback_chunk_rate"] = round(entry.get("fallback_chunks", 0) / n, 4) if n else 0.0
        entry["fallback_examples"] = fallback_files[name][:5]
        entry["parse_error_rate"] = round(len(error_files[name]) / len(texts), 4) if texts else 0.0
        entry["parse_error_chunk_rate"] = round(entry.get("parse_error_chunks", 0) / n, 4) if n else 0.0
        entry["parse_error_examples"] = error_files[name][:5]
    return entry


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
        "| language | chunker | MB/s (wall / CPU) | chunks | offset errors | lost chars "
        "| over budget (unmarked) | parse alone | parse-error files (chunks) | fallback files (chunks) |",
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
            mb_s += f" / {e['mb_s_cpu']:.2f}" if e.get("mb_s_cpu") else ""
            lines.append(
                f"| {language} | {name} | {mb_s} | {e.get('chunks', 0)} | {offsets} | {lost} "
                f"| {e.get('over_budget', 0)}{unmarked} | {e['parse_alone'] or 0:.1%} | {pe} | {fb} |"
            )
        ours = row.get("chunklab", {}).get("mb_s")
        for peer in ("semantic-text-splitter", "llamaindex"):
            theirs = row.get(peer, {}).get("mb_s")
            if ours and theirs:
                ratios.append(f"{language}: chunklab / {peer} = {ours / theirs:.2f}x")
    return "\n".join(
        [
            *ratio_table(results),
            "",
            *lines,
            "",
            "Speed ratios (chunklab tree-sitter MB/s over the peer's):",
            *ratios,
        ]
    )


def ratio_table(results: dict[str, Any], target: float = 1.2) -> list[str]:
    """Per language: chunklab over the Rust ``CodeSplitter`` in CPU and wall time, with 95% intervals."""
    lines = [
        f"chunklab / Rust CodeSplitter (target {target}x; CPU and wall seconds of the same calls, "
        "interleaved file by file; 95% bootstrap interval over the files). With `--profile`, the ceilings: "
        "the CPU ratio a walk costing nothing would reach, Rust / parse and Rust / (parse + definition "
        "query), and Rust / the chunking walk alone (spans without metadata: the Rust splitter's work), "
        "on the profile's files:",
        "",
        "| language | files | MB | CPU ratio | CPU 95% interval | wall ratio | wall 95% interval "
        "| target met | ceiling: Rust / parse | ceiling: Rust / (parse + query) | Rust / spans alone |",
        "| --- | ---: | ---: | ---: | --- | ---: | --- | --- | ---: | ---: | ---: |",
    ]
    for language, row in results["languages"].items():
        e = row.get("chunklab", {})
        if "ratio_cpu" not in e:
            continue
        (c_lo, c_hi), (w_lo, w_hi) = e["ratio_cpu_ci"], e["ratio_wall_ci"]
        met = "yes" if min(c_lo, w_lo) >= target else "no" if max(c_hi, w_hi) < target else "unresolved"
        profile = row.get("profile") or {}
        ceilings = [profile.get(k) for k in ("ceiling_parse", "ceiling_parse_query", "spans_ratio")]
        shown = " | ".join("—" if c is None else f"{c:.2f}" for c in ceilings)
        lines.append(
            f"| {language} | {row['files']} | {row['mb']:.1f} | {e['ratio_cpu']:.2f} | {c_lo:.2f}–{c_hi:.2f} "
            f"| {e['ratio_wall']:.2f} | {w_lo:.2f}–{w_hi:.2f} | {met} | {shown} |"
        )
    return lines


def markdown(results: dict[str, Any], text: str) -> str:
    """The report as a Markdown page: what was run, where and when, then the tables."""
    run = results.get("run", {})
    return (
        "# code_poly: code chunkers on the code-poly corpus, per language\n\n"
        f"Written by `benchmarks/code_poly.py`. Command: `{run.get('command')}` (chunklab at "
        f"{run.get('commit')}), {run.get('date')}, {run.get('cpus')} CPUs, load average "
        f"{run.get('loadavg_start')} at the start and {run.get('loadavg_end')} at the end: absolute MB/s "
        "depend on the load; the chunkers run interleaved file by file, so the ratios are the result.\n\n"
        + text
        + "\n"
    )


if __name__ == "__main__":
    raise SystemExit(main())
