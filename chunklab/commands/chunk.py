"""``chunklab chunk``: chunk files (or the whole installed Python corpus) into JSONL, with a summary.

Files are handed to a pool of worker processes; each returns its chunks already serialized,
and the main process writes them out as they come, so the corpus is never held in memory.
At the end a summary reports files, MB, files/s, MB/s, the fallback rate with its top
reasons, chunk size percentiles and the chunks over budget.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import time
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

STRATEGIES = ("structural", "recursive", "fixed")
#: extensions picked up when a directory is given
DIR_EXTENSIONS = (".py", ".pyi", ".md", ".markdown", ".html", ".htm", ".xhtml", ".txt", ".rst")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``chunklab chunk``."""
    p = subparsers.add_parser(
        "chunk",
        help="chunk files into JSONL and report speed, fallbacks and size distribution",
        description=(
            "Chunk files (directories are searched for .py/.md/.html/.txt files) with a "
            "structural, recursive or fixed chunker, in worker processes, streaming chunks "
            "to a JSONL file. Prints a summary: files, MB, files/s, MB/s, fallback rate with "
            "top reasons, chunk size percentiles and chunks over budget."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to chunk")
    p.add_argument("--strategy", choices=STRATEGIES, default="structural", help="default: structural")
    p.add_argument("--size", type=int, default=1500, help="max chunk size in characters (default 1500)")
    p.add_argument(
        "--overlap", type=int, default=None, help="overlap in characters for recursive/fixed (default 0)"
    )
    p.add_argument("--min-chars", type=int, default=200, help="structural Python: merge units below this")
    p.add_argument("--jobs", "-j", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--out", "-o", default=None, help="write chunks as JSONL here ('-' for stdout)")
    p.add_argument(
        "--installed-python",
        action="store_true",
        help="also chunk every installed .py file of this interpreter (chunklab.datasets.code_corpus)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--summary-json", default=None, metavar="FILE", help="also write the summary as JSON")
    p.set_defaults(func=run)
    return p


@dataclass
class FileResult:
    """What a worker sends back for one file (chunks already serialized as JSONL)."""

    path: str
    nbytes: int
    kind: str
    lines: str = ""
    sizes: list[int] = field(default_factory=list)
    over_budget: int = 0
    over_budget_marked: int = 0
    fallback: str | None = None
    error: str | None = None


@dataclass
class Summary:
    """Running totals over all files."""

    files: int = 0
    nbytes: int = 0
    chunks: int = 0
    over_budget: int = 0
    over_budget_marked: int = 0
    kinds: Counter = field(default_factory=Counter)
    errors: list[tuple[str, str]] = field(default_factory=list)
    sizes: array = field(default_factory=lambda: array("l"))

    def add(self, r: FileResult) -> None:
        self.files += 1
        self.nbytes += r.nbytes
        self.chunks += len(r.sizes)
        self.sizes.extend(r.sizes)
        self.over_budget += r.over_budget
        self.over_budget_marked += r.over_budget_marked
        self.kinds[r.kind] += 1
        if r.error:
            self.errors.append((r.path, r.error))


def run(args: argparse.Namespace) -> int:
    """Chunk the files named by ``args`` and print the summary; 0 on success, 1 if a file crashed."""
    from chunklab.structural import FallbackStats

    _check_args(args)
    files = list(iter_files(args.paths))
    if args.installed_python:
        from chunklab.datasets.code import code_corpus

        seen = set(files)
        files.extend(p for p in code_corpus().paths if p not in seen)
    if not files:
        raise ValueError("no input files: give PATH arguments or --installed-python")
    overlap = args.overlap or 0
    tasks = ((path, args.strategy, args.size, overlap, args.min_chars, args.out is not None) for path in files)
    out: TextIO | None = None
    if args.out == "-":
        out = sys.stdout
    elif args.out:
        out = open(args.out, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    report = sys.stderr if out is sys.stdout else sys.stdout
    stats = FallbackStats()
    summary = Summary()
    t0 = time.perf_counter()
    try:
        for r in _progress(_results(tasks, args.jobs), len(files), args.no_progress):
            summary.add(r)
            if r.fallback:
                stats.record(r.fallback, r.path, documents=1)
            elif not r.error:
                stats.documents += 1
            if out is not None and r.lines:
                out.write(r.lines)
    finally:
        if out is not None and out is not sys.stdout:
            out.close()
    elapsed = time.perf_counter() - t0
    stats.chunks = summary.chunks
    result = _summary_dict(summary, stats, elapsed, args)
    print(format_summary(result), file=report)
    if args.summary_json:
        with open(args.summary_json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
    return 1 if summary.errors else 0


def _check_args(args: argparse.Namespace) -> None:
    if args.size <= 0:
        raise ValueError(f"--size must be > 0, got {args.size}")
    if args.jobs <= 0:
        raise ValueError(f"--jobs must be > 0, got {args.jobs}")
    if args.min_chars < 0:
        raise ValueError(f"--min-chars must be >= 0, got {args.min_chars}")
    if args.overlap is not None:
        if args.strategy == "structural":
            raise ValueError("--overlap applies to --strategy recursive or fixed (structural keeps units whole)")
        if not 0 <= args.overlap < args.size:
            raise ValueError(f"--overlap must be in [0, --size), got {args.overlap}")


def iter_files(paths: Iterable[str]) -> Iterator[str]:
    """Files named directly, and the known text files under directories (sorted)."""
    for p in paths:
        if os.path.isdir(p):
            found = []
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
                found.extend(os.path.join(dirpath, f) for f in filenames if f.lower().endswith(DIR_EXTENSIONS))
            yield from sorted(found)
        elif os.path.isfile(p):
            yield p
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")


def _results(tasks: Iterable[tuple], jobs: int) -> Iterator[FileResult]:
    if jobs == 1:
        for t in tasks:
            yield chunk_file(t)
        return
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    with ctx.Pool(jobs, maxtasksperchild=2000) as pool:
        yield from pool.imap(chunk_file, tasks, chunksize=4)


def _progress(results: Iterator[FileResult], total: int, disabled: bool) -> Iterator[FileResult]:
    from tqdm import tqdm

    bar = tqdm(total=total, unit="file", disable=disabled or None, file=sys.stderr, smoothing=0.05)
    done = 0
    t0 = time.perf_counter()
    try:
        for r in results:
            done += r.nbytes
            bar.update(1)
            if bar.n % 50 == 0:
                bar.set_postfix_str(f"{done / 1e6 / max(time.perf_counter() - t0, 1e-9):.1f} MB/s")
            yield r
    finally:
        bar.close()


def chunk_file(task: tuple) -> FileResult:
    """Chunk one file (runs in a worker process); never raises, errors are reported."""
    path, strategy, size, overlap, min_chars, want_lines = task
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        return FileResult(path, 0, "?", error=f"{type(exc).__name__}: {exc}")
    from chunklab.structural import chunk_document, detect_kind

    kind = detect_kind(raw, path)
    try:
        if strategy == "structural":
            options: dict[str, Any] = {"max_chars": size}
            if kind == "python":
                options["min_chars"] = min_chars
            chunks = chunk_document(raw, kind=kind, path=path, **options)
        else:
            from chunklab.structural.dispatch import decode_for

            text = decode_for(kind, raw)
            if strategy == "recursive":
                from chunklab.recursive import chunk_recursive

                chunks = chunk_recursive(text, size, overlap, doc_id=path)
            else:
                from chunklab.fixed import chunk_fixed

                chunks = chunk_fixed(text, size, overlap, doc_id=path)
    except Exception as exc:  # reported, counted as a crash; the run goes on
        return FileResult(path, len(raw), kind, error=f"{type(exc).__name__}: {exc}")
    sizes = [len(c.text) for c in chunks]
    over = [c for c, n in zip(chunks, sizes, strict=True) if n > size]
    fallback = None
    for c in chunks:
        if c.metadata.get("fallback"):
            fallback = str(c.metadata.get("fallback_reason"))
            break
    lines = ""
    if want_lines and chunks:
        dumps = json.dumps
        lines = "".join(dumps(c.to_dict(), ensure_ascii=False, default=str) + "\n" for c in chunks)
    return FileResult(
        path,
        len(raw),
        kind,
        lines,
        sizes,
        len(over),
        sum(1 for c in over if c.metadata.get("oversize")),
        fallback,
    )


def _summary_dict(summary: Summary, stats: Any, elapsed: float, args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    sizes = np.asarray(summary.sizes, dtype=np.int64)
    pct = {}
    if sizes.size:
        for q in (5, 50, 90, 99):
            pct[f"p{q}"] = int(np.percentile(sizes, q))
        pct["max"] = int(sizes.max())
        pct["mean"] = round(float(sizes.mean()), 1)
    mb = summary.nbytes / 1e6
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "strategy": args.strategy,
        "size": args.size,
        "jobs": args.jobs,
        "files": summary.files,
        "mb": round(mb, 2),
        "seconds": round(elapsed, 2),
        "files_per_s": round(summary.files / elapsed, 1) if elapsed else None,
        "mb_per_s": round(mb / elapsed, 2) if elapsed else None,
        "chunks": summary.chunks,
        "kinds": dict(summary.kinds),
        "fallback_files": stats.fallbacks,
        "fallback_rate": stats.rate,
        "fallback_reasons": stats.top(10),
        "fallback_examples": stats.examples[:50],
        "chunk_size": pct,
        "over_budget": summary.over_budget,
        "over_budget_marked_oversize": summary.over_budget_marked,
        "errors": summary.errors,
        "peak_rss_mb": {"main": round(self_rss, 1), "largest_worker": round(child_rss, 1)},
        "out": args.out,
    }


def format_summary(s: dict[str, Any]) -> str:
    """The human-readable summary printed at the end of a run."""
    lines = [
        f"chunklab chunk --strategy {s['strategy']} --size {s['size']} --jobs {s['jobs']}",
        f"  files     {s['files']:,} ({', '.join(f'{k} {v:,}' for k, v in sorted(s['kinds'].items()))})",
        f"  data      {s['mb']:,.1f} MB in {s['seconds']:.1f} s: "
        f"{s['files_per_s'] or 0:,.1f} files/s, {s['mb_per_s'] or 0:.2f} MB/s",
        f"  chunks    {s['chunks']:,}",
    ]
    if s["chunk_size"]:
        cs = s["chunk_size"]
        lines.append(
            "  size      chars p5 {p5}  p50 {p50}  p90 {p90}  p99 {p99}  max {max}  mean {mean}".format(**cs)
        )
    unmarked = s["over_budget"] - s["over_budget_marked_oversize"]
    lines.append(
        f"  over      {s['over_budget']:,} chunks over {s['size']} chars "
        f"({s['over_budget_marked_oversize']:,} single indivisible lines marked oversize"
        + (f", {unmarked:,} NOT marked)" if unmarked else ")")
    )
    lines.append(f"  fallback  {s['fallback_files']:,} files ({s['fallback_rate']:.2%})")
    for reason, count in s["fallback_reasons"]:
        lines.append(f"    {count:6,}  {reason}")
    if s["fallback_rate"] > 0.05:
        lines.append("  WARNING: fallback rate over 5%: the structural chunker is not seeing structure")
    lines.append(f"  errors    {len(s['errors'])}")
    for path, err in s["errors"][:10]:
        lines.append(f"    {path}: {err}")
    rss = s["peak_rss_mb"]
    lines.append(f"  peak RSS  main {rss['main']:.0f} MB, largest worker {rss['largest_worker']:.0f} MB")
    if s["out"]:
        lines.append(f"  wrote     {s['out']}")
    return "\n".join(lines)
