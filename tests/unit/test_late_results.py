"""The committed late-chunking result describes what the code chunks and asks today, and its page is its JSON.

``benchmarks/results/late_chunking.json`` comes from ``make late-bench``: when a chunker or the docs
question set changes, its chunk and question counts stop matching and this test says to re-run it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunklab.chunkers.catalog import get_strategy
from chunklab.evaluate import load_dataset
from chunklab.ingest.stages import chunk_document

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "benchmarks" / "results" / "late_chunking.json"


@pytest.fixture(scope="module")
def result() -> dict:
    return json.loads(RESULT.read_text(encoding="utf-8"))


def test_the_result_counts_the_questions_and_chunks_the_code_gives(result):
    data = load_dataset("docs")
    ids = sorted(d.doc_id for d in data.documents)[: result["documents"]]
    docs = [data.doc(i) for i in ids]
    assert result["questions"] == sum(q.doc_id in ids for q in data.questions)
    for size in result["sizes"]:
        strategy = get_strategy("recursive", size=size)
        chunks = len({c.id for d in docs for c in chunk_document(d, strategy)})
        for arm in (f"recursive-{size}", f"recursive-{size}+late"):
            (row,) = [r for r in result["rows"] if r["strategy"] == arm]
            assert row["chunks"] == chunks, f"{arm}: re-run make late-bench"
    assert {c["chunks"] for c in result["cost"]} <= {r["chunks"] for r in result["rows"]}


def test_the_result_states_the_window_and_when_and_where_it_was_measured(result):
    assert result["window_tokens"] == 256
    assert result["late"] == {"window_text_tokens": 254, "overlap_tokens": 64}
    assert result["measured"] and result["machine"]["cores"] and result["machine"]["load_average_before"]


def test_the_markdown_page_is_the_json_rendered(result, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # the script imports its sibling as a script does
    from benchmarks.late_chunking import markdown

    assert (RESULT.with_suffix(".md")).read_text(encoding="utf-8") == markdown(result)
