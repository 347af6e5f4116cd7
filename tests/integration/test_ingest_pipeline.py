"""The one ingest pipeline without Ray: the worker pool, per-document replace in every sink, one record.

The cross-engine checks (a store or Parquet folder written by one engine, re-indexed by
another without embedding) live in tests/integration/test_engines.py, beside the module's Ray cluster.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from chunklab.chunkers.catalog import get_strategy
from chunklab.ingest import get_engine
from chunklab.ingest.pool import WorkerDied, map_ordered

STRATEGY = {"strategy": get_strategy("recursive", size=200), "model": "static", "progress": False}
FIXED = {**STRATEGY, "strategy": get_strategy("fixed", size=200)}


# -- the pool ------------------------------------------------------------------------------
_STATE: dict[str, int] = {}


def _set_offset(offset: int) -> None:
    _STATE["offset"] = offset


def _add_offset(x: int) -> tuple[int, int]:
    return x + _STATE["offset"], os.getpid()


def _kill_on_three(x: int) -> int:
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x * 10


def test_map_ordered_keeps_input_order_and_runs_the_initializer_in_each_worker() -> None:
    items = list(range(40))
    results = list(map_ordered(_add_offset, items, 2, initializer=_set_offset, initargs=(100,)))
    assert [r for r, _pid in results] == [x + 100 for x in items]
    assert os.getpid() not in {pid for _r, pid in results}  # the work ran in worker processes
    _STATE.clear()
    inline = list(map_ordered(_add_offset, items[:3], 1, initializer=_set_offset, initargs=(7,)))
    assert inline == [(7, os.getpid()), (8, os.getpid()), (9, os.getpid())]


def test_a_dead_worker_becomes_on_death_and_the_rest_finish() -> None:
    got = list(map_ordered(_kill_on_three, range(6), 2, on_death=lambda x, why: f"{x}: {why}"))
    assert got[:3] == [0, 10, 20] and got[4:] == [40, 50]
    assert got[3] == "3: the worker process died (SIGKILL) while working on this file"
    with pytest.raises(WorkerDied, match="SIGKILL"):
        list(map_ordered(_kill_on_three, range(6), 2))


def test_map_ordered_checks_its_worker_count() -> None:
    with pytest.raises(ValueError, match="workers"):
        list(map_ordered(_add_offset, [1], 0))


# -- per-document replace, prune and the one record, in every sink --------------------------
@pytest.fixture()
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(4):
        body = "\n\n".join(f"Note {i}, paragraph {j}: " + "the depot ships parcels. " * 6 for j in range(5))
        (root / f"n{i}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    return root


def _rows(out: Path) -> list[dict]:
    table = pq.read_table(out).sort_by("id")
    return table.drop_columns(["vector"]).to_pylist()


def _sinks(tmp_path: Path) -> dict[str, dict]:
    return {"parquet": {"out": tmp_path / "shards"}, "store": {"store": str(tmp_path / "chroma")}}


def _contents(kind: str, sink: dict) -> list[tuple[str, str, str]]:
    if kind == "parquet":
        return sorted((r["id"], r["doc_id"], r["text"]) for r in _rows(sink["out"]))
    from chunklab.retrieval.chroma.store import ChunkStore

    return sorted((c.id, c.doc_id, c.text) for c in ChunkStore(sink["store"], create=False).iter_chunks())


@pytest.mark.parametrize("kind", ["parquet", "store"])
def test_an_edited_document_is_replaced_alone_and_prune_drops_a_vanished_one(
    notes: Path, tmp_path: Path, kind: str
) -> None:
    local = get_engine("local")
    sink = _sinks(tmp_path)[kind]
    first = local([str(notes)], **STRATEGY, **sink, workers=2)
    assert first.embedded == first.chunks > 8 and first.deleted == 0
    edited = notes / "n1.md"
    edited.write_text(edited.read_text(encoding="utf-8").replace("paragraph 3", "section three"), "utf-8")
    again = local([str(notes)], **STRATEGY, **sink, workers=1)
    fresh = local([str(notes)], **STRATEGY, out=tmp_path / "fresh", workers=1)  # what a new run gives
    changed = {(i, t) for i, d, t in _contents("parquet", {"out": tmp_path / "fresh"})} - {
        (i, t) for i, _d, t in _contents(kind, sink)
    }
    assert not changed  # the sink holds exactly the new chunks ...
    assert _contents(kind, sink) == _contents("parquet", {"out": tmp_path / "fresh"})  # ... and nothing stale
    assert 0 < again.embedded < first.embedded  # only the edited document's changed chunks
    assert again.chunks == fresh.chunks and again.unchanged == fresh.chunks - again.embedded
    assert 0 < again.deleted <= again.embedded  # stale chunks of the edited document went
    (notes / "n2.md").unlink()
    kept = local([str(notes)], **STRATEGY, **sink, workers=1)
    assert kept.embedded == 0 and "n2.md" in {d for _i, d, _t in _contents(kind, sink)}  # no --prune
    pruned = local([str(notes)], **STRATEGY, **sink, workers=1, prune=True)
    assert pruned.pruned == 1 and pruned.embedded == 0 and pruned.deleted > 0
    assert "n2.md" not in {d for _i, d, _t in _contents(kind, sink)}
    assert pruned.chunks == len(_contents(kind, sink))


def test_parquet_records_its_config_and_refuses_another_unless_cleared(notes: Path, tmp_path: Path) -> None:
    local = get_engine("local")
    out = tmp_path / "shards"
    local([str(notes)], **STRATEGY, out=out, workers=1)
    with pytest.raises(ValueError, match="clear"):
        local([str(notes)], **FIXED, out=out, workers=1)
    cleared = local([str(notes)], **FIXED, out=out, workers=1, clear=True)
    assert cleared.embedded == cleared.chunks == len(_rows(out))
    assert {r["metadata"].count('"strategy": "fixed"') for r in _rows(out)} == {1}
    assert sorted(os.listdir(out)) == ["part-00000.parquet"]  # no staging folder or old shard left


def test_an_interrupted_parquet_run_leaves_the_previous_shards(
    notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chunklab.ingest import stages

    local = get_engine("local")
    out = tmp_path / "shards"
    local([str(notes)], **STRATEGY, out=out, workers=1)
    before = pq.read_table(out).sort_by("id")
    (notes / "n0.md").write_text("# Changed\n\nAll new.\n", encoding="utf-8")
    real, calls = stages.load, []

    def interrupted(*args, **kwargs):
        calls.append(args)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(stages, "load", interrupted)
    with pytest.raises(KeyboardInterrupt):
        local([str(notes)], **STRATEGY, out=out, workers=1, batch_size=2)
    after = pq.read_table(out).sort_by("id")
    visible = sorted(n for n in os.listdir(out) if not n.startswith("."))  # staged rows wait, hidden
    assert after.equals(before) and visible == ["part-00000.parquet"]
    np.testing.assert_array_equal(after.column("vector").to_pylist(), before.column("vector").to_pylist())


def test_the_in_process_path_and_the_local_engine_share_one_record(
    notes: Path, tmp_path: Path, capsys
) -> None:
    from chunklab.cli import main

    store = tmp_path / "chroma"
    argv = ["index", str(notes), "--store", str(store), "--model", "static", "--no-progress"]
    assert main([*argv, "--strategy", "recursive"]) == 0
    capsys.readouterr()
    assert main([*argv, "--strategy", "recursive", "--engine", "local", "-j", "2"]) == 0
    assert "; embedded 0" in capsys.readouterr().out
    assert main([*argv, "--strategy", "fixed", "--engine", "local"]) == 2  # another chunker: refused
    assert "--clear" in capsys.readouterr().err


def test_engine_options_are_one_set_and_an_unknown_one_is_named(notes: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="address: not an option of the local engine"):
        get_engine("local")([str(notes)], out=tmp_path / "o", address="auto")
    with pytest.raises(ValueError, match="batch_size"):
        get_engine("local")([str(notes)], out=tmp_path / "o", batch_size=0)
