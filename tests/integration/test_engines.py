"""The ingest engines: local (processes) and Ray (Ray Data) give the same chunks and vectors.

One local Ray cluster (``ray.init(num_cpus=2)``) is started for the whole module; the tests
that need it are skipped when Ray is not installed (it is pinned in requirements.txt).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.chunk import embedding_text
from chunklab.chunkers.catalog import StrategySpec, get_strategy
from chunklab.documents import load_document
from chunklab.ingest import get_engine
from chunklab.ingest.plan import WorkItem
from chunklab.ingest.sinks import chunks_of
from chunklab.ingest.stages import ChunkConfig, chunk_items, encode_items
from tests.support import RAY_SHIM

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*", "ignore::UserWarning:ray.*")

ROOT = Path(__file__).resolve().parents[2]
SHIM = RAY_SHIM
STRATEGY = get_strategy("recursive", size=300)

PY = '''"""A module."""


def add(a, b):
    """Add two numbers."""
    return a + b


class Box:
    """A box."""

    def open(self):
        return "{}"
'''


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dozen files: Markdown, Python, text; one binary file and one dangling link among them."""
    root = tmp_path_factory.mktemp("corpus")
    (root / "sub").mkdir()
    for i in range(4):
        body = "\n\n".join(
            f"Paragraph {j} of note {i}: " + "the depot ships parcels daily. " * (3 + j) for j in range(6)
        )
        (root / f"note{i}.md").write_text(f"# Note {i}\n\n## Part\n\n{body}\n", encoding="utf-8")
    for i in range(4):
        (root / "sub" / f"mod{i}.py").write_text(PY.replace("add", f"add{i}") * (i + 1), encoding="utf-8")
    for i in range(3):
        (root / f"log{i}.txt").write_text(("line %d of log\n" * 40) % tuple(range(40)), encoding="utf-8")
    (root / "sub" / "blob.txt").write_bytes(b"\x00\x01\x02binary\xff" * 50)
    os.symlink(root / "missing.md", root / "gone.md")
    return root


