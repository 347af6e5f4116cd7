"""chunk_python: units follow the syntax tree, offsets are exact, nothing is lost, bounds hold."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks
from chunklab.chunkers.structural import chunk_python
from tests.support.strategies import joined_lines


def ok(chunks, source, max_chars=1500, overlap=0):
    problems = check_chunks(chunks, source, max_size=max_chars, overlap=overlap)
    assert problems == [], problems


def by_name(chunks):
    out = {}
    for c in chunks:
        for name in c.metadata.get("names") or [c.metadata["name"]]:
            out.setdefault(name, c)
    return out


def big_function(name: str, statements: int, indent: str = "") -> str:
    body = "".join(
        f"{indent}    value_{i} = compute_something({i}, 'argument number {i}')\n" for i in range(statements)
    )
    return f'{indent}def {name}(x):\n{indent}    """Docstring of {name}."""\n{body}{indent}    return x\n'


def test_decorators_and_comments_above_a_function_stay_with_it():
    src = (
        "import os\n\n\n"
        "# helper that does the thing\n"
        "# over two comment lines\n"
        "@functools.lru_cache(maxsize=None)\n"
        "@other\n" + big_function("decorated", 6) + "\n\n" + big_function("plain", 6)
    )
    chunks = chunk_python(src, max_chars=600, min_chars=0)
    ok(chunks, src, 600)
    c = by_name(chunks)["decorated"]
    assert c.text.startswith("# helper that does the thing\n# over two comment lines\n@functools.lru_cache")
    assert c.metadata["decorators"] == ["functools.lru_cache(maxsize=None)", "other"]
    assert c.metadata["docstring"] == "Docstring of decorated."
    assert c.metadata["kind"] == "function"
    assert "import os" not in c.text


def test_a_500_line_class_becomes_a_header_and_one_chunk_per_method():
    methods = "".join(big_function(f"method_{i}", 13, indent="    ") + "\n" for i in range(30))
    src = (
        "class Big(Base):\n"
        '    """A big class whose docstring is long enough to stand on its own as a header chunk.\n\n'
        + "    More words about the class. " * 8
        + '\n    """\n\n    limit = 10\n    name = "big"\n\n'
        + methods
    )
    assert src.count("\n") > 500
    chunks = chunk_python(src, max_chars=1500, min_chars=200)
    ok(chunks, src)
    header = chunks[0]
    assert header.metadata["kind"] == "class_header"
    assert header.metadata["class"] == "Big"
    assert header.text.startswith("class Big(Base):")
    assert "limit = 10" in header.text and "def " not in header.text
    assert header.metadata["docstring"].startswith("A big class")
    methods_seen = [c for c in chunks if c.metadata["kind"] == "method"]
    assert len(methods_seen) == 30
    for i, c in enumerate(methods_seen):
        assert c.metadata["name"] == f"Big.method_{i}"
        assert c.metadata["class"] == "Big"
        assert c.text.lstrip().startswith(f"def method_{i}(x):")
        # a method chunk is whole lines: dedented, it parses on its own
        ast.parse(textwrap.dedent(c.text))


def test_one_line_functions_are_merged_without_crossing_a_class_boundary():
    tiny = "".join(f"def f{i}(): return {i}\n" for i in range(5))
    cls_methods = "".join(big_function(f"m{i}", 10, indent="    ") for i in range(3))
    cls = "class K:\n" + "".join(f"    def t{i}(self): return {i}\n" for i in range(3)) + cls_methods
    src = tiny + "\n" + cls + "\n" + "".join(f"def g{i}(): return {i}\n" for i in range(3))
    chunks = chunk_python(src, max_chars=800, min_chars=200)
    ok(chunks, src, 800)
    first = by_name(chunks)["f0"]
    assert all(f"def f{i}()" in first.text for i in range(5))  # merged together
    for c in chunks:
        inside = c.metadata.get("class") == "K"
        if inside:
            assert "def f0" not in c.text and "def g0" not in c.text
        if "def g0" in c.text:
            assert "def t0" not in c.text and c.metadata.get("class") is None


def test_a_long_comment_block_between_class_line_and_first_method_stays_within_budget():
    comments = "".join(f"    # note {i}: " + "words " * 10 + "\n" for i in range(40))
    src = "class Commented:\n" + comments + "\n" + big_function("m", 30, indent="    ")
    chunks = chunk_python(src, max_chars=500)
    ok(chunks, src, 500)
    assert chunks[0].metadata["kind"] == "class_header" and chunks[0].text.startswith("class Commented:")
    assert all(c.metadata.get("class") == "Commented" for c in chunks)


def test_function_over_budget_is_split_at_statement_boundaries_within_budget():
    src = big_function("huge", 80)
    chunks = chunk_python(src, max_chars=700)
    ok(chunks, src, 700)
    assert len(chunks) > 3
    assert all(c.metadata["name"] == "huge" and c.metadata["kind"] == "function" for c in chunks)
    assert [c.metadata["part"] for c in chunks] == list(range(1, len(chunks) + 1))
    assert all(c.metadata["parts"] == len(chunks) for c in chunks)
    for c in chunks[1:]:  # parts start at statement starts, i.e. whole lines
        assert src[c.start - 1] == "\n"
        assert c.text.lstrip().startswith(("value_", "return", '"""'))


