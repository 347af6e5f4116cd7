"""The Parquet sink without Ray: atomic, deterministic shards; a killed run resumed, a killed swap recovered.

The Ray-side faults (a node lost, the driver SIGKILLed) are tests/integration/test_ray_faults.py; here the
same guarantees are checked at the sink, where the crash points can be chosen exactly.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from chunklab.chunkers.catalog import get_strategy
from chunklab.ingest import get_engine, pipeline
from chunklab.ingest.sinks import parquet
from chunklab.ingest.sinks.parquet import JOURNAL, STAGING, ParquetSink, read_dataset, shard_paths

OPTIONS = {
    "strategy": get_strategy("recursive", size=120),
    "model": "static",
    "progress": False,
    "workers": 1,
}


@pytest.fixture()
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(5):
        body = "\n\n".join(
            f"Note {i}, paragraph {j}: the depot ships {j} parcels to dock {i}." for j in range(6)
        )
        (root / f"n{i}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    return root


@pytest.fixture()
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shards of at most 7 rows, so that a run gives several."""
    monkeypatch.setattr(pipeline, "ParquetSink", functools.partial(ParquetSink, rows_per_shard=7))


def _ingest(notes: Path, out: Path, **extra):
    return get_engine("local")([str(notes)], out=out, **OPTIONS, **extra)


def _visible(out: Path) -> list[str]:
    return sorted(n for n in os.listdir(out) if not n.startswith("."))


def _ids(out: Path) -> list[str]:
    """The ids of the visible shards, read as a plain Parquet reader would (no recovery)."""
    paths = shard_paths(out)
    return sorted(i for p in paths for i in pq.read_table(p, columns=["id"]).column("id").to_pylist())


def test_shards_are_named_by_their_sorted_rows_and_a_rerun_rewrites_none(
    notes: Path, tmp_path: Path, small_shards
) -> None:
    first = _ingest(notes, tmp_path / "a")
    names = _visible(tmp_path / "a")
    assert len(names) > 2 and names == [f"part-{i:05d}.parquet" for i in range(len(names))]
    inodes = {n: os.stat(tmp_path / "a" / n).st_ino for n in names}
    again = _ingest(notes, tmp_path / "a")
    assert again.embedded == 0 and _visible(tmp_path / "a") == names
    assert {n: os.stat(tmp_path / "a" / n).st_ino for n in names} == inodes  # identical shards skipped
    get_engine("local")([str(notes)], out=tmp_path / "b", **{**OPTIONS, "workers": 2, "batch_size": 3})
    for name in names:  # another run (other batches, other workers) gives the same shards
        assert pq.read_table(tmp_path / "a" / name).equals(pq.read_table(tmp_path / "b" / name))
    assert first.chunks == len(_ids(tmp_path / "a")) == len(set(_ids(tmp_path / "a")))


def test_an_edit_rewrites_only_the_shards_whose_rows_changed(
    notes: Path, tmp_path: Path, small_shards
) -> None:
    out = tmp_path / "shards"
    _ingest(notes, out)
    before = {n: os.stat(out / n).st_ino for n in _visible(out)}
    last = notes / "n4.md"  # sorted last: only the last shards hold its rows
    last.write_text(
        last.read_text(encoding="utf-8").replace("paragraph 5", "the fifth one"), encoding="utf-8"
    )
    again = _ingest(notes, out)
    after = {n: os.stat(out / n).st_ino for n in _visible(out)}
    assert 0 < again.embedded and before["part-00000.parquet"] == after["part-00000.parquet"]
    assert before != after
    assert _ids(out) == sorted(set(_ids(out))) and len(_ids(out)) == again.chunks


def test_a_killed_run_shows_nothing_and_the_rerun_embeds_only_what_it_had_not_staged(
    notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean_out = tmp_path / "clean"
    clean = _ingest(notes, clean_out)
    out = tmp_path / "shards"
    real, calls = ParquetSink._write, []

    def killed(self, rows):  # the process dies after its third committed batch
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(rows.num_rows)
        real(self, rows)

    monkeypatch.setattr(ParquetSink, "_write", killed)
    with pytest.raises(KeyboardInterrupt):
        _ingest(notes, out, batch_size=4)
    monkeypatch.undo()
    assert _visible(out) == [] and os.path.isdir(out / STAGING)
    staged = sum(calls)
    again = _ingest(notes, out)
    assert 0 < staged < clean.chunks and again.embedded == clean.chunks - staged
    assert read_dataset(out).sort_by("id").equals(read_dataset(clean_out).sort_by("id"))
    assert _visible(out) == _visible(clean_out) and not os.path.exists(out / STAGING)


@pytest.mark.parametrize("survive", range(3))
def test_a_swap_killed_after_any_rename_is_never_doubled_and_is_rolled_forward(
    notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_shards, survive: int
) -> None:
    out = tmp_path / "shards"
    _ingest(notes, out)
    edited = notes / "n0.md"  # sorted first: every later shard's rows move
    edited.write_text("# Note 0\n\nShort now.\n", encoding="utf-8")
    want = tmp_path / "want"
    _ingest(notes, want)
    real, renames = os.replace, []

    def dies(src, dst):
        if os.path.basename(str(dst)).startswith("part-"):
            if len(renames) == survive:
                raise KeyboardInterrupt  # SIGKILL during the swap
            renames.append(dst)
        real(src, dst)

    monkeypatch.setattr(parquet.os, "replace", dies)
    with pytest.raises(KeyboardInterrupt):
        _ingest(notes, out)
    monkeypatch.undo()
    assert os.path.exists(out / JOURNAL)
    ids, final = _ids(out), _ids(want)
    assert len(ids) == len(set(ids)) and set(ids) <= set(final)  # rows missing, never doubled
    assert read_dataset(out).sort_by("id").equals(read_dataset(want).sort_by("id"))  # rolled forward
    assert _visible(out) == _visible(want) and not os.path.exists(out / JOURNAL)
    assert sorted(os.listdir(out)) == _visible(out)  # no temporary file or staging folder left


def test_staged_rows_of_another_record_are_dropped_not_reused(
    notes: Path, tmp_path: Path, monkeypatch
) -> None:
    out = tmp_path / "shards"
    monkeypatch.setattr(ParquetSink, "__exit__", lambda self, *exc: None)  # a run that never commits
    _ingest(notes, out)
    monkeypatch.undo()
    assert os.listdir(out / STAGING)
    other = get_engine("local")(
        [str(notes)], out=out, **{**OPTIONS, "strategy": get_strategy("fixed", size=100)}
    )
    assert other.embedded == other.chunks  # nothing of the recursive run's staging was taken
    assert {r.count('"strategy": "fixed"') for r in read_dataset(out).column("metadata").to_pylist()} == {1}
