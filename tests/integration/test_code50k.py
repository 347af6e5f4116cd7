"""The pinned wheel corpus: pins, fetching (verified, resumable), reading files out of wheels; the
benchmark package (benchmarks/code_rag_50k): its config, its parallel map, its quick path."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.datasets.corpora import code50k, wheels
from chunklab.datasets.corpora.code import code_corpus
from chunklab.datasets.corpora.code50k import module_path, wheel_corpus
from chunklab.datasets.corpora.wheels import WheelPin, fetch_corpus, load_pins, parse_pins, wheel_status
from chunklab.datasets.registry import corpora, corpus

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- the committed pins


def test_committed_code_50k_pins_are_pure_wheels_of_at_least_300_projects():
    pins = load_pins("code-50k")
    projects = {p.project.lower() for p in pins}
    assert len(projects) == len(pins) >= 300
    assert all(p.filename.endswith(("-py3-none-any.whl", "-py2.py3-none-any.whl")) for p in pins)
    # the filename is the project's wheel of that version (names compared as PEP 503 normalises them)
    from packaging.utils import canonicalize_name

    for p in pins:
        dist, version = p.filename.split("-")[:2]
        assert canonicalize_name(dist) == canonicalize_name(p.project), p
        assert version == p.version, p


def test_unknown_corpus_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="code-50k"):
        load_pins("code-5k")
    with pytest.raises(
        ValueError, match=r"unknown corpus 'no-such-corpus'; known corpora: code-50k, code-poly, installed"
    ):
        corpus("no-such-corpus")
    with pytest.raises(ValueError, match=r"include_stdlib must be True or False.*corpus\('code-50k'\)"):
        code_corpus("code-50k")  # type: ignore[arg-type]


_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,20}", fullmatch=True)


@given(
    st.lists(
        st.tuples(
            _names,
            st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,2}", fullmatch=True),
            st.binary(min_size=1, max_size=8),
            st.integers(0, 10**9),
        ),
        min_size=1,
        max_size=8,
        unique_by=lambda t: (t[0], t[1]),
    )
)
def test_pins_round_trip_through_the_line_format(rows):
    pins = [
        WheelPin(n, v, hashlib.sha256(b).hexdigest(), f"{n}-{v}-py3-none-any.whl", size)
        for n, v, b, size in rows
    ]
    if len({p.filename for p in pins}) < len(pins):
        return  # two rows naming the same file are refused (tested below)
    lines = ["# a comment", ""] + [f"{p.spec} {p.sha256} {p.filename} {p.size}  # trailing" for p in pins]
    assert parse_pins(lines) == pins


@pytest.mark.parametrize(
    "line, message",
    [
        ("six==1.0 abc six-1.0-py3-none-any.whl 10", "sha256"),
        ("six 0" * 2, "expected"),
        ("six==1.0 " + "a" * 64 + " six-1.0-cp311-cp311-linux_x86_64.whl 10", "pure-Python"),
        ("six==1.0 " + "a" * 64 + " six-1.0-py3-none-any.whl ten", "size"),
    ],
)
def test_malformed_pin_lines_are_refused_with_their_line_number(line, message):
    with pytest.raises(ValueError, match=rf"pins:2: .*{message}"):
        parse_pins(["# header", line], source="pins")


def test_a_wheel_pinned_twice_is_refused():
    line = "six==1.0 " + "a" * 64 + " six-1.0-py3-none-any.whl 10"
    with pytest.raises(ValueError, match="pinned twice"):
        parse_pins([line, line.replace("six==1.0", "six==1.1")])


# --------------------------------------------------------------------------- fetching, with a fake pip


def _wheel_bytes(members: dict[str, bytes]) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(members):
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), members[name])
    return buf.getvalue()


WHEELS = {
    "alpha-1.0-py3-none-any.whl": {
        "alpha/__init__.py": b'"""Alpha."""\n',
        "alpha/core.py": b"def f(x):\n    return x + 1\n",
        "alpha/shared.py": b"SHARED = 1\n",
        "alpha-1.0.dist-info/METADATA": b"Name: alpha\n",
        "alpha-1.0.data/purelib/alpha_extra.py": b"EXTRA = 2\n",
        "alpha/README.txt": b"not code\n",
    },
    "beta_pkg-2.0-py2.py3-none-any.whl": {
        "beta/__init__.py": "# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\n".encode("latin-1"),
        "beta/copy.py": b"SHARED = 1\n",  # the same bytes as alpha/shared.py: dropped by dedupe
        "tests/test_beta.py": b"def test_x():\n    assert True\n",
    },
}


@pytest.fixture
def fake_corpus(tmp_path, monkeypatch):
    """A two-wheel corpus 'toy' under a temporary pins folder and cache; returns (cache, blobs)."""
    blobs = {name: _wheel_bytes(members) for name, members in WHEELS.items()}
    pins_dir = tmp_path / "pins"
    pins_dir.mkdir()
    lines = []
    for name, blob in blobs.items():
        project = "alpha" if name.startswith("alpha") else "beta-pkg"
        version = name.split("-")[1]
        lines.append(f"{project}=={version} {hashlib.sha256(blob).hexdigest()} {name} {len(blob)}")
    (pins_dir / "toy.txt").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(wheels, "CORPORA_DIR", pins_dir)
    code50k._wheel_corpus.cache_clear()
    return tmp_path / "cache", blobs


class FakePip:
    """Stands in for pip download: writes the requested wheels (optionally corrupted) and records calls."""

    def __init__(self, blobs: dict[str, bytes], corrupt: str | None = None) -> None:
        self.blobs, self.corrupt, self.calls = blobs, corrupt, []

    def __call__(self, pins: list[WheelPin], dest: Path) -> None:
        self.calls.append([p.filename for p in pins])
        for p in pins:
            data = self.blobs[p.filename]
            (dest / p.filename).write_bytes(data[:-1] + b"X" if p.filename == self.corrupt else data)


def test_fetch_verifies_every_wheel_and_a_rerun_downloads_nothing(fake_corpus):
    cache, blobs = fake_corpus
    pip = FakePip(blobs)
    report = fetch_corpus("toy", cache_dir=cache, progress=False, downloader=pip)
    assert (report.wheels, report.present, report.downloaded) == (2, 0, 2)
    assert report.downloaded_bytes == sum(map(len, blobs.values()))
    folder = cache / "corpora" / "toy"
    assert sorted(p.name for p in folder.iterdir()) == sorted(blobs)  # no temporary folder left behind
    again = fetch_corpus("toy", cache_dir=cache, progress=False, downloader=pip)
    assert (again.present, again.downloaded) == (2, 0) and len(pip.calls) == 1


def test_fetch_replaces_a_corrupt_wheel_and_keeps_the_good_one(fake_corpus):
    cache, blobs = fake_corpus
    fetch_corpus("toy", cache_dir=cache, progress=False, downloader=FakePip(blobs))
    bad = cache / "corpora" / "toy" / "alpha-1.0-py3-none-any.whl"
    bad.write_bytes(b"truncated")
    pins = {p.filename: p for p in load_pins("toy")}
    assert wheel_status(pins[bad.name], bad.parent) == "corrupt"
    pip = FakePip(blobs)
    report = fetch_corpus("toy", cache_dir=cache, progress=False, downloader=pip)
    assert pip.calls == [[bad.name]] and report.downloaded == 1
    assert wheel_status(pins[bad.name], bad.parent) == "ok"


def test_a_sha256_mismatch_names_the_wheel_and_leaves_no_file(fake_corpus):
    cache, blobs = fake_corpus
    name = "beta_pkg-2.0-py2.py3-none-any.whl"
    with pytest.raises(ValueError, match=rf"{name} \(beta-pkg==2.0\) failed verification"):
        fetch_corpus(
            "toy", cache_dir=cache, progress=False, downloader=FakePip(blobs, corrupt=name), batch_size=1
        )
    folder = cache / "corpora" / "toy"
    assert sorted(p.name for p in folder.iterdir()) == [
        "alpha-1.0-py3-none-any.whl"
    ]  # the verified one stays


def test_fetch_rejects_a_bad_batch_size(fake_corpus):
    with pytest.raises(ValueError, match="batch_size"):
        fetch_corpus("toy", cache_dir=fake_corpus[0], batch_size=0)


# --------------------------------------------------------------------------- reading files out of the wheels


def test_wheel_corpus_reads_members_in_order_with_project_version_and_module(fake_corpus):
    cache, blobs = fake_corpus
    with pytest.raises(FileNotFoundError, match="chunklab corpus fetch toy"):
        wheel_corpus("toy", cache_dir=cache)
    fetch_corpus("toy", cache_dir=cache, progress=False, downloader=FakePip(blobs))
    corpus = wheel_corpus("toy", cache_dir=cache)
    got = [(f.root, f.relpath, f.project, f.module) for f in corpus]
    assert got == [
        ("alpha==1.0", "alpha_extra.py", "alpha", "alpha_extra"),  # .data/purelib/ installs at the top level
        ("alpha==1.0", "alpha/__init__.py", "alpha", "alpha"),
        ("alpha==1.0", "alpha/core.py", "alpha", "alpha.core"),
        ("alpha==1.0", "alpha/shared.py", "alpha", "alpha.shared"),
        ("beta-pkg==2.0", "beta/__init__.py", "beta-pkg", "beta"),
        ("beta-pkg==2.0", "tests/test_beta.py", "beta-pkg", "tests.test_beta"),
    ]
    assert (
        len(wheel_corpus("toy", cache_dir=cache, dedupe="path")) == 7
    )  # beta/copy.py is alpha/shared.py's twin
    by_rel = {f.relpath: f for f in corpus}
    assert by_rel["alpha/core.py"].read_bytes() == WHEELS["alpha-1.0-py3-none-any.whl"]["alpha/core.py"]
    assert (
        by_rel["beta/__init__.py"].read_text() == "# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\n"
    )  # PEP 263 cookie
    assert by_rel["alpha/core.py"].version == "1.0" and corpus.projects() == {"alpha": 4, "beta-pkg": 2}
    assert [f.relpath for f, _ in corpus.iter_sources()] == [f.relpath for f in corpus]


def test_a_wheel_of_the_wrong_size_is_reported(fake_corpus):
    cache, blobs = fake_corpus
    fetch_corpus("toy", cache_dir=cache, progress=False, downloader=FakePip(blobs))
    (cache / "corpora" / "toy" / "alpha-1.0-py3-none-any.whl").write_bytes(b"short")
    with pytest.raises(ValueError, match="alpha-1.0-py3-none-any.whl has 5 bytes"):
        wheel_corpus("toy", cache_dir=cache)


@pytest.mark.parametrize(
    "member, expected",
    [
        ("pkg/mod.py", "pkg/mod.py"),
        ("pkg-1.0.data/purelib/pkg/mod.py", "pkg/mod.py"),
        ("pkg-1.0.data/platlib/x.py", "x.py"),
        ("pkg-1.0.data/scripts/run.py", "scripts/run.py"),
        ("pkg-1.0.dist-info/hook.py", None),
    ],
)
def test_module_path_of_wheel_members(member, expected):
    assert module_path(member) == expected


def test_corpus_registry_resolves_pinned_and_installed_names(fake_corpus, monkeypatch):
    cache, blobs = fake_corpus
    fetch_corpus("toy", cache_dir=cache, progress=False, downloader=FakePip(blobs))
    monkeypatch.setenv("CHUNKLAB_CACHE", str(cache))
    assert "toy" in corpora()
    assert [f.relpath for f in corpus("toy")] == [f.relpath for f in wheel_corpus("toy", cache_dir=cache)]
    assert corpus("toy", dedupe="path").paths == wheel_corpus("toy", cache_dir=cache, dedupe="path").paths
    assert corpus("installed").paths == code_corpus().paths
    assert corpus("stdlib").paths == code_corpus(include_site_packages=False).paths


def test_cli_corpus_commands(fake_corpus, capsys):
    from chunklab.cli import main

    cache, blobs = fake_corpus
    assert main(["corpus", "list", "--cache-dir", str(cache)]) == 0
    assert "0/2 fetched" in capsys.readouterr().out
    fetch_corpus("toy", cache_dir=cache, progress=False, downloader=FakePip(blobs))
    assert main(["corpus", "info", "toy", "--cache-dir", str(cache), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["wheels"], info["fetched"], info["files"], info["projects"]) == (2, 2, 6, 2)
    assert main(["corpus", "fetch", "toy", "--cache-dir", str(cache), "--no-progress"]) == 0
    assert "2 already verified, 0 downloaded" in capsys.readouterr().out


# --------------------------------------------------------------------------- the benchmark's quick path


def _benchmark():
    """The benchmark package's entry point (``python -m benchmarks.code_rag_50k``)."""
    return importlib.import_module("benchmarks.code_rag_50k.__main__")


