"""The one dataset model, ``load_dataset``, the corpus registry, and no import circle in chunklab.datasets."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import chunklab.datasets as datasets_pkg
from chunklab.datasets import registry
from chunklab.datasets.corpora.docs import Question
from chunklab.datasets.model import QuestionSet, QuoteNotFoundError, locate_answers, locate_quote, preview
from chunklab.documents import Document
from chunklab.evaluate import load_dataset
from chunklab.evaluate.userdata import UserQuestion, load_user_dataset


def _question(qid: str, split: str, doc_id: str = "a") -> UserQuestion:
    return UserQuestion(qid, f"what is {qid}?", doc_id, [(0, 1)], ["x"], split)


def _set(**kwargs) -> QuestionSet:
    docs = [Document("a", "x one"), Document("b", "y two")]
    qs = [_question("q1", "dev"), _question("q2", "test"), _question("q3", "dev", "b")]
    return QuestionSet("mine", docs, qs, **kwargs)


# ------------------------------------------------------------------ QuestionSet


def test_doc_is_a_lookup_by_id_and_names_a_missing_one():
    data = _set()
    assert data.doc("b").text == "y two"
    with pytest.raises(KeyError, match="no document 'zz' in dataset 'mine'"):
        data.doc("zz")


def test_splits_come_from_the_questions_unless_declared():
    data = _set()
    assert data.splits == ("dev", "test")
    dev = data.split("dev")
    assert [q.id for q in dev] == ["q1", "q3"] and dev.name == "mine:dev" and dev.documents == data.documents
    with pytest.raises(ValueError, match=r"split must be one of the splits of 'mine' \(\['dev', 'test'\]\)"):
        data.split("heldout")
    declared = _set(split_names=("dev", "heldout"))
    assert declared.split("dev").splits == ("dev", "heldout")
    assert len(declared.split("heldout")) == 0


def test_skipped_rows_and_format_travel_through_split_and_sample():
    data = _set(skipped=["row 4: bad"], format="quotes")
    for derived in (data.split("dev"), data.sample(2, seed=3)):
        assert derived.skipped == ["row 4: bad"] and derived.format == "quotes"
    assert repr(data) == "QuestionSet(name='mine', documents=2, questions=3, skipped=1)"


# ------------------------------------------------------------------ the one answer locator


def test_locate_answers_reports_every_missing_or_ambiguous_quote():
    text = "alpha beta alpha gamma"
    problems: list[str] = []
    assert locate_answers(text, ["beta", "gamma"], "q1", "doc.md", problems) == (
        ["beta", "gamma"],
        [locate_quote(text, "beta"), locate_quote(text, "gamma")],
    )
    assert locate_answers(text, "beta", "q1", "doc.md", problems) == (["beta"], [(6, 10)])
    assert problems == []
    assert locate_answers(text, ["alpha", "delta", "gamma"], "q2", "doc.md", problems) is None
    assert problems == [
        "q2: answer quote 'alpha' found 2 times (ambiguous: quote more of it) in doc.md",
        "q2: answer quote 'delta' not found in doc.md; not even its first word 'delta' is in the text",
    ]
    assert locate_answers(text, [], "q3", "doc.md", problems) is None
    assert problems[-1] == "q3: 'answer' must be a non-empty string or a non-empty list of them"


def test_preview_collapses_whitespace_and_cuts_at_seventy_characters():
    assert preview("a\n  b") == "'a b'"
    long = preview("word " * 40)
    assert len(long) == 72 and long.endswith("...'")


def test_user_quotes_report_every_bad_quote_of_a_question(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "guide.md").write_text("# Guide\n\nRestart the pump. Restart the pump.\n", encoding="utf-8")
    qfile = tmp_path / "q.jsonl"
    row = {"question": "how?", "doc": "guide.md", "answer": ["Restart the pump.", "not there"]}
    qfile.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_user_dataset(corpus, qfile)
    message = str(info.value)
    assert "answer quote 'Restart the pump.' found 2 times" in message
    assert "answer quote 'not there' not found in guide.md" in message


# ------------------------------------------------------------------ load_dataset


def test_load_dataset_gives_the_docs_set_and_its_splits():
    from chunklab.datasets.corpora.docs import load_docs

    assert [q.id for q in load_dataset("docs").questions] == [q.id for q in load_docs().questions]
    heldout = load_dataset("docs", split="heldout")
    assert heldout.name == "docs:heldout" and {q.split for q in heldout.questions} == {"heldout"}
    assert isinstance(heldout.questions[0], Question) and heldout.skipped == []


def test_load_dataset_reads_a_corpus_folder_with_its_questions(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "guide.md").write_text("# Guide\n\nOpen valve A. Then close valve B.\n", encoding="utf-8")
    qfile = tmp_path / "q.jsonl"
    rows = [
        {"question": "first?", "doc": "guide.md", "answer": "Open valve A.", "split": "dev"},
        {"question": "then?", "doc": "guide.md", "answer": "close valve B", "split": "test"},
        {"question": "bad?", "doc": "guide.md", "answer": "no such words", "split": "dev"},
    ]
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    data = load_dataset(corpus, questions=qfile, on_error="skip")
    assert [q.question for q in data.questions] == ["first?", "then?"]
    assert len(data.skipped) == 1 and "no such words" in data.skipped[0]
    assert data.splits == ("dev", "test")
    dev = load_dataset(str(corpus), "quotes", questions=qfile, split="dev", on_error="skip")
    assert [q.question for q in dev.questions] == ["first?"] and dev.skipped == data.skipped


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"questions": "q.jsonl"}, r"questions='q.jsonl' needs a corpus folder, not the 'docs' set"),
        ({"format": "quotes"}, r"format='quotes' is for your question files"),
        ({"format": "csv"}, r"format must be one of"),
        ({"split": "test"}, r"split must be None or one of \('dev', 'heldout'\) for the 'docs' set"),
    ],
)
def test_load_dataset_refuses_options_the_built_in_set_cannot_take(kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_dataset("docs", **kwargs)


def test_load_dataset_refuses_a_name_that_is_no_folder(tmp_path):
    with pytest.raises(ValueError, match="is not a directory"):
        load_dataset(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="name_or_path must be one of"):
        load_dataset(3)  # type: ignore[arg-type]


# ------------------------------------------------------------------ the corpus registry


def test_unknown_corpus_lists_every_known_name():
    with pytest.raises(ValueError) as info:
        registry.corpus("no-such-corpus")
    assert (
        str(info.value) == f"unknown corpus 'no-such-corpus'; known corpora: {', '.join(registry.corpora())}"
    )
    assert {"installed", "stdlib", "code-50k"} <= set(registry.corpora())
    assert datasets_pkg.corpus is registry.corpus


def test_a_registered_corpus_is_resolved_with_its_options(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    from chunklab.datasets.corpora.code import CodeCorpus, CorpusFile

    files = [CorpusFile("/x/a.py", "toy", "a.py", 3), CorpusFile("/x/b.py", "toy", "b.py", 4)]
    registry.register_corpus("toy-poly", "two files", lambda limit=2: CodeCorpus(files[:limit]))
    assert registry.corpus("toy-poly").paths == ["/x/a.py", "/x/b.py"]
    assert len(registry.corpus("toy-poly", limit=1)) == 1
    assert registry.corpora()["toy-poly"].description == "two files"
    with pytest.raises(ValueError, match="already registered"):
        registry.register_corpus("toy-poly", "again", lambda: CodeCorpus([]))


def test_stdlib_corpus_is_the_installed_corpus_without_site_packages():
    std = registry.corpus("stdlib")
    assert len(std) > 100 and {f.root for f in std} == {"stdlib"}


# ------------------------------------------------------------------ no import circle


def _imports_of(path: Path) -> set[str]:
    """Every chunklab.datasets module ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n.startswith("chunklab.datasets.")}
    return found


