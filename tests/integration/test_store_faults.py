"""Faults on a folder store: a damaged store found and repaired, kill -9 mid-index, disk full."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from benchmarks import store_faults
from chunklab.cli import main
from chunklab.retrieval.chroma.digest import store_digest
from chunklab.retrieval.chroma.files import DamagedStoreError, diagnose


def damage(store: Path) -> None:
    """What two unlocked writers leave: the vector segment's position behind the start of the log."""
    con = sqlite3.connect(store / "chroma.sqlite3")
    with con:
        (vector,) = con.execute("SELECT id FROM segments WHERE scope = 'VECTOR' LIMIT 1").fetchone()
        con.execute("UPDATE max_seq_id SET seq_id = 1 WHERE segment_id = ?", (vector,))
        con.execute(
            "INSERT INTO embeddings_queue (seq_id, operation, topic, id) "
            "SELECT 1000000, 0, topic, 'ghost' FROM embeddings_queue LIMIT 1"
        )
        con.execute("DELETE FROM embeddings_queue WHERE seq_id < 1000000")
    con.close()


def test_a_damaged_store_is_refused_in_one_line_and_repaired_keeping_every_record(
    corpus, monkeypatch, capsys
):
    from chromadb.api.client import SharedSystemClient

    from chunklab.retrieval.chroma.store import ChunkStore

    docs, work, cache, clean = corpus
    monkeypatch.setenv("CHUNKLAB_CACHE", str(cache))
    store = work / "damaged"
    shutil.copytree(work / "clean", store)
    damage(store)
    SharedSystemClient.clear_system_cache()
    assert diagnose(store)
    with pytest.raises(DamagedStoreError) as caught:
        ChunkStore(store, create=False)
    assert "\n" not in str(caught.value) and "--repair" in str(caught.value)
    assert "damaged" in str(caught.value) and str(store) in str(caught.value)
    assert main(["search", str(store), "lock"]) == 2
    assert "damaged" in capsys.readouterr().err
    assert main(["index", "--store", str(store), "--repair", "--model", "minilm", "--no-progress"]) == 0
    assert "kept" in capsys.readouterr().out
    assert not diagnose(store)
    after = store_faults.inspect(store)
    assert after["ok"] and sorted(after["ids"]) == sorted(clean["ids"])
    assert after["config"] == clean["config"]
    assert after["digest"] == clean["digest"]  # texts, metadata and (cached) vectors all back


@pytest.mark.parametrize("seeds", [(0, 1, 2), pytest.param((3, 4, 5, 6), marks=pytest.mark.heavy)])
def test_kill_9_mid_write_then_a_rerun_reaches_the_clean_digest(kill_corpus, seeds):
    docs, work, cache, clean = kill_corpus
    trials = [store_faults.kill_trial(docs, work, cache, seed, clean) for seed in seeds]
    # one kill that does not depend on timing: the run parks itself after the second of its four
    # upserts and is killed there, so it lands mid-write however fast or loaded the machine is
    parked = store_faults.kill_trial(docs, work, cache, seeds[0], clean, park_after=2)
    assert parked["landed"] == "mid-write" and 0 < parked["chunks_at_kill"] < len(clean["ids"]), parked
    trials.append(parked)
    for trial in trials:
        assert trial["landed"] != "before the first write", trial  # the watcher saw the run write
        assert trial["opened_after_kill"] or trial["damaged"], trial
        assert trial["stats_consistent"], trial
        assert trial["rerun_exit"] == 0 and trial["same_digest"], trial
        assert trial["lost"] == 0 and trial["duplicated"] == 0
    # the seeded delays fall anywhere in the write phase (where depends on the machine's speed);
    # the parked kill above is the one that always leaves part of the chunks, and the re-run
    # completed that store too
    row = store_faults.table(trials, "kill-9")
    n = len(trials)
    assert row["injected"] + row["not_injected"] == n and sum(row["landed"].values()) == n
    assert row["survived"] == row["injected"] and row["not_injected_survived"] == row["not_injected"]


def test_disk_full_is_a_clear_error_naming_the_store_and_the_old_store_stays(corpus):
    docs, work, cache, clean = corpus
    trial = store_faults.disk_full_trial(docs, docs, work, cache, clean)  # --clear rebuilds beside: it grows
    assert trial["exit"] not in (0, None), trial
    assert trial["names_path"] and "disk full" in trial["message"], trial
    assert trial["opened"] and trial["previous_intact"], trial


def test_the_digest_sees_every_field(corpus, monkeypatch):
    from chunklab.chunk import Chunk
    from chunklab.embed import get_encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    docs, work, cache, clean = corpus
    monkeypatch.setenv("CHUNKLAB_CACHE", str(cache))
    with ChunkStore(in_memory=True, encoder=get_encoder()) as a:
        chunk = Chunk("some text", 0, 9, "d.md", {"kind": "x"})
        a.add([chunk])
        one = store_digest(a)
        a.add([chunk])  # the same chunk again changes nothing
        assert store_digest(a) == one
        a.add([Chunk("some text", 0, 9, "d.md", {"kind": "y"})])
        assert store_digest(a) != one
