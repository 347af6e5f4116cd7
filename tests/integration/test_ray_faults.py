"""Faults on a multi-node Ray cluster on one machine: a node lost mid-stage, the driver killed mid-run.

One module-wide ``ray.cluster_utils.Cluster`` (a head without CPUs and three worker nodes of
1 CPU) runs the Ray engine unchanged; tests/support/_rayshim/chunklab_faults.py (documented test
scaffolding, the workers' setup hook) holds a worker inside the chunk or the embed stage so
that the test kills that worker's node there. Every faulty run is compared with a clean run:
exactly its ids, each once, with equal vectors. The static encoder keeps embedding cheap.
The larger runs are benchmarks/ray_faults.py (``make faults-ray``). The heavy-marked scenarios
(the chunk stage, the Chroma store) each add a node loss and a node start to the module: they
run in ``make test-heavy``, not in ``make test``.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from chunklab.ingest import get_engine
from chunklab.ingest.sinks.parquet import STAGING, read_dataset
from tests.support._rayshim import chunklab_faults as faults

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Ray is not installed: pip install 'chunklab[distributed]' to run the Ray fault tests",
)

# the driver imports the scaffolding as a package module; Ray's workers import it as
# ``chunklab_faults`` from their PYTHONPATH (tests/support/_rayshim, set by faults.start_cluster)

SPEC = {"name": "recursive", "size": 160}
OPTIONS = {"model": "static", "workers": 3, "batch_size": 16, "progress": False}
COLUMNS = ("id", "doc_id", "start", "end", "text", "metadata")


def _spec():
    from chunklab.chunkers.catalog import StrategySpec

    spec = dict(SPEC)
    return StrategySpec.of(spec.pop("name"), **spec)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 small Markdown notes, a few chunks each."""
    folder = tmp_path_factory.mktemp("notes")
    for i in range(30):
        paras = [
            f"Note {i}, part {j}: the depot at dock {i * 7 + j} ships {j + 3} parcels a day."
            for j in range(6)
        ]
        (folder / f"note{i:02d}.md").write_text(
            f"# Note {i}\n\n" + "\n\n".join(paras) + "\n", encoding="utf-8"
        )
    return folder


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory):
    """The cluster, its plan folder; Ray shut down at the end."""
    pytest.importorskip("ray")
    import ray

    folder = str(tmp_path_factory.mktemp("faults"))
    old = os.environ.get("PYTHONPATH")
    cluster = faults.start_cluster(folder, nodes=3)
    yield cluster, folder
    ray.shutdown()
    cluster.shutdown()
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


def _ingest(corpus: Path, **sink):
    return get_engine("ray")([str(corpus)], strategy=_spec(), **OPTIONS, **sink)


@pytest.fixture(scope="module")
def clean(bed, corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    faults.set_plan(bed[1], None)
    out = tmp_path_factory.mktemp("clean") / "shards"
    report = _ingest(corpus, out=out)
    return report, read_dataset(out).sort_by("id")


def _same_as_clean(out: Path, clean_table) -> None:
    assert faults.compare(read_dataset(out), clean_table) == {
        "missing": 0,
        "extra": 0,
        "duplicated": 0,
        "rows_equal": True,
        "vectors_equal": True,
    }


def test_the_clean_run_fills_every_shard_row_once(clean) -> None:
    report, table = clean
    assert report.documents == 30 and report.chunks == table.num_rows > 60
    assert len(set(table.column("id").to_pylist())) == table.num_rows


@pytest.mark.parametrize("stage", [pytest.param("chunk", marks=pytest.mark.heavy), "embed"])
def test_a_node_lost_mid_stage_costs_a_retry_not_a_row(
    bed, clean, corpus: Path, tmp_path: Path, stage
) -> None:
    out = tmp_path / "shards"
    report, _ = faults.lose_a_node_during(*bed, stage, lambda: _ingest(corpus, out=out))
    assert report.documents == 30 and not report.failed
    _same_as_clean(out, clean[1])
    assert not (out / STAGING).exists()


@pytest.mark.heavy
def test_a_node_lost_mid_embed_leaves_the_chroma_store_equal_to_a_clean_run(
    bed, clean, corpus: Path, tmp_path: Path
) -> None:
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    folder = tmp_path / "chroma"
    faults.lose_a_node_during(*bed, "embed", lambda: _ingest(corpus, store=str(folder)))
    store = ChunkStore(folder, encoder=Encoder("static"), create=False)
    chunks = sorted(store.iter_chunks(), key=lambda c: c.id)
    assert [c.id for c in chunks] == clean[1].column("id").to_pylist()
    assert [c.text for c in chunks] == clean[1].column("text").to_pylist()


def test_a_driver_killed_mid_run_is_finished_by_a_rerun_embedding_only_the_rest(
    bed, clean, corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "shards"
    staged = faults.kill_the_driver_during(*bed, [str(corpus)], {**OPTIONS, "spec": SPEC, "out": str(out)})
    assert not list(out.glob("part-*.parquet"))  # nothing of a run that did not finish is visible
    assert 0 < staged < clean[0].chunks
    again = _ingest(corpus, out=out)
    assert again.embedded == clean[0].chunks - staged  # only what the killed run had not written
    _same_as_clean(out, clean[1])
    assert _ingest(corpus, out=out).embedded == 0
