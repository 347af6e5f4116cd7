"""code_corpus: every installed .py file, in a deterministic order, without duplicates."""

from __future__ import annotations

import hashlib
import os
import sysconfig

import pytest

from chunklab.datasets import CodeCorpus, code_corpus


@pytest.fixture(scope="module")
def corpus() -> CodeCorpus:
    return code_corpus()


def test_corpus_holds_stdlib_then_site_packages_sorted_within_each(corpus):
    roots = [f.root for f in corpus]
    assert roots == sorted(roots, key=["stdlib", "site-packages"].index)
    for root in ("stdlib", "site-packages"):
        rel = [f.relpath for f in corpus if f.root == root]
        assert rel == sorted(rel) and rel


def test_corpus_contains_known_stdlib_and_installed_modules(corpus):
    modules = {f.module for f in corpus}
    assert {"json.decoder", "ast", "bs4", "tqdm"} <= modules
    assert all(f.path.endswith(".py") and os.path.isfile(f.path) for f in corpus[:200])
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    assert not any("site-packages" in f.relpath.split("/") for f in corpus if f.path.startswith(stdlib))


def test_no_path_twice_and_no_two_files_with_identical_bytes(corpus):
    paths = [f.path for f in corpus]
    assert len(paths) == len(set(paths))
    by_size: dict[int, list] = {}
    for f in corpus:
        by_size.setdefault(f.size, []).append(f)
    digests = set()
    for group in by_size.values():
        if len(group) > 1:
            for f in group:
                d = hashlib.sha256(f.read_bytes()).digest()
                assert d not in digests, f.path
                digests.add(d)


def test_path_dedupe_keeps_more_files_than_content_dedupe(corpus):
    assert len(code_corpus(dedupe="path")) >= len(corpus)


def test_listing_is_deterministic(corpus):
    assert code_corpus().paths == corpus.paths


def test_sample_is_deterministic_in_corpus_order_and_a_subset(corpus):
    a = corpus.sample(50, seed=3)
    b = corpus.sample(50, seed=3)
    c = corpus.sample(50, seed=4)
    assert a.paths == b.paths and a.paths != c.paths
    assert len(a) == 50 and len(set(a.paths)) == 50
    index = {p: i for i, p in enumerate(corpus.paths)}
    positions = [index[p] for p in a.paths]
    assert positions == sorted(positions)


def test_sample_rejects_impossible_sizes(corpus):
    with pytest.raises(ValueError):
        corpus.sample(len(corpus) + 1)
    with pytest.raises(ValueError):
        corpus.sample(-1)


def test_only_stdlib_or_only_site_packages(corpus):
    std = code_corpus(include_site_packages=False)
    site = code_corpus(include_stdlib=False)
    assert {f.root for f in std} == {"stdlib"} and {f.root for f in site} == {"site-packages"}
    assert len(std) + len(site) >= len(corpus)
    assert len(code_corpus(False, False)) == 0


def test_files_read_as_bytes_and_decoded_text(corpus):
    f = next(f for f in corpus if f.module == "json.decoder")
    assert f.read_text().startswith('"""Implementation of JSONDecoder')
    assert f.project == "stdlib"
    assert corpus.filter(project="bs4") and all(g.project == "bs4" for g in corpus.filter(project="bs4"))
    assert corpus.total_bytes == sum(g.size for g in corpus)
    assert len(corpus.projects()) > 50


def test_bad_dedupe_raises_value_error():
    with pytest.raises(ValueError):
        code_corpus(dedupe="nope")


def test_function_spans_are_character_offsets_even_after_non_ascii_text():
    import ast

    from chunklab.datasets.questions.code import function_spans

    src = (
        "s = 'caf\u00e9 \u2603'\n\n@deco('\u00e9')\ndef f(x):\n    def inner():\n        pass\n"
        "    return '\u00fc'\n\n\nclass C:\n    def m(self):\n        return '\u00e9\u00e9'\n"
    )
    spans = function_spans(src)
    assert [q for q, _s, _e in spans] == ["f", "C.m"]  # nested functions left out
    tree = ast.parse(src)
    f, cls = tree.body[1], tree.body[2]
    assert src[spans[0][1] : spans[0][2]] == "@" + ast.get_source_segment(
        src, f.decorator_list[0]
    ) + "\n" + ast.get_source_segment(src, f)
    assert src[spans[1][1] : spans[1][2]] == ast.get_source_segment(src, cls.body[0])
    assert function_spans("def broken(:\n") == []
