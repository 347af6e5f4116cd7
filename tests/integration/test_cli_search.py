"""``chunklab search`` and ``chunklab index --query``: one store argument, one ``--where`` grammar, JSON out.

The store is indexed once with the packaged MiniLM; a real ``chroma run`` server (the ``server`` fixture of
tests/integration/conftest.py) checks that a server URL works wherever a folder does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("CHUNKLAB_TORCH_THREADS", "1")

from chunklab.cli import main  # noqa: E402

A = "Scanners reboot when the power key is held for ten seconds; the screen goes dark and the logo shows."
B = "Depot doors open at six every weekday morning, and on Saturdays the loading bay opens an hour later."


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    (root / "scanner.txt").write_text(A, encoding="utf-8")
    (root / "depot.md").write_text("# Depot\n\n" + B, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def store(corpus, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("store") / "chroma"
    argv = ["index", str(corpus), "--store", str(path), "--strategy", "structural", "--no-progress"]
    assert main(argv) == 0
    return path


def hits(capsys, *argv: str) -> list[dict]:
    """The JSON lines a command printed (it must succeed)."""
    capsys.readouterr()
    assert main(list(argv)) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]


@pytest.mark.parametrize(
    "where",
    [
        ["--where", "doc_id=depot.md"],
        ["--where", '{"doc_id": "depot.md"}'],
        ["--where", "doc_id=depot.md", "--where", '{"start": {"$gte": 0}}'],
    ],
)
def test_search_and_index_query_take_both_where_spellings(store, capsys, where):
    found = hits(capsys, "search", str(store), "power key", "--json", *where)
    assert found and {h["doc_id"] for h in found} == {"depot.md"}
    queried = hits(capsys, "index", "--store", str(store), "--query", "power key", "--json", *where)
    assert queried and {h["doc_id"] for h in queried} == {"depot.md"}


def test_a_bad_where_names_both_spellings(store, capsys):
    assert main(["index", "--store", str(store), "--query", "x", "--where", "doc_id"]) == 2
    assert "--where expects KEY=VALUE or a JSON object" in capsys.readouterr().err
    assert main(["search", str(store), "x", "--where", "{not json"]) == 2
    assert "is not valid JSON" in capsys.readouterr().err


def test_search_json_has_doc_offsets_score_page_and_headings(store, capsys):
    (hit,) = hits(capsys, "search", str(store), "depot doors", "--json", "--k", "1")
    assert hit["doc_id"] == "depot.md" and isinstance(hit["score"], float)
    assert (hit["start"], hit["end"]) != (0, 0) and hit["text"] in ("# Depot\n\n" + B)
    assert hit["headings"] == ["Depot"] and hit["headings_path"] == "Depot" and "page" in hit


def test_search_and_index_query_answer_from_a_chroma_server(server, corpus, capsys):
    assert (
        main(["index", str(corpus), "--chroma-url", server, "--strategy", "recursive", "--no-progress"]) == 0
    )
    found = hits(capsys, "search", server, "when do the doors open", "--json", "--k", "1")
    assert [h["doc_id"] for h in found] == ["depot.md"]
    queried = hits(capsys, "index", "--chroma-url", server, "--query", "power key", "--json", "-k", "1")
    assert [h["doc_id"] for h in queried] == ["scanner.txt"]
    # the store argument takes the URL too
    again = hits(capsys, "index", "--store", server, "--query", "power key", "--json", "-k", "1")
    assert again == queried


def test_a_store_that_is_neither_folder_nor_url_is_named(tmp_path, capsys):
    assert main(["search", str(tmp_path / "nowhere"), "x"]) == 2
    assert "no store at" in (err := capsys.readouterr().err) and "server URL (http://host:port)" in err
