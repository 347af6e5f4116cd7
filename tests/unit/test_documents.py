"""`chunklab.documents`: the one way in — decoding by kind, binary and special files refused, one doc_id."""

from __future__ import annotations

import codecs
import contextlib
import os
import signal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.documents import (
    FORMATS,
    Document,
    DocumentError,
    binary_reason,
    corpus_root,
    decode_bytes,
    detect_format,
    doc_id_for,
    iter_documents,
    iter_paths,
    load_document,
)


@contextlib.contextmanager
def deadline(seconds: int):
    """Fail (instead of hanging the suite) when the block blocks longer than ``seconds``."""

    def boom(signum, frame):
        raise TimeoutError(f"blocked for more than {seconds}s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ------------------------------------------------------------------------- decoding by kind


def test_pep263_cookie_decodes_latin1_python(tmp_path):
    src = "# -*- coding: latin-1 -*-\ndef caf\u00e9():\n    return '\u00e9t\u00e9'\n"
    f = tmp_path / "m.py"
    f.write_bytes(src.encode("latin-1"))
    doc = load_document(f)
    assert doc.text == src and doc.format == "python"
    assert "decode_problem" not in doc.metadata and doc.metadata["encoding"] == "iso-8859-1"


def test_meta_charset_decides_html_encoding(tmp_path):
    page = (
        b'<html><head><meta charset="windows-1252"><title>T</title></head>'
        b"<body><p>\x93q\x94</p></body></html>"
    )
    f = tmp_path / "p.html"
    f.write_bytes(page)
    doc = load_document(f)
    assert "\u201cq\u201d" in doc.text and doc.title == "T"
    assert "decode_problem" not in doc.metadata


def test_xml_declaration_decides_xhtml_encoding(tmp_path):
    page = '<?xml version="1.0" encoding="iso-8859-1"?>\n<html><body><h1>Caf\u00e9</h1></body></html>'
    f = tmp_path / "p.xhtml"
    f.write_bytes(page.encode("iso-8859-1"))
    assert load_document(f).text == page


@pytest.mark.parametrize("codec", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32", "utf-32-be"])
@pytest.mark.parametrize("name", ["notes.md", "mod.py", "page.html", "a.txt", "doc.rst"])
def test_byte_order_marks_utf8_utf16_utf32_are_decoded_without_nuls(tmp_path, codec, name):
    text = "# Caf\u00e9\n\nx = '\u00e9t\u00e9 \u2603'\n"
    bom = {"utf-16-be": codecs.BOM_UTF16_BE, "utf-32-be": codecs.BOM_UTF32_BE}.get(codec, b"")
    f = tmp_path / name
    f.write_bytes(bom + text.encode(codec))
    doc = load_document(f)
    assert doc.text == text and "\x00" not in doc.text
    assert "decode_problem" not in doc.metadata


# a text may not start with U+FEFF (read as a second mark) or U+0000 (UTF-16 LE "FF FE 00 00" opens UTF-32 LE
# too)
@given(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=200).filter(
        lambda t: t[:1] not in ("\ufeff", "\x00")
    )
)
def test_property_bom_encodings_round_trip_for_every_kind(text):
    for codec in ("utf-8-sig", "utf-16", "utf-32"):
        for kind in FORMATS:
            got = decode_bytes(text.encode(codec), kind)
            assert got.text == text and got.problem is None


def test_latin1_markdown_is_decoded_by_a_reported_fallback(tmp_path):
    text = "# R\u00e9sum\u00e9\n\nCaf\u00e9 cr\u00e8me, na\u00efve.\n"
    f = tmp_path / "latin.md"
    f.write_bytes(text.encode("latin-1"))
    doc = load_document(f)
    assert doc.text == text and "\ufffd" not in doc.text  # accents kept, not replaced
    problem = doc.metadata["decode_problem"]
    assert "not valid utf-8" in problem and "line 1" in problem and "windows-1252" in problem
    with pytest.raises(DocumentError) as err:
        load_document(f, strict=True)
    assert err.value.reason == "undecodable" and str(f) in str(err.value)


def test_fallback_decoding_never_raises_even_on_bytes_windows_1252_lacks():
    raw = b"abc \x81\x8d\x8f\x90\x9d end"  # five bytes with no windows-1252 meaning
    got = decode_bytes(raw, "markdown")
    assert got.encoding == "latin-1" and got.text.endswith(" end") and got.problem


def test_python_decode_problem_names_the_line():
    got = decode_bytes(b"x = 1\ny = 2\nz = '\xff\xfe'\n", "python")
    assert got.problem.startswith("undecodable source") and "line 3" in got.problem


@pytest.mark.parametrize(
    ("raw", "what"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "PNG image"),
        (b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 40, "ELF"),
        (b"some text\x00\x00\x00more", "NUL byte"),
        (bytes(range(1, 8)) * 100, "control bytes"),
    ],
)
def test_binary_files_are_refused_with_a_reason(tmp_path, raw, what):
    f = tmp_path / "renamed.md"
    f.write_bytes(raw)
    with pytest.raises(DocumentError) as err:
        load_document(f)
    assert err.value.reason == "binary" and what in err.value.detail and err.value.path == str(f)
    assert what in binary_reason(raw)


