"""code-poly on tiny synthetic archives: manifest, verified fetch and resume, reading in memory, questions."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.datasets.corpora.archives import ArchivePin, fetch_archives, parse_archive_pins, read_members
from chunklab.datasets.corpora.code_poly import PolyCorpus, PolyFile, language_of, poly_corpus
from chunklab.datasets.questions.poly import (
    doc_functions,
    poly_questions,
    strip_comment_markers,
    xml_doc_text,
)
from tests.support.archivegen import deb_bytes, tar_bytes

JS_FN = "function addAll(values) {\n  return values.reduce((a, b) => a + b, 0);\n}"
JS = (
    "// naïve header: ünïcode before the function shifts bytes against characters\n"
    "const greeting = 'héllo wörld';\n\n"
    "/**\n * Add every value of the list and return the total sum.\n * @param values numbers\n */\n"
    f"{JS_FN}\n" + "\n" * 30
)
GO_FN = "func (s *Stack) Push(v int) {\n\ts.items = append(s.items, v)\n}"
GO = (
    "package stack\n\n// Stack is a slice of ints.\ntype Stack struct{ items []int }\n\n"
    f"// Push puts one value on top of the stack.\n{GO_FN}\n" + "\n" * 40
)
RS_FN = '#[inline]\npub fn größe(s: &str) -> usize {\n    s.chars().count() // "ß"\n}'
RS = f"//! crate docs\n\n/// Count the characters of a string slice quickly.\n{RS_FN}\n" + "\n" * 40
SH = "#!/bin/bash\necho hi\n"


@pytest.fixture()
def source(tmp_path: Path) -> tuple[Path, list[ArchivePin]]:
    """Three archives (npm tarball, zip sdist, Debian package) under tmp/src, and their pins."""
    src = tmp_path / "src"
    src.mkdir()
    blobs = {
        ("npm", "adder", "1.0.0", "adder-1.0.0.tgz"): tar_bytes(
            {"package/lib/add.js": JS, "package/min/a.min.js": JS}
        ),
        ("pypi", "stacky", "2.0", "stacky-2.0.zip"): None,
        ("deb", "librust-size-dev", "0.1-1", "librust-size-dev_0.1-1_all.deb"): deb_bytes(
            {"./usr/share/cargo/size/src/lib.rs": RS, "./usr/bin/tool": SH, "./usr/share/doc/x/readme.rs": RS}
        ),
    }
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as zf:
        zf.writestr("stacky-2.0/go/stack.go", GO)
        zf.writestr("stacky-2.0/go/z_copy.go", GO)  # identical bytes: dropped by content dedupe
        zf.writestr("stacky-2.0/data.bin", b"\x00\x01")
    blobs[("pypi", "stacky", "2.0", "stacky-2.0.zip")] = zbuf.getvalue()
    pins = []
    for (kind, name, version, filename), data in blobs.items():
        assert data is not None
        (src / filename).write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        pins.append(ArchivePin(kind, name, version, digest, len(data), f"https://example.invalid/{filename}"))
    return src, pins


def _copier(src: Path, calls: list[str]):
    def download(pin: ArchivePin, dest: Path) -> None:
        calls.append(pin.name)
        shutil.copyfile(src / pin.url.rsplit("/", 1)[-1], dest)

    return download


def test_manifest_parsing_rejects_bad_lines() -> None:
    good = "deb a 1 " + "0" * 64 + " 10 http://x/a.deb"
    assert parse_archive_pins(["# c", "", good])[0].filename == "deb-a-1.deb"
    for bad in (
        good.replace("deb", "rpm", 1),
        good.replace("0" * 64, "z" * 64),
        good.replace(" 10 ", " ten "),
    ):
        with pytest.raises(ValueError):
            parse_archive_pins([bad])
    with pytest.raises(ValueError, match="twice"):
        parse_archive_pins([good, good])


def test_fetch_verifies_and_resumes(source, tmp_path: Path) -> None:
    src, pins = source
    calls: list[str] = []
    report = fetch_archives(
        "t", cache_dir=tmp_path / "c", pins=pins, downloader=_copier(src, calls), progress=False
    )
    assert (report.downloaded, report.present) == (3, 0)
    again = fetch_archives(
        "t", cache_dir=tmp_path / "c", pins=pins, downloader=_copier(src, calls), progress=False
    )
    assert (again.downloaded, again.present, len(calls)) == (0, 3, 3)
    folder = report.directory
    (folder / pins[0].filename).write_bytes(b"tampered")
    bad = [pins[0]]
    (src / pins[0].url.rsplit("/", 1)[-1]).write_bytes(b"not the pinned bytes")
    with pytest.raises(ValueError, match="failed verification"):
        fetch_archives(
            "t", cache_dir=tmp_path / "c", pins=bad, downloader=_copier(src, calls), progress=False
        )
    with pytest.raises(ValueError, match="pinned"):  # the tampered archive is never read
        poly_corpus("t", cache_dir=tmp_path / "c", pins=pins)
    assert not [p for p in folder.iterdir() if p.name.startswith(".fetch-")]


def test_corpus_reads_archives_without_unpacking(source, tmp_path: Path) -> None:
    src, pins = source
    fetch_archives("t", cache_dir=tmp_path / "c", pins=pins, downloader=_copier(src, []), progress=False)
    files = poly_corpus("t", cache_dir=tmp_path / "c", pins=pins)
    by_path = {f.relpath: f for f in files}
    assert set(by_path) == {"lib/add.js", "go/stack.go", "usr/share/cargo/size/src/lib.rs", "usr/bin/tool"}
    assert dict(files.languages()) == {"javascript": 1, "go": 1, "rust": 1, "bash": 1}
    assert by_path["lib/add.js"].read_text() == JS
    assert by_path["usr/share/cargo/size/src/lib.rs"].read_text() == RS
    assert by_path["go/stack.go"].metadata == {
        "language": "go",
        "project": "stacky==2.0",
        "kind": "pypi",
        "path": "go/stack.go",
    }
    assert len(poly_corpus("t", cache_dir=tmp_path / "c", pins=pins, dedupe="path")) == 5
    folder = tmp_path / "c" / "corpora" / "t"
    on_disk = {p.name for p in folder.iterdir()}
    assert {p.filename for p in pins} <= on_disk
    assert all(n in {p.filename for p in pins} or n.startswith(".index-") for n in on_disk)
    index = json.loads(next(folder.glob(".index-*.json")).read_text())
    assert index["files"]


def test_debian_source_tarball_pins_read_java_and_csharp(tmp_path: Path) -> None:
    """A ``debsrc`` pin (a Debian source package's ``.orig.tar.xz``) lists its Java and C# files."""
    java = "package a;\n\npublic class Basket {\n    int total() { return 0; }\n}\n"
    csharp = "namespace Shop {\n    public class Basket {\n        public int Total() => 0;\n    }\n}\n"
    data = tar_bytes({"lib-1.0/src/a/Basket.java": java, "Shop/Basket.cs": csharp}, "w:xz")
    url = "http://example.invalid/pool/main/l/lib/lib_1.0.orig.tar.xz"
    pins = parse_archive_pins([f"debsrc lib 1.0-2 {hashlib.sha256(data).hexdigest()} {len(data)} {url}"])
    assert pins[0].filename == "debsrc-lib-1.0-2.tar.xz"

    def copy(pin: ArchivePin, dest: Path) -> None:
        dest.write_bytes(data)

    fetch_archives("t", cache_dir=tmp_path / "c", pins=pins, downloader=copy, progress=False)
    files = poly_corpus("t", cache_dir=tmp_path / "c", pins=pins)
    assert {f.relpath: f.language for f in files} == {
        "lib-1.0/src/a/Basket.java": "java",
        "Shop/Basket.cs": "csharp",
    }
    assert {f.relpath: f.read_text() for f in files} == {
        "lib-1.0/src/a/Basket.java": java,
        "Shop/Basket.cs": csharp,
    }
    assert files[0].metadata["kind"] == "debsrc"


def test_csharp_doc_comments_become_questions_without_xml_tags() -> None:
    """C# (issue 41): ``///`` XML doc comments above a method, an attribute between, are its question."""
    src = (
        "namespace Shop {\n    public class Basket {\n"
        "        /// <summary>\n"
        '        /// Adds one <see cref="T:Shop.Item"/> to the basket and returns the new total.\n'
        "        /// </summary>\n"
        '        /// <param name="item">the item</param>\n'
        "        [Obsolete]\n"
        "        public int Add(Item item) { return 0; }\n    }\n}\n"
    )
    (fn,) = doc_functions(src, "csharp")
    assert fn.name == "Add" and src[fn.start :].startswith("[Obsolete]")
    assert src[fn.comment_start :].startswith("/// <summary>")
    words = strip_comment_markers(xml_doc_text(fn.comment))
    assert words == "Adds one Item to the basket and returns the new total."


def test_read_members_filters_by_name(source) -> None:
    src, pins = source
    deb = src / pins[2].url.rsplit("/", 1)[-1]
    names = [n for n, _ in read_members(deb, lambda n: n.endswith(".rs"))]
    assert names == ["usr/share/cargo/size/src/lib.rs", "usr/share/doc/x/readme.rs"]


def test_language_detection() -> None:
    assert language_of("a/b.tsx") == "tsx"
    assert language_of("x/Makefile") is None
    assert language_of("bin/run", b"#!/usr/bin/env python3\n") == "python"
    assert language_of("usr/share/bash-completion/completions/git") == "bash"


def test_questions_remove_comment_and_keep_exact_gold(source, tmp_path: Path) -> None:
    src, pins = source
    fetch_archives("t", cache_dir=tmp_path / "c", pins=pins, downloader=_copier(src, []), progress=False)
    files = poly_corpus("t", cache_dir=tmp_path / "c", pins=pins)
    expected = {
        "javascript": (JS_FN, "Add every value of the list and return the total sum."),
        "go": (GO_FN, "Push puts one value on top of the stack."),
        "rust": (RS_FN, "Count the characters of a string slice quickly."),
    }
    for language, (function, question) in expected.items():
        ds = poly_questions(files, language, min_file_chars=10)
        assert [q.question for q in ds.questions] == [question]
        q, doc = ds.questions[0], ds.documents[0]
        ((s, e),) = q.gold_spans
        assert doc.text[s:e] == function == q.answers[0]
        assert question not in doc.text  # the comment is gone from the indexed copy
        assert doc.metadata["language"] == language


words = st.lists(
    st.sampled_from("alpha beta gamma delta ünï 名前 value list".split()), min_size=4, max_size=12
)


@settings(max_examples=40, deadline=None)
@given(words, st.text(alphabet="é ß x\n", max_size=30))
def test_doc_functions_offsets_are_characters(comment_words: list[str], prefix: str) -> None:
    body = "function f(a) {\n  return a;\n}"
    text = f"const s = '{prefix.replace(chr(10), ' ')}';\n/** {' '.join(comment_words)}. */\n{body}\n"
    (fn,) = doc_functions(text, "javascript")
    assert text[fn.start : fn.end] == body
    assert text[fn.comment_start : fn.start].startswith("/**")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["go", "rust", "c", "ruby"]), max_size=40),
    st.integers(0, 6),
    st.integers(0, 3),
)
def test_sample_per_language_is_even_and_keeps_corpus_order(languages: list[str], n: int, seed: int) -> None:
    files = PolyCorpus(
        [
            PolyFile(f"a!/{i}", "npm", f"src/{i}", 10, "a", str(i), lang, "p", "1")
            for i, lang in enumerate(languages)
        ]
    )
    sample = files.sample_per_language(n, seed=seed)
    assert sample.languages() == Counter({lang: min(n, k) for lang, k in files.languages().items() if n})
    kept = set(sample)
    assert list(sample) == [f for f in files if f in kept]  # a subset, in corpus order
    assert list(files.sample_per_language(n, seed=seed)) == list(sample)
    assert {f.doc_id for f in sample} == {f"p==1:{f.relpath}" for f in sample}
    with pytest.raises(ValueError):
        files.sample_per_language(-1)
