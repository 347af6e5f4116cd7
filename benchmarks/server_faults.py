"""Faults on a Chroma server, measured: restarts mid-ingest, concurrent writers, query load, a live rebuild.

Every scenario runs against a real ``chroma run`` on a loopback port (tests/support/chroma_process.py)
and ``chunklab index --server`` in subprocesses, exactly as a user runs it:

* **restart** (seeded trials): the server is SIGKILLed at a random moment after the first
  chunks arrived and started again on the same path ``--down`` seconds later; the ingest rides
  through on retries. Outcome, time to recover (kill until the server answered again, and the
  extra wall time over a clean run) and the final collection against a clean run's
  (missing, extra, changed records: ids, texts, metadata, vectors).
* **killed** (``--trials N --seed S`` seeded trials): the server is SIGKILLed when a random share
  of the corpus has arrived, the ingest stops (exit 75 past a short retry budget), the server
  starts again on the same path and the same ``index`` is run again; when that re-run reports
  the collection damaged (a vector index the server cannot load: the one-line error of
  :mod:`chunklab.retrieval.chroma.mend`), ``index --repair`` runs. Per trial: whether the
  damaged-segment state was hit, what the repair did (its one line), and whether the final
  collection has the clean run's ids and digest (ids, texts, metadata, float32 vectors).
* **down past the budget**: the server stays down longer than ``--retry-budget``; the run
  must exit 75 with the one-line message, and a re-run after the restart must complete.
* **three writers**: three ``index`` processes at once into one collection (folders a, b and
  both): lost and extra records against a clean run.
* **query load**: ``--clients`` processes query ``--chunks`` records for ``--seconds`` each
  (vectors: RANDOM unit vectors of dimension 256, labelled so in the JSON: the load is Chroma's
  HNSW search and the kit's client path, not a model); p50/p95/p99 and errors.
* **rebuild under reads**: a reader queries while ``index --clear`` rebuilds the collection
  with another chunker (``--rebuilds`` times, alternating two chunkers); every answer must
  come from one configuration, and no query may fail (the rebuild switches the store's alias
  to the new generation, :mod:`chunklab.retrieval.chroma.aliases`).

Run ``make faults-server`` (or ``--quick`` for small sizes); results go to
benchmarks/results/server_faults.json. ``--only rebuild`` (repeatable) re-measures only the
scenarios named and replaces their rows in the existing file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))
from chroma_process import ChromaServer  # noqa: E402  (test scaffolding shared with the tests)

sys.path.insert(0, str(REPO / "benchmarks"))
from server_load import query_load  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
STRATEGY = ["--strategy", "recursive", "--size", "300"]
#: the scenarios, in the order they run (``--only`` picks some)
SCENARIOS = ("restart", "killed", "budget", "writers", "rebuild", "load")


def write_corpus(root: Path, docs: int, prefix: str = "") -> Path:
    """Markdown notes of a few sections each, deterministic."""
    rng = random.Random(prefix + str(docs))
    words = "queue retry backoff shard replica index vector chunk server client budget restart".split()
    root.mkdir(parents=True, exist_ok=True)
    for d in range(docs):
        parts = []
        for s in range(5):
            text = " ".join(rng.choice(words) for _ in range(60))
            parts.append(f"## {prefix}Section {s}\n\n{prefix}note {d}: {text}.")
        (root / f"{prefix}note-{d:04d}.md").write_text(f"# Note {d}\n\n" + "\n\n".join(parts) + "\n")
    return root


def index_cmd(url: str, collection: str, paths: list[Path], *more: str) -> list[str]:
    """The ``chunklab index --server`` command line."""
    head = [sys.executable, "-m", "chunklab.cli", "index", *map(str, paths), "--server", url]
    return [*head, "--collection", collection, "--model", "static", *STRATEGY, "--no-progress", *more]


def env() -> dict[str, str]:
    """This tree's chunklab, one torch thread."""
    return {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}


def snapshot(url: str, collection: str, exact: bool = False) -> dict[str, tuple[Any, ...]]:
    """id -> (text, metadata, vector to 5 decimals, or ``exact``: its float32 bytes) of every record."""
    import chromadb

    port = int(url.rsplit(":", 1)[1])
    coll = chromadb.HttpClient(host="127.0.0.1", port=port).get_collection(collection)
    out: dict[str, tuple[Any, ...]] = {}
    offset = 0
    while True:
        got = coll.get(include=["documents", "metadatas", "embeddings"], limit=2000, offset=offset)
        if not got["ids"]:
            return out
        for cid, doc, meta, vec in zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"]):
            vector = np.asarray(vec, dtype=np.float32)
            kept = vector.tobytes().hex() if exact else tuple(np.round(vector, 5))
            out[cid] = (doc, json.dumps(meta, sort_keys=True), kept)
        offset += len(got["ids"])


