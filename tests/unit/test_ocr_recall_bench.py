"""benchmarks/ocr_recall.py's pure parts on a tiny generated PDF: question pages, the draw, hits, interval.

No OCR and no encoder here (the benchmark itself runs them); the committed result is checked
to be its own JSON rendered.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.ocr_recall import (
    RESULTS,
    by_kind,
    hit,
    markdown,
    page_texts_of,
    paired_summary,
    pick_pages,
    question_pages,
    subset_pdf,
)
from tests.support import docgen

PUMPS = "Pumps are checked every morning by the operator on duty, and each check is written in the log."
VALVES = "Valves are replaced every eighteen months, and the replacement is entered in the maintenance plan."
BOTH = "Filters are cleaned weekly."


def _row(qid: str, answer: str | list[str]) -> dict[str, object]:
    return {"id": qid, "question": "?", "path": "m.pdf", "answer": answer, "kind": "fact", "split": "dev"}


@pytest.fixture(scope="module")
def manual(tmp_path_factory):
    """A two-page PDF: pumps on page 1, valves on page 2, the filter sentence on both."""
    folder = tmp_path_factory.mktemp("ocr-recall")
    return docgen.pdf_pages(folder / "m.pdf", [[PUMPS, BOTH], [VALVES, BOTH]])


def test_a_question_gets_the_one_page_that_holds_all_its_quotes(manual):
    texts = {"m.pdf": page_texts_of(manual)}
    rows = [
        _row("pumps", PUMPS),
        _row("valves", "Valves are replaced   every eighteen months"),  # typed spacing is tolerated
        _row("both", BOTH),  # on two pages: no single page
        _row("split", [PUMPS, VALVES]),  # its quotes on different pages
        _row("absent", "Compressors are drained daily."),
        {**_row("other", PUMPS), "path": "other.pdf"},  # a file that was not read
    ]
    assert question_pages(texts, rows) == {"pumps": 1, "valves": 2}


def test_a_subset_pdf_keeps_the_chosen_pages_in_order(manual, tmp_path):
    target = tmp_path / "sub" / "m.pdf"
    subset_pdf(manual, [2], target)
    pages = page_texts_of(target)
    assert len(pages) == 1
    assert question_pages({"m.pdf": pages}, [_row("valves", VALVES)]) == {"valves": 1}


def test_the_draw_is_seeded_sorted_and_takes_all_when_fewer():
    candidates = [("b.pdf", p) for p in range(1, 30)] + [("a.pdf", 3), ("a.pdf", 3)]
    first = pick_pages(candidates, 5, seed=7)
    assert first == pick_pages(candidates, 5, seed=7) == sorted(first)
    assert len(set(first)) == 5
    assert pick_pages([("a.pdf", 2), ("a.pdf", 1), ("a.pdf", 2)], 5, seed=0) == [("a.pdf", 1), ("a.pdf", 2)]
    with pytest.raises(ValueError, match="n must be at least 1, got 0"):
        pick_pages(candidates, 0, seed=0)


def test_a_hit_needs_every_quote_in_a_retrieved_chunk_of_its_file():
    ranked = [("m.pdf", "Pumps are checked every\nmorning by the operator."), ("x.pdf", VALVES)]
    assert hit(ranked, "m.pdf", ["Pumps are checked every morning"])  # a line break where a space was typed
    assert not hit(ranked, "m.pdf", [VALVES])  # only in another file's chunk
    assert not hit(ranked, "m.pdf", ["Pumps are checked", "Valves are replaced"])
    assert hit(ranked + [("m.pdf", VALVES)], "m.pdf", ["Pumps are checked", "Valves are replaced"])


def test_the_paired_interval_is_zero_for_equal_sides_and_below_zero_for_a_loss():
    docs = ["a", "a", "b", "b", "c", "c"]
    same = paired_summary([1, 0, 1, 1, 0, 1], [1, 0, 1, 1, 0, 1], docs)
    assert same["ocr_minus_digital"] == {"mean": 0.0, "ci95": [0.0, 0.0]}
    assert same["clusters"] == 3
    worse = paired_summary([1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 0, 1], docs)
    assert worse["ocr_minus_digital"]["mean"] == pytest.approx(-4 / 6, abs=1e-4)
    assert worse["ocr_minus_digital"]["ci95"][1] < 0
    assert worse["digital"] == {"mean": 1.0, "ci95": [1.0, 1.0]}
    with pytest.raises(ValueError, match="of one length, got 2, 1, 2"):
        paired_summary([1, 0], [1], ["a", "b"])


def test_recall_by_kind_counts_each_kind_on_each_side():
    rows = [{"kind": "fact"}, {"kind": "table"}, {"kind": "fact"}]
    got = by_kind(rows, {"digital": [1.0, 1.0, 0.0], "ocr": [1.0, 0.0, 0.0]})
    assert got == {
        "fact": {"questions": 2, "digital": 0.5, "ocr": 0.5},
        "table": {"questions": 1, "digital": 1.0, "ocr": 0.0},
    }


def test_the_committed_result_is_its_json_rendered():
    if not RESULTS.is_file():
        pytest.skip("benchmarks/results/ocr_recall.json has not been made (make bench-ocr-recall)")
    result = json.loads(RESULTS.read_text(encoding="utf-8"))
    assert RESULTS.with_suffix(".md").read_text(encoding="utf-8") == markdown(result)
    assert result["questions"] == len(result["per_question"])
    s = result["recall_at_5"]
    for name in ("digital", "ocr"):
        rows = [q[name] for q in result["per_question"]]
        assert s[name]["mean"] == pytest.approx(sum(rows) / len(rows), abs=1e-4)
    lost = {row["id"] for row in result["quotes_lost_by_ocr"]}
    assert lost == {q["id"] for q in result["per_question"] if q["quote_lost_by_ocr"]}
