"""chunk_code on code tree-sitter cannot fully parse: errors stay local, offsets exact, nothing lost.

Generated programs in every language get syntax errors injected (stray brackets and operators,
unterminated strings and comments, deleted spans); the tree tree-sitter gives for them is the
reference for "this file has a parse error".
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from chunklab.chunkers.structural import FallbackStats, chunk_code, code
from chunklab.chunkers.structural.code import php_grammar
from chunklab.chunkers.structural.code.errors import FALLBACK_ERROR_SHARE
from chunklab.chunkers.structural.code.treesitter import encode_for_parser, parse
from tests.support.programs import chunked_within_contract, in_every_language, ok, program

JUNK = ["}", "{", ")", "(((", ";;=", "@@ ", "<<<", "]", '"', "/*", "?:", "=>", "\u00e9\u00e9 ::", "#if"]


@st.composite
def broken_program(draw, language):
    """A generated program with one to three syntax errors injected at random places."""
    src = draw(program(language))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(src)))
        if draw(st.booleans()):
            src = src[:at] + draw(st.sampled_from(JUNK)) + src[at:]
        else:
            src = src[:at] + src[at + draw(st.integers(1, 12)) :]
    return src


def all_names(chunks) -> set[str]:
    return {n for c in chunks for n in [c.metadata["qualname"], *c.metadata.get("names", [])]}


def has_error(src: str, language: str) -> bool:
    grammar = php_grammar(src) if language == "php" else language  # PHP without its tag is all code
    return parse(grammar, encode_for_parser(src)).root_node.has_error


@in_every_language
def test_injected_syntax_errors_keep_the_contract_and_are_reported(language, data):
    src = data.draw(broken_program(language))
    chunks = chunked_within_contract(src, language, data.draw(st.integers(15, 600)))
    if not chunks:
        return
    fell_back = all(c.metadata.get("fallback") for c in chunks)
    reported = [c.metadata.get("parse_errors") for c in chunks]
    if not has_error(src, language):
        assert not any(reported) and not any(c.metadata.get("parse_error") for c in chunks)
        assert not any(c.metadata.get("fallback") for c in chunks)
        return
    if all(r is None for r in reported):  # has_error with no ERROR or MISSING node to point at
        return
    assert all(r == reported[0] for r in reported) and reported[0]["count"] >= 1
    if fell_back:
        assert reported[0]["share"] > FALLBACK_ERROR_SHARE
        assert "ERROR" in chunks[0].metadata["fallback_reason"]
    else:
        assert reported[0]["share"] <= FALLBACK_ERROR_SHARE
        assert not any(c.metadata.get("fallback") for c in chunks)
        assert any(c.metadata.get("parse_error") for c in chunks)


def test_syntax_errors_mark_only_the_chunks_that_cover_them():
    src = "class A {\n  void ok() {}\n}\nclass B {\n  void m( { int x = ; }\n}\n"
    chunks = chunk_code(src, "java", max_chars=30, path="B.java")
    ok(chunks, src, 30)
    assert all(c.metadata["parse_errors"]["first_line"] == 5 for c in chunks)
    bad = [c for c in chunks if c.metadata.get("parse_error")]
    assert bad and all(c.metadata["parse_error_line"] == 5 for c in bad)
    assert all("x = ;" in c.text for c in bad)
    clean = next(c for c in chunks if "ok()" in c.text)
    assert clean.metadata["qualname"] == "A" and not clean.metadata.get("parse_error")
    assert not any(c.metadata.get("fallback") for c in chunks)
    assert not FallbackStats().add(chunks, "B.java")  # a local error is not a fallback


def test_an_unknown_macro_leaves_the_definitions_around_it_named():
    src = (
        "BEGIN_NS(io)\n"
        "/// Opens.\nint open_file(const char *p) {\n  return 0;\n}\n\n"
        "DECLARE_THING(x, y) WEIRD(;\n\n"
        "class Reader {\n public:\n  int read() { return 1; }\n};\n"
        "END_NS\n"
    )
    assert has_error(src, "cpp")
    chunks = chunk_code(src, "cpp", max_chars=60)
    ok(chunks, src, 60)
    assert {"open_file", "Reader"} <= all_names(c for c in chunks if not c.metadata.get("parse_error"))
    assert not any(c.metadata.get("fallback") for c in chunks)
    assert any(c.metadata.get("parse_error") for c in chunks)


def test_an_error_region_over_budget_is_cut_by_lines():
    good = "".join(f"int f{i}(int a) {{\n  return a + {i};\n}}\n" for i in range(30))
    broken = "void g(int a, {\n" + "".join(f"  x{i} = {i} * 2;\n" for i in range(20))  # one ERROR node
    src = good + broken
    chunks = chunk_code(src, "c", max_chars=120)
    ok(chunks, src, 120)
    assert not any(c.metadata.get("fallback") for c in chunks)
    bad = [c for c in chunks if c.metadata.get("parse_error")]
    assert len(bad) >= 2 and all(len(c.text) <= 120 for c in bad)
    assert "x19 = 19" in bad[-1].text
    assert {f"f{i}" for i in range(30)} <= all_names(chunks)


def test_a_file_mostly_error_falls_back_and_says_how_much():
    src = "".join(f"@@ {i} %% ?? ::: $$ !! ~~ ñ\n" for i in range(40)) + "class A { void m() {} }\n"
    chunks = chunk_code(src, "java", max_chars=200)
    ok(chunks, src, 200)
    assert chunks and all(c.metadata["fallback"] for c in chunks)
    reason = chunks[0].metadata["fallback_reason"]
    assert "in ERROR nodes" in reason and "line 1" in reason
    assert chunks[0].metadata["parse_errors"]["share"] > FALLBACK_ERROR_SHARE


def test_error_offsets_are_characters_after_non_ascii_text():
    src = '// Größe 😀 日本\nfunction größe(a) { return "€😀" }\nfunction ñ( { ;\nfunction ok() {}\n'
    chunks = chunk_code(src, "javascript", max_chars=40)
    ok(chunks, src, 40)
    bad = [c for c in chunks if c.metadata.get("parse_error")]
    assert bad and all(c.metadata["parse_error_line"] >= 3 for c in bad)
    assert all(src[c.start : c.end] == c.text for c in chunks)


PY = (
    '"""Module doc."""\nimport os\n\n\n@cache\n@other(1)\ndef f(x):\n    """Return x.\n\n'
    '    More lines.\n    """\n    return x\n\n\nclass K:\n    r"""A \\K."""\n\n'
    "    def m(self):\n        # not a docstring\n        return 1\n\n"
    '    def n(self):\n        f"""{x} is not a docstring"""\n        return 2\n'
)


