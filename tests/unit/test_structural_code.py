"""chunk_code: tree-sitter chunks tile the source at syntax boundaries, in every language, offsets exact."""

from __future__ import annotations

import glob
import os
import sysconfig

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.chunkers.structural import CODE_LANGUAGES, chunk_code, chunk_document
from chunklab.chunkers.structural.code.treesitter import ByteToChar
from chunklab.documents import detect_format, load_document
from tests.support.programs import TEMPLATES, chunked_within_contract, in_every_language, ok, program


@in_every_language
def test_generated_programs_keep_the_contract_in_every_language(language, data):
    src = data.draw(program(language))
    chunks = chunked_within_contract(src, language, data.draw(st.integers(15, 600)))
    for c in chunks:
        assert c.metadata["kind"] and isinstance(c.metadata["headings"], list)


@given(st.text(max_size=200))
def test_byte_offsets_map_to_character_offsets_exactly(text):
    to_char = ByteToChar(text)
    data = text.encode("utf-8", "surrogatepass")
    pos = 0
    for i, ch in enumerate(text):
        assert to_char(pos) == i
        pos += len(ch.encode("utf-8", "surrogatepass"))
    assert to_char(len(data)) == len(text)


def test_non_ascii_identifiers_and_strings_get_character_offsets():
    src = '// Größe of 😀\nfunction größe(日本) {\n  return "€😀" + 日本;\n}\nfunction ñ() { return 1 }\n'
    chunks = chunk_code(src, "javascript", max_chars=45)
    ok(chunks, src, 45)
    names = {c.metadata["qualname"] for c in chunks}
    assert {"größe", "ñ"} <= names
    first = next(c for c in chunks if c.metadata["qualname"] == "größe")
    assert first.text.startswith("// Größe") and first.metadata["docstring"] == "Größe of 😀"


def qualnames(src, language, max_chars=60):
    chunks = chunk_code(src, language, max_chars=max_chars, engine="tree-sitter")
    ok(chunks, src, max_chars)
    assert not any(c.metadata.get("fallback") for c in chunks), [
        c.metadata.get("fallback_reason") for c in chunks
    ]
    out = set()
    for c in chunks:
        out.add(c.metadata["qualname"])
        out.update(c.metadata.get("names", []))
    return out, chunks


def test_go_receivers_name_pointer_and_value_methods():
    src = (
        "package p\n\n// Buf holds bytes.\ntype Buf struct{ b []byte }\n\n"
        "// Len is the length.\nfunc (b *Buf) Len() int { return len(b.b) }\n\n"
        "func (b Buf) String() string { return string(b.b) }\n\n"
        "func (l List[T]) Get() T { var t T; return t }\n"
    )
    names, chunks = qualnames(src, "go", 40)
    assert {"Buf", "(*Buf).Len", "Buf.String", "List.Get"} <= names
    doc = next(c for c in chunks if c.metadata["qualname"] == "(*Buf).Len")
    assert doc.metadata["docstring"] == "Len is the length." and doc.metadata["receiver"] == "*Buf"


def test_rust_impl_blocks_qualify_their_methods():
    src = (
        "/// A point.\n#[derive(Debug, Clone)]\npub struct Point { x: f64, y: f64 }\n\n"
        "impl<T> fmt::Display for Point<T> {\n    /// Formats it.\n"
        "    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
        '        write!(f, "({}, {})", self.x, self.y)\n    }\n}\n'
    )
    names, chunks = qualnames(src, "rust", 70)
    assert {"Point", "Point.fmt"} <= names
    point = next(c for c in chunks if c.metadata["qualname"] == "Point")
    assert "#[derive" in point.text and point.metadata["docstring"] == "A point."
    fmt = next(c for c in chunks if "Point.fmt" in (c.metadata["qualname"], *c.metadata.get("names", [])))
    assert fmt.metadata["headings"][:1] == ["Point"]


