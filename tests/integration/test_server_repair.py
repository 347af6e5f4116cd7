"""A collection a Chroma server can no longer read after a crash: one line, then ``--repair``.

The damaged states are made deterministically on a real ``chroma run``: the server is stopped,
a file of the collection's vector segment (its HNSW index) is broken on disk, and the server
is started again on the same path. A truncated ``header.bin`` is what a server killed while
persisting the index leaves: Chroma then answers every read of the collection with
``InternalError: ... Error constructing hnsw segment reader ... Error loading hnsw index``. A
removed segment folder leaves ids, texts and metadata readable but not the vectors.
The collections are made with ``sync_threshold=2`` so that a small corpus already has its
index persisted (Chroma's default persists every 1000 records). Skipped without the chroma CLI.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from chromadb.errors import InternalError

from chunklab.cli import main
from chunklab.retrieval.chroma.digest import store_digest
from chunklab.retrieval.chroma.mend import is_damage
from chunklab.retrieval.chroma.store import ChunkStore
from tests.support.chroma_process import ChromaServer

INDEX = ["--model", "static", "--strategy", "recursive", "--size", "200", "--no-progress", "-j", "1"]


@pytest.fixture(scope="module")
def srv(chroma_server) -> ChromaServer:
    """The server itself: the tests stop it, damage its files and start it again."""
    return chroma_server


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repair-corpus") / "notes"
    root.mkdir()
    for d in range(8):
        parts = "\n\n".join(
            f"## Part {s}\n\n" + " ".join(f"note {d} part {s} line {w} on topic {w % 5}." for w in range(10))
            for s in range(3)
        )
        (root / f"note-{d:02d}.md").write_text(f"# Note {d}\n\n{parts}\n")
    return root


def indexed(srv: ChromaServer, corpus: Path, name: str) -> str:
    """Index ``corpus`` into ``name`` (its index persisted at every write); the store's digest."""
    import chromadb

    from chunklab.embed import get_encoder
    from chunklab.retrieval.chroma.backend import ChunklabEmbeddingFunction

    client = chromadb.HttpClient(host="127.0.0.1", port=srv.port)
    client.create_collection(
        name,
        embedding_function=ChunklabEmbeddingFunction(get_encoder("static")),  # type: ignore[arg-type]
        configuration={"hnsw": {"space": "cosine", "sync_threshold": 2}},
    )
    assert main(["index", str(corpus), "--server", srv.url, "--collection", name, *INDEX]) == 0
    return digest(srv, name)


def digest(srv: ChromaServer, name: str) -> str:
    with ChunkStore(url=srv.url, collection=name, create=False) as store:
        return store_digest(store)


def damage(srv: ChromaServer, name: str, how: str) -> None:
    """Stop the server, break the vector segment of ``name`` (``header`` or ``segment``), start it again."""
    srv.stop()
    data = srv.folder / "data"
    with sqlite3.connect(data / "chroma.sqlite3") as con:
        (segment,) = con.execute(
            "SELECT s.id FROM segments s JOIN collections c ON c.id = s.collection "
            "WHERE c.name = ? AND s.scope = 'VECTOR'",
            (name,),
        ).fetchone()
    folder = data / segment
    assert (folder / "header.bin").is_file()  # the index was persisted: the damage is real
    if how == "header":
        (folder / "header.bin").write_bytes(b"")
    else:
        shutil.rmtree(folder)
    srv.start()


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


def test_a_collection_the_server_cannot_read_is_one_line_naming_it_and_the_repair(srv, corpus, capsys):
    name = "broken-header"
    indexed(srv, corpus, name)
    damage(srv, name, "header")
    assert main(["search", srv.url, "note part line", "--collection", name]) == 2
    line = one_line(capsys)
    assert f"collection {name!r} on the Chroma server at {srv.url} is damaged" in line
    assert "Error loading hnsw index" in line and f"--collection {name} --repair" in line
    # the same re-run that failed with Chroma's InternalError in the fault trials
    assert main(["index", str(corpus), "--server", srv.url, "--collection", name, *INDEX]) == 2
    line = one_line(capsys)
    assert f"collection {name!r}" in line and f"chunklab index {corpus} --server {srv.url}" in line


def test_an_unreadable_collection_is_refused_without_paths_and_rebuilt_with_them(srv, corpus, capsys):
    name = "unreadable"
    clean = indexed(srv, corpus, name)
    damage(srv, name, "header")
    capsys.readouterr()
    assert main(["index", "--server", srv.url, "--collection", name, "--repair"]) == 2
    line = one_line(capsys)
    assert "returns none of its records" in line and "chunklab index PATHS --server" in line
    argv = ["index", str(corpus), "--server", srv.url, "--collection", name, "--repair", *INDEX]
    assert main(argv) == 0
    assert "returned none of its records" in capsys.readouterr().out
    assert digest(srv, name) == clean  # the same ids, texts, metadata and vectors as the clean run
    assert main(["search", srv.url, "note 3 part 1", "--collection", name, "--k", "1"]) == 0
    assert "note-03.md" in capsys.readouterr().out


def test_repair_keeps_every_record_and_recomputes_only_the_vectors_the_server_lost(srv, corpus, capsys):
    name = "lost-vectors"
    clean = indexed(srv, corpus, name)
    with ChunkStore(url=srv.url, collection=name, create=False) as store:
        records = store.count()
    damage(srv, name, "segment")
    with pytest.raises(InternalError, match="Error finding id|Error getting embedding"):
        digest(srv, name)  # the vectors cannot be read back
    capsys.readouterr()
    assert main(["index", "--server", srv.url, "--collection", name, "--repair"]) == 0
    out = capsys.readouterr().out
    assert f"kept {records} records (0 vectors as stored, {records} re-embedded)" in out
    assert digest(srv, name) == clean
    # a re-run afterwards embeds nothing and changes nothing: nothing lost, nothing doubled
    assert main(["index", str(corpus), "--server", srv.url, "--collection", name, *INDEX]) == 0
    assert f"added 0, unchanged {records}" in capsys.readouterr().out
    assert digest(srv, name) == clean


def test_repair_of_a_sound_collection_changes_nothing(srv, corpus, capsys):
    import chromadb

    name = "sound"
    clean = indexed(srv, corpus, name)
    before = sorted(c.name for c in chromadb.HttpClient(host="127.0.0.1", port=srv.port).list_collections())
    assert main(["search", srv.url, "note", "--collection", name, "--repair", "--k", "1"]) == 0
    assert "is sound" in capsys.readouterr().err
    after = sorted(c.name for c in chromadb.HttpClient(host="127.0.0.1", port=srv.port).list_collections())
    assert after == before and digest(srv, name) == clean


def test_only_chromas_segment_errors_count_as_damage():
    from chromadb.errors import InvalidArgumentError

    assert is_damage(InternalError("Error executing plan: Error constructing hnsw segment reader: x"))
    assert not is_damage(InternalError("something else went wrong"))
    assert not is_damage(InvalidArgumentError("Error loading hnsw index"))  # not Chroma's internal error
    assert not is_damage(ValueError("Error loading hnsw index"))


def test_search_repair_names_the_folder_store_repair_when_given_a_folder(tmp_path, capsys):
    assert main(["search", str(tmp_path), "a query", "--repair"]) == 2
    line = one_line(capsys)
    assert "search --repair is for a Chroma server URL" in line and "index --store FOLDER --repair" in line