def compare(got: dict, want: dict) -> dict[str, int]:
    """Missing, extra and changed records of ``got`` against ``want``."""
    return {
        "records": len(got),
        "expected": len(want),
        "lost": len(set(want) - set(got)),
        "extra": len(set(got) - set(want)),
        "changed": sum(got[k] != want[k] for k in set(got) & set(want)),
    }


def count(url: str, collection: str) -> int:
    """Records in ``collection`` now (0 when it does not exist or the server does not answer)."""
    import chromadb

    try:
        port = int(url.rsplit(":", 1)[1])
        return chromadb.HttpClient(host="127.0.0.1", port=port).get_collection(collection).count()
    except Exception:
        return 0


def restart_trial(srv: ChromaServer, corpus: Path, seed: int, down_s: float, clean: dict) -> dict:
    """Kill the server at a random moment of an ingest, restart it ``down_s`` later; the outcome."""
    rng = random.Random(seed)
    name = f"restart-{seed}"
    t0 = time.monotonic()
    proc = subprocess.Popen(
        index_cmd(srv.url, name, [corpus]),
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    while count(srv.url, name) == 0 and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 0.2))
    at = count(srv.url, name)
    killed = time.monotonic()
    srv.kill()
    time.sleep(down_s)
    srv.start()
    back = time.monotonic() - killed
    err = proc.communicate(timeout=900)[1]
    wall = time.monotonic() - t0
    row = {
        "fault": "server SIGKILL mid-ingest, restarted on the same path",
        "seed": seed,
        "down_s": down_s,
        "records_at_kill": at,
        "mid_ingest": 0 < at < len(clean),
        "exit": proc.returncode,
        "outcome": "rode through" if proc.returncode == 0 else f"stopped (exit {proc.returncode})",
        "server_back_s": round(back, 2),
        "wall_s": round(wall, 2),
        "stderr_tail": err.strip().splitlines()[-1:] if proc.returncode else [],
    }
    if proc.returncode != 0:  # the promise then is: a re-run completes
        subprocess.run(index_cmd(srv.url, name, [corpus]), env=env(), check=True, capture_output=True)
        row["rerun"] = "completed"
    row.update(compare(snapshot(srv.url, name, exact=True), clean))
    return row


def digest(records: dict[str, tuple[Any, ...]]) -> str:
    """SHA-256 of an exact snapshot (ids, texts, metadata, float32 vectors), whatever the collection name."""
    import hashlib

    return hashlib.sha256(json.dumps(sorted(records.items())).encode()).hexdigest()