@pytest.mark.parametrize(
    ("language", "src", "expected", "doc"),
    [
        ("java", "/** Shapes. */\npublic class Shape {\n  /** Area. */\n  double area() { return 0; }\n}\n",
         {"Shape", "Shape.area"}, "Area."),
        ("typescript", "export class Store<T> {\n  /** Gets it. */\n  get(k: string): T { return k; }\n}\n",
         {"Store", "Store.get"}, "Gets it."),
        ("cpp", "namespace io {\nclass File {\n public:\n  /// Opens.\n  int open() { return 0; }\n};\n}\n",
         {"io", "io.File", "io.File.open"}, "Opens."),
        ("csharp", "namespace App {\n class Repo {\n  /// <c>Saves.</c>\n  void Save() {}\n }\n}",
         {"App.Repo", "App.Repo.Save"}, "<c>Saves.</c>"),
        ("ruby", "module Net\n class Http\n  # Sends it.\n  def send_it(x)\n   x\n  end\n end\nend",
         {"Net.Http", "Net.Http.send_it"}, "Sends it."),
        ("php", "<?php\nclass Mailer {\n  /** Sends. */\n  public function send($m) { return $m; }\n}\n",
         {"Mailer", "Mailer.send"}, "Sends."),
        ("bash", "#!/bin/sh\n# Prints usage.\nusage() {\n  echo \"usage: $0 [options] file\"\n}\n",
         {"usage"}, "Prints usage."),
        ("c", "/** Adds two. */\nstatic int *add(int a, int b) {\n  return 0;\n}\n", {"add"}, "Adds two."),
    ],
)  # fmt: skip
def test_qualified_names_and_doc_comments_per_language(language, src, expected, doc):
    names, chunks = qualnames(src, language, 50)
    assert expected <= names
    assert doc in [c.metadata["docstring"] for c in chunks]


def test_doc_comment_separated_by_a_blank_line_documents_nothing():
    src = "// file header\n\nfunction f() { return 1 }\n"
    chunks = chunk_code(src, "javascript", max_chars=20)
    f = next(c for c in chunks if c.metadata["qualname"] == "f")
    assert f.metadata["docstring"] is None and not f.text.startswith("//")


def test_whole_file_within_budget_is_one_chunk_naming_every_definition():
    src = "function a() {}\nfunction b() {}\nclass C { m() {} }\n"
    chunks = chunk_code(src, "javascript", max_chars=1000)
    assert len(chunks) == 1 and chunks[0].text == src.rstrip()
    assert chunks[0].metadata["names"] == ["a", "b", "C"]


def test_oversize_definition_is_split_at_child_boundaries_and_named_as_parts():
    body = "".join(f'    let v{i} = compute({i}, "argument {i}");\n' for i in range(40))
    src = f"fn big() {{\n{body}}}\nfn small() {{}}\n"
    chunks = chunk_code(src, "rust", max_chars=300)
    ok(chunks, src, 300)
    parts = [c for c in chunks if c.metadata["qualname"] == "big"]
    assert len(parts) >= 5 and all(c.metadata.get("partial") for c in parts)
    assert all(c.text.startswith(("fn big", "{", "    let", "}")) for c in parts)


def test_a_single_line_over_budget_is_reported_as_an_atom():
    src = 'const s = "' + "x" * 500 + '";\n'
    chunks = chunk_code(src, "javascript", max_chars=100)
    ok(chunks, src, 100)
    assert any(c.metadata.get("oversize") and c.metadata.get("oversize_reason") for c in chunks)


@pytest.mark.parametrize(
    ("path", "head", "kind"),
    [
        ("a/b.tsx", "", "tsx"),
        ("x.hpp", "", "cpp"),
        ("lib.rs", "", "rust"),
        ("Main.cs", "", "csharp"),
        ("run", "#!/usr/bin/env node\nconsole.log(1)\n", "javascript"),
        ("build", "#!/bin/bash -e\necho hi\n", "bash"),
        ("tool", "#!/usr/bin/env -S ruby -w\nputs 1\n", "ruby"),
    ],
)
def test_language_comes_from_extension_or_shebang(path, head, kind):
    assert detect_format(path, head) == kind
    chunks = chunk_document(head or "x", path=path, max_chars=200)
    assert all(c.metadata.get("language") == kind for c in chunks)


