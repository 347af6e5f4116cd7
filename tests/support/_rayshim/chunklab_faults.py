"""Test scaffolding: holds a Ray worker inside a pipeline stage so that a test can kill it there.

Used by tests/integration/test_ray_faults.py and benchmarks/ray_faults.py only, as the
``worker_process_setup_hook`` of the driver's ``runtime_env`` (``"chunklab_faults.install"``;
tests/support/_rayshim is on the workers' PYTHONPATH). :func:`install` wraps the chunk stage
(:func:`chunklab.ingest.stages.chunk_items`) and the embed stage (``Embedder.__call__``) in each Ray
worker; the engine itself is unchanged.

The plan is a JSON file ``$CHUNKLAB_FAULTS/plan.json`` read at every call, so one module-wide
cluster serves every scenario: ``{"stage": "chunk" | "embed", "hold": seconds, "every": bool}``.
In that stage a worker writes the marker ``{stage}-{node id}-{pid}`` (the test kills that node
when it appears) and sleeps ``hold`` seconds: on the first call per node, or on every call
with ``every`` (a slow run, to kill its driver in the middle). No plan file: nothing happens.
"""

from __future__ import annotations

import functools
import json
import os
import time
from typing import Any


def _hold(stage: str) -> None:
    folder = os.environ.get("CHUNKLAB_FAULTS")
    if not folder:
        return
    try:
        with open(os.path.join(folder, "plan.json"), encoding="utf-8") as f:
            plan = json.load(f)
    except (FileNotFoundError, ValueError):
        return
    if plan.get("stage") != stage:
        return
    import ray

    node = ray.get_runtime_context().get_node_id()
    first = not any(n.startswith(f"{stage}-{node}-") for n in os.listdir(folder))
    if first or plan.get("every"):
        with open(os.path.join(folder, f"{stage}-{node}-{os.getpid()}"), "a", encoding="utf-8") as f:
            f.write(f"{time.time()}\n")
        time.sleep(float(plan.get("hold", 0)))


def install() -> None:
    """Wrap the chunk and embed stages of this worker process (the setup hook)."""
    from chunklab.ingest import stages

    chunk_items = stages.chunk_items
    call = stages.Embedder.__call__

    @functools.wraps(chunk_items)
    def held_chunk_items(*args: Any, **kwargs: Any) -> Any:
        _hold("chunk")
        return chunk_items(*args, **kwargs)

    @functools.wraps(call)
    def held_call(self: Any, batch: Any) -> Any:
        _hold("embed")
        return call(self, batch)

    stages.chunk_items = held_chunk_items
    stages.Embedder.__call__ = held_call  # type: ignore[method-assign]


# -- the driver's side (the test and the benchmark) ----------------------------------------
SHIM = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(SHIM)))
#: how often the GCS checks a node, and after how many misses it declares it dead (~2 s, not 30)
HEALTH = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}


def start_cluster(folder: str, nodes: int = 3) -> Any:
    """A head node without CPUs and ``nodes`` worker nodes of 1 CPU, this process connected to it.

    ``folder`` is where plans and markers go (``$CHUNKLAB_FAULTS`` in every Ray process). The
    workers get tests/support/_rayshim (the rfc3987 shim, this hook) and the repository on PYTHONPATH.
    """
    import logging

    import ray
    from ray.cluster_utils import Cluster

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [SHIM, REPO, os.environ.get("PYTHONPATH")]))
    os.environ["CHUNKLAB_FAULTS"] = folder
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    head = {"num_cpus": 0, "include_dashboard": False, "_system_config": HEALTH}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    for _ in range(nodes):
        add_node(cluster)
    cluster.wait_for_nodes()
    connect_driver(cluster.address)
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    return cluster


def connect_driver(address: str) -> None:
    """Join the cluster as a driver whose workers run :func:`install` (the engine then uses this Ray)."""
    import logging

    import ray

    hook = {"worker_process_setup_hook": "chunklab_faults.install"}
    ray.init(address=address, runtime_env=hook, logging_level=logging.WARNING, log_to_driver=False)


def set_plan(folder: str, stage: str | None, hold: float = 0.0, every: bool = False) -> None:
    """Hold workers in ``stage`` (None: no plan) and forget the markers of the last plan."""
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    if stage is not None:
        tmp = os.path.join(folder, ".plan")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"stage": stage, "hold": hold, "every": every}, f)
        os.replace(tmp, os.path.join(folder, "plan.json"))


