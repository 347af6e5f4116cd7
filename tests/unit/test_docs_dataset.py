"""The kit's document corpus: gold quotes, sizes, structure, HTML renderings and the loader's errors."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from collections import Counter
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from chunklab.datasets.corpora.docs import Dataset, KitDocument, Question, html_documents, load_docs
from chunklab.datasets.model import QuestionSet

DATA = Path(__file__).resolve().parents[2] / "chunklab" / "data"


@pytest.fixture(scope="module")
def ds() -> QuestionSet:
    return load_docs()


@pytest.fixture(scope="module")
def html() -> list[KitDocument]:
    return html_documents()


def _prose_lines(text: str) -> list[str]:
    """Lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def _visible_text(markup: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # XHTML pages parsed as HTML warn; that is the point of them
        soup = BeautifulSoup(markup, "lxml")
    for tag in soup(["script", "style"]):
        tag.decompose()
    return soup.get_text(" ")


def _words(text: str) -> Counter[str]:
    return Counter(w.lower() for w in re.findall(r"[A-Za-z0-9]+", text))


# ------------------------------------------------------------------ gold quotes


def test_every_gold_quote_occurs_exactly_once_at_its_span(ds: QuestionSet) -> None:
    for q in ds.questions:
        text = ds.doc(q.doc_id).text
        assert len(q.gold_spans) == len(q.answers) >= 1, q.id
        for (start, end), quote in zip(q.gold_spans, q.answers, strict=True):
            assert text[start:end] == quote, q.id
            assert text.count(quote) == 1, q.id


def test_questions_are_not_lexical_copies_of_their_answers(ds: QuestionSet) -> None:
    stop = set(
        "the a an of to and or in on is it for i my do does can what how when why which who with be are at if"
        " we our by from".split()
    )
    for q in ds.questions:
        assert q.question.lower() not in " ".join(q.answers).lower(), q.id
        asked = set(_words(q.question)) - stop
        answered = set(_words(" ".join(q.answers))) - stop
        assert len(asked & answered) / max(1, len(asked)) < 0.6, q.id


def test_question_ids_are_unique_and_name_their_document(ds: QuestionSet) -> None:
    ids = [q.id for q in ds.questions]
    assert len(ids) == len(set(ids))
    for q in ds.questions:
        assert q.id.startswith(q.doc_id + "-q"), q.id


# ------------------------------------------------------------------ corpus size and shape


def test_corpus_has_at_least_20_documents_and_60_questions(ds: QuestionSet) -> None:
    assert len(ds.documents) >= 20
    assert len(ds.questions) >= 60
    assert all(d.format == "markdown" for d in ds.documents)


def test_about_a_quarter_of_questions_are_heldout(ds: QuestionSet) -> None:
    share = sum(q.split == "heldout" for q in ds.questions) / len(ds.questions)
    assert 0.15 <= share <= 0.35, share


def test_every_document_has_between_1200_and_2400_words(ds: QuestionSet) -> None:
    for d in ds.documents:
        assert 1200 <= len(d.text.split()) <= 2400, (d.doc_id, len(d.text.split()))


def test_every_document_mixes_a_table_a_list_and_a_code_block(ds: QuestionSet) -> None:
    for d in ds.documents:
        prose = _prose_lines(d.text)
        assert re.search(r"(?m)^```\w+\s*$", d.text), f"{d.doc_id}: no fenced code block with a language"
        assert any(re.match(r"\|.*\|\s*$", line) for line in prose), f"{d.doc_id}: no table"
        assert any(re.match(r"\s*(?:[-*]|\d+\.) \S", line) for line in prose), f"{d.doc_id}: no list"


def test_every_document_starts_with_a_title_and_a_structure_comment(ds: QuestionSet) -> None:
    for d in ds.documents:
        first, second = d.text.split("\n")[:2]
        assert first == f"# {d.title}"
        assert second == f"<!-- structure: {d.structure} -->"


def test_messy_documents_have_long_sections_and_clean_ones_short(ds: QuestionSet) -> None:
    by_structure = Counter(d.structure for d in ds.documents)
    assert by_structure["clean"] >= 5 and by_structure["messy"] >= 5
    for d in ds.documents:
        sections = re.split(r"(?m)^#{1,6} ", "\n".join(_prose_lines(d.text)))
        headings = len(sections) - 1
        words_per_heading = len(d.text.split()) / headings
        if d.structure == "messy":
            assert max(len(s.split()) for s in sections) >= 400, d.doc_id
            assert words_per_heading > 200, d.doc_id
        else:
            assert words_per_heading < 150, d.doc_id


def test_context_dependent_question_kinds_are_all_present(ds: QuestionSet) -> None:
    kinds = Counter(q.kind for q in ds.questions)
    assert kinds["table"] >= 5 and kinds["exception"] >= 5 and kinds["multi"] >= 3
    for q in ds.questions:
        if q.kind in ("table", "exception"):
            assert q.needs_context, q.id
        if q.kind == "multi":
            assert len(q.answers) >= 2, q.id


def test_table_questions_quote_whole_table_rows(ds: QuestionSet) -> None:
    for q in ds.questions:
        if q.kind != "table":
            continue
        text = ds.doc(q.doc_id).text
        for (start, end), quote in zip(q.gold_spans, q.answers, strict=True):
            if quote.startswith("|"):
                assert start == 0 or text[start - 1] == "\n", q.id
                assert end == len(text) or text[end] == "\n", q.id


# ------------------------------------------------------------------ HTML renderings


def test_at_least_five_html_renderings_including_the_hard_cases(html: list[KitDocument]) -> None:
    assert len(html) >= 5
    assert all(d.format == "html" and d.doc_id.endswith(".html") for d in html)
    assert any(
        d.text.startswith('<?xml version="1.0" encoding="utf-8"?>') and "XHTML" in d.text[:300] for d in html
    )
    soup_pages = [
        d
        for d in html
        if "<script" in d.text and "<style" in d.text and "<section" not in d.text and "style=" in d.text
    ]
    assert soup_pages, "no div-soup page (script, style, inline styles, no sections)"
    semantic = [d for d in html if "<article" in d.text and "<section" in d.text and "<pre><code" in d.text]
    assert len(semantic) >= 3


def test_html_rendering_says_what_its_markdown_says(ds: QuestionSet, html: list[KitDocument]) -> None:
    for h in html:
        md = ds.doc(h.doc_id.removesuffix(".html"))
        wanted, shown = _words(md.text), _words(_visible_text(h.text))
        covered = sum(min(n, shown[w]) for w, n in wanted.items()) / sum(wanted.values())
        assert covered >= 0.95, (h.doc_id, covered)


def test_load_docs_can_include_html_renderings(ds: QuestionSet) -> None:
    both = load_docs(include_html=True)
    assert len(both.documents) == len(ds.documents) + len(html_documents())
    assert both.doc("dispatch-api-reference.html").format == "html"
    assert both.questions == ds.questions


# ------------------------------------------------------------------ Dataset helpers and the public names


def test_split_keeps_every_document_and_only_that_splits_questions(ds: QuestionSet) -> None:
    dev, heldout = ds.split("dev"), ds.split("heldout")
    assert {q.split for q in dev.questions} == {"dev"}
    assert {q.split for q in heldout.questions} == {"heldout"}
    assert len(dev) + len(heldout) == len(ds)
    assert dev.documents == ds.documents
    assert load_docs(split="heldout").questions == heldout.questions
    with pytest.raises(ValueError, match="split"):
        ds.split("test")
    with pytest.raises(ValueError, match="split"):
        load_docs(split="train")


def test_sample_is_deterministic_per_seed_and_refuses_too_many(ds: QuestionSet) -> None:
    a, b, c = ds.sample(10, seed=1), ds.sample(10, seed=1), ds.sample(10, seed=2)
    assert [q.id for q in a] == [q.id for q in b]
    assert [q.id for q in a] != [q.id for q in c]
    assert len({q.id for q in a}) == 10 and a.documents == ds.documents
    with pytest.raises(ValueError, match="cannot sample"):
        ds.sample(len(ds) + 1)
    with pytest.raises(ValueError):
        ds.sample(-1)


def test_doc_lookup_names_a_missing_id(ds: QuestionSet) -> None:
    with pytest.raises(KeyError, match="no-such-doc"):
        ds.doc("no-such-doc")


def test_package_names_are_the_loader_and_the_submodule_without_a_module_hack() -> None:
    import importlib
    import types

    from chunklab.datasets import load_docs as exported_load_docs
    from chunklab.datasets.corpora import docs

    module = importlib.import_module("chunklab.datasets.corpora.docs")
    assert docs is module and type(module) is types.ModuleType
    assert Dataset is QuestionSet  # the name chapter 4 builds its subset with
    assert module.load_docs is exported_load_docs is load_docs
    code_questions = importlib.import_module("chunklab.datasets.questions.code")
    assert type(code_questions) is types.ModuleType and callable(code_questions.code_questions)


def test_documents_are_the_packages_document_type_with_their_structure(ds: QuestionSet) -> None:
    from chunklab.documents import Document

    assert all(isinstance(d, Document) and d.kind == d.format == "markdown" for d in ds.documents)
    assert {d.structure for d in ds.documents} == {"clean", "messy"}
    first = ds.documents[0]
    assert first.title and first.n_words == len(first.text.split())


def test_data_is_read_from_the_installed_package(ds: QuestionSet) -> None:
    for d in ds.documents:
        assert Path(d.path).is_file()
        assert Path(d.path).resolve().parent == (DATA / "docs").resolve()


# ------------------------------------------------------------------ the loader fails loudly


def _tiny_root(tmp_path: Path, questions: list[dict], slug: str = "dispatch-api-reference") -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "questions").mkdir()
    shutil.copy(DATA / "docs" / f"{slug}.md", tmp_path / "docs" / f"{slug}.md")
    (tmp_path / "questions" / f"{slug}.json").write_text(json.dumps(questions), encoding="utf-8")
    return tmp_path


