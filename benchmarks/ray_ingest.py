"""The Ray engine against the local engine: end-to-end ingest wall time, start-up, chunks/s.

Corpus: the installed-files corpus (``chunklab.datasets.code_corpus()``: the interpreter's
standard library and site-packages), or the first ``--files`` of a fixed random sample of it
(seed 0). Each run chunks (structural strategy), embeds with the static model and writes
Parquet shards into a fresh folder, so all four runs do the same work:

* local engine with 1 and 2 worker processes;
* Ray engine with a fresh local cluster of 1 and 2 CPUs (1 and 2 embedding actors, chunking
  tasks capped at the same number); its start-up (``ray.init``) is reported separately.

The target: Ray with 2 workers within 1.5x the local engine's wall time with 2 workers. The
load average is printed before and after, since the machine may be shared. Run with ``nice``:

    nice -n 10 .venv/bin/python benchmarks/ray_ingest.py --files 2000

Results go to ``benchmarks/results/ray_ingest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import threading
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
# Ray's helper processes skip an unused, slow import (see tests/support/_rayshim/rfc3987_syntax.py), so
# that a local cluster starts within the raylet's deadline on a loaded 2-core machine.
SHIM = Path(__file__).resolve().parents[1] / "tests" / "support" / "_rayshim"


def corpus_paths(files: int | None) -> list[str]:
    """Paths of the installed-files corpus, or of a fixed sample of ``files`` of them."""
    from chunklab.datasets.corpora.code import code_corpus

    corpus = code_corpus()
    if files is not None and files < len(corpus):
        corpus = corpus.sample(files, seed=0)
    return [f.path for f in corpus]


def run(engine: str, paths: list[str], workers: int, strategy: str) -> dict[str, float | int | str]:
    """One ingest into a fresh Parquet folder; its report as a dict."""
    from chunklab.ingest import get_engine

    tree = TreeSampler()
    with tree, tempfile.TemporaryDirectory(prefix=f"chunklab-{engine}-") as tmp:
        report = get_engine(engine)(
            paths,
            strategy=strategy,
            model="static",
            out=Path(tmp) / "shards",
            workers=workers,
            progress=False,
        )
    cpu = tree.cpu_seconds()
    row = {
        "engine": engine,
        "workers": workers,
        "documents": report.documents,
        "chunks": report.chunks,
        "skipped": len(report.skipped),
        "failed": len(report.failed),
        "seconds": round(report.seconds, 2),
        # the local engine's pool is lazy: its workers start with the first task, inside
        # ``seconds``, so it has no separate start-up to report (None, not a misleading 0)
        "startup_seconds": round(report.startup_seconds, 2) if engine == "ray" else None,
        "after_startup_seconds": round(
            report.seconds - (report.startup_seconds if engine == "ray" else 0), 2
        ),
        "chunks_per_second": round(report.chunks_per_second, 1),
        # CPU seconds of this process and every descendant (pool workers, the raylet, Ray's workers
        # and agents), sampled twice a second: a rate per core that a loaded machine does not skew
        "cpu_seconds": round(cpu, 1),
        "chunks_per_cpu_second": round(report.chunks / cpu, 1) if cpu else None,
        "max_rss_mb_driver": tree.max_rss_mb(driver=True),
        "max_rss_mb_worker": tree.max_rss_mb(driver=False),
        "largest_worker": tree.largest_worker(),
    }
    print(json.dumps(row), flush=True)
    return row


class TreeSampler:
    """CPU time and peak memory of this process and its descendants, sampled in a thread."""

    def __init__(self, every: float = 0.5) -> None:
        import psutil

        self._psutil, self._every = psutil, every
        self._me = psutil.Process()
        self._first: dict[tuple[int, float], float] = {}
        self._last: dict[tuple[int, float], float] = {}
        self._rss: dict[tuple[int, float], tuple[str, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._sample()
        self._first = dict(self._last)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self._sample()

    def _sample(self) -> None:
        for p in [self._me, *self._me.children(recursive=True)]:
            try:
                with p.oneshot():
                    key, t, rss, name = (p.pid, p.create_time()), p.cpu_times(), p.memory_info().rss, p.name()
                    if p.pid != self._me.pid:
                        name = " ".join(p.cmdline()[:1]) if name.startswith("python") else name
            except self._psutil.Error:
                continue
            self._last[key] = t.user + t.system
            self._rss[key] = (name, max(rss, self._rss.get(key, ("", 0))[1]))

    def cpu_seconds(self) -> float:
        """CPU seconds spent between enter and exit by the whole process tree."""
        return sum(v - self._first.get(k, 0.0) for k, v in self._last.items())

    def max_rss_mb(self, driver: bool) -> float:
        """Peak resident memory of this process, or of the largest other process in the tree."""
        values = [rss for (pid, _), (_, rss) in self._rss.items() if (pid == self._me.pid) == driver]
        return round(max(values, default=0) / 2**20, 1)

    def largest_worker(self) -> str:
        """The name of the descendant with the largest peak memory."""
        others = [(rss, name) for (pid, _), (name, rss) in self._rss.items() if pid != self._me.pid]
        return max(others, default=(0, ""))[1]


def main() -> int:
    """Run the four ingests and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--files", type=int, default=2000, help="sample size (0: the whole corpus; default 2000)"
    )
    parser.add_argument("--strategy", default="structural", help="catalog strategy (default structural)")
    parser.add_argument("--workers", default="1,2", help="worker counts to run (default 1,2)")
    parser.add_argument(
        "--no-shim", action="store_true", help="start Ray without tests/support/_rayshim on PYTHONPATH"
    )
    args = parser.parse_args()
    if not args.no_shim:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SHIM), os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    paths = corpus_paths(args.files or None)
    counts = [int(w) for w in args.workers.split(",")]
    load_before = os.getloadavg()
    print(f"{len(paths)} files; load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}")
    t0 = time.perf_counter()
    rows = [run(engine, paths, w, args.strategy) for engine in ("local", "ray") for w in counts]
    load_after = os.getloadavg()
    by = {(r["engine"], r["workers"]): r for r in rows}
    top = max(counts)
    local, ray = by[("local", top)], by[("ray", top)]
    summary = {
        "files": len(paths),
        "corpus": "installed-files corpus" + (f" (sample of {len(paths)}, seed 0)" if args.files else ""),
        "strategy": args.strategy,
        "model": "static",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "total_seconds": round(time.perf_counter() - t0, 1),
        "runs": rows,
        "ratio_ray_over_local": round(ray["seconds"] / local["seconds"], 2),
        "ratio_ray_over_local_after_startup": round(
            ray["after_startup_seconds"] / local["after_startup_seconds"], 2
        ),
    }
    print(
        f"\nworkers={top}: local {local['seconds']}s, ray {ray['seconds']}s (start-up "
        f"{ray['startup_seconds']}s): "
        f"ray/local {summary['ratio_ray_over_local']}x, after start-up "
        f"{summary['ratio_ray_over_local_after_startup']}x "
        f"(target <= 1.5x); load average after {load_after[0]:.2f}"
    )
    for r in rows:
        startup = "in the run" if r["startup_seconds"] is None else f"{r['startup_seconds']}s"
        print(
            f"  {r['engine']:5} workers={r['workers']}: {r['chunks_per_second']:>8} chunks/s after start-up, "
            f"{r['seconds']}s wall, start-up {startup}, {r['chunks_per_cpu_second']} "
            "chunks/CPU-s"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ray_ingest.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
