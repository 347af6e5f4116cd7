"""One path per job (issue 34): one load-and-chunk stage, one replacement rule, one encoder cache,
one default model and one collection-config record, whichever command or engine does the work."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from chunklab.chunk import Chunk
from chunklab.chunkers import catalog
from chunklab.chunkers._factories import StrategyParts
from chunklab.chunkers.catalog import StrategySpec
from chunklab.cli import main
from chunklab.datasets import registry
from chunklab.datasets.corpora.code import CodeCorpus, CodeFile, CorpusFile
from chunklab.datasets.corpora.code_poly import PolyFile
from chunklab.documents import Document
from chunklab.embed import DEFAULT_MODEL, Encoder
from chunklab.embed import encoder as encoder_module
from chunklab.ingest.engines.local import ingest
from chunklab.ingest.pipeline import IngestOptions
from chunklab.ingest.plan import collection_config
from chunklab.ingest.stages import ChunkConfig, Embedder, chunk_document
from chunklab.retrieval.filters import chunk_fingerprint
from tests.support.archivegen import tar_bytes

JS = (
    "/** Add every value of the list and return the total sum. */\n"
    "function addAll(values) {\n  return values.reduce((a, b) => a + b, 0);\n}\n\n"
    "class Stack {\n  push(v) {\n    this.items.push(v);\n  }\n}\n"
)
TS = "export function twice(x: number): number {\n  return 2 * x;\n}\n"
NOTEBOOK = {
    "cells": [
        {
            "cell_type": "markdown",
            "id": "a1",
            "metadata": {},
            "source": ["# Notes\n", "The valve takes 7 turns."],
        },
        {
            "cell_type": "code",
            "id": "b2",
            "metadata": {},
            "source": ["turns = 7\n"],
            "outputs": [],
            "execution_count": None,
        },
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}
MD = "# Pump\n\nThe pump runs at 40 rpm.\n\n## Valve\n\nSet the valve to 7 turns.\n"


def _pdf(lines: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    for line in lines:
        pdf.add_page()
        pdf.set_font("helvetica", size=12)
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def _shards(out: Path) -> list[dict]:
    return pq.read_table(out).select(["id", "doc_id", "start", "end", "text", "metadata"]).to_pylist()


# -- one rule for empty chunks ---------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _LineParams(catalog.StrategyParams):
    SIZE = "size"
    size: int = 100


def _lines(p: _LineParams) -> StrategyParts:
    def chunk(document: Document) -> list[Chunk]:
        out, start = [], 0
        for line in document.text.splitlines(keepends=True):
            out.append(Chunk(line, start, start + len(line), document.doc_id, {"strategy": "test-lines"}))
            start += len(line)
        return out

    return StrategyParts(chunk)


@pytest.fixture()
def line_strategy(monkeypatch: pytest.MonkeyPatch) -> str:
    """A strategy (one chunk per line, blank lines too) registered for this test only."""
    monkeypatch.setattr(catalog, "_REGISTRY", dict(catalog._REGISTRY))
    monkeypatch.setattr(catalog, "DEFAULTS", dict(catalog.DEFAULTS))
    catalog.register_strategy("test-lines", _LineParams)(_lines)
    return "test-lines"


def test_chunk_command_drops_whitespace_only_chunks_as_index_and_evaluate_do(tmp_path, line_strategy):
    (tmp_path / "a.txt").write_text("first line\n   \n\t\nlast line\n", encoding="utf-8")
    out = tmp_path / "chunks.jsonl"
    argv = ["chunk", str(tmp_path / "a.txt"), "--strategy", line_strategy, "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    texts = [json.loads(line)["text"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert texts == ["first line\n", "last line\n"]  # the blank lines gave no chunk
    doc = Document.from_text("first line\n   \n\t\nlast line\n", doc_id="a.txt")
    assert [c.text for c in chunk_document(doc, catalog.get_strategy(line_strategy))] == texts


def test_chunk_document_refuses_a_strategy_that_returns_no_chunk_objects(line_strategy):
    bad = dataclasses.replace(catalog.get_strategy(line_strategy), chunker=lambda document: ["text"])
    with pytest.raises(ValueError, match="returned str, not Chunk"):
        chunk_document(Document.from_text("x"), bad)


# -- corpus members loaded by their own format -----------------------------------------------
@pytest.fixture()
def mixed_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A registered corpus of a JavaScript member of an npm tarball and a two-page PDF."""
    archive = tmp_path / "adder-1.0.0.tgz"
    archive.write_bytes(tar_bytes({"package/lib/add.js": JS}))
    js = PolyFile(
        f"{archive}!/package/lib/add.js", "npm", "lib/add.js", len(JS), str(archive),
        "package/lib/add.js", "javascript", "adder", "1.0.0",
    )  # fmt: skip
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(_pdf(["The pump runs at 40 rpm.", "Set the valve to 7 turns."]))
    manual = CorpusFile(str(pdf), "pdf-docs", "demo/manual.pdf", pdf.stat().st_size)
    monkeypatch.setitem(
        registry._REGISTRY,
        "test-mixed",
        registry.CorpusEntry("test-mixed", "a JS member and a PDF", lambda **_: CodeCorpus([js, manual])),
    )
    return "test-mixed"