@pytest.mark.parametrize("max_chars", [40, 90, 2000])
def test_python_by_tree_sitter_has_the_docstrings_and_decorators_of_the_ast_path(max_chars):
    by_ts = chunk_code(PY, "python", max_chars=max_chars, engine="tree-sitter")
    by_ast = chunk_code(PY, "python", max_chars=max_chars)
    ok(by_ts, PY, max_chars)

    ast_docs = {c.metadata["name"]: c.metadata["docstring"] for c in by_ast}
    compared = 0
    for c in by_ts:  # the same definition named by both paths: the same docstring
        if c.metadata["qualname"] in ast_docs:
            assert c.metadata["docstring"] == ast_docs[c.metadata["qualname"]], c.metadata["qualname"]
            compared += 1
    assert compared >= 1
    if max_chars < 2000:
        f_head = next(c for c in by_ts if c.metadata["name"] == "f" and "def f" in c.text)
        assert f_head.metadata["docstring"] == "Return x.\n\nMore lines."
        assert f_head.metadata["decorators"] == ["cache", "other(1)"]
        if max_chars >= 90:  # the docstring is kept with its function
            assert '"""Return x.' in f_head.text
        klass = next(c for c in by_ts if c.metadata["qualname"] == "K")
        assert klass.metadata["docstring"] == "A \\K."
        assert all(c.metadata["docstring"] is None for c in by_ts if c.metadata["qualname"] == "K.n")
    first = by_ts[0]
    if first.metadata["kind"] == "module":
        assert first.metadata["docstring"] == "Module doc."


def test_a_cpp_header_of_kind_c_is_parsed_as_cpp_and_plain_c_as_c():
    header = (
        "#pragma once\nnamespace io {\n/// Reads.\nclass Reader {\n public:\n"
        "  int read(char *buf) { return 0; }\n};\n}  // namespace io\n"
    )
    chunks = chunk_code(header, "c", max_chars=60, path="reader.h")
    ok(chunks, header, 60)
    assert all(c.metadata["language"] == "c" and c.metadata["grammar"] == "cpp" for c in chunks)
    assert {"io.Reader", "io.Reader.read"} <= all_names(chunks)
    assert not any(c.metadata.get("parse_errors") for c in chunks)
    plain = "/* K&R style: new is a name in C */\nint new(int class) {\n  return class + 1;\n}\n"
    chunks = chunk_code(plain, "c", max_chars=60, path="old.c")
    ok(chunks, plain, 60)
    assert not any("grammar" in c.metadata for c in chunks) and "new" in all_names(chunks)
    looks_cpp = "/*\n class names below are C identifiers\n */\n" + "".join(
        f"void f{i}(void) {{\n  int this = 1, template = 2;\n  this += template;\n}}\n" for i in range(20)
    )
    chunks = chunk_code(looks_cpp, "c", max_chars=120)
    ok(chunks, looks_cpp, 120)
    assert not any("grammar" in c.metadata or c.metadata.get("parse_errors") for c in chunks)
    assert code.looks_like_cpp(looks_cpp)  # it looked like C++, C parsed it better


def test_comments_inside_an_error_node_are_not_counted_as_error():
    comments = "".join(f"// comment line {i}, long enough to weigh\n" for i in range(20))
    src = "void f(int a, {\n" + comments + "int x;\n"  # the ERROR node holds the comments
    chunks = chunk_code(src, "c", max_chars=200)
    ok(chunks, src, 200)
    assert not any(c.metadata.get("fallback") for c in chunks)
    assert 0 < chunks[0].metadata["parse_errors"]["share"] < 0.2