def marked_node(folder: str, stage: str, timeout: float = 400.0) -> str:
    """The id of the first node that a worker marked in ``stage`` (waits for one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        marks = sorted(n for n in os.listdir(folder) if n.startswith(f"{stage}-"))
        if marks:
            return marks[0].split("-")[1]
        time.sleep(0.05)
    raise TimeoutError(f"no worker entered the {stage} stage within {timeout} s")


def kill_node(cluster: Any, node_id: str) -> None:
    """SIGKILL every process of the worker node ``node_id`` (a crash, not a drain)."""
    for node in cluster.worker_nodes:
        if node.node_id == node_id:
            cluster.remove_node(node, allow_graceful=False)
            return
    raise LookupError(f"node {node_id} is not a worker node of the cluster")


def lose_a_node_during(
    cluster: Any, folder: str, stage: str, run: Any, hold: float = 3.0
) -> tuple[Any, float]:
    """Run ``run()`` in a thread, kill the first node a worker entered ``stage`` on, re-add a node.

    Returns what ``run()`` returned and the seconds from the kill to the end of the run.
    """
    import threading

    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = run()
        except BaseException as exc:  # handed to the caller
            result["error"] = exc

    set_plan(folder, stage, hold=hold)
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    try:
        kill_node(cluster, marked_node(folder, stage))
        killed = time.monotonic()
        thread.join(timeout=600)
        recovered = time.monotonic() - killed
    finally:
        set_plan(folder, None)
        add_node(cluster)
    if thread.is_alive():
        raise TimeoutError(f"the run did not finish within 600 s of losing a node in the {stage} stage")
    if "error" in result:
        raise result["error"]
    return result["value"], recovered


def kill_the_driver_during(
    cluster: Any, folder: str, sources: list[str], options: dict[str, Any], staged: int = 2
) -> int:
    """Run the engine in a child driver; SIGKILL it once it has staged ``staged`` batches.

    ``options`` are the engine's (with ``spec``: the strategy as {"name", params...}, and
    ``out``); returns the rows the killed run had staged. The child parks itself (sleeps) right
    after its ``staged``-th batch is committed and says so with a marker file, so the kill
    always lands mid-run with exactly that many batches staged, however loaded the machine is
    (polling the staging folder alone raced the driver: on a busy machine it could stage every
    batch between two polls).
    """
    import signal
    import subprocess
    import sys

    import pyarrow.parquet as pq

    from chunklab.ingest.sinks.parquet import STAGING

    set_plan(folder, None)
    parked = os.path.join(folder, "driver-parked")
    args = f"{cluster.address!r}, {sources!r}, {json.dumps(options)!r}, {staged!r}, {parked!r}"
    code = f"import chunklab_faults as f; f.child_driver({args})"
    child = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ))
    staging = os.path.join(options["out"], STAGING)
    try:
        while not os.path.exists(parked):
            if child.poll() is not None:
                raise RuntimeError(f"the driver ended (exit {child.returncode}) before it was killed")
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        set_plan(folder, None)
        if child.poll() is None:
            child.kill()
    names = [n for n in os.listdir(staging) if n.endswith(".parquet") and not n.startswith(".")]
    return sum(pq.read_metadata(os.path.join(staging, n)).num_rows for n in names)


def compare(table: Any, clean: Any) -> dict[str, Any]:
    """How a run's rows differ from a clean run's: ids missing, extra, duplicated; vectors equal."""
    import numpy as np

    ids, want = table.column("id").to_pylist(), clean.column("id").to_pylist()
    out: dict[str, Any] = {
        "missing": len(set(want) - set(ids)),
        "extra": len(set(ids) - set(want)),
        "duplicated": len(ids) - len(set(ids)),
    }
    a, b = table.sort_by("id"), clean.sort_by("id")
    same = not any(out.values()) and all(
        a.column(c).to_pylist() == b.column(c).to_pylist()
        for c in ("doc_id", "start", "end", "text", "metadata")
    )
    out["rows_equal"] = same
    out["vectors_equal"] = same and bool(
        np.allclose(
            np.asarray(a.column("vector").to_pylist()), np.asarray(b.column("vector").to_pylist()), atol=1e-6
        )
    )
    return out


def add_node(cluster: Any, tries: int = 3) -> None:
    """Start a worker node of 1 CPU (again, when a loaded machine makes it miss Ray's start-up deadline)."""
    for attempt in range(tries):
        try:
            cluster.add_node(num_cpus=1)
            return
        except Exception:  # Ray raises a bare Exception when a node starts too slowly
            if attempt == tries - 1:
                raise


def child_driver(
    address: str, sources: list[str], options_json: str, park_after: int = 0, parked: str = ""
) -> None:
    """A driver process (``python -c``) running the Ray engine on the cluster; the test kills it.

    With ``park_after``, the driver stops for good right after committing that many staged
    batches and creates the file ``parked`` (the signal for the test to kill it).
    """
    from chunklab.ingest import get_engine
    from chunklab.ingest.sinks.parquet import ParquetSink

    if park_after:
        write = ParquetSink._write
        count = [0]

        def parking_write(self: Any, rows: Any) -> None:
            write(self, rows)
            count[0] += 1
            if count[0] >= park_after:
                with open(parked, "w", encoding="utf-8") as f:
                    f.write(f"{os.getpid()}\n")
                time.sleep(3600)  # killed here

        ParquetSink._write = parking_write  # type: ignore[method-assign]
    connect_driver(address)
    options = json.loads(options_json)
    spec = options.pop("spec")
    from chunklab.chunkers.catalog import StrategySpec

    get_engine("ray")(sources, strategy=StrategySpec.of(spec.pop("name"), **spec), **options)
