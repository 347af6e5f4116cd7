"""`chunklab index` on real, messy folders: one doc_id rule, per-file errors, nothing garbled, replace on
re-index.

Each test names the observed problem of issue 16 it reproduces (bad files are made in a temp dir).
"""

from __future__ import annotations

import json
import os

import pytest

from chunklab.cli import main

MD = "# Guide\n\nRestart the service with `svc restart`.\n\n## Logs\n\nLogs live in /var/log/svc.\n"
PY_LATIN = (
    "# -*- coding: latin-1 -*-\ndef caf\u00e9():\n    '''Return the caf\u00e9 menu.'''\n    return "
    "'\u00e9t\u00e9'\n"
)
HTML_LATIN = (
    '<html><head><meta charset="iso-8859-1"><title>Caf\u00e9</title></head>'
    "<body><h1>Cr\u00e8me</h1><p>Br\u00fbl\u00e9e au caf\u00e9.</p></body></html>"
)


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CHUNKLAB_CACHE", str(tmp_path_factory.getbasetemp() / "embed-cache"))


@pytest.fixture()
def small(tmp_path):
    root = tmp_path / "small"
    (root / "pkg").mkdir(parents=True)
    (root / "guide.md").write_text(MD, encoding="utf-8")
    (root / "pkg" / "menu.py").write_bytes(PY_LATIN.encode("latin-1"))
    (root / "page.html").write_bytes(HTML_LATIN.encode("iso-8859-1"))
    return root


def stored(store_dir, collection="chunks"):
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    store = ChunkStore(path=store_dir, collection=collection, encoder=Encoder())
    return list(store.iter_chunks())


def index(*argv):
    return main(["index", *map(str, argv), "--no-progress"])


def test_same_file_gives_identical_text_and_ids_through_chunk_and_index(small, tmp_path):
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", str(small), "--out", str(out), "--no-progress", "--size", "600"]) == 0
    via_chunk = {(r["id"], r["doc_id"], r["text"]) for r in map(json.loads, out.read_text().splitlines())}
    assert index(small, "--store", tmp_path / "store", "--size", "600") == 0
    via_index = {(c.id, c.doc_id, c.text) for c in stored(tmp_path / "store")}
    assert via_chunk == via_index
    texts = " ".join(t for _i, _d, t in via_index)
    assert (
        "caf\u00e9" in texts and "Br\u00fbl\u00e9e" in texts and "\ufffd" not in texts
    )  # cookie and meta charset


