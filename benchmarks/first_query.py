"""First query from a cold process: ``chunklab search STORE QUERY`` on a store of 10,000 chunks.

Issue 41's targets: under 2 s with the static model, under 4 s with MiniLM. Each run is a fresh
interpreter (``python -m chunklab.cli search``), so it pays for every import, opening the store,
loading the model and the query itself; each run asks a different question, so no embedding
cache answers it. Three commands are timed, ``--runs`` times each, interleaved:

* ``python``: an interpreter that does nothing (the floor of any command);
* ``imports``: the imports ``chunklab search`` makes before it opens the store (its parser,
  the store modules with Chroma, the encoder module), nothing opened;
* ``search``: the whole first query, printed as JSON.

Wall and CPU (user + system of the child) are recorded per run, with the load average before
and after: on a shared machine the wall clock is the CPU time stretched by the load, and the
CPU time is the figure that carries from one machine state to another.

Every checkout shares one cache (``$CHUNKLAB_CACHE``, else ``--work``/cache), where the static
model is distilled once; before its timed runs each checkout answers one untimed query per
store, which writes its ``.pyc`` files (an installed package has them) and leaves no trace
the timed queries could use (they are all different).

The stores are built once under ``--work`` (the first ``--chunks`` recursive chunks, 480
characters, of the standard library's top-level modules) and reused. The static store holds
the static model's vectors. Embedding 10,000 chunks with MiniLM takes hours on the shared
2-core machine, so the MiniLM store's **stored vectors are synthetic** (seeded random unit
vectors, 384-d, as in ``benchmarks/query_latency.py``), written through ``ChunkStore.add``
with the MiniLM encoder recorded: the query is embedded by the real MiniLM, and what a
first query costs (imports, opening the store and its HNSW index, loading the model,
embedding one query, the search) does not depend on the stored values.
``--repo PATH=LABEL`` times another checkout's package with the same stores (the ``before``
numbers: ``git archive BASE chunklab | tar -x -C /tmp/before``).

    OMP_NUM_THREADS=1 python benchmarks/first_query.py --runs 7
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
TARGETS = {"static": 2.0, "minilm": 4.0}
TOPICS = (
    "parse a date string",
    "read a zip archive",
    "quote a shell argument",
    "format a traceback",
    "compare two sequences",
    "open a temporary file",
    "decode base64 data",
    "walk a directory tree",
    "send an email message",
    "lock a thread",
    "compress with gzip",
    "read a config file",
)
NOTE = (
    "wall is the CPU time stretched by the machine's load (load_1min, before and after each round); "
    "cpu_s (user + system of the child) carries between machine states. The MiniLM store's stored "
    "vectors are synthetic; its queries are embedded by the real model (module docstring)."
)
IMPORTS = """
import contextlib
import chunklab.cli as cli
try:
    cli.build_parser("search")
except TypeError:  # a checkout whose parser registers every subcommand
    cli.build_parser()
try:
    from chunklab.commands._lean import lean_imports
except ImportError:  # a checkout from before it
    lean_imports = contextlib.nullcontext
with lean_imports():
    import chunklab.retrieval.chroma.location