def _q(n: int, answer: str | list[str], **extra: object) -> dict:
    base = {
        "id": f"dispatch-api-reference-q{n}",
        "question": "Which header carries the key?",
        "answer": answer,
        "kind": "fact",
        "split": "dev",
        "needs_context": False,
    }
    return base | extra


def test_a_good_tiny_root_loads_with_exact_spans(tmp_path: Path) -> None:
    quote = "Each call carries an API key in the `Authorization` header using the bearer scheme."
    ds = load_docs(root=_tiny_root(tmp_path, [_q(1, quote)]))
    [q] = ds.questions
    assert isinstance(q, Question)
    (start, end) = q.gold_spans[0]
    assert ds.doc(q.doc_id).text[start:end] == quote


def test_missing_quote_raises_value_error_naming_the_question(tmp_path: Path) -> None:
    root = _tiny_root(tmp_path, [_q(1, "Keys never expire.")])
    with pytest.raises(ValueError, match=r"dispatch-api-reference-q1.*not found"):
        load_docs(root=root)


def test_ambiguous_quote_raises_value_error_naming_the_question(tmp_path: Path) -> None:
    root = _tiny_root(tmp_path, [_q(7, "shipment")])
    with pytest.raises(ValueError, match=r"dispatch-api-reference-q7.*ambiguous"):
        load_docs(root=root)