@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=300))
def test_property_text_without_control_characters_is_never_binary(text):
    for codec in ("utf-8", "utf-16", "utf-32"):
        assert binary_reason(text.encode(codec)) is None


# ------------------------------------------------------------------------- special files


def test_fifo_is_skipped_without_blocking(tmp_path):
    (tmp_path / "ok.md").write_text("# ok\n")
    os.mkfifo(tmp_path / "pipe.md")
    errors: list[DocumentError] = []
    with deadline(10):
        docs = list(iter_documents([tmp_path], errors=errors))
        with pytest.raises(DocumentError) as err:
            load_document(tmp_path / "pipe.md")  # named directly: refused, not "no such file"
    assert [d.doc_id for d in docs] == ["ok.md"]
    assert [(e.reason, os.path.basename(e.path)) for e in errors] == [("not-regular", "pipe.md")]
    assert "FIFO" in err.value.detail


def test_dangling_symlink_and_symlink_loop_are_named_as_such(tmp_path):
    os.symlink(tmp_path / "gone.md", tmp_path / "dangling.md")
    os.symlink(tmp_path / "loop_b.md", tmp_path / "loop_a.md")
    os.symlink(tmp_path / "loop_a.md", tmp_path / "loop_b.md")
    errors: list[DocumentError] = []
    assert list(iter_documents([tmp_path], errors=errors)) == []
    details = {os.path.basename(e.path): e.detail for e in errors}
    assert details["dangling.md"] == "dangling symbolic link"
    assert details["loop_a.md"] == details["loop_b.md"] == "symbolic link loop"


def test_a_directory_named_as_a_file_is_refused(tmp_path):
    with pytest.raises(DocumentError) as err:
        load_document(tmp_path)
    assert err.value.reason == "not-regular"


# ------------------------------------------------------------------------- one doc_id rule


@pytest.fixture()
def small(tmp_path):
    root = tmp_path / "small"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\ntext\n")
    (root / "sub" / "b.py").write_text("def f():\n    return 1\n")
    (root / "sub" / "c.html").write_text("<h1>C</h1><p>p</p>")
    return root


def test_doc_id_identical_from_three_working_directories(small, monkeypatch):
    seen = []
    for cwd, arg in ((small.parent, "small"), (small.parent.parent, str(small)), (small, ".")):
        monkeypatch.chdir(cwd)
        seen.append([(d.doc_id, d.text) for d in iter_documents([arg])])
    assert seen[0] == seen[1] == seen[2]
    assert [i for i, _t in seen[0]] == ["a.md", "sub/b.py", "sub/c.html"]


def test_doc_id_is_relative_to_an_explicit_root_with_posix_separators(small, monkeypatch):
    monkeypatch.chdir(small / "sub")
    assert load_document("b.py", root=small.parent).doc_id == "small/sub/b.py"
    assert doc_id_for(small / "sub" / ".." / "a.md", small) == "a.md"
    with pytest.raises(ValueError, match="not inside the corpus root"):
        doc_id_for(small / "a.md", small / "sub")