import chunklab.embed
"""


def build_store(store: Path, model: str, n_chunks: int) -> int:
    """The store of the first ``n_chunks`` chunks embedded by ``model`` (built once); its size."""
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.documents import load_document
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    if (store / "chroma.sqlite3").is_file():
        existing = ChunkStore(path=store, create=False)
        count = existing.count()
        existing.close()
        if count == n_chunks:
            return count
        raise SystemExit(f"{store} holds {count} chunks, not {n_chunks}: remove it to rebuild")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    strategy = get_strategy("recursive", size=480, overlap=0)
    chunks = []
    for path in sorted(stdlib.glob("*.py")):
        chunks += strategy(load_document(path, root=stdlib))
        if len(chunks) >= n_chunks:
            break
    if len(chunks) < n_chunks:
        raise SystemExit(f"the standard library gave {len(chunks)} chunks, fewer than {n_chunks}")
    encoder = Encoder(model)
    target = ChunkStore(path=store, encoder=encoder)
    vectors = None
    if model == "minilm":  # seeded random unit vectors (see the module docstring)
        rng = np.random.default_rng(41)
        vectors = rng.standard_normal((n_chunks, encoder.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    target.add(chunks[:n_chunks], show_progress=True, vectors=vectors)
    count = target.count()
    target.close()
    return count


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Wall and child CPU seconds of one cold run of ``command`` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}


def summary(values: list[float]) -> dict[str, float]:
    """Median, min, max and the interquartile spread of ``values``."""
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "iqr": round(q[2] - q[0], 3),
    }


def measure(repo: Path, stores: dict[str, Path], runs: int, label: str | None = None) -> dict[str, object]:
    """``runs`` cold runs of each command, interleaved, for the package in ``repo``."""
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(repo),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"),
        TOKENIZERS_PARALLELISM="false",
    )
    py = sys.executable
    rows: dict[str, list[dict[str, float]]] = {"python": [], "imports": []}
    rows.update({f"search_{m}": [] for m in stores})
    for store in stores.values():  # untimed: writes the checkout's .pyc files, as an install has them
        timed([py, "-m", "chunklab.cli", "search", str(store), "warm-up", "--k", "1"], repo, env)
    loads = [os.getloadavg()[0]]
    for i in range(runs):
        rows["python"].append(timed([py, "-c", "pass"], repo, env))
        rows["imports"].append(timed([py, "-c", IMPORTS], repo, env))
        for model, store in stores.items():
            query = f"{TOPICS[i % len(TOPICS)]} (run {i} {time.time_ns()})"  # never in a cache
            command = [py, "-m", "chunklab.cli", "search", str(store), query, "--k", "5", "--json"]
            rows[f"search_{model}"].append(timed(command, repo, env))
        loads.append(os.getloadavg()[0])
    out: dict[str, object] = {"repo": str(repo), "label": label or _commit(repo), "load_1min": loads}
    for name, runs_of in rows.items():
        out[name] = {
            "wall_s": summary([r["wall_s"] for r in runs_of]),
            "cpu_s": summary([r["cpu_s"] for r in runs_of]),
            "runs": runs_of,
        }
    return out


def _commit(repo: Path) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True)
    return (
        (done.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")) if done.returncode == 0 else None
    )


def main(argv: list[str] | None = None) -> int:
    """Build the stores if needed, time the cold runs, write ``benchmarks/results/first_query.json``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="cold runs of each command (default 7)")
    parser.add_argument("--chunks", type=int, default=10_000, help="chunks in each store (default 10000)")
    parser.add_argument("--models", default="static,minilm", help="comma-separated: static, minilm")
    parser.add_argument(
        "--work", type=Path, default=Path("/tmp/chunklab-first-query"), help="where the stores go"
    )
    parser.add_argument(
        "--repo",
        action="append",
        help="PATH or PATH=LABEL: a checkout to time (repeatable; default: this one)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "first_query.json")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.chunks < 1:
        raise SystemExit("--runs and --chunks must be positive")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in TARGETS]
    if unknown:
        raise SystemExit(f"--models: unknown {unknown}; choose from {sorted(TARGETS)}")
    stores = {m: args.work / f"{m}-{args.chunks}" for m in models}
    os.environ.setdefault("CHUNKLAB_CACHE", str(args.work / "cache"))  # one static model for every checkout
    sizes = {m: build_store(s, m, args.chunks) for m, s in stores.items()}
    result = {
        "what": "cold-process first query: python -m chunklab.cli search STORE QUERY --k 5 --json",
        "note": NOTE,
        "chunks": sizes,
        "targets_wall_s": {m: TARGETS[m] for m in models},
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "measured": [
            measure(Path(path).resolve(), stores, args.runs, label or None)
            for path, _, label in (r.partition("=") for r in (args.repo or [str(ROOT)]))
        ],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for m in result["measured"]:
        line = ", ".join(
            f"{name} {m[name]['wall_s']['median']:.2f} s wall / {m[name]['cpu_s']['median']:.2f} s CPU"
            for name in ("python", "imports", *(f"search_{x}" for x in models))
        )
        print(f"{m['label']}: {line} (load {m['load_1min'][0]:.1f} -> {m['load_1min'][-1]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