@pytest.fixture(scope="module")
def local_out(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("local") / "shards"
    report = get_engine("local")(
        [str(corpus)], strategy=STRATEGY, model="static", out=out, workers=2, progress=False
    )
    return report, out


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    from chunklab.ingest.engines.ray import connect

    # Ray's helper processes skip a slow, unused import (see tests/support/_rayshim): on a shared
    # 2-core machine they would otherwise miss the raylet's start-up deadline.
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SHIM), old]))
    connect(num_cpus=2)
    yield ray
    ray.shutdown()
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def ray_out(corpus: Path, ray_cluster, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("ray") / "shards"
    report = get_engine("ray")(
        [str(corpus)], strategy=STRATEGY, model="static", out=out, workers=2, progress=False
    )
    return report, out


def _table(out: Path):
    return pq.read_table(out).sort_by("id")


def _vectors(table) -> np.ndarray:
    return np.asarray(table.column("vector").to_pylist(), dtype=np.float32)


def test_ray_and_local_engines_give_the_same_ids_spans_and_vectors(local_out, ray_out) -> None:
    a, b = _table(local_out[1]), _table(ray_out[1])
    assert a.num_rows == b.num_rows > 20
    for column in ("id", "doc_id", "start", "end", "text", "metadata"):
        assert a.column(column).to_pylist() == b.column(column).to_pylist(), column
    np.testing.assert_allclose(_vectors(a), _vectors(b), atol=1e-6)
    assert local_out[0].chunks == ray_out[0].chunks == a.num_rows
    assert sorted(local_out[0].skipped) == sorted(ray_out[0].skipped)
    assert sorted(local_out[0].failed) == sorted(ray_out[0].failed)


def test_parquet_rows_are_the_strategys_chunks_with_their_vectors(corpus: Path, local_out) -> None:
    table = _table(local_out[1])
    assert table.column_names == ["id", "doc_id", "start", "end", "text", "metadata", "vector"]
    from chunklab.documents import iter_paths
    from chunklab.embed import Encoder

    expected = {}
    for path in iter_paths([str(corpus)]):
        if path.endswith(("blob.txt", "gone.md")):
            continue
        doc = load_document(path, root=str(corpus))
        for c in STRATEGY(doc):
            expected[c.id] = (c, doc.text)
    chunks = chunks_of(table)  # rebuilds each Chunk from its row; raises if an id changed
    assert {c.id for c in chunks} == set(expected)
    for c in chunks:
        want, source = expected[c.id]
        assert (c.doc_id, c.start, c.end, c.text, c.metadata) == (
            want.doc_id,
            want.start,
            want.end,
            want.text,
            want.metadata,
        )
        assert source[c.start : c.end] == c.text
    sample = [expected[i][0] for i in table.column("id").to_pylist()[:8]]
    direct = Encoder("static").encode([embedding_text(c) for c in sample])
    np.testing.assert_allclose(_vectors(table)[:8], direct, atol=1e-6)


def test_a_bad_file_is_reported_with_its_path_and_the_run_goes_on(corpus: Path, local_out, ray_out) -> None:
    for report, _ in (local_out, ray_out):
        assert [p for p, _ in report.skipped] == [str(corpus / "sub" / "blob.txt")]
        assert "binary" in report.skipped[0][1]
        assert [p for p, _ in report.failed] == [str(corpus / "gone.md")]
        assert report.documents == 11
        assert report.exit_code == 1


def test_reindexing_with_either_engine_is_an_idempotent_upsert(
    corpus: Path, ray_cluster, tmp_path: Path
) -> None:
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    folder = tmp_path / "chroma"
    first = get_engine("local")(
        [str(corpus)], strategy=STRATEGY, model="static", store=str(folder), workers=1, progress=False
    )
    store = ChunkStore(folder, encoder=Encoder("static"), create=False)
    ids = sorted(c.id for c in store.iter_chunks())
    assert len(ids) == first.chunks > 20
    again = get_engine("ray")(
        [str(corpus)], strategy=STRATEGY, model="static", store=str(folder), workers=2, progress=False
    )
    assert again.chunks == first.chunks and again.embedded == 0 and again.deleted == 0
    store = ChunkStore(folder, encoder=Encoder("static"), create=False)
    assert sorted(c.id for c in store.iter_chunks()) == ids
    hit, score = store.search("the depot ships parcels daily", k=1)[0]
    assert hit.doc_id.startswith("note") and score > 0.3


def test_rerunning_into_the_same_parquet_folder_rewrites_it(corpus: Path, local_out, tmp_path: Path) -> None:
    out = tmp_path / "shards"
    for _ in range(2):
        get_engine("local")(
            [str(corpus)], strategy=STRATEGY, model="static", out=out, workers=1, progress=False
        )
    assert sorted(os.listdir(out)) == ["part-00000.parquet"]
    assert _table(out).drop_columns(["vector"]).equals(_table(local_out[1]).drop_columns(["vector"]))


@given(st.lists(st.one_of(st.text(max_size=400), st.binary(max_size=200)), min_size=1, max_size=6))
def test_every_document_gives_chunks_or_one_problem_row(tmp_path_factory, contents) -> None:
    folder = tmp_path_factory.mktemp("h")
    items = []
    for i, content in enumerate(contents):
        path = folder / f"f{i}.txt"
        path.write_bytes(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)
        items.append(WorkItem(str(path), str(folder), doc_id=path.name))
    table = chunk_items(encode_items(items), ChunkConfig(StrategySpec.of("recursive", size=120)))
    rows = table.to_pylist()
    for item in items:
        mine = [r for r in rows if r["source"] == item.source]
        outcome = [r for r in mine if r["status"] not in ("embed", "unchanged")]
        assert len(outcome) == 1 and outcome[0]["doc_id"] == item.doc_id  # one row says what became of it
        if outcome[0]["status"] != "document":
            assert len(mine) == 1 and outcome[0]["error"] and outcome[0]["status"] in ("skipped", "failed")
            continue
        mine = [r for r in mine if r["status"] == "embed"]  # nothing is stored yet: every chunk is new
        assert outcome[0]["chunks"] == len(mine)
        source = load_document(item.source, root=str(folder)).text
        assert all(source[r["start"] : r["end"]] == r["text"] and r["text"].strip() for r in mine)
        assert "".join(source.split()) == "".join("".join(r["text"] for r in mine).split())
        assert all(json.loads(r["metadata"])["strategy"] == "recursive" for r in mine)


def test_engine_arguments_are_checked(corpus: Path, tmp_path: Path) -> None:
    local = get_engine("local")
    with pytest.raises(ValueError, match="workers"):
        local([str(corpus)], strategy=STRATEGY, out=tmp_path / "o", workers=0)
    with pytest.raises(ValueError, match="at most one of"):
        local([str(corpus)], strategy=STRATEGY, out=tmp_path / "o", store=str(tmp_path / "s"))
    with pytest.raises(ValueError, match="address"):
        local([str(corpus)], strategy=STRATEGY, out=tmp_path / "o", address="auto")
    with pytest.raises(ValueError, match="engine must be one of"):
        get_engine("spark")
    with pytest.raises(FileNotFoundError, match="corpus name"):
        local(["no-such-corpus"], strategy=STRATEGY, out=tmp_path / "o")


def test_importing_chunklab_never_imports_ray() -> None:
    code = (
        "import sys, chunklab, chunklab.ingest, chunklab.ingest.engines.ray, chunklab.ingest.engines.local, "
        "chunklab.commands.index, chunklab.cli; chunklab.cli.build_parser(); print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_engine_ray_without_ray_says_how_to_install_it(corpus: Path, tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['ray'] = None; from chunklab.cli import main; "
        f"sys.exit(main(['index', {str(corpus)!r}, '--engine', 'ray', '--out', {str(tmp_path / 'o')!r}]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert "pip install 'chunklab[distributed]'" in out.stderr


def test_cli_index_engine_local_writes_parquet_and_reports_bad_files(
    corpus: Path, local_out, tmp_path: Path
) -> None:
    out = tmp_path / "cli"
    args = [
        "index",
        str(corpus),
        "--engine",
        "local",
        "--out",
        str(out),
        "--model",
        "static",
        "--strategy",
        "recursive",
        "--size",
        "300",
        "-j",
        "2",
        "--no-progress",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "chunklab.cli", *args], capture_output=True, text=True, cwd=ROOT
    )
    assert run.returncode == 1, run.stderr  # a file failed: the run finished and says so
    assert str(corpus / "gone.md") in run.stdout and "blob.txt" in run.stdout
    assert _table(out).column("id").equals(_table(local_out[1]).column("id"))


def test_both_engines_upsert_the_same_chunks_into_a_chroma_server(
    corpus: Path,
    local_out,
    ray_cluster,
    server: str,
) -> None:
    from chunklab.retrieval.chroma.store import ChunkStore

    options = {
        "strategy": STRATEGY,
        "model": "static",
        "chroma_url": server,
        "collection": "engines",
        "progress": False,
    }
    by_ray = get_engine("ray")([str(corpus)], workers=2, **options)
    by_local = get_engine("local")([str(corpus)], workers=1, **options)  # the same ids: an upsert in place
    store = ChunkStore(url=server, collection="engines", create=False)
    ids = sorted(c.id for c in store.iter_chunks())
    assert len(ids) == by_ray.chunks == by_local.chunks
    assert by_local.embedded == 0 and by_local.unchanged == by_ray.chunks  # nothing embedded twice
    assert ids == _table(local_out[1]).column("id").to_pylist()


# -- one pipeline: a store written by any engine is updated by any other ---------------------
#: (engine flag or None for in-process) in the order each chain re-indexes the same store
CHAINS = {
    "in-process first": (None, "local", "ray", None),
    "ray first": ("ray", "local", None, "ray"),
}


def _cli_index(corpus: Path, engine: str | None, sink: list[str], capsys) -> dict[str, int]:
    """``chunklab index`` through the CLI (this process: the module's Ray cluster is reused); its counts."""
    import re

    from chunklab.cli import main

    argv = ["index", str(corpus), *sink, "--model", "static", "--strategy", "recursive", "--size", "300"]
    argv += ["--no-progress"] + (["--engine", engine, "-j", "2"] if engine else [])
    capsys.readouterr()
    assert main(argv) == 1  # gone.md fails: the run goes on and says so
    out = capsys.readouterr().out
    found = re.search(r"added (\d+), unchanged (\d+), deleted (\d+).*; embedded (\d+)", out)
    assert found, out
    return dict(zip(("added", "unchanged", "deleted", "embedded"), map(int, found.groups()), strict=True))


def _stored_vectors(folder: Path) -> tuple[list[str], np.ndarray]:
    from chunklab.retrieval.chroma.store import ChunkStore

    got = ChunkStore(folder, create=False).collection.get(include=["embeddings"])
    order = np.argsort(got["ids"])
    return [got["ids"][i] for i in order], np.asarray(got["embeddings"], dtype=np.float32)[order]


@pytest.mark.parametrize("chain", list(CHAINS))
def test_a_store_built_by_any_engine_is_reindexed_by_any_other_without_embedding(
    corpus: Path, local_out, ray_cluster, tmp_path: Path, capsys, chain: str
) -> None:
    folder = tmp_path / "store"
    first, *others = CHAINS[chain]
    built = _cli_index(corpus, first, ["--store", str(folder)], capsys)
    ids, vectors = _stored_vectors(folder)
    assert built["embedded"] == built["added"] == len(ids) > 20
    assert ids == _table(local_out[1]).column("id").to_pylist()  # the chunks the engines agree on
    np.testing.assert_allclose(vectors, _vectors(_table(local_out[1])), atol=1e-6)
    for engine in others:
        again = _cli_index(corpus, engine, ["--store", str(folder)], capsys)
        assert again == {"added": 0, "unchanged": len(ids), "deleted": 0, "embedded": 0}, engine
        now_ids, now_vectors = _stored_vectors(folder)
        assert now_ids == ids and np.array_equal(now_vectors, vectors), engine


def test_parquet_shards_written_by_one_engine_are_updated_by_the_other(
    corpus: Path, local_out, ray_cluster, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "shards"
    built = _cli_index(corpus, "ray", ["--out", str(out)], capsys)
    before = _table(out)
    again = _cli_index(corpus, "local", ["--out", str(out)], capsys)
    assert built["embedded"] == before.num_rows and again["embedded"] == 0
    assert _table(out).equals(before)