def test_structural_dispatch_uses_the_code_chunker_and_units_measure_the_budget():
    src = "".join(f"func F{i}(a int) int {{\n\treturn a * {i} // times {i}\n}}\n\n" for i in range(30))
    chunks = chunk_document(src, path="m.go", max_chars=25, unit="words")
    ok(chunks, src, 25, "words")
    assert {c.metadata["language"] for c in chunks} == {"go"} and len(chunks) > 5
    assert chunks[0].metadata["params"]["unit"] == "words"


def test_token_budget_is_kept_in_tokens_of_the_embedding_model():
    src = "".join(
        f"pub fn f{i}(x: u32) -> u32 {{\n    x.wrapping_mul({i}) // ünïcode {i}\n}}\n" for i in range(25)
    )
    chunks = chunk_code(src, "rust", max_chars=40, unit="tokens")
    ok(chunks, src, 40, "tokens")
    assert len(chunks) > 3 and chunks[0].metadata["params"]["unit"] == "tokens"


def test_python_keeps_ast_by_default_and_tree_sitter_on_request():
    src = "import os\n\n# doc of f\ndef f(x):\n    return x\n\nclass K:\n    def m(self):\n        return 1\n"
    by_ast = chunk_code(src, "python", max_chars=40)
    by_ts = chunk_code(src, "python", max_chars=40, engine="tree-sitter")
    ok(by_ast, src, 40)
    ok(by_ts, src, 40)
    assert by_ast[0].metadata["params"]["format"] == "python"
    assert by_ts[0].metadata["params"]["format"] == "code" and "K.m" in {
        c.metadata["qualname"] for c in by_ts
    }


def test_bad_arguments_raise_and_odd_input_does_not():
    with pytest.raises(ValueError, match="language"):
        chunk_code("x", "cobol")
    with pytest.raises(ValueError, match="source"):
        chunk_code(123, "go")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="engine"):
        chunk_code("x", "go", engine="regex")
    assert chunk_code("", "go") == [] and chunk_code(" \n\t", "rust") == []
    odd = chunk_code(b"int x = 1; /* \x81\x8d */\n", "c", max_chars=10)
    assert odd and all(c.metadata.get("fallback") for c in odd)
    unknown = chunk_code("some words here", path="notes.txt")
    assert unknown and unknown[0].metadata["fallback_reason"].startswith("not a known programming language")


def real_files(limit: int = 4) -> list[tuple[str, str]]:
    """A few real source files that ship with the interpreter and its packages (C headers, JavaScript)."""
    roots = {sysconfig.get_paths()["include"], sysconfig.get_paths()["purelib"]}
    found: list[tuple[str, str]] = []
    for pattern in ("*.h", "**/*.h", "**/static/*.js", "**/*.js"):
        for root in sorted(roots):
            paths = sorted(glob.glob(os.path.join(root, pattern), recursive=True))[:limit]
            found.extend((p, root) for p in paths if os.path.getsize(p) < 30_000)
        if len(found) >= 2 * limit:
            break
    return found[: 2 * limit]


@pytest.mark.parametrize("max_chars", [200, 1500])
def test_real_files_from_the_environment_keep_the_contract(max_chars):
    files = real_files()
    if not files:
        pytest.skip("no C headers or JavaScript files in this environment")
    for path, root in files:
        doc = load_document(path, root=root)
        chunks = chunk_code(doc.text, path=path, max_chars=max_chars)
        ok(chunks, doc.text, max_chars)
        assert {c.metadata["language"] for c in chunks} <= {"c", "javascript"}


def test_every_language_in_the_table_has_a_template_here():
    assert set(CODE_LANGUAGES) == set(TEMPLATES)