def test_corpus_files_declare_the_format_they_are_loaded_as(mixed_corpus):
    js, manual = registry.corpus(mixed_corpus)
    assert (js.format, manual.format) == ("javascript", "pdf")
    assert CodeFile is CorpusFile  # the name chapter 8 prints stays an alias
    assert CorpusFile("/x/a.py", "stdlib", "a.py", 1).format == "python"


def test_index_of_a_corpus_chunks_a_js_member_by_its_grammar_and_a_pdf_by_pages(mixed_corpus, tmp_path):
    out = tmp_path / "shards"
    argv = ["index", mixed_corpus, "--out", str(out), "--model", "static", "--size", "80", "--no-progress"]
    assert main(argv) == 0
    rows = _shards(out)
    js = [json.loads(r["metadata"]) for r in rows if r["doc_id"] == "adder==1.0.0:lib/add.js"]
    assert js and {m.get("language") for m in js} == {"javascript"}
    assert not any(m.get("fallback") for m in js)
    assert {"function", "class"} <= {m.get("kind") for m in js}
    pdf = [json.loads(r["metadata"]) for r in rows if r["doc_id"] == "pdf-docs:demo/manual.pdf"]
    assert pdf and all(m.get("page") == 1 for m in pdf) and max(m["page_end"] for m in pdf) == 2
    assert any("40 rpm" in r["text"] for r in rows if r["doc_id"] == "pdf-docs:demo/manual.pdf")