def test_no_import_cycle_in_chunklab_datasets():
    folder = Path(datasets_pkg.__file__).parent
    modules = {
        "chunklab.datasets." + ".".join(p.relative_to(folder).with_suffix("").parts): p
        for p in folder.rglob("*.py")
        if p.stem != "__init__"
    }
    assert len(modules) >= 10, sorted(modules)
    graph = {m: _imports_of(p) & set(modules) - {m} for m, p in modules.items()}
    assert "chunklab.datasets.corpora.code50k" in graph["chunklab.datasets.registry"]
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        if state.get(module) == 1:
            raise AssertionError("import cycle: " + " -> ".join([*path, module]))
        if state.get(module) == 2:
            return
        state[module] = 1
        for dep in sorted(graph[module]):
            visit(dep, [*path, module])
        state[module] = 2

    for module in sorted(graph):
        visit(module, [])


# ------------------------------------------------------------------ quotes as people type them (issue 36)

WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@given(
    st.lists(WORD, min_size=1, max_size=30),
    st.data(),
)
def test_a_quote_typed_with_spaces_for_line_breaks_is_found_at_its_exact_span(words, data):
    seps = [data.draw(st.sampled_from([" ", "\n", "  ", " \n", "\n\n", "\t"])) for _ in words]
    text = "".join(w + sep for w, sep in zip(words, seps, strict=True))
    i = data.draw(st.integers(0, len(words) - 1))
    j = data.draw(st.integers(i + 1, len(words)))
    start = sum(len(w) + len(sep) for w, sep in zip(words[:i], seps[:i], strict=True))
    end = start + len("".join(w + sep for w, sep in zip(words[i:j], seps[i:j], strict=True)).rstrip())
    typed = "".join(w + data.draw(st.sampled_from([" ", "  ", "   "])) for w in words[i:j]).rstrip()
    only = re.escape(" ".join(typed.split()))
    assume(len(re.findall(f"(?={only})", " ".join(text.split()))) == 1)  # the span is the only one
    assert locate_quote(text, typed) == (start, end)
    assert " ".join(text[start:end].split()) == " ".join(typed.split())  # the text's own characters