def test_corpus_root_is_the_common_folder_of_the_inputs(small):
    assert corpus_root([small / "a.md", small / "sub"]) == str(small)
    assert corpus_root([small / "sub" / "b.py"]) == str(small / "sub")
    assert corpus_root([small]) == str(small)


def test_iter_paths_is_sorted_skips_hidden_and_cache_folders_and_gives_each_file_once(small):
    (small / ".git").mkdir()
    (small / ".git" / "x.md").write_text("no")
    (small / "__pycache__").mkdir()
    (small / "__pycache__" / "y.py").write_text("no")
    (small / "data.bin").write_bytes(b"\x00")
    got = [os.path.relpath(p, small) for p in iter_paths([small, small / "a.md"])]
    assert got == ["a.md", os.path.join("sub", "b.py"), os.path.join("sub", "c.html")]
    with pytest.raises(FileNotFoundError):
        list(iter_paths([small / "missing.md"]))


# ------------------------------------------------------------------------- the extension table


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.py", "python"),
        ("a.pyi", "python"),
        ("A.PY", "python"),
        ("a.md", "markdown"),
        ("a.markdown", "markdown"),
        ("a.html", "html"),
        ("a.htm", "html"),
        ("a.xhtml", "html"),
        ("a.rst", "rst"),
        ("a.txt", "text"),
        ("noext", "text"),
        ("a.csv", "text"),
    ],
)
def test_detect_format_table(name, kind):
    assert detect_format(name) == kind


def test_detect_format_sniffs_content_only_without_a_known_extension():
    assert detect_format("README", "<!DOCTYPE html><p>x") == "html"
    assert detect_format("script", "#!/usr/bin/env python\nprint(1)\n") == "python"
    assert detect_format("notes", "# Title\n\ntext\n") == "markdown"
    assert detect_format("page.md", "<!DOCTYPE html>") == "markdown"


def test_document_from_text_checks_its_arguments_and_kind_is_a_deprecated_alias_of_format():
    doc = Document.from_text("hello", doc_id="x", format="markdown")
    assert doc.kind == doc.format == "markdown"
    with pytest.raises(ValueError, match="format"):
        Document.from_text("hello", format="xlsx")
    with pytest.raises(ValueError, match="text"):
        Document.from_text(b"hello")


def test_glob_patterns_the_shell_left_alone_are_expanded(small):
    pattern = str(small / "**" / "*.py")
    assert [os.path.relpath(p, small) for p in iter_paths([pattern])] == [os.path.join("sub", "b.py")]
    assert corpus_root([pattern]) == str(small / "sub")
    assert [d.doc_id for d in iter_documents([str(small / "*.md"), str(small / "sub")])] == [
        "a.md",
        "sub/b.py",
        "sub/c.html",
    ]
    with pytest.raises(FileNotFoundError, match="no file matches"):
        list(iter_paths([str(small / "*.nothing")]))


def test_every_format_has_a_loader_and_a_structural_chunker():
    """The two tables agree: each format of documents.FORMATS is read one way and chunked one way."""
    from chunklab.chunkers.structural.dispatch import STRUCTURAL
    from chunklab.documents import EXTENSIONS, FORMATS, LAID_OUT

    assert set(STRUCTURAL) == set(FORMATS) == set(EXTENSIONS)
    for name, fmt in FORMATS.items():
        assert fmt.name == name and fmt.extensions and EXTENSIONS[name] == fmt.extensions
        assert fmt.laid_out == (name in LAID_OUT) == callable(fmt.loader)  # else decoded as text
        assert callable(STRUCTURAL[name].structural)
    extensions = [ext for fmt in FORMATS.values() for ext in fmt.extensions]
    assert len(extensions) == len(set(extensions))  # one format per extension


def test_a_pdf_without_its_extension_is_recognised_by_its_signature(tmp_path):
    from chunklab.documents import FORMATS

    assert FORMATS["pdf"].signature == b"%PDF-"
    renamed = tmp_path / "report.bin"
    renamed.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")  # the signature, no text layer
    with pytest.raises(
        DocumentError, match="not a readable PDF"
    ):  # read by the PDF loader, not refused as binary
        load_document(renamed)