def test_chunk_and_index_give_the_same_chunks_on_a_mixed_folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(MD, encoding="utf-8")
    (docs / "util.ts").write_text(TS, encoding="utf-8")
    (docs / "add.js").write_text(JS, encoding="utf-8")
    (docs / "notes.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    (docs / "manual.pdf").write_bytes(_pdf(["The pump runs at 40 rpm.", "Set the valve to 7 turns."]))
    jsonl, shards = tmp_path / "chunks.jsonl", tmp_path / "shards"
    assert main(["chunk", str(docs), "--out", str(jsonl), "--no-progress"]) == 0
    assert main(["index", str(docs), "--out", str(shards), "--model", "static", "--no-progress"]) == 0
    by_chunk = {
        (d["id"], d["doc_id"], d["start"], d["end"], d["text"])
        for d in map(json.loads, jsonl.read_text(encoding="utf-8").splitlines())
    }
    by_index = {(r["id"], r["doc_id"], r["start"], r["end"], r["text"]) for r in _shards(shards)}
    assert by_chunk == by_index
    assert {d for _, d, *_ in by_index} == {"guide.md", "util.ts", "add.js", "manual.pdf", "notes.ipynb"}


# -- one replacement rule --------------------------------------------------------------------
def test_replace_document_treats_changed_metadata_as_changed_like_the_sinks(tmp_path):
    from chunklab.retrieval.chroma.store import ChunkStore

    store = ChunkStore(path=tmp_path / "db", encoder=Encoder("static"))
    a = Chunk("alpha text", 0, 10, "doc", {"strategy": "t", "tags": {"b", "a"}})
    assert store.replace_document("doc", [a]) == {"added": 1, "unchanged": 0, "deleted": 0}
    stored = next(store.iter_chunks())
    assert chunk_fingerprint(stored) == chunk_fingerprint(a)  # a set survives as its sorted list
    assert store.replace_document("doc", [a]) == {"added": 0, "unchanged": 1, "deleted": 0}
    b = Chunk("alpha text", 0, 10, "doc", {"strategy": "t", "tags": ["a", "c"]})
    assert b.id == a.id and chunk_fingerprint(b) != chunk_fingerprint(a)
    assert store.replace_document("doc", [b]) == {"added": 1, "unchanged": 0, "deleted": 0}


def test_one_json_rule_for_metadata_numpy_values_become_lists_and_numbers():
    import numpy as np

    from chunklab.retrieval.filters import metadata_json

    assert metadata_json({"b": np.arange(2), "a": np.float32(0.5), "s": {"y", "x"}}) == (
        '{"a": 0.5, "b": [0, 1], "s": ["x", "y"]}'
    )


# -- one encoder cache, one default model ----------------------------------------------------
def test_one_ingest_run_builds_one_encoder(tmp_path, monkeypatch):
    monkeypatch.setattr(encoder_module, "_ENCODERS", {})
    built: list[str] = []
    init = Encoder.__init__

    def counting_init(self, *args, **kwargs):
        built.append(args[0] if args else kwargs.get("model", DEFAULT_MODEL))
        init(self, *args, **kwargs)

    monkeypatch.setattr(Encoder, "__init__", counting_init)
    (tmp_path / "a.md").write_text(MD, encoding="utf-8")
    report = ingest(
        tmp_path / "a.md",
        strategy="semantic",
        model="static",
        out=tmp_path / "shards",
        workers=1,
        progress=False,
    )
    assert report.added > 0
    assert built == ["static"]  # the plan, the semantic chunker and the embedder share it


def test_get_encoder_shares_one_instance_per_distinct_options(tmp_path):
    from chunklab.embed import get_encoder

    assert get_encoder("static", cache_dir=str(tmp_path)) is get_encoder("static", cache_dir=tmp_path)
    assert get_encoder("static", cache_dir=tmp_path) is not get_encoder("static", cache_dir=tmp_path / "b")
    assert get_encoder("static", threads=1) is not get_encoder("static")
    assert get_encoder("static", threads=1).threads == 1
    with pytest.raises(ValueError, match="threads"):
        get_encoder("static", threads=0)
    with pytest.raises(ValueError, match="batch_size"):
        get_encoder("static").encode(["x"], batch_size=0)


def test_every_default_model_is_the_one_constant():
    assert DEFAULT_MODEL == "minilm"
    spec = StrategySpec.of("recursive")
    assert IngestOptions().model == ChunkConfig(spec).model == Encoder().model_kind == DEFAULT_MODEL
    assert Embedder.__init__.__defaults__[0] == DEFAULT_MODEL


def test_an_embedder_counts_only_its_own_texts_on_the_shared_encoder():
    first = Embedder("static")
    first.encoder.encode(["warm up"], show_progress=False)
    second = Embedder("static")
    assert second.encoder is first.encoder
    assert second.model_calls == 0 and first.model_calls == 1


# -- one collection-config record ------------------------------------------------------------
def test_benchmark_stores_record_the_collection_config_ingest_records(tmp_path):
    from chunklab.evaluate.benchmark import Benchmark

    strategy = catalog.get_strategy("recursive", size=300)
    bench = Benchmark.__new__(Benchmark)  # open_store needs no dataset
    store = bench.open_store(strategy, 0, tmp_path, Encoder("static"))
    assert store.recorded_config() == collection_config(strategy)
    assert collection_config(strategy) == {
        "strategy": "recursive",
        "params": dict(StrategySpec.of(strategy).params),
        "root": None,
        "context": False,
    }