def test_index_doc_ids_identical_from_three_working_directories(small, tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    counts = []
    for k, (cwd, arg) in enumerate(((small.parent, "small"), (tmp_path.parent, small), (small, "."))):
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        assert index(arg, "--store", store) == 0
        counts.append(len(stored(store)))
        if k:  # the same documents: nothing added, nothing embedded again
            assert f"added 0, unchanged {counts[0]}, deleted 0" in capsys.readouterr().out
    assert counts[0] == counts[1] == counts[2] > 0  # not 2x, 3x: the same ids each time
    assert {c.doc_id for c in stored(store)} == {"guide.md", "pkg/menu.py", "page.html"}


def test_index_reports_each_bad_file_carries_on_and_exits_nonzero(small, tmp_path, capsys):
    os.symlink(small / "gone.md", small / "dangling.md")
    (small / "lib.md").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 200)  # a .so renamed .md
    (small / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    os.mkfifo(small / "pipe.md")
    rc = index(small, "--store", tmp_path / "store")
    out = capsys.readouterr().out
    assert rc == 1  # the dangling link failed
    assert "ok 3, skipped 3, failed 1" in out
    assert "dangling.md: dangling symbolic link" in out
    assert "lib.md: binary file (ELF" in out and "image.md: binary file (PNG" in out
    assert "pipe.md: not a regular file (FIFO)" in out
    assert {c.doc_id for c in stored(tmp_path / "store")} == {"guide.md", "pkg/menu.py", "page.html"}


def test_utf16_and_latin1_markdown_are_not_garbled_and_the_fallback_is_reported(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "utf16.md").write_bytes("# Titre\n\nCaf\u00e9 cr\u00e8me.\n".encode("utf-16"))
    (docs / "latin.md").write_bytes("# Men\u00fc\n\nK\u00e4se und Br\u00f6tchen.\n".encode("latin-1"))
    assert index(docs, "--store", tmp_path / "store") == 0
    out = capsys.readouterr().out
    assert "decoded by fallback 1" in out and "latin.md: not valid utf-8" in out
    texts = {c.doc_id: c.text for c in stored(tmp_path / "store")}
    assert "Caf\u00e9 cr\u00e8me" in texts["utf16.md"] and "\x00" not in texts["utf16.md"]
    assert "K\u00e4se" in texts["latin.md"]
    assert index(docs, "--store", tmp_path / "strict", "--strict") == 0
    assert {c.doc_id for c in stored(tmp_path / "strict")} == {"utf16.md"}


def test_reindex_after_an_edit_replaces_the_documents_chunks(small, tmp_path):
    store = tmp_path / "store"
    assert index(small, "--store", store) == 0
    (small / "guide.md").write_text("# Guide\n\nEverything changed here.\n", encoding="utf-8")
    assert index(small, "--store", store) == 0
    guide = [c for c in stored(store) if c.doc_id == "guide.md"]
    source = (small / "guide.md").read_text(encoding="utf-8")
    assert guide and all(source[c.start : c.end] == c.text for c in guide)  # no stale offsets left


def test_index_and_chunk_accept_the_same_strategy_names_and_alias(small, tmp_path):
    from chunklab.chunkers.catalog import available_strategies

    assert "markdown-hierarchy" in available_strategies()
    for name in ("markdown-hierarchy", "hierarchical_md"):
        out = tmp_path / f"{name}.jsonl"
        assert (
            main(["chunk", str(small / "guide.md"), "--strategy", name, "--out", str(out), "--no-progress"])
            == 0
        )
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert rows and {r["metadata"]["strategy"] for r in rows} == {"hierarchical"}


def test_a_missing_path_or_bad_option_is_a_usage_error(tmp_path, capsys):
    assert index(tmp_path / "nope", "--store", tmp_path / "s") == 2
    assert index(tmp_path, "--store", tmp_path / "s", "--strategy", "structural", "--overlap", "5") == 2
    assert "does not apply" in capsys.readouterr().err


def test_index_default_budget_fits_the_model_window_and_overflow_is_counted(tmp_path, capsys):
    import shutil
    import sysconfig

    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(os.path.join(sysconfig.get_paths()["stdlib"], "fnmatch.py"), docs / "fnmatch.py")
    assert index(docs, "--store", tmp_path / "fit") == 0
    out = capsys.readouterr().out
    assert "--size defaults to 600 characters" in out and "WARNING" not in out
    assert index(docs, "--store", tmp_path / "big", "--size", "1500") == 0  # what chunk/evaluate default to
    out = capsys.readouterr().out
    assert "WARNING" in out and "exceed the model's 256-token window" in out


def test_changing_the_chunker_without_clear_is_refused_and_clear_replaces_the_collection(
    small, tmp_path, capsys
):
    store = tmp_path / "store"
    assert index(small, "--store", store, "--size", "600") == 0
    before = {c.id for c in stored(store)}
    capsys.readouterr()
    assert index(small, "--store", store, "--size", "300") == 2  # would mix two chunkings in one collection
    assert "chunklab index: error:" in capsys.readouterr().err
    assert {c.id for c in stored(store)} == before
    assert index(small, "--store", store, "--size", "300", "--clear") == 0
    after = {c.id for c in stored(store)}
    assert after and not after & before


def test_an_interrupted_clear_run_leaves_the_previous_store_untouched(small, tmp_path, monkeypatch):
    from chunklab.ingest import stages

    store = tmp_path / "store"
    assert index(small, "--store", store, "--size", "600") == 0
    before = {(c.id, c.text) for c in stored(store)}
    real = stages.load
    loaded = []

    def interrupted(*args, **kwargs):
        loaded.append(args)
        if len(loaded) == 3:  # the last document, after the first batch went in: as Ctrl-C would arrive
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(stages, "load", interrupted)  # the in-process path runs the load stage here
    assert index(small, "--store", store, "--size", "300", "--clear") == 130
    assert len(loaded) == 3
    assert {(c.id, c.text) for c in stored(store)} == before  # neither emptied nor half-built
    monkeypatch.setattr(stages, "load", real)
    assert index(small, "--store", store, "--size", "300", "--clear") == 0
    after = {c.id for c in stored(store)}
    assert after and not after & {i for i, _t in before}


def test_reindexing_unchanged_files_embeds_nothing_and_prune_drops_vanished_documents(
    small, tmp_path, capsys
):
    store = tmp_path / "store"
    assert index(small, "--store", store) == 0
    n = len(stored(store))
    capsys.readouterr()
    assert index(small, "--store", store) == 0
    assert f"added 0, unchanged {n}, deleted 0" in capsys.readouterr().out
    (small / "page.html").unlink()
    assert index(small, "--store", store) == 0  # without --prune the vanished page stays
    assert "page.html" in {c.doc_id for c in stored(store)}
    assert index(small, "--store", store, "--prune") == 0
    assert "pruned 1 document no longer present" in capsys.readouterr().out
    assert {c.doc_id for c in stored(store)} == {"guide.md", "pkg/menu.py"}


def test_query_on_a_missing_store_or_collection_is_an_error_listing_what_exists(small, tmp_path, capsys):
    assert main(["index", "--store", str(tmp_path / "nothing"), "-q", "x"]) == 2
    assert "no store at" in capsys.readouterr().err
    assert not (tmp_path / "nothing").exists()
    assert index(small, "--store", tmp_path / "store") == 0
    capsys.readouterr()
    assert main(["index", "--store", str(tmp_path / "store"), "--collection", "chunkz", "-q", "x"]) == 2
    assert "'chunks'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["index", "search", "evaluate"])
def test_model_help_names_the_one_default_model(command, capsys):
    from chunklab.embed import DEFAULT_MODEL

    with pytest.raises(SystemExit):
        main([command, "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert f"default {DEFAULT_MODEL}" in said or f"else {DEFAULT_MODEL}" in said
