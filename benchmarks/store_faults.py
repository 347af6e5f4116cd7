"""Faults on a folder store: concurrent ``chunklab index`` runs, ``kill -9`` at random points, disk full.

Every trial indexes a small generated Markdown corpus into a Chroma folder store with the
real CLI (``python -m chunklab.cli index``, MiniLM, the shared embedding cache of this run)
and compares the result with a clean run's :func:`~chunklab.retrieval.chroma.digest.store_digest`
(ids, texts, metadata and vectors of every collection):

* ``concurrent-2`` / ``concurrent-3``: 2 or 3 runs started at once on one store (all must exit
  0 within the timeout); the store must open and hold exactly the clean run's ids and digest;
* ``kill-9``: one run killed with SIGKILL during its write phase: the benchmark watches the
  store's ``chroma.sqlite3`` grow past an empty store's size (the first upsert committed) and
  kills a seeded random delay later, in (0, the clean run's write phase); only kills that left
  some but not all chunks in the store landed mid-write and count as injected (the others are
  listed in ``landed``). The store must open (or be repaired by ``--repair``), ``stats()`` must
  agree with what the store lists and its recorded configuration, and a re-run must reach
  the clean digest. The kill trials index a larger corpus (``--kill-docs``) so that the write
  phase lasts seconds;
* ``disk-full``: a run whose files may not grow past a limit (``RLIMIT_FSIZE``) must fail with
  an error naming the path and leave the previous store's digest unchanged.

Writes ``benchmarks/results/store_faults.json`` (the fault table: injected, survived, lost,
duplicated, repaired, time to recover); ``--only kill-9`` (repeatable) re-measures some faults
and keeps the other rows. ``make faults-store`` runs the full sizes; the tests
(tests/integration/test_store_faults.py, tests/integration/test_store_lock.py) call the same functions
with a few trials.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from store_writes import POLL_S, RUN_TIMEOUT, empty_store_bytes, first_write, write_span  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def make_corpus(folder: Path, docs: int, seed: int = 0) -> Path:
    """``docs`` Markdown files of a few sections each, seeded (the same corpus for every trial)."""
    rng = random.Random(seed)
    words = "store lock writer reader chunk vector index segment queue repair crash disk".split()
    folder.mkdir(parents=True, exist_ok=True)
    for d in range(docs):
        parts = [f"# Document {d}\n"]
        for s in range(rng.randint(2, 4)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(20, 60)))
            parts.append(f"## Section {d}.{s}\n\n{sentence.capitalize()}.\n")
        (folder / f"doc-{d:04d}.md").write_text("\n".join(parts), encoding="utf-8")
    return folder


def environment(cache: Path) -> dict[str, str]:
    """The environment of every run: this tree first on the path, offline, one thread, one cache."""
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        CHUNKLAB_CACHE=str(cache),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        OMP_NUM_THREADS="1",
        CHUNKLAB_TORCH_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def index_command(docs: Path, store: Path, *extra: str) -> list[str]:
    """The ``chunklab index`` command line of a trial."""
    return [
        *(sys.executable, "-m", "chunklab.cli", "index", str(docs), "--store", str(store)),
        *("--root", str(docs), "--model", "minilm", "--no-progress", *extra),
    ]


def start(docs: Path, store: Path, cache: Path, *extra: str, preexec: Any = None) -> subprocess.Popen[str]:
    """Start one ``chunklab index`` run (output captured)."""
    return subprocess.Popen(
        index_command(docs, store, *extra),
        env=environment(cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,
    )


def finish(proc: subprocess.Popen[str], timeout: float = RUN_TIMEOUT) -> tuple[int | None, str]:
    """Wait for a run; ``(exit status, stderr)``, status None when it hung and was killed."""
    try:
        _out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
        return None, err
    return proc.returncode, err


def inspect(store: Path) -> dict[str, Any]:
    """Open ``store`` as a reader: its digest, ids, stats and recorded config (or the error it raised)."""
    from chromadb.api.client import SharedSystemClient

    from chunklab.embed import get_encoder
    from chunklab.retrieval.chroma.digest import store_digest
    from chunklab.retrieval.chroma.store import ChunkStore

    SharedSystemClient.clear_system_cache()  # another process wrote it: read it afresh
    try:
        with ChunkStore(store, encoder=get_encoder(), create=False, wait=RUN_TIMEOUT) as opened:
            ids = [c.id for c in opened.iter_chunks()] + [c.id for c in opened.iter_chunks(parents=True)]
            stats = opened.stats()
            return {
                "ok": True,
                "digest": store_digest(opened),
                "ids": ids,
                "stats": stats,
                "config": opened.recorded_config(),
                "collections": sorted(c.name for c in opened.client.list_collections()),
            }
    except ValueError as exc:  # no collection yet, or damaged
        return {"ok": False, "error": str(exc), "damaged": "damaged" in str(exc)}
    finally:
        SharedSystemClient.clear_system_cache()


def clean_run(
    docs: Path, work: Path, cache: Path, first: Path | None = None, name: str = "clean"
) -> dict[str, Any]:
    """Index ``docs`` into a fresh store without faults: the reference state, a warm run's timings.

    ``first``, a store already indexed from ``docs`` with this cache (a test fills it in its own
    process), stands in for the cold first run; the second, timed run goes into a new store
    ``work/name`` with the cache warm, as every trial does, and must reach the same digest. Its
    write phase (``write_s``: from the first upsert reaching the store's SQLite file to the last
    change of that file) is the range the kill trials draw their delays from.
    """
    t0 = time.perf_counter()
    if first is None:
        first = work / f"{name}-cold"
        code, err = finish(start(docs, first, cache))
        if code != 0:
            raise RuntimeError(f"the clean run failed ({code}): {err[-2000:]}")
    state = inspect(first)
    state["cold_seconds"] = time.perf_counter() - t0
    state["empty_bytes"] = empty_store_bytes(work / f"{name}-empty", state["config"])
    t0 = time.perf_counter()
    proc = start(docs, work / name, cache)
    began, ended = write_span(proc, work / name, state["empty_bytes"])
    code, err = finish(proc)
    state["seconds"] = time.perf_counter() - t0
    if code != 0 or began is None or inspect(work / name)["digest"] != state["digest"]:
        raise RuntimeError(f"a second clean run differs from the first ({code}): {err[-2000:]}")
    state["first_write_s"] = began - t0
    state["write_s"] = max(ended - began, POLL_S)
    return state


def concurrent_trial(
    docs: Path, work: Path, cache: Path, runs: int, seed: int, clean: dict[str, Any]
) -> dict:
    """``runs`` index runs started together (seeded stagger of up to 0.5 s) on one fresh store."""
    rng = random.Random(seed)
    store = work / f"concurrent-{runs}-{seed}"
    procs = []
    for _ in range(runs):
        procs.append(start(docs, store, cache))
        time.sleep(rng.uniform(0, 0.5))
    t0 = time.perf_counter()
    results = [finish(p) for p in procs]
    state = inspect(store)
    ids = state.get("ids", [])
    return {
        "exit_codes": [code for code, _ in results],
        "hung": sum(code is None for code, _ in results),
        "opened": state["ok"],
        "same_ids": sorted(ids) == sorted(clean["ids"]),
        "same_digest": state.get("digest") == clean["digest"],
        "lost": len(set(clean["ids"]) - set(ids)),
        "duplicated": len(ids) - len(set(ids)) + len(set(ids) - set(clean["ids"])),
        "waited_message": any("is writing this store" in err for _, err in results),
        "seconds": time.perf_counter() - t0,
    }


#: the child of a parked trial: ``chunklab index`` whose store parks itself (a marker file, then
#: it waits for a signal forever) right after its ``n``-th upsert has been written
PARKED_CHILD = """
import signal, sys
from chunklab.retrieval.chroma.store import ChunkStore
marker, n = sys.argv[1], int(sys.argv[2])
upsert, done = ChunkStore._upsert, []
def parked(self, *args, **kwargs):
    upsert(self, *args, **kwargs)
    done.append(1)
    if len(done) == n:
        with open(marker, "w") as f:
            f.write("parked")
        while True:
            signal.pause()
