"""Your corpus, your questions: the three question formats and their error messages (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunklab.evaluate.userdata import detect_format, load_user_dataset

GUIDE = (
    "# Guide\n\nRestart the scanner by holding the power key for ten seconds.\n\nThe depot opens at 06:00.\n"
)
NOTES = "Rollback uses the blue button. The blue button is on the left.\n"


def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (root / "guide.md").write_text(GUIDE, encoding="utf-8")
    (root / "sub" / "notes.txt").write_text(NOTES, encoding="utf-8")
    return root


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# ----------------------------------------------------------------- quotes


def test_quotes_are_located_to_character_offsets(tmp_path):
    root = corpus(tmp_path)
    qfile = tmp_path / "q.json"
    qfile.write_text(
        json.dumps(
            [
                {
                    "id": "restart",
                    "question": "How do I restart?",
                    "doc": "guide.md",
                    "answer": "holding the power key",
                },
                {
                    "question": "When does the depot open?",
                    "doc": "guide.md",
                    "answer": ["06:00"],
                    "split": "dev",
                },
            ]
        ),
        encoding="utf-8",
    )
    data = load_user_dataset(root, qfile)
    assert data.format == "quotes"
    q1, q2 = data.questions
    assert q1.id == "restart" and q2.id == "q2"
    s, e = q1.gold_spans[0]
    assert GUIDE[s:e] == "holding the power key"
    assert GUIDE.index("holding") == s
    assert q2.split == "dev" and data.split("dev").questions == [q2]


def test_ambiguous_and_absent_quotes_name_the_question(tmp_path):
    root = corpus(tmp_path)
    qfile = write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"id": "amb", "question": "Which button?", "doc": "sub/notes.txt", "answer": "blue button"},
            {"id": "gone", "question": "Which key?", "doc": "guide.md", "answer": "the red key"},
        ],
    )
    with pytest.raises(ValueError) as err:
        load_user_dataset(root, qfile, format="quotes")
    msg = str(err.value)
    assert "2 problem(s)" in msg
    assert "question 'amb'" in msg and "found 2 times (ambiguous" in msg
    assert "question 'gone'" in msg and "not found in guide.md" in msg


def test_a_question_about_a_file_outside_the_corpus_is_an_error(tmp_path):
    root = corpus(tmp_path)
    qfile = write_jsonl(tmp_path / "q.jsonl", [{"question": "x?", "doc": "missing.md", "answer": "x"}])
    with pytest.raises(ValueError, match=r"doc 'missing.md' is not a readable file of the corpus"):
        load_user_dataset(root, qfile)


def test_skip_leaves_bad_questions_out_and_says_so(tmp_path):
    root = corpus(tmp_path)
    qfile = write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"id": "ok", "question": "Open?", "doc": "guide.md", "answer": "06:00"},
            {"id": "bad", "question": "Which key?", "doc": "guide.md", "answer": "the red key"},
        ],
    )
    data = load_user_dataset(root, qfile, on_error="skip")
    assert [q.id for q in data.questions] == ["ok"]
    assert len(data.skipped) == 1 and "'bad'" in data.skipped[0]


def test_corpus_files_are_read_as_index_reads_them(tmp_path):
    """Issue 30: a Latin-1 file is decoded by the reported fallback, a binary file is skipped, not fatal."""
    root = corpus(tmp_path)
    (root / "broken.txt").write_bytes(b"caf\xe9 cr\xe8me br\xfbl\xe9e\n")
    (root / "logo.txt").write_bytes(b"\x00\x01PNG\x00")
    qfile = write_jsonl(tmp_path / "q.jsonl", [{"question": "Open?", "doc": "guide.md", "answer": "06:00"}])
    data = load_user_dataset(root, qfile, on_error="fail")
    (latin,) = [d for d in data.documents if d.doc_id == "broken.txt"]
    assert latin.text.startswith("caf\u00e9") and "windows-1252" in latin.metadata["decode_problem"]
    assert "logo.txt" not in {d.doc_id for d in data.documents}
    assert any("logo.txt" in p and "binary" in p for p in data.skipped)


def test_empty_corpus_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    qfile = write_jsonl(tmp_path / "q.jsonl", [{"question": "x?", "doc": "a.md", "answer": "x"}])
    with pytest.raises(ValueError, match="no readable documents"):
        load_user_dataset(tmp_path / "empty", qfile)


def test_missing_fields_are_named(tmp_path):
    root = corpus(tmp_path)
    qfile = write_jsonl(tmp_path / "q.jsonl", [{"question": "x?", "doc": "guide.md"}])
    with pytest.raises(ValueError, match=r"missing field\(s\) \['answer'\]"):
        load_user_dataset(root, qfile, format="quotes")


# ----------------------------------------------------------------- spans


def spans_row(doc_text: str, quote: str, corpus_id: str, question: str = "Q?") -> dict:
    s = doc_text.index(quote)
    return {
        "question": question,
        "corpus_id": corpus_id,
        "references": json.dumps([{"content": quote, "start_index": s, "end_index": s + len(quote)}]),
    }


def test_spans_csv_accepts_corpus_ids_with_or_without_extension(tmp_path):
    import csv

    root = corpus(tmp_path)
    qfile = tmp_path / "q.csv"
    with qfile.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["question", "corpus_id", "references"])
        w.writeheader()
        w.writerow(spans_row(GUIDE, "ten seconds", "guide"))
        w.writerow(spans_row(NOTES, "on the left", "sub/notes.txt"))
    data = load_user_dataset(root, qfile)
    assert data.format == "spans"
    assert [q.doc_id for q in data.questions] == ["guide.md", "sub/notes.txt"]
    s, e = data.questions[1].gold_spans[0]
    assert NOTES[s:e] == "on the left"


def test_span_whose_text_differs_from_content_names_the_row(tmp_path):
    root = corpus(tmp_path)
    good = spans_row(GUIDE, "ten seconds", "guide")
    bad = {
        "question": "Q?",
        "corpus_id": "guide",
        "references": [{"content": "ten seconds", "start_index": 0, "end_index": 11}],
    }
    qfile = write_jsonl(tmp_path / "q.jsonl", [good, bad])
    with pytest.raises(ValueError, match=r"row 2 reference 0: guide.md\[0:11\] is '# Guide"):
        load_user_dataset(root, qfile)


def test_span_out_of_range_and_missing_columns_are_errors(tmp_path):
    root = corpus(tmp_path)
    far = {
        "question": "Q?",
        "corpus_id": "guide.md",
        "references": [{"content": "x", "start_index": 500, "end_index": 501}],
    }
    with pytest.raises(ValueError, match=r"row 1 reference 0: span \(500, 501\) out of range"):
        load_user_dataset(root, write_jsonl(tmp_path / "q.jsonl", [far]), format="spans")
    qfile = tmp_path / "q.csv"
    qfile.write_text("question,corpus_id\nQ?,guide\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['references'\]"):
        load_user_dataset(root, qfile)


# ----------------------------------------------------------------- beir


def beir_folder(tmp_path: Path) -> Path:
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    write_jsonl(
        root / "corpus.jsonl",
        [
            {"_id": "d1", "title": "Scanner", "text": "Hold the power key for ten seconds to restart."},
            {"_id": "d2", "title": "Depot", "text": "The depot opens at six in the morning."},
        ],
    )
    write_jsonl(
        root / "queries.jsonl", [{"_id": "q1", "text": "restart scanner"}, {"_id": "q2", "text": "opening"}]
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\td1\t0\n", encoding="utf-8"
    )
    return root


def test_beir_folder_gives_document_level_questions(tmp_path):
    root = beir_folder(tmp_path)
    assert detect_format(root, None) == "beir"
    data = load_user_dataset(root)
    assert data.format == "beir"
    by_id = {q.id: q for q in data.questions}
    assert by_id["q1"].relevant_docs == ("d1",)
    assert by_id["q2"].relevant_docs == ("d2",)  # score 0 is not relevant
    assert all(q.gold_spans == [] and q.split == "test" for q in data.questions)


def test_beir_qrels_naming_unknown_ids_are_errors(tmp_path):
    root = beir_folder(tmp_path)
    (root / "qrels" / "test.tsv").write_text("q1\td9\t1\nq7\td1\t1\nq1\td1\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_user_dataset(root, format="beir")
    msg = str(err.value)
    assert "document 'd9' not in corpus.jsonl" in msg
    assert "query 'q7' not in queries.jsonl" in msg
    assert "line 3: expected query-id<TAB>corpus-id<TAB>score" in msg


def test_unknown_format_and_on_error_are_value_errors(tmp_path):
    root = corpus(tmp_path)
    with pytest.raises(ValueError, match="format must be one of"):
        load_user_dataset(root, None, format="xml")
    with pytest.raises(ValueError, match="on_error must be one of"):
        load_user_dataset(root, None, on_error="ignore")


def test_the_worked_example_questions_load_against_the_installed_scikit_learn():
    datasets = pytest.importorskip("sklearn.datasets")
    from importlib import resources

    descr = Path(datasets.__file__).parent / "descr"
    questions = resources.files("chunklab") / "data" / "examples" / "sklearn-descr" / "questions.jsonl"
    data = load_user_dataset(descr, Path(str(questions)))
    assert len(data.questions) == 18 and data.skipped == []
    by_id = {d.doc_id: d for d in data.documents}
    for q in data.questions:
        (s, e), answer = q.gold_spans[0], q.answers[0]
        assert by_id[q.doc_id].text[s:e] == answer
