"""``chunklab chunk``: chunk files (or the whole installed Python corpus) into JSONL, with a summary.

Files are read by :func:`chunklab.documents.load_document` and chunked by a strategy from the
catalog (:func:`chunklab.chunkers.catalog.strategy_from_options`), in worker processes that return
their chunks already serialized; the main process writes them out in input order as they
come, so the corpus is never held in memory. A worker that dies (the OOM killer, ``kill -9``)
is noticed, the file it was chunking is reported as failed, and a new worker takes over.
The output goes to a temporary file renamed over ``--out`` at the end. The summary reports
files ok / skipped / failed with reasons, MB, files/s, MB/s, the fallback rate with its top
reasons, chunk size percentiles and the chunks over budget.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import sys
import time
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TextIO

from chunklab.commands._output import atomic_output
from chunklab.commands.arguments import add_strategy_arguments, strategy_from_args
from chunklab.ingest.plan import WorkItem
from chunklab.ingest.pool import map_ordered
from chunklab.ingest.report import IngestReport, document_notes, problem_of, report_lines
from chunklab.ingest.stages import ChunkConfig
from chunklab.words import counted, plural

if TYPE_CHECKING:
    from chunklab.chunkers.catalog import Strategy
    from chunklab.chunkers.structural import FallbackStats


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Register ``chunklab chunk``."""
    from chunklab.chunkers.catalog import available_strategies
    from chunklab.documents import EXTENSIONS

    exts = "/".join(e for exts in EXTENSIONS.values() for e in exts)
    p = subparsers.add_parser(
        "chunk",
        help="chunk files into JSONL and report speed, fallbacks and size distribution",
        description=(
            f"Chunk files (directories are searched for {exts} files) with a strategy from the "
            "catalog, in worker processes, streaming chunks to a JSONL file. Prints a summary: "
            "files ok/skipped/failed, MB, files/s, MB/s, fallback rate with top reasons, chunk "
            "size percentiles and chunks over budget. Exits 1 when a file failed."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to chunk")
    add_strategy_arguments(p, available_strategies())
    p.add_argument("--jobs", "-j", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--out", "-o", default=None, help="write chunks as JSONL here ('-' for stdout)")
    p.add_argument(
        "--installed-python",
        action="store_true",
        help="also chunk every installed .py file of this interpreter (the corpus 'installed')",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--summary-json", default=None, metavar="FILE", help="also write the summary as JSON")
    p.set_defaults(func=run)
    return p


@dataclass
class FileResult:
    """What a worker sends back for one file (chunks already serialized as JSONL)."""

    path: str
    nbytes: int = 0
    kind: str = "?"
    lines: str = ""
    sizes: list[int] = field(default_factory=list)
    over_budget: int = 0
    over_budget_marked: int = 0
    fallback: str | None = None
    decode_problem: str | None = None
    #: what the summary says of a file read with a gap (:func:`chunklab.ingest.report.document_notes`)
    notes: list[str] = field(default_factory=list)
    #: None when chunked; else (pile, reason, detail) with pile "skipped" or "failed"
    problem: tuple[str, str, str] | None = None


@dataclass
class Summary:
    """Running totals over all files."""

    report: IngestReport = field(default_factory=IngestReport)
    nbytes: int = 0
    chunks: int = 0
    over_budget: int = 0
    over_budget_marked: int = 0
    kinds: Counter = field(default_factory=Counter)
    sizes: array = field(default_factory=lambda: array("l"))

    def add(self, r: FileResult) -> None:
        """Count one file's result."""
        if r.problem is not None:
            self.report.problem(r.path, *r.problem)
            return
        self.report.document_ok(r.path, r.decode_problem, r.notes)
        self.nbytes += r.nbytes
        self.chunks += len(r.sizes)
        self.sizes.extend(r.sizes)
        self.over_budget += r.over_budget
        self.over_budget_marked += r.over_budget_marked
        self.kinds[r.kind] += 1


def run(args: argparse.Namespace) -> int:
    """Chunk the files named by ``args`` and print the summary; 0 on success, 1 if a file failed."""
    from chunklab._validate import check_positive_int
    from chunklab.chunkers.structural import FallbackStats
    from chunklab.documents import corpus_root, doc_id_for, iter_paths

    check_positive_int(args.jobs, "--jobs")
    strategy = strategy_from_args(args)
    files = list(iter_paths(args.paths))
    installed: list[str] = []
    if args.installed_python:
        from chunklab.datasets import corpus

        seen = set(files)
        installed = [p for p in corpus("installed").paths if p not in seen]
        files.extend(installed)
    if not files:
        raise ValueError("no input files: give PATH arguments or --installed-python")
    root = args.root if args.root is not None else corpus_root([*args.paths, *installed])
    for path in files:
        doc_id_for(path, root)  # a file outside --root: an error now, not in a worker
    config = _Config(root, ChunkConfig(strategy.spec, args.strict), args.out is not None, strategy.budget)
    stats = FallbackStats()
    summary = Summary()
    t0 = time.perf_counter()
    with _output(args.out) as out:
        report_to = sys.stderr if out is sys.stdout else sys.stdout
        for r in _progress(_results(files, config, args.jobs), len(files), args.no_progress):
            summary.add(r)
            if r.problem is None:
                if r.fallback:
                    stats.record(r.fallback, r.path, documents=1)
                else:
                    stats.documents += 1
            if out is not None and r.lines:
                out.write(r.lines)
    elapsed = time.perf_counter() - t0
    stats.chunks = summary.chunks
    result = _summary_dict(summary, stats, elapsed, args, strategy, root)
    print(format_summary(result), file=report_to)
    if args.summary_json:
        with atomic_output(args.summary_json) as fh:
            json.dump(result, fh, indent=2)
    return summary.report.exit_code


@contextlib.contextmanager
def _output(out: str | None) -> Iterator[TextIO | None]:
    if out is None:
        yield None
    elif out == "-":
        yield sys.stdout
    else:
        with atomic_output(out) as fh:
            yield fh


@dataclass(frozen=True)
class _Config:
    """What every worker needs to chunk a file (picklable: the strategy is rebuilt by name)."""

    root: str
    chunking: ChunkConfig  # the load-and-chunk stage's config (strategy spec, strict)
    want_lines: bool
    budget: int | None


def chunk_file(path: str, config: _Config) -> FileResult:
    """Read and chunk one file (runs in a worker process); never raises, problems are reported.

    Any failure to read the file (a loader crash included) or to chunk it, and chunks that
    would not encode as UTF-8, make this file's one problem line; the run goes on. The document
    and its chunks come from the load-and-chunk stage every ingest engine runs
    (:func:`chunklab.ingest.stages.load`, :func:`~chunklab.ingest.stages.chunk`), so ``chunk``
    and ``index`` give the same chunks; this adds the sizes, over-budget and fallback counts.
    """
    from chunklab.ingest.stages import chunk, load

    try:
        doc = load(WorkItem(path, config.root), config.chunking.strict)
    except Exception as exc:  # a DocumentError, or a loader's crash: this file's problem, not the run's
        return FileResult(path, problem=problem_of(exc))
    try:
        chunks = chunk(doc, config.chunking)
        lines = ""
        if config.want_lines and chunks:
            dumps = json.dumps
            lines = "".join(dumps(c.to_dict(), ensure_ascii=False, default=str) + "\n" for c in chunks)
            lines.encode("utf-8")  # what the output file cannot take fails this file here, not the run
    except Exception as exc:  # a chunker bug on one file: reported as failed, the run goes on
        return FileResult(path, doc.metadata["bytes"], doc.format, problem=problem_of(exc))
    from chunklab.units import length_function

    sizes = [length_function(config.chunking.spec.build().unit)(c.text) for c in chunks]
    over = (
        [] if config.budget is None else [c for c, n in zip(chunks, sizes, strict=True) if n > config.budget]
    )
    fallback = next(
        (str(c.metadata.get("fallback_reason")) for c in chunks if c.metadata.get("fallback")), None
    )
    return FileResult(
        path,
        doc.metadata["bytes"],
        doc.format,
        lines,
        sizes,
        len(over),
        sum(1 for c in over if c.metadata.get("oversize")),
        fallback,
        doc.metadata.get("decode_problem"),
        document_notes(doc.metadata),
    )


def _results(files: list[str], config: _Config, jobs: int) -> Iterator[FileResult]:
    def died(path: str, detail: str) -> FileResult:
        return FileResult(path, problem=("failed", "worker-died", detail))

    yield from map_ordered(partial(chunk_file, config=config), files, jobs, on_death=died)


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


def _summary_dict(
    summary: Summary,
    stats: FallbackStats,
    elapsed: float,
    args: argparse.Namespace,
    strategy: Strategy,
    root: str,
) -> dict[str, Any]:
    import numpy as np

    sizes = np.asarray(summary.sizes, dtype=np.int64)
    pct: dict[str, float] = {}
    if sizes.size:
        for q in (5, 50, 90, 99):
            pct[f"p{q}"] = int(np.percentile(sizes, q))
        pct["max"] = int(sizes.max())
        pct["mean"] = round(float(sizes.mean()), 1)
    mb = summary.nbytes / 1e6
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    files = summary.report.ok
    return {
        "strategy": strategy.name,
        "params": dict(strategy.params),
        "size": strategy.budget,
        "unit": strategy.unit,
        "jobs": args.jobs,
        "root": root,
        "files": files,
        **summary.report.files_dict(),
        "mb": round(mb, 2),
        "seconds": round(elapsed, 2),
        "files_per_s": round(files / elapsed, 1) if elapsed else None,
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
        "errors": [list(x) for x in summary.report.failed],
        "peak_rss_mb": {"main": round(self_rss, 1), "largest_worker": round(child_rss, 1)},
        "out": args.out,
    }


def format_summary(s: dict[str, Any]) -> str:
    """The human-readable summary printed at the end of a run."""
    params = ", ".join(f"{k}={v}" for k, v in s["params"].items())
    lines = [
        f"chunklab chunk --strategy {s['strategy']} ({params}) --jobs {s['jobs']}",
        *report_lines(s),
        f"  kinds     {', '.join(f'{k} {v:,}' for k, v in sorted(s['kinds'].items())) or '-'}",
        f"  data      {s['mb']:,.1f} MB in {s['seconds']:.1f} s: "
        f"{s['files_per_s'] or 0:,.1f} files/s, {s['mb_per_s'] or 0:.2f} MB/s",
        f"  chunks    {s['chunks']:,}",
    ]
    if s["chunk_size"]:
        cs = s["chunk_size"]
        lines.append(
            f"  size      {s['unit']} "
            + "p5 {p5}  p50 {p50}  p90 {p90}  p99 {p99}  max {max}  mean {mean}".format(**cs)
        )
    if s["size"] is not None:
        unmarked = s["over_budget"] - s["over_budget_marked_oversize"]
        lines.append(
            f"  over      {counted(s['over_budget'], 'chunk')} over {s['size']} {s['unit']} "
            f"({s['over_budget_marked_oversize']:,} "
            + (
                f"single indivisible {plural(s['over_budget_marked_oversize'], 'line')} marked oversize"
                if s["unit"] == "chars"
                else "marked oversize"
            )
            + (f", {unmarked:,} NOT marked)" if unmarked else ")")
        )
    lines.append(f"  fallback  {counted(s['fallback_files'], 'file')} ({s['fallback_rate']:.2%})")
    for reason, count in s["fallback_reasons"]:
        lines.append(f"    {count:6,}  {reason}")
    if s["fallback_rate"] > 0.05:
        lines.append("  WARNING: fallback rate over 5%: the structural chunker is not seeing structure")
    rss = s["peak_rss_mb"]
    lines.append(f"  peak RSS  main {rss['main']:.0f} MB, largest worker {rss['largest_worker']:.0f} MB")
    if s["out"]:
        lines.append(f"  wrote     {s['out']}")
    return "\n".join(lines)