ChunkStore._upsert = parked
from chunklab.cli import main
sys.exit(main(sys.argv[3:]))
"""


def start_parked(docs: Path, store: Path, cache: Path, marker: Path, after: int) -> subprocess.Popen[str]:
    """Start ``chunklab index`` so that it parks after its ``after``-th upsert (see ``PARKED_CHILD``)."""
    cmd = index_command(docs, store)
    return subprocess.Popen(
        [sys.executable, "-c", PARKED_CHILD, str(marker), str(after), *cmd[3:]],
        env=environment(cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_parked(proc: subprocess.Popen[str], marker: Path, timeout: float = RUN_TIMEOUT) -> bool:
    """Wait until the parked child says it is parked (True) or ends first (False): a condition."""
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)
    return True


def kill_trial(
    docs: Path, work: Path, cache: Path, seed: int, clean: dict[str, Any], park_after: int | None = None
) -> dict:
    """SIGKILL one run a seeded delay after its first write; check the store, repair if needed, re-run.

    ``landed`` says where the kill fell: ``mid-write`` (the store holds some but not all of the
    clean run's chunks: the only kills counted as injected), ``after the last write`` (all
    chunks were in), ``after exit`` or ``before the first write`` (none seen before the run ended).
    With ``park_after=N`` the kill does not depend on timing: the run parks itself right after
    its N-th upsert and is killed there (a store of more than N upserts is then always mid-write).
    """
    rng = random.Random(seed)
    store = work / f"kill-{seed}" if park_after is None else work / f"kill-parked-{park_after}-{seed}"
    delay = rng.uniform(0.0, clean["write_s"]) if park_after is None else 0.0
    if park_after is None:
        proc = start(docs, store, cache)
        began = first_write(proc, store, clean["empty_bytes"])
        if began is not None:
            time.sleep(max(0.0, began + delay - time.perf_counter()))
    else:
        marker = work / f"{store.name}.parked"
        proc = start_parked(docs, store, cache, marker, park_after)
        began = time.perf_counter() if wait_parked(proc, marker) else None
    killed = began is not None and proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    finish(proc)
    after = inspect(store) if (store / "chroma.sqlite3").exists() else {"ok": False, "error": "no store yet"}
    consistent = True
    if after["ok"]:
        stats, ids = after["stats"], after["ids"]
        consistent = stats["vectors"] == len(ids) and after["config"] in (None, clean["config"])
    at_kill = len(after.get("ids", []))
    if began is None:
        landed = "before the first write"
    elif not killed:
        landed = "after exit"
    else:
        landed = "mid-write" if 0 < at_kill < len(clean["ids"]) else "after the last write"
    repaired = False
    t0 = time.perf_counter()
    if not after["ok"] and after.get("damaged"):
        code, _ = finish(start(docs, store, cache, "--repair"))
        repaired = code == 0
    else:
        code, _ = finish(start(docs, store, cache))
    final = inspect(store)
    ids = final.get("ids", [])
    return {
        "delay_s": round(delay, 3),
        "write_fraction": round(delay / clean["write_s"], 3),
        "killed": killed,
        "landed": landed,
        "injected": landed == "mid-write",
        "chunks_at_kill": at_kill,
        "opened_after_kill": after["ok"]
        or after.get("error") == "no store yet"
        or "no collection" in after.get("error", ""),
        "damaged": bool(after.get("damaged")),
        "repaired": repaired,
        "stats_consistent": consistent,
        "rerun_exit": code,
        "same_digest": final.get("digest") == clean["digest"],
        "lost": len(set(clean["ids"]) - set(ids)),
        "duplicated": len(ids) - len(set(ids)) + len(set(ids) - set(clean["ids"])),
        "recover_s": round(time.perf_counter() - t0, 2),
    }


def _limit_size(limit: int) -> Any:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def disk_full_trial(docs: Path, more: Path, work: Path, cache: Path, clean: dict[str, Any]) -> dict:
    """A copy of the clean store re-indexed from ``more`` with ``--clear``, files capped near their size."""
    store = work / "disk-full"
    shutil.copytree(work / "clean", store)
    before = inspect(store)
    biggest = max(f.stat().st_size for f in store.rglob("*") if f.is_file())
    code, err = finish(start(more, store, cache, "--clear", preexec=_limit_size(biggest + 4096)))
    after = inspect(store)
    last = err.strip().splitlines()[-1] if err.strip() else ""
    return {
        "exit": code,
        "message": last[:300],
        "names_path": str(store) in err or "chroma.sqlite3" in err,
        "previous_intact": after.get("digest") == before.get("digest"),
        "opened": after["ok"],
    }


def table(trials: list[dict], kind: str) -> dict[str, Any]:
    """One row of the fault table.

    A kill trial that did not land mid-write injected nothing: it is counted in
    ``not_injected`` (and whether those runs survived too in ``not_injected_survived``), and
    ``landed`` gives the distribution of every kill.
    """
    missed = [t for t in trials if not t.get("injected", t.get("killed") is not False)]
    trials = [t for t in trials if t.get("injected", t.get("killed") is not False)]

    def survived(found: list[dict]) -> int:  # disk full survives when the old store is intact and opens
        return sum(
            bool(t.get("same_digest") or (t.get("previous_intact") and t.get("opened"))) and not t.get("hung")
            for t in found
        )

    row = {
        "fault": kind,
        "injected": len(trials),
        "not_injected": len(missed),
        "survived": survived(trials),
        "lost": sum(t.get("lost", 0) for t in trials),
        "duplicated": sum(t.get("duplicated", 0) for t in trials),
        "repaired": sum(bool(t.get("repaired")) for t in trials),
        "time_to_recover_s": round(
            max((t.get("recover_s", t.get("seconds", 0)) for t in trials), default=0), 2
        ),
    }
    landed = [t["landed"] for t in trials + missed if "landed" in t]
    if landed:
        row["landed"] = {where: landed.count(where) for where in sorted(set(landed))}
        row["not_injected_survived"] = survived(missed)
    return row


KINDS = ("kill-9", "concurrent-2", "concurrent-3", "disk-full")


def report(trials: dict[str, list[dict]], corpus: dict[str, Any]) -> dict[str, Any]:
    """The JSON of a run: the corpus, one table row per kind of fault (in :data:`KINDS` order), the trials."""
    rows = []
    for kind in (k for k in KINDS if trials.get(k)):
        rows.append(table(trials[kind], kind))
        if kind == "disk-full":
            disk = trials[kind][0]
            rows[-1]["survived"] = int(disk["previous_intact"] and disk["exit"] not in (0, None))
    return {"corpus": corpus, "table": rows, "trials": trials}


def merge(
    previous: dict[str, Any], fresh: dict[str, Any], kinds: set[str], append: bool = False
) -> dict[str, Any]:
    """``previous`` results with the trials of ``kinds`` (and the corpus fields) taken from ``fresh``.

    ``append`` adds ``fresh``'s trials (later seeds) to the previous ones instead.
    """
    trials = {k: v for k, v in previous.get("trials", {}).items() if append or k not in kinds}
    for k, v in fresh["trials"].items():
        if k in kinds:
            trials[k] = [*trials.get(k, []), *v] if append else v
    out = report(trials, {**previous.get("corpus", {}), **fresh["corpus"]})
    at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out["remeasured"] = {**previous.get("remeasured", {}), **{k: at for k in sorted(kinds)}}
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the fault trials and write the JSON table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=60, help="documents in the corpus (default 60)")
    p.add_argument(
        "--concurrent", type=int, default=20, help="seeded tries each of 2 and 3 runs (default 20)"
    )
    p.add_argument("--kills", type=int, default=30, help="seeded kill -9 trials (default 30)")
    p.add_argument(
        "--kill-docs", type=int, default=300, help="documents of the kill trials' corpus (default 300)"
    )
    p.add_argument("--out", type=Path, default=RESULTS / "store_faults.json")
    p.add_argument(
        "--only",
        action="append",
        choices=("kill-9", "concurrent", "disk-full"),
        help="measure only these faults (repeatable); the other rows of --out are kept",
    )
    p.add_argument("--append", action="store_true", help="with --only: more trials, with the next seeds")
    args = p.parse_args(argv)
    only = set(args.only or ("kill-9", "concurrent", "disk-full"))
    kinds = {k for k in KINDS if k.startswith(tuple(only))}
    previous = json.loads(args.out.read_text()) if args.only and args.out.is_file() else {}
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="store-faults-"))
    try:
        cache = work / "cache"
        os.environ["CHUNKLAB_CACHE"] = str(cache)
        docs = make_corpus(work / "docs", args.docs)
        trials: dict[str, list[dict]] = {k: [] for k in KINDS if k in kinds}
        corpus: dict[str, Any] = {}
        if "kill-9" in kinds:
            big = make_corpus(work / "big", args.kill_docs, seed=2)
            kills = clean_run(big, work, cache, name="clean-big")
            corpus.update(
                kill_docs=args.kill_docs,
                kill_chunks=len(kills["ids"]),
                kill_clean_run_s=round(kills["seconds"], 2),
                kill_first_write_s=round(kills["first_write_s"], 2),
                kill_write_phase_s=round(kills["write_s"], 2),
            )
        if kinds - {"kill-9"}:
            clean = clean_run(docs, work, cache)
            corpus.update(docs=args.docs, chunks=len(clean["ids"]), clean_run_s=round(clean["seconds"], 2))

        def save() -> list[dict[str, Any]]:  # after every trial: a cut-short run still reports
            fresh = report(trials, corpus)
            out = merge(previous, fresh, kinds, args.append) if args.only else fresh
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
            return fresh["table"]

        first = {k: len(previous.get("trials", {}).get(k, [])) if args.append else 0 for k in KINDS}
        for seed in range(first["kill-9"], first["kill-9"] + (args.kills if "kill-9" in kinds else 0)):
            trials["kill-9"].append(kill_trial(big, work, cache, seed, kills))
            save()
        for i in range(args.concurrent if "concurrent" in only else 0):  # 2 and 3 in turn
            for runs in (2, 3):
                seed = first[f"concurrent-{runs}"] + i
                trials[f"concurrent-{runs}"].append(concurrent_trial(docs, work, cache, runs, seed, clean))
                save()
        if "disk-full" in kinds:
            more = make_corpus(work / "more", args.docs, seed=1)
            trials["disk-full"] = [disk_full_trial(docs, more, work, cache, clean)]
        rows = save()
        for row in rows:
            print(json.dumps(row))
        return 0 if all(r["survived"] == r["injected"] for r in rows) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
