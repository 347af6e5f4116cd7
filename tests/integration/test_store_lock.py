"""One writer at a time on a folder store: the lock, its messages, readers, non-stores, the cache place."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchmarks import store_faults
from chunklab.cli import main
from chunklab.retrieval.chroma.lock import BUSY_EXIT, LOCK_NAME, StoreBusyError, holder, lock_store

ROOT = Path(__file__).resolve().parents[2]


def files_under(folder: Path) -> list[str]:
    """Every path under ``folder`` (relative), to see that nothing was written."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def other_writer(tmp_path):
    """Another process holding a folder's writer lock until the test ends."""
    folder = tmp_path / "store"
    folder.mkdir()
    script = textwrap.dedent(
        f"""
        import sys, time
        from chunklab.retrieval.chroma.lock import lock_store
        held = lock_store({str(folder)!r}, exclusive=True)
        print("locked", flush=True)
        sys.stdin.read()
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    yield folder, proc.pid
    proc.communicate("", timeout=60)


def test_a_second_writer_is_refused_at_once_with_the_holders_pid(other_writer):
    folder, pid = other_writer
    assert holder(folder).split()[0] == str(pid)
    with pytest.raises(StoreBusyError, match=rf"another chunklab index \(pid {pid}\) is writing this store"):
        lock_store(folder, exclusive=True, wait=0)
    with pytest.raises(StoreBusyError):  # a reader does not read under a writer either
        lock_store(folder, exclusive=False, wait=0)
    told: list[str] = []
    with pytest.raises(StoreBusyError, match="gave up after waiting"):
        lock_store(folder, exclusive=True, wait=0.2, notify=told.append)
    assert len(told) == 1 and "waiting" in told[0] and str(pid) in told[0]


def test_the_lock_is_free_again_once_the_holder_is_gone(other_writer, tmp_path):
    folder, _pid = other_writer
    free = tmp_path / "free"
    free.mkdir()
    with lock_store(free, exclusive=True, wait=0):  # another folder is not locked
        pass


def test_locks_are_reentrant_within_a_process(tmp_path):
    first = lock_store(tmp_path, exclusive=False, wait=0)
    second = lock_store(tmp_path, exclusive=True, wait=0)  # upgrade: no other process reads
    third = lock_store(tmp_path, exclusive=True, wait=0)
    assert holder(tmp_path).split()[0] == str(os.getpid())
    for held in (third, second, first):
        held.release()
    held.release()  # twice is harmless
    assert holder(tmp_path) == ""
    with pytest.raises(ValueError, match="wait must be"):
        lock_store(tmp_path, exclusive=True, wait=-1)


def test_index_no_wait_fails_with_the_busy_status(other_writer, tmp_path, capsys):
    folder, pid = other_writer
    docs = store_faults.make_corpus(tmp_path / "docs", 2)
    code = main(
        ["index", str(docs), "--store", str(folder), "--model", "static", "--no-wait", "--no-progress"]
    )
    err = capsys.readouterr().err
    assert code == BUSY_EXIT
    assert f"another chunklab index (pid {pid}) is writing this store" in err and "--no-wait" in err
    assert files_under(folder) == [LOCK_NAME]  # nothing written while refused


def test_the_ingest_pipeline_takes_the_writer_lock_with_its_wait_option(other_writer, tmp_path):
    from chunklab.ingest.engines.local import LocalEngine
    from chunklab.ingest.pipeline import IngestOptions, run

    folder, pid = other_writer
    docs = store_faults.make_corpus(tmp_path / "docs", 2)
    options = IngestOptions(model="static", store=str(folder), wait=0, workers=1, progress=False)
    with pytest.raises(StoreBusyError, match=f"pid {pid}.*not waiting"):
        run([str(docs)], options, LocalEngine())
    assert files_under(folder) == [LOCK_NAME]  # nothing written while refused


def test_index_takes_the_writer_lock_once_through_the_store(tmp_path, monkeypatch, capsys):
    import chunklab.retrieval.chroma.lock as lock

    taken: list[bool] = []
    real = lock.lock_store

    def counting(folder, exclusive, wait=None, notify=None):
        taken.append(exclusive)
        return real(folder, exclusive, wait, notify)

    monkeypatch.setattr(lock, "lock_store", counting)
    docs = store_faults.make_corpus(tmp_path / "docs", 2)
    store = tmp_path / "store"
    assert main(["index", str(docs), "--store", str(store), "--model", "static", "--no-progress"]) == 0
    assert taken == [True]  # one exclusive hold for the whole run, taken by the store


def test_search_never_hangs_on_a_store_being_written(other_writer, capsys):
    folder, pid = other_writer
    (folder / "chroma.sqlite3").write_bytes(b"")  # looks like a store; the writer holds it
    code = main(["search", str(folder), "anything", "--wait", "0.3"])
    assert code == BUSY_EXIT and f"pid {pid}" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["empty", "documents"])
def test_reading_a_folder_that_is_not_a_store_writes_nothing(tmp_path, kind, capsys):
    from chunklab.retrieval.chroma.store import ChunkStore

    folder = tmp_path / kind
    folder.mkdir()
    if kind == "documents":
        store_faults.make_corpus(folder, 2)
    before = files_under(folder)
    assert main(["search", str(folder), "a question"]) == 2
    assert "not a Chroma store" in capsys.readouterr().err
    assert main(["index", "--store", str(folder), "--query", "a question"]) == 2
    with pytest.raises(ValueError, match="not a Chroma store"):
        ChunkStore(folder, create=False)
    assert files_under(folder) == before


def test_the_cache_is_the_projects_or_the_users_never_the_working_directory(tmp_path, monkeypatch):
    from chunklab.paths import cache_dir, project_root, user_cache_dir

    documents = tmp_path / "documents"  # no _toc.yml or pyproject.toml above it
    documents.mkdir()
    monkeypatch.chdir(documents)
    monkeypatch.delenv("CHUNKLAB_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    project_root.cache_clear()
    try:
        if (tmp_path / "pyproject.toml").exists() or any(
            (p / m).is_file() for p in tmp_path.parents for m in ("_toc.yml", "pyproject.toml")
        ):
            pytest.skip("the temporary folder lies inside a project")
        assert cache_dir() == user_cache_dir() == tmp_path / "xdg" / "chunklab"
        monkeypatch.setenv("CHUNKLAB_CACHE", str(tmp_path / "set"))
        assert cache_dir() == tmp_path / "set"
    finally:
        project_root.cache_clear()


@pytest.mark.parametrize("runs", [2, pytest.param(3, marks=pytest.mark.heavy)])
def test_concurrent_index_runs_leave_exactly_the_clean_store(corpus, runs):
    docs, work, cache, clean = corpus
    trial = store_faults.concurrent_trial(docs, work, cache, runs, seed=runs, clean=clean)
    assert trial["exit_codes"] == [0] * runs and trial["hung"] == 0
    assert trial["opened"] and trial["same_ids"] and trial["same_digest"]
    assert trial["lost"] == 0 and trial["duplicated"] == 0