def test_single_line_over_budget_is_marked_oversize():
    src = "x = 1\n\nDATA = '" + "a" * 3000 + "'\n\ny = 2\n"
    chunks = chunk_python(src, max_chars=500)
    ok(chunks, src, 500)
    big = [c for c in chunks if len(c.text) > 500]
    assert len(big) == 1 and big[0].metadata["oversize"] is True


def test_invalid_syntax_falls_back_to_recursive_chunks_with_overlap_and_reason():
    src = (
        "def ok():\n    return 1\n\n"
        + "".join(f"line_{i} = value({i})\n" for i in range(200))
        + "print 'py2'\n"
    )
    chunks = chunk_python(src, max_chars=400, path="broken.py")
    assert chunks and all(c.metadata["fallback"] is True for c in chunks)
    assert all(c.metadata["kind"] == "fallback" for c in chunks)
    reason = chunks[0].metadata["fallback_reason"]
    assert reason.startswith("SyntaxError") and "line 204" in reason
    ok(chunks, src, 400, overlap=1)  # consecutive chunks really share text
    assert chunks[0].metadata["path"] == "broken.py" and chunks[0].doc_id == "broken.py"


@pytest.mark.parametrize(
    "snippet",
    [
        "if (n := len(items)) > 3:\n    print(n)\n",
        "match command:\n    case [x, y]:\n        pass\n    case {'k': v}:\n        pass\n"
        "    case _:\n        pass\n",
        "async def fetch(url):\n    async with session.get(url) as r:\n        return await r.text()\n",
        "def pos(a, b, /, c, *, d):\n    return f'{a=} {b!r:>10}'\n",
    ],
)
def test_modern_syntax_is_parsed_not_fallen_back(snippet):
    chunks = chunk_python(snippet)
    ok(chunks, snippet)
    assert not any(c.metadata.get("fallback") for c in chunks)


def test_pep695_generics_parse_where_the_interpreter_supports_them():
    src = "def first[T](items: list[T]) -> T:\n    return items[0]\n\ntype Pair[T] = tuple[T, T]\n"
    chunks = chunk_python(src)
    ok(chunks, src)
    if sys.version_info >= (3, 12):
        assert chunks[0].metadata["kind"] == "function"
    else:  # this interpreter's ast cannot read it: a clean fallback with the reason
        assert chunks[0].metadata["fallback"] is True
        assert "line 1" in chunks[0].metadata["fallback_reason"]


def test_bytes_are_decoded_per_pep263_cookie_and_bom():
    latin = "# -*- coding: latin-1 -*-\ndef caf\u00e9():\n    return '\u00e9t\u00e9'\n"
    chunks = chunk_python(latin.encode("latin-1"))
    ok(chunks, latin)
    assert chunks[0].metadata["kind"] == "function" and "caf\u00e9" in chunks[0].text
    bom = b"\xef\xbb\xbfdef f():\n    return 1\n"
    chunks = chunk_python(bom)
    assert chunks[0].text.startswith("def f():") and not chunks[0].metadata.get("fallback")


def test_undecodable_bytes_fall_back_with_the_reason_and_line():
    raw = b"x = 1\ny = 2\nz = '\xff\xfe'\n"
    chunks = chunk_python(raw)
    assert chunks[0].metadata["fallback"] is True
    assert "line 3" in chunks[0].metadata["fallback_reason"]
    bad_cookie = b"# -*- coding: no-such-codec -*-\nx = 1\n"
    chunks = chunk_python(bad_cookie)
    assert chunks and chunks[0].metadata["fallback"] is True


@pytest.mark.parametrize(
    "src",
    [
        "",
        "\n\n  \n",
        "# only a comment\n# and another\n",
        "#!/usr/bin/env python3\n# comment\n",
        "x = 1\0\ny = 2\n",
        "def f():\r\n    return 1\r\n\r\nclass C:\r\n    pass\r\n",
        "def f():\r    return 1\r\rx = 2\r",
        "def f():\n\treturn 1\n\x0c\ndef g():\n\treturn 2\n",
        "\ufeffimport os\n",
        "x = 1",
        "@dec\nclass A: pass\nclass B: x = 1; y = 2\n",
    ],
)
def test_odd_inputs_never_raise_and_lose_nothing(src):
    chunks = chunk_python(src, max_chars=40, min_chars=10)
    ok(chunks, src, 40)
    if not src.strip():
        assert chunks == []


