"""CodeSearchNet-style questions: docstring stripping with exact offsets, first sentences, sampling."""

from __future__ import annotations

import ast
import textwrap

import pytest

from chunklab.datasets.corpora.code import CodeCorpus, CorpusFile
from chunklab.datasets.questions.code import code_questions, first_sentence, strip_docstrings

SOURCE = '''"""Module docstring that must go."""
import os


class Empty:
    """Only a docstring: the body needs a pass."""


class Box:
    """A box."""

    size = 3

    @property
    def volume(self):
        """Return the volume of the box in cubic units."""
        return self.size ** 3

    def one_liner(self): "Return one, written inline."; return 1


def café(x):  # é
    """Compute the café number for a value."""
    s = "é"; "not a docstring"
    return x


def naïve(): "Return the naïve café estimate now."; return 2


def only_doc():
    """Nothing but a docstring here."""
'''


def _without_docstrings(tree: ast.AST) -> str:
    """The AST dump with docstrings removed (a lone one replaced by ``pass``): the oracle."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(getattr(body[0], "value", None), ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or ([] if isinstance(node, ast.Module) else [ast.Pass()])
    return ast.dump(tree, include_attributes=False)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_strip_docstrings_keeps_every_other_statement(newline):
    source = SOURCE.replace("\n", newline)
    stripped = strip_docstrings(source)
    assert _without_docstrings(ast.parse(stripped.text)) == _without_docstrings(ast.parse(source))
    assert ast.dump(ast.parse(stripped.text)) == _without_docstrings(ast.parse(source))
    assert "docstring" not in stripped.text.replace("not a docstring", "")
    assert "not a docstring" in stripped.text  # a string that is not the first statement stays


def test_offset_map_moves_function_spans_into_the_stripped_text():
    stripped = strip_docstrings(SOURCE)
    tree = ast.parse(SOURCE)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            lines = SOURCE.split("\n")
            start = sum(len(line) + 1 for line in lines[: node.lineno - 1])
            end_line = lines[node.end_lineno - 1]
            end = sum(len(line) + 1 for line in lines[: node.end_lineno - 1])
            end += len(end_line.encode()[: node.end_col_offset].decode())
            start += len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip())
            s, e = stripped.map(start), stripped.map(end)
            piece = textwrap.dedent(stripped.text[s:e])
            fn = ast.parse(piece).body[0]
            assert fn.name == node.name
            assert ast.get_docstring(fn) is None


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("Return the value. More text follows.", "Return the value."),
        ("Use e.g. this thing when asked. Next one.", "Use e.g. this thing when asked."),
        ("Parse version 1.2 strings", "Parse version 1.2 strings"),
        ("Open the file\n    and read it.\n\n    Details here.", "Open the file and read it."),
        ("Is it ready? Check twice.", "Is it ready?"),
    ],
)
def test_first_sentence(doc, expected):
    assert first_sentence(doc) == expected


def _corpus(tmp_path, files: dict[str, str]) -> CodeCorpus:
    out = []
    for name, text in sorted(files.items()):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        out.append(CorpusFile(str(path), "site-packages", name, path.stat().st_size))
    return CodeCorpus(out)


PAD = "\n# padding line to pass the minimum file size\n" * 12


def test_code_questions_from_a_small_corpus(tmp_path):
    files = {
        "geometry.py": SOURCE + PAD,
        "dup.py": 'def a():\n    """Do the same thing twice over."""\n    return 1\n\n\n'
        'def b():\n    """Do the same thing twice over."""\n    return 2\n\n\n'
        'def test_thing():\n    """Check that the thing works as intended."""\n\n\n'
        'def __repr__():\n    """Show the object as a string."""\n' + PAD,
        "broken.py": "def oops(:\n    pass\n" + PAD,
    }
    data = code_questions(n_files=3, seed=0, corpus=_corpus(tmp_path, files))
    assert {d.doc_id for d in data.documents} == {"site-packages:geometry.py", "site-packages:dup.py"}
    by_id = {q.id: q for q in data.questions}
    # duplicated question text is ambiguous; tests and dunders are skipped
    assert set(by_id) == {
        "site-packages:geometry.py::Box.volume",
        "site-packages:geometry.py::Box.one_liner",
        "site-packages:geometry.py::café",
        "site-packages:geometry.py::naïve",
        "site-packages:geometry.py::only_doc",
    }
    q = by_id["site-packages:geometry.py::Box.volume"]
    assert q.question == "Return the volume of the box in cubic units."
    doc = data.doc(q.doc_id)
    ((s, e),) = q.gold_spans
    assert doc.text[s:e] == "@property\n    def volume(self):\n        return self.size ** 3"
    assert q.answers == [doc.text[s:e]]
    assert "cubic" not in doc.text
    naive = by_id["site-packages:geometry.py::naïve"]
    assert data.doc(naive.doc_id).text[slice(*naive.gold_spans[0])] == "def naïve(): return 2"
    only = by_id["site-packages:geometry.py::only_doc"]
    assert data.doc(only.doc_id).text[slice(*only.gold_spans[0])] == "def only_doc():\n    pass"


def test_code_questions_can_keep_docstrings(tmp_path):
    data = code_questions(
        n_files=1, seed=0, strip_docstrings=False, corpus=_corpus(tmp_path, {"geometry.py": SOURCE + PAD})
    )
    q = next(q for q in data.questions if q.id.endswith("Box.volume"))
    assert "cubic units" in data.doc(q.doc_id).text[slice(*q.gold_spans[0])]


def test_code_questions_rejects_bad_arguments(tmp_path):
    corpus = _corpus(tmp_path, {"geometry.py": SOURCE + PAD})
    with pytest.raises(ValueError, match="n_files"):
        code_questions(n_files=0, corpus=corpus)
    with pytest.raises(ValueError, match="only 1 files"):
        code_questions(n_files=2, corpus=corpus)


def test_code_questions_on_the_installed_corpus_is_deterministic():
    a = code_questions(n_files=4, seed=7)
    b = code_questions(n_files=4, seed=7)
    assert a.questions == b.questions
    assert [d.text for d in a.documents] == [d.text for d in b.documents]
    for q in a.questions:
        s, e = q.gold_spans[0]
        text = a.doc(q.doc_id).text
        assert text[s:e].lstrip().startswith(("def ", "async def", "@"))
        assert q.split in ("dev", "heldout")
