"""Generated programs in every tree-sitter language of the kit, and chunk_code's contract on them.

Used by tests/unit/test_structural_code.py and test_structural_code_errors.py.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks
from chunklab.chunkers.structural import chunk_code
from chunklab.units import length_function

# name, doc comment, string literal -> one definition in each language (a class/type holding a method)
TEMPLATES = {
    "javascript": "/** {doc} */\nfunction {n}(a) {{\n\treturn '{s}' + a; // {doc}\n}}\n"
    'class K{n} {{\n  /** {doc} */\n  m{n}() {{ return "{s}"; }}\n}}\n',
    "typescript": "/** {doc} */\nexport function {n}(a: string): string {{\n  return `{s}` + a;\n}}\n"
    "interface I{n} {{ x: number }}\nclass K{n} {{\n  m{n}(): number {{ return 1; }}\n}}\n",
    "tsx": '/** {doc} */\nexport const {n} = (p: {{x: string}}) => <div title="{s}">{{p.x}}</div>;\n',
    "go": '// {n} does {doc}\nfunc {n}(a int) string {{\n\treturn "{s}"\n}}\n\n'
    "type T{n} struct {{ a int }}\n\nfunc (t *T{n}) M() string {{ return `{s}` }}\n",
    "rust": '/// {doc}\nfn {n}(a: i32) -> &\'static str {{\n    "{s}"\n}}\n'
    "struct S{n} {{ a: i32 }}\nimpl S{n} {{\n    /// {doc}\n    fn m(&self) -> i32 {{ 1 }}\n}}\n",
    "java": 'class K{n} {{\n  /** {doc} */\n  String {n}() {{ return "{s}"; }}\n  // {doc}\n  int x;\n}}\n',
    "c": '/* {doc} */\nconst char *{n}(int a) {{\n\treturn "{s}"; // {doc}\n}}\nstruct S{n} {{ int a; }};\n',
    "cpp": "namespace N{n} {{\n/// {doc}\nclass K {{\n public:\n"
    '  const char *{n}() {{ return "{s}"; }}\n}};\n}}\n',
    "csharp": "namespace N{n} {{\n  /// {doc}\n  class K {{\n"
    '    string {n}() {{ return "{s}"; }}\n  }}\n}}\n',
    "ruby": '# {doc}\nclass K{n}\n  # {doc}\n  def {n}(a)\n    "{s}" + a\n  end\nend\n',
    "php": '/** {doc} */\nfunction {n}($a) {{\n  return "{s}" . $a; // {doc}\n}}\n'
    "class K{n} {{\n  public function m() {{ return '{s}'; }}\n}}\n",
    "bash": '# {doc}\n{n}() {{\n  echo "{s} $1"  # {doc}\n}}\n{n} x\n',
    "python": "# {doc}\ndef {n}(a):\n    return '{s}' + a\n\n"
    "class K{n}:\n    def m(self):\n        return 1\n",
}
PREFIX = {"php": "<?php\n", "bash": "#!/bin/bash\n"}

ascii_ident = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
unicode_ident = st.builds(
    "".join,
    st.lists(st.sampled_from(["ñ", "é", "Größe", "日本", "x", "_a", "ß", "λ"]), min_size=1, max_size=4),
).map(lambda s: "v" + s)
identifier = st.one_of(ascii_ident, unicode_ident)
safe_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\"'`\\{}$<>*/#"), max_size=30
)


def ok(chunks, source, max_size, unit="chars"):
    """Assert that ``chunks`` keep the Chunk contract on ``source`` within ``max_size``."""
    problems = check_chunks(chunks, source, max_size=max_size, length=length_function(unit))
    assert problems == [], problems


@st.composite
def program(draw, language):
    """A program of one to five definitions from ``TEMPLATES[language]``, maybe CRLF, maybe with a BOM."""
    defs = draw(st.lists(st.tuples(identifier, safe_text, safe_text), min_size=1, max_size=5))
    seen: set[str] = set()
    body = []
    for i, (name, doc, s) in enumerate(defs):
        name = f"{name}{i}" if name in seen else name
        seen.add(name)
        body.append(TEMPLATES[language].format(n=name, doc=doc, s=s))
    src = PREFIX.get(language, "") + "\n".join(body)
    if draw(st.booleans()):
        src = src.replace("\n", "\r\n")
    if draw(st.booleans()):
        src = "\ufeff" + src
    return src


def chunked_within_contract(src, language, budget):
    """chunk_code's chunks of ``src``, checked: offsets, nothing lost, budget or a one-line atom."""
    chunks = chunk_code(src, language, max_chars=budget, engine="tree-sitter")
    ok(chunks, src, budget)
    for c in chunks:
        assert c.metadata["language"] == language
        if c.metadata.get("oversize"):  # only a single line may be over budget (the reported atom)
            assert "\n" not in c.text and "\r" not in c.text, c.text
    return chunks


def in_every_language(test):
    """Run ``test(language, data)`` once per language of ``TEMPLATES``, with 25 drawn examples each."""
    test = given(data=st.data())(test)
    test = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])(test)
    return pytest.mark.parametrize("language", sorted(TEMPLATES))(test)
