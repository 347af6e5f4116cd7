"""Faults on a 3-node Ray cluster on one machine: what is injected, what survives, what is lost or doubled.

The test bed of tests/integration/test_ray_faults.py with more data: a ``ray.cluster_utils.Cluster`` (a
head without CPUs, three worker nodes of 1 CPU), the Ray engine unchanged, the static encoder,
Parquet output; the faults come from the test scaffolding tests/support/_rayshim/chunklab_faults.py.
Scenarios, each ``--trials`` times:

* ``node lost in chunk stage`` / ``node lost in embed stage``: the node a worker is chunking
  (embedding) on is SIGKILLed; the run must complete with exactly the clean run's rows;
* ``driver killed``: the driver process is SIGKILLed mid-run, then the same run is started
  again; it must reach the clean run's rows, embedding only what the killed run had not staged.

Per scenario: faults injected, runs that survived (completed with the clean run's rows), ids
lost, ids duplicated, and the time to recover (node: from the kill to the end of the run,
against the clean run's time; driver: the re-run's time). Results go to
``benchmarks/results/ray_faults.json``. Run with ``nice`` (``make faults-ray``):

    nice -n 10 .venv/bin/python benchmarks/ray_faults.py --files 300 --trials 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
SHIM = Path(__file__).resolve().parents[1] / "tests" / "support" / "_rayshim"
SPEC = {"name": "recursive", "size": 240}


def write_corpus(folder: Path, files: int) -> None:
    """``files`` Markdown notes of 12 paragraphs (a few chunks each), the same every run."""
    for i in range(files):
        paras = [
            f"Note {i}, part {j}: the depot at dock {i * 13 + j} ships {j + 3} parcels a day "
            f"to {['Lyon', 'Porto', 'Gdansk', 'Turku'][(i + j) % 4]}, weather permitting."
            for j in range(12)
        ]
        (folder / f"note{i:04d}.md").write_text(
            f"# Note {i}\n\n" + "\n\n".join(paras) + "\n", encoding="utf-8"
        )


def main(argv: list[str] | None = None) -> int:
    """Run the scenarios and write the JSON; exit 1 when a run lost or doubled a row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300, help="notes in the corpus (default 300)")
    parser.add_argument("--trials", type=int, default=2, help="trials per scenario (default 2)")
    parser.add_argument("--batch-size", type=int, default=64, help="chunks per embedding batch (default 64)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(SHIM))
    import chunklab_faults as faults

    from chunklab.chunkers.catalog import StrategySpec
    from chunklab.ingest import get_engine
    from chunklab.ingest.sinks.parquet import read_dataset

    options: dict[str, Any] = {
        "model": "static",
        "workers": 3,
        "batch_size": args.batch_size,
        "progress": False,
    }
    spec = dict(SPEC)
    strategy = StrategySpec.of(spec.pop("name"), **spec)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="chunklab-faults-") as tmp:
        root = Path(tmp)
        (root / "notes").mkdir()
        (root / "plan").mkdir()
        write_corpus(root / "notes", args.files)
        sources = [str(root / "notes")]
        start = time.monotonic()
        cluster = faults.start_cluster(str(root / "plan"), nodes=3)
        cluster_seconds = time.monotonic() - start

        def ingest(out: Path) -> Any:
            return get_engine("ray")(sources, strategy=strategy, out=out, **options)

        start = time.monotonic()
        clean_report = ingest(root / "clean")
        clean_seconds = time.monotonic() - start
        clean = read_dataset(root / "clean")
        print(f"clean run: {clean.num_rows} chunks in {clean_seconds:.1f} s", flush=True)
        runs: list[dict[str, Any]] = []
        facts = {
            "chunks": clean.num_rows,
            "documents": clean_report.documents,
            "cluster_start_seconds": round(cluster_seconds, 1),
            "clean_seconds": round(clean_seconds, 1),
        }

        def record(row: dict[str, Any]) -> None:
            print(json.dumps(row), flush=True)
            runs.append(row)
            save(args, {**facts, "total_seconds": round(time.monotonic() - t0, 1)}, runs)

        for trial in range(args.trials):
            for stage in ("chunk", "embed"):
                out = root / f"{stage}-{trial}"
                start = time.monotonic()
                row: dict[str, Any] = {"scenario": f"node lost in {stage} stage", "trial": trial}
                try:
                    report, recovered = faults.lose_a_node_during(
                        cluster, str(root / "plan"), stage, lambda out=out: ingest(out)
                    )
                    row.update(completed=True, seconds=round(time.monotonic() - start, 1))
                    row.update(recover_seconds=round(recovered, 1), failed_documents=len(report.failed))
                    row.update(faults.compare(read_dataset(out), clean))
                except Exception as exc:  # a run that did not survive is a result, not a crash
                    row.update(completed=False, error=f"{type(exc).__name__}: {exc}"[:300])
                record(row)
            out = root / f"driver-{trial}"
            row = {"scenario": "driver killed", "trial": trial}
            try:
                staged = faults.kill_the_driver_during(
                    cluster, str(root / "plan"), sources, {**options, "spec": SPEC, "out": str(out)}
                )
                start = time.monotonic()
                again = ingest(out)
                row.update(completed=True, recover_seconds=round(time.monotonic() - start, 1))
                row.update(staged_before_kill=staged, embedded_on_rerun=again.embedded)
                row.update(embedded_only_the_rest=again.embedded == clean.num_rows - staged)
                row.update(faults.compare(read_dataset(out), clean))
            except Exception as exc:
                row.update(completed=False, error=f"{type(exc).__name__}: {exc}"[:300])
            record(row)
        import ray

        ray.shutdown()
        cluster.shutdown()
    return 0 if all(t["survived"] == t["injected"] for t in summarize(runs)) else 1


def save(args: argparse.Namespace, facts: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    """Write the JSON (after every run, so that a benchmark cut short still leaves its results)."""
    table = summarize(runs)
    result = {
        "files": args.files,
        "strategy": SPEC,
        "model": "static",
        "nodes": "head (0 CPUs) + 3 worker nodes of 1 CPU, one machine",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_after": [round(x, 2) for x in os.getloadavg()],
        **facts,
        "table": table,
        "runs": runs,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ray_faults.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per scenario: injected, survived, lost, duplicated, the time to recover (max)."""
    table = []
    for scenario in dict.fromkeys(r["scenario"] for r in runs):
        rows = [r for r in runs if r["scenario"] == scenario]
        ok = [
            r
            for r in rows
            if r.get("completed") and r.get("vectors_equal") and r.get("embedded_only_the_rest", True)
        ]
        table.append(
            {
                "scenario": scenario,
                "injected": len(rows),
                "survived": len(ok),
                "lost": sum(r.get("missing", 0) for r in rows),
                "duplicated": sum(r.get("duplicated", 0) for r in rows),
                "recover_seconds_max": max((r.get("recover_seconds", 0) for r in rows), default=0),
            }
        )
    return table


if __name__ == "__main__":
    raise SystemExit(main())