def test_a_word_hyphenated_at_a_line_end_matches_the_word_typed_whole():
    text = "The valve needs careful lubri-\ncation every week, and a camera-\nready report."
    start, end = locate_quote(text, "needs careful lubrication every week")
    assert text[start:end] == "needs careful lubri-\ncation every week"
    start, end = locate_quote(text, "a camera-ready report")
    assert text[start:end] == "a camera-\nready report"
    assert locate_quote("It\u2019s \u201cdone\u201d.", 'It\'s "done"') == (0, 11)
    # an extraction that dropped the hyphen of a line-broken compound still finds the typed one
    assert locate_quote("a cameraready report", "a camera-ready report") == (0, 20)


def test_a_hyphen_the_text_keeps_inside_a_word_matches_the_word_typed_whole():
    # the loader keeps a line-end hyphen where the document writes the word with one; the reader
    # saw "well-" end a line and typed the word whole
    text = "help you produce well-structured class files"
    start, end = locate_quote(text, "produce wellstructured class")
    assert text[start:end] == "produce well-structured class"
    # between digits only a line-end hyphen is hyphenation: "1995" is not "19-95"
    with pytest.raises(QuoteNotFoundError):
        locate_quote("in 19-95 and", "in 1995 and")


def test_a_footnote_mark_after_a_word_may_be_left_out_of_the_quote():
    # a raised footnote mark stays on its line ("introduced1"); a reader does not type it
    text = "a new mechanism, \\rowcolor, has been introduced1 .\nIt takes"
    start, end = locate_quote(text, "\\rowcolor, has been introduced .")
    assert text[start:end] == "\\rowcolor, has been introduced1 ."
    text = "the Team.\u2217 All rights reserved\u2020."
    start, end = locate_quote(text, "All rights reserved.")
    assert text[start:end] == "All rights reserved\u2020."
    # only right after a word: a number standing on its own is text the quote must hold
    with pytest.raises(QuoteNotFoundError):
        locate_quote("runs at 40 rpm", "runs at rpm")


def test_a_typed_quote_found_twice_is_ambiguous():
    with pytest.raises(ValueError, match="found 2 times"):
        locate_quote("open the\nvalve, then open  the\tvalve", "open the valve")
    # a verbatim occurrence, when there is exactly one, is the span (the writer copied it)
    assert locate_quote("open the\nvalve, then open the valve", "open the valve") == (21, 35)


def test_not_found_says_the_nearest_miss_it_saw():
    text = "Intro.\nThe pump runs at 40 rpm on the second Monday of March.\n"
    with pytest.raises(QuoteNotFoundError) as info:
        locate_quote(text, "The pump runs at 30 rpm on Mondays")
    assert str(info.value) == "not found"
    assert info.value.near == (
        "nearest miss: its first 4 of 8 words are at offset 7 (line 2), "
        "then the text has '40 rpm on the second Monday of March.' where the quote has '30 rpm on Mondays'"
    )


def test_a_quote_typed_from_a_rendered_notebook_matches_its_markdown_marks():
    text = (
        "If you are not satisfied\nwith the styles provided by `nbsphinx`\nand by *your* theme, add your own."
    )
    start, end = locate_quote(text, "provided by nbsphinx and by your theme, add your own.")
    assert text[start:end] == "provided by `nbsphinx`\nand by *your* theme, add your own."
    with pytest.raises(QuoteNotFoundError):  # a quote that writes a mark itself is matched as written
        locate_quote(text, "provided by `nbsphinx` and by **your** theme")


def test_a_tex_logo_typed_as_people_write_it_matches_the_capitals_of_a_text_layer():
    text = "Testflow.tex is based on the standard LATEX test page included with most LATEX systems."
    start, end = locate_quote(text, "the standard LaTeX test page included with most LaTeX systems.")
    assert text[start:end] == "the standard LATEX test page included with most LATEX systems."
    with pytest.raises(QuoteNotFoundError):  # only the logo's letters: other words keep their case
        locate_quote(text, "The Standard LaTeX test page")