def test_shebang_module_docstring_and_main_block_are_kept_in_module_chunks():
    src = (
        '#!/usr/bin/env python\n"""Module doc."""\nimport sys\n\nCONST = 3\n\n'
        + big_function("work", 3)
        + '\n\nif __name__ == "__main__":\n    work(sys.argv)\n'
    )
    chunks = chunk_python(src, max_chars=300, min_chars=0)
    ok(chunks, src, 300)
    assert chunks[0].metadata["kind"] == "module" and chunks[0].text.startswith("#!/usr/bin/env python")
    assert chunks[0].metadata["docstring"] == "Module doc."
    assert chunks[-1].metadata["kind"] == "module" and "__main__" in chunks[-1].text


def test_line_numbers_match_the_text():
    src = "import a\n\n\n" + big_function("f", 3) + "\n\nclass C:\n    x = 1\n"
    for c in chunk_python(src, max_chars=200, min_chars=0):
        lines = src.splitlines()
        assert lines[c.metadata["line_start"] - 1].strip() == c.text.splitlines()[0].strip()
        assert lines[c.metadata["line_end"] - 1].strip() == c.text.splitlines()[-1].strip()


def test_ids_are_stable_and_depend_on_parameters():
    src = big_function("f", 30)
    a = [c.id for c in chunk_python(src, max_chars=500, doc_id="d")]
    b = [c.id for c in chunk_python(src, max_chars=500, doc_id="d")]
    c = [c.id for c in chunk_python(src, max_chars=600, doc_id="d")]
    assert a == b and len(set(a)) == len(a)
    assert a[0] != c[0]


@pytest.mark.parametrize(
    "kwargs",
    [{"max_chars": 0}, {"max_chars": "10"}, {"min_chars": -1}, {"min_chars": 1.5}, {"doc_id": 3}],
)
def test_bad_arguments_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        chunk_python("x = 1\n", **kwargs)


def test_non_text_source_raises_value_error():
    with pytest.raises(ValueError):
        chunk_python(123)


_FRAGMENTS = [
    "def f(x):",
    "    return x",
    "class C(B):",
    "    pass",
    "    def m(self):",
    "        return 1",
    "# comment",
    "",
    "   ",
    "@dec",
    "x = 1",
    "if x:",
    "\ty = 2",
    '"""doc',
    'end"""',
    "\x0c",
    "print 'x'",
    "lambda: (",
    ")",
    "a = [1,",
    "     2]",
    "async def g():",
    "    await h()",
    "x = 'é€𝄞'",
    "\\",
    "\0",
    "match x:",
    "    case 1:",
    "        pass",
]


def python_ish():
    return joined_lines(_FRAGMENTS, line_size=30, max_lines=40, newlines=("\n", "\r\n", "\r"))


@given(src=python_ish(), max_chars=st.integers(5, 300), min_chars=st.integers(0, 100))
def test_property_python_ish_text_never_raises_offsets_exact_nothing_lost(src, max_chars, min_chars):
    chunks = chunk_python(src, max_chars=max_chars, min_chars=min_chars)
    ok(chunks, src, max_chars)
    for c in chunks:
        assert c.metadata["strategy"] == "structural" and "kind" in c.metadata
        assert not str(c.metadata.get("fallback_reason", "")).startswith("internal")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(src=python_ish(), max_chars=st.integers(5, 300))
def test_property_bytes_input_matches_decoded_str(src, max_chars):
    raw = src.encode("utf-8", errors="surrogatepass")
    chunks = chunk_python(raw, max_chars=max_chars)
    text = src[1:] if src.startswith("\ufeff") else src
    ok(chunks, text, max_chars)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_funcs=st.integers(1, 8),
    stmts=st.lists(st.integers(1, 30), min_size=8, max_size=8),
    max_chars=st.integers(100, 1500),
)
def test_property_generated_modules_parse_without_fallback_and_keep_functions_whole_when_they_fit(
    n_funcs, stmts, max_chars
):
    src = "\n\n".join(big_function(f"fn{i}", stmts[i]) for i in range(n_funcs))
    chunks = chunk_python(src, max_chars=max_chars, min_chars=0)
    ok(chunks, src, max_chars)
    assert not any(c.metadata.get("fallback") for c in chunks)
    for i in range(n_funcs):
        fn = big_function(f"fn{i}", stmts[i]).rstrip()
        if len(fn) <= max_chars:
            assert any(fn in c.text for c in chunks)


def test_real_installed_files_keep_the_contract():
    from chunklab.datasets import code_corpus

    for f in code_corpus().sample(25, seed=7):
        raw = f.read_bytes()
        chunks = chunk_python(raw, max_chars=800, path=f.path)
        text = f.read_text()
        problems = check_chunks(chunks, text, max_size=800)
        assert problems == [], (f.path, problems[:3])


def test_max_size_is_the_budget_and_max_chars_stays_its_deprecated_keyword():
    src = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    assert chunk_python(src, max_size=30) == chunk_python(src, max_chars=30)
    assert chunk_python(src, 30)[0].metadata["params"]["max_chars"] == 30  # the stored key is unchanged
    with pytest.raises(ValueError, match="max_size"):
        chunk_python(src, max_size=30, max_chars=30)