def killed_trial(srv: ChromaServer, corpus: Path, seed: int, clean: dict) -> dict:
    """SIGKILL the server when a random share of the corpus arrived; restart, re-run, repair if damaged."""
    rng = random.Random(seed)
    name = f"killed-{seed}"
    target = max(1, int(len(clean) * rng.uniform(0.05, 0.95)))
    proc = subprocess.Popen(
        index_cmd(srv.url, name, [corpus], "--retry-budget", "2"),
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    while (at := count(srv.url, name)) < target and proc.poll() is None:
        time.sleep(0.02)  # a benchmark: the kill lands where the count says, not at a timed moment
    srv.kill()
    first = proc.communicate(timeout=900)[1].strip().splitlines()
    srv.start()
    rerun = subprocess.run(index_cmd(srv.url, name, [corpus]), env=env(), capture_output=True, text=True)
    said = rerun.stderr.strip().splitlines()[-1:] if rerun.returncode else []
    hit = rerun.returncode != 0 and any("is damaged" in line for line in said)
    row: dict[str, Any] = {
        "fault": "server SIGKILL mid-ingest, restarted, the same index re-run (--repair on damage)",
        "seed": seed,
        "records_at_kill": at,
        "expected": len(clean),
        "first_exit": proc.returncode,
        "first_message": first[-1][:300] if first else "",
        "rerun_exit": rerun.returncode,
        "rerun_message": said[0][:400] if said else "",
        "damaged_segment": hit,
    }
    if hit:
        fixed = subprocess.run(
            index_cmd(srv.url, name, [corpus], "--repair"), env=env(), capture_output=True, text=True
        )
        lines = [x for x in fixed.stdout.splitlines() if "repaired" in x or "none of its records" in x]
        row.update(repair_exit=fixed.returncode, repair=lines[0][:400] if lines else fixed.stderr[-400:])
    got = snapshot(srv.url, name, exact=True)
    row.update(ids_equal=set(got) == set(clean), digest_equal=digest(got) == digest(clean))
    row.update(compare(got, clean))
    row["outcome"] = ("damaged, repaired" if hit else "re-run completed") + (
        ", equal to the clean run" if row["digest_equal"] else ", DIFFERENT from the clean run"
    )
    return row


def past_budget(srv: ChromaServer, corpus: Path, budget: float, clean: dict) -> dict:
    """The server stays down longer than the retry budget: exit 75, one line; then a re-run."""
    name = "past-budget"
    proc = subprocess.Popen(
        index_cmd(srv.url, name, [corpus], "--retry-budget", str(budget)),
        env=env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    while count(srv.url, name) == 0 and proc.poll() is None:
        time.sleep(0.05)
    killed = time.monotonic()
    srv.kill()
    err = proc.communicate(timeout=900)[1].strip().splitlines()
    stopped = time.monotonic() - killed
    srv.start()
    t0 = time.monotonic()
    rerun = subprocess.run(index_cmd(srv.url, name, [corpus]), env=env(), capture_output=True, text=True)
    row = {
        "fault": f"server down past the retry budget ({budget:g} s)",
        "exit": proc.returncode,
        "message": err[-1] if err else "",
        "outcome": f"stopped (exit {proc.returncode}), re-run exit {rerun.returncode}",
        "stopped_after_s": round(stopped, 2),
        "rerun_s": round(time.monotonic() - t0, 2),
        "rerun_summary": rerun.stdout.strip().splitlines()[-1:] if rerun.stdout else [],
    }
    row.update(compare(snapshot(srv.url, name, exact=True), clean))
    return row


def three_writers(srv: ChromaServer, root: Path) -> dict:
    """Three ``index`` processes at once (a, b, a+b) into one collection, against a clean run."""
    a, b = root / "a", root / "b"
    subprocess.run(index_cmd(srv.url, "three-clean", [a, b], "--root", str(root)), env=env(), check=True)
    t0 = time.monotonic()
    procs = [
        subprocess.Popen(
            index_cmd(srv.url, "three", f, "--root", str(root)), env=env(), stderr=subprocess.PIPE
        )
        for f in ([a], [b], [a, b])
    ]
    errs = [p.communicate(timeout=900)[1] for p in procs]
    codes = [p.returncode for p in procs]
    row = {
        "fault": "3 index processes at once into one collection (a, b, a+b)",
        "exits": codes,
        "outcome": "all exit 0" if codes == [0, 0, 0] else f"exits {codes}",
        "stderr_tails": [e.decode(errors="replace").strip().splitlines()[-1:] for e in errs],
        "wall_s": round(time.monotonic() - t0, 2),
    }
    row.update(compare(snapshot(srv.url, "three"), snapshot(srv.url, "three-clean")))
    return row


def rebuild_under_reads(srv: ChromaServer, corpus: Path, rebuilds: int = 1) -> dict:
    """A reader queries while ``index --clear`` rebuilds ``rebuilds`` times with another chunker."""
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    name = "rebuilt"
    subprocess.run(index_cmd(srv.url, name, [corpus]), env=env(), check=True, capture_output=True)
    reader = ChunkStore(url=srv.url, collection=name, encoder=Encoder("static"), create=False)
    query = reader.encoder.encode(["retry backoff server restart"], show_progress=False)
    seen: list[frozenset[str]] = []
    errors, slowest = [0], [0.0]
    kinds: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            t = time.perf_counter()
            try:
                hits = reader.search_vectors(query, k=10)[0]
                seen.append(frozenset(str(c.metadata.get("strategy")) for c, _ in hits))
            except Exception as exc:
                errors[0] += 1
                kinds.append(f"{type(exc).__name__}: {exc}"[:300])
            slowest[0] = max(slowest[0], time.perf_counter() - t)

    thread = threading.Thread(target=read)
    thread.start()
    t0 = time.monotonic()
    for i in range(rebuilds):  # fixed, recursive, fixed, ...: each rebuild switches the chunker
        cmd = index_cmd(srv.url, name, [corpus], "--clear")
        cmd[cmd.index("recursive")] = "fixed" if i % 2 == 0 else "recursive"
        subprocess.run(cmd, env=env(), check=True, capture_output=True)
    rebuild = time.monotonic() - t0
    time.sleep(1.0)
    stop.set()
    thread.join()
    mixed = sum(len(s) > 1 for s in seen)
    return {
        "fault": "search during index --clear with another chunker",
        "rebuilds": rebuilds,
        "queries": len(seen) + errors[0],
        "mixed": mixed,
        "errors": errors[0],
        "error_messages": kinds[:5],
        "configs_seen": sorted({next(iter(s)) for s in seen if len(s) == 1}),
        "slowest_query_s": round(slowest[0], 3),
        "rebuild_s": round(rebuild, 2),
        "outcome": ("never mixed" if mixed == 0 else f"{mixed} mixed answers")
        + (f", {errors[0]} failed queries" if errors[0] else ""),
    }


def main() -> None:
    """Run every scenario and write benchmarks/results/server_faults.json."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (15 minutes on a busy 2-core machine)")
    ap.add_argument("--docs", type=int, default=200, help="documents of the restart corpus")
    ap.add_argument("--restart-trials", type=int, default=3, help="seeded restart trials (ridden through)")
    ap.add_argument("--trials", type=int, default=20, help="seeded trials of the killed scenario")
    ap.add_argument("--seed", type=int, default=0, help="the first trial's seed (then seed + 1, ...)")
    ap.add_argument("--down", type=float, default=3.0, help="seconds the server stays down in a trial")
    ap.add_argument("--chunks", type=int, default=100_000, help="records for the query load")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0, help="query load duration")
    ap.add_argument("--rebuilds", type=int, default=3, help="rebuilds under reads (alternating chunkers)")
    ap.add_argument("--out", default=str(RESULTS / "server_faults.json"))
    ap.add_argument(
        "--only",
        action="append",
        choices=SCENARIOS,
        help="re-measure only this scenario (repeatable); the other rows of --out are kept",
    )
    args = ap.parse_args()
    if args.quick:
        args.docs, args.restart_trials, args.chunks, args.clients, args.seconds = 60, 1, 5000, 2, 5.0
        args.trials = min(args.trials, 3)
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = write_corpus(work / "corpus", args.docs)
        write_corpus(work / "two" / "a", args.docs // 3, "a")
        write_corpus(work / "two" / "b", args.docs // 3, "b")
        srv = ChromaServer(work / "server")
        first_start = srv.start()
        only = set(args.only or SCENARIOS)
        try:
            result: dict[str, Any] = {
                "benchmark": "server_faults",
                "quick": args.quick,
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                "load_before": os.getloadavg(),
                "server_start_s": round(first_start, 2),
                "faults": [],
                "query_load": None,
            }
            clean: dict = {}
            if only & {"restart", "killed", "budget"}:
                t0 = time.monotonic()
                subprocess.run(
                    index_cmd(srv.url, "clean", [corpus]), env=env(), check=True, capture_output=True
                )
                clean_s = time.monotonic() - t0
                clean = snapshot(srv.url, "clean", exact=True)
                print(f"clean run: {len(clean)} chunks in {clean_s:.1f} s", flush=True)
                result["clean_run"] = {"docs": args.docs, "chunks": len(clean), "wall_s": round(clean_s, 2)}
            if args.only:  # keep what was measured before, replace what is measured now
                result = kept(Path(args.out), result, only)
            steps = {
                "restart": [
                    partial(restart_trial, srv, corpus, seed, args.down, clean)
                    for seed in range(args.restart_trials)
                ],
                "killed": [
                    partial(killed_trial, srv, corpus, seed, clean)
                    for seed in range(args.seed, args.seed + args.trials)
                ],
                "budget": [partial(past_budget, srv, corpus, 5.0, clean)],
                "writers": [partial(three_writers, srv, work / "two")],
                "rebuild": [partial(rebuild_under_reads, srv, corpus, args.rebuilds)],
            }
            fresh: set[str] = set()  # faults measured now: their earlier rows go
            for scenario, found in steps.items():
                for step in found if scenario in only else []:
                    row = step()
                    if row["fault"] not in fresh:
                        result["faults"] = [r for r in result["faults"] if r["fault"] != row["fault"]]
                        fresh.add(row["fault"])
                    result["faults"].append(row)
                    print(row, flush=True)
                    save(result, args.out, t_start)  # a partial file survives an interrupted run
            if "load" in only:
                result["query_load"] = query_load(srv, args.chunks, args.clients, args.seconds)
                print(result["query_load"], flush=True)
                save(result, args.out, t_start)
        finally:
            srv.stop()
    print(f"wrote {args.out}")


def kept(out: Path, fresh: dict[str, Any], only: set[str]) -> dict[str, Any]:
    """The results in ``out`` with this run's header, saying which scenarios are re-measured now."""
    if not out.is_file():
        return fresh
    before = json.loads(out.read_text())
    before.update({k: v for k, v in fresh.items() if k not in ("faults", "query_load", "clean_run")})
    before["remeasured"] = {
        "scenarios": sorted(only),
        "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    return before


def save(result: dict[str, Any], out: str, t_start: float) -> None:
    """Write the results so far (with the load average and the elapsed time now)."""
    result.update(load_after=os.getloadavg(), total_s=round(time.monotonic() - t_start, 1))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