def test_every_problem_is_listed_in_one_error(tmp_path: Path) -> None:
    good = "Each call carries an API key in the `Authorization` header using the bearer scheme."
    root = _tiny_root(
        tmp_path,
        [
            _q(1, "not in the document at all"),
            _q(2, good, kind="trivia"),
            _q(2, good),
            _q(3, ["the bearer scheme", "no such text"], kind="multi"),
            _q(4, good, split="test", needs_context="yes"),
        ],
    )
    (root / "questions" / "ghost-doc.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_docs(root=root)
    message = str(info.value)
    assert "q1" in message and "not found" in message
    assert "'kind'" in message and "trivia" in message
    assert "'dispatch-api-reference-q2' duplicated" in message
    assert "q3" in message and "no such text" in message
    assert "'split'" in message and "'needs_context'" in message
    assert "ghost-doc" in message and "no document" in message


def test_malformed_question_file_and_document_raise_value_error(tmp_path: Path) -> None:
    root = _tiny_root(tmp_path, [])
    (root / "questions" / "dispatch-api-reference.json").write_text("{not json", encoding="utf-8")
    (root / "docs" / "untitled.md").write_text("no title here\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_docs(root=root)
    assert "invalid JSON" in str(info.value)
    assert "untitled.md" in str(info.value) and "title" in str(info.value)


def test_html_rendering_without_its_markdown_is_an_error(tmp_path: Path) -> None:
    quote = "Each call carries an API key in the `Authorization` header using the bearer scheme."
    root = _tiny_root(tmp_path, [_q(1, quote)])
    (root / "docs" / "html").mkdir()
    (root / "docs" / "html" / "orphan.html").write_text("<html><body><h1>Orphan</h1></body></html>", "utf-8")
    with pytest.raises(ValueError, match="orphan.html"):
        load_docs(root=root, include_html=True)


def test_root_that_is_not_a_directory_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        load_docs(root=tmp_path / "missing")


def test_reprs_stay_short_enough_for_a_notebook(ds: QuestionSet) -> None:
    assert (
        repr(ds) == f"QuestionSet(name='docs', documents={len(ds.documents)}, questions={len(ds.questions)})"
    )
    assert len(repr(ds.documents[0])) < 300


def test_a_document_that_is_not_valid_utf8_is_named_with_the_byte_and_line(tmp_path: Path) -> None:
    root = _tiny_root(tmp_path, [])
    (root / "docs" / "latin.md").write_bytes("# Caf\u00e9\n<!-- structure: clean -->\n".encode("latin-1"))
    with pytest.raises(ValueError) as info:
        load_docs(root=root)
    assert "latin.md: not valid utf-8" in str(info.value) and "line 1" in str(info.value)