@pytest.mark.slow
def test_benchmark_quick_path_on_a_few_dozen_installed_files(tmp_path):
    """The quick path end to end (a seeded sample, two chunking workers, questions, BM25, the IVF sweep,
    the paired intervals) on 60 files: each property below holds per file or per question, so a few
    dozen files (about 750 structural chunks, 9 questions, a three-step nprobe sweep) check it as
    200 did, at a third of the time."""
    bench = _benchmark()
    assert (
        bench.main(
            [
                "--quick",
                "--files",
                "60",
                "--workers",
                "2",
                "--question-files",
                "10",
                "--dense-files",
                "0",
                "--static-index",
                "ivf",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "code_rag_50k-quick.json").read_text())
    assert (tmp_path / "code_rag_50k-quick.md").read_text().startswith("# Code RAG at scale")
    assert result["files"] == 60
    s, r = (
        result["chunking"]["strategies"]["structural"],
        result["chunking"]["strategies"]["recursive 800/80"],
    )
    assert r["size_max"] <= 800 and 0 <= s["fallback_rate"] <= 1
    assert s["compile_share"] > r["compile_share"]  # the scenario's point: whole definitions compile
    assert s["fallback_files"] == sum(s["fallback_reasons"].values())
    full = result["retrieval"]["scopes"]["full"]
    assert full["questions"] == result["retrieval"]["questions"] > 0
    for entry in full["strategies"].values():
        for metrics in entry["retrievers"].values():
            interval = metrics.pop("interval")
            assert (
                interval["retrieved_chars"][0]
                <= metrics.pop("retrieved_chars")
                <= interval["retrieved_chars"][1]
            )
            assert all(0 <= v <= 1 for v in metrics.values())
            assert all(interval[m][0] <= v <= interval[m][1] for m, v in metrics.items())
        timings = entry["timings"]
        assert timings["bm25_postings"] >= entry["chunks"] and timings["vocabulary"] > 0
        assert timings["bm25_query_ms_p50_p95"][0] <= timings["bm25_query_ms_p50_p95"][1]
        ivf = timings[
            "static_index"
        ]  # the IVF path forced on a small corpus: its sweep against the exact scan
        assert ivf["method"] == "ivf" and 1 <= ivf["nprobe"] <= ivf["nlist"]
        shares = [row["agreement_at_5"] for row in ivf["sweep"]]
        assert [row["nprobe"] for row in ivf["sweep"]] == sorted(row["nprobe"] for row in ivf["sweep"])
        assert all(
            0 <= a <= b <= 1 for a, b in zip(shares, shares[1:])
        )  # more cells scanned never finds less
        exact = entry["static_exact"]
        assert (
            0 <= exact["recall"] <= 1 and exact["recall_minus_ivf"]["lo"] <= exact["recall_minus_ivf"]["diff"]
        )
    for cmp in full["paired"].values():
        assert all(c["lo"] <= c["diff"] <= c["hi"] for c in cmp.values())
    for entry in full["strategies"].values():
        assert {"bm25", "bm25_ctx", "hybrid", "hybrid_ctx"} <= set(entry["retrievers"])
        assert entry["timings"]["bm25_ctx_postings"] >= entry["timings"]["bm25_postings"]  # headers add terms
        for cmp in entry["contextual_minus_plain"].values():
            assert all(c["lo"] <= c["diff"] <= c["hi"] for c in cmp.values())
    # the per-question ranks, out of the book's file, read back to the means it holds
    ranks = json.loads((tmp_path / "code_rag_50k-quick-questions.json").read_text())
    assert "per_question" not in full and len(ranks["full | qid"]) == full["questions"]
    for name, entry in full["strategies"].items():
        for r, metrics in entry["retrievers"].items():
            hit = ranks[f"full | ranks | {name} | {r} | hit"]
            assert sum(1 <= h <= 5 for h in hit) / len(hit) == pytest.approx(metrics["recall"], abs=1e-4)
            file = ranks[f"full | ranks | {name} | {r} | file"]
            assert all(0 < f <= h for f, h in zip(file, hit) if h)  # the gold function's chunk is in its file
    analysis = importlib.import_module("benchmarks.code_rag_50k.analysis")
    assert analysis.main(["--quick", "--out", str(tmp_path)]) == 0
    read = json.loads((tmp_path / "code_rag_50k-quick-analysis.json").read_text())
    bm25 = read["retrievers"]["structural | bm25"]
    assert bm25["recall_at"]["5"]["share"] == pytest.approx(
        full["strategies"]["structural"]["retrievers"]["bm25"]["recall"], abs=1e-4
    )
    depths = [bm25["recall_at"][d]["share"] for d in ("1", "5", "10", "20", "50")]
    assert depths == sorted(depths) and bm25["file_at_5"]["share"] >= depths[1]


def test_benchmark_scores_the_characters_each_question_retrieved():
    """``retrieved_chars``: the lengths of the top-k chunks summed, as chapter 6's Benchmark counts them."""
    import numpy as np

    from benchmarks.code_rag_50k.retrieval import score
    from chunklab.datasets.corpora.docs import Question

    class Index:  # the two things score reads of a CodeIndex: chunk spans and whether they compile
        spans = [("a.py", 0, 120), ("a.py", 100, 400), ("b.py", 0, 50)]
        compiles = np.array([True, False, True])

        def span(self, i):
            return self.spans[i]

    question = Question("q1", "what does f do?", "a.py", [(110, 300)], ["def f"], "function", "dev", False)
    scores = score(Index(), [question, question], [[0, 1], [2]], k=5)
    assert scores["retrieved_chars"].tolist() == [420.0, 50.0]  # overlap counted in both chunks
    assert scores["recall"].tolist() == [1.0, 0.0]


_words = st.text(st.sampled_from("ab_Z9 .>\n:()"), max_size=30)


@given(header=_words, body=_words)
def test_contextual_bm25_counts_are_the_header_s_tokens_plus_the_text_s(header, body):
    """Header counts + text counts = the tokens of embedding_text's "header\n\ntext"."""
    from collections import Counter

    from chunklab.retrieval.lexical import tokenize

    joined = f"{header}\n\n{body}" if header else body
    assert Counter(tokenize(joined)) == Counter(tokenize(header)) + Counter(tokenize(body))


def test_contextual_header_is_the_kits_path_and_qualified_name():
    _benchmark()
    from benchmarks.code_rag_50k.chunking import contextual_headers
    from chunklab.chunk import embedding_text
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.documents import Document
    from chunklab.enrich.context import add_context

    source = "import os\n\nX = 1\n\n\nclass Basket:\n    def add(self, item):\n        return item\n"
    doc = Document("shop/basket.py", source, format="python")
    chunks = get_strategy("structural", max_chars=40, min_chars=1)(doc)
    heads = contextual_headers(chunks)
    by_name = {c.metadata.get("name"): h for c, h in zip(chunks, heads)}
    assert by_name["<module>"] == "shop/basket.py"  # module-level code: the path alone
    assert by_name["Basket.add"] == "shop/basket.py > Basket.add"
    for c, head in zip(chunks, heads):  # what BM25Index(context=True) would index for the same header
        (with_head,) = add_context([c], title=head)
        assert embedding_text(with_head) == f"{head}\n\n{c.text}"
    recursive = get_strategy("recursive", size=40, overlap=0)(doc)
    assert set(contextual_headers(recursive)) == {"shop/basket.py"}


def test_benchmark_settings_are_one_frozen_picklable_config():
    import dataclasses
    import pickle

    _benchmark()
    from benchmarks.code_rag_50k.config import parse_args

    config = parse_args(["--quick", "--question-files", "100", "--dense-files", "7", "--workers", "3"])
    assert (config.question_files, config.dense_files, config.workers) == (
        40,
        7,
        3,
    )  # --quick caps at 40 / 60
    assert config.stem == "code_rag_50k-quick" and parse_args([]).stem == "code_rag_50k"
    assert pickle.loads(pickle.dumps(config)) == config
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.workers = 1  # type: ignore[misc]
    assert config.params("recursive 800/80") == {"size": 800, "overlap": 80}


def _triple(item: int, factor: int) -> int:
    if item == -1:
        os._exit(3)  # a worker that dies without answering
    return item * factor


@pytest.mark.parametrize("workers", [1, 2])
def test_benchmark_parallel_map_keeps_input_order_and_hands_the_context_over(workers):
    _benchmark()
    from benchmarks.code_rag_50k.chunking import parallel_map

    assert list(parallel_map(_triple, list(range(40)), 3, workers, "test")) == [3 * i for i in range(40)]


def test_benchmark_parallel_map_stops_when_a_worker_dies():
    _benchmark()
    from benchmarks.code_rag_50k.chunking import parallel_map

    with pytest.raises(RuntimeError, match="item -1"):
        list(parallel_map(_triple, [1, 2, -1, 4], 3, 2, "test"))


def test_benchmark_touches_no_private_api_of_a_dependency():
    import re

    private = re.compile(
        r"\b(bm25s|chromadb|faiss|scipy)\b[\w.]*\._[a-z]|from (bm25s|chromadb|faiss)[\w.]* import _"
    )
    for path in sorted((ROOT / "benchmarks" / "code_rag_50k").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not private.search(text), f"{path.name}: {private.search(text)}"
        assert "global " not in text, f"{path.name} keeps settings in module globals"
