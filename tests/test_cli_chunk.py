"""`chunklab chunk`: chunks streamed to JSONL by worker processes, with a summary at the end."""

from __future__ import annotations

import json

import pytest

from chunklab.chunk import Chunk
from chunklab.cli import main

GOOD_PY = "import os\n\n\ndef f(x):\n    '''Doc.'''\n    return x\n\n\nclass C:\n    y = 1\n"
BAD_PY = "def broken(:\n    pass\n" + "x = 1\n" * 50
MD = "# Title\n\nSome text.\n\n## Part\n\n```\n# code\n```\n"
HTML = "<html><body><h1>Hi</h1><p>para</p><script>x()</script></body></html>"


@pytest.fixture()
def tree(tmp_path):
    root = tmp_path / "docs"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "good.py").write_text(GOOD_PY)
    (root / "pkg" / "bad.py").write_text(BAD_PY)
    (root / "guide.md").write_text(MD)
    (root / "page.html").write_text(HTML)
    (root / "image.png").write_bytes(b"\x89PNG not text")
    return root


def read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_structural_run_writes_exact_chunks_and_a_summary(tree, tmp_path, capsys):
    out = tmp_path / "chunks.jsonl"
    rc = main(["chunk", str(tree), "--jobs", "2", "--out", str(out), "--no-progress", "--size", "300"])
    assert rc == 0
    rows = read_jsonl(out)
    docs = {r["doc_id"] for r in rows}
    assert {str(tree / "pkg" / "good.py"), str(tree / "guide.md"), str(tree / "page.html")} <= docs
    assert not any(d.endswith(".png") for d in docs)
    for r in rows:
        c = Chunk.from_dict(r)
        assert c.id == r["id"]
        if not r["doc_id"].endswith(".html"):
            source = open(r["doc_id"], encoding="utf-8").read()
            assert source[c.start : c.end] == c.text
    html_rows = [r for r in rows if r["doc_id"].endswith(".html")]
    assert "x()" not in " ".join(r["text"] for r in html_rows)
    summary = capsys.readouterr().out
    assert "files     4" in summary
    assert "fallback  1 files (25.00%)" in summary
    assert "SyntaxError" in summary
    assert "MB/s" in summary and "p50" in summary and "peak RSS" in summary


def test_one_job_and_two_jobs_give_the_same_chunks_in_the_same_order(tree, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["chunk", str(tree), "--jobs", "1", "--out", str(a), "--no-progress"]) == 0
    assert main(["chunk", str(tree), "--jobs", "2", "--out", str(b), "--no-progress"]) == 0
    assert a.read_text() == b.read_text()


def test_recursive_and_fixed_strategies_with_overlap(tree, tmp_path):
    for strategy in ("recursive", "fixed"):
        out = tmp_path / f"{strategy}.jsonl"
        args = ["chunk", str(tree / "pkg" / "bad.py"), "--strategy", strategy, "--size", "100", "--overlap", "20"]
        assert main([*args, "--out", str(out), "--no-progress"]) == 0
        rows = read_jsonl(out)
        assert len(rows) > 2 and all(r["metadata"]["strategy"] == strategy for r in rows)
        assert all(len(r["text"]) <= 100 for r in rows)
        assert rows[1]["start"] < rows[0]["end"]  # overlap is real


def test_summary_json_reports_the_numbers(tree, tmp_path):
    js = tmp_path / "summary.json"
    assert main(["chunk", str(tree), "--no-progress", "--summary-json", str(js)]) == 0
    s = json.loads(js.read_text())
    assert s["files"] == 4 and s["fallback_files"] == 1 and s["errors"] == []
    assert s["chunk_size"]["max"] <= 1500 and s["over_budget"] == 0
    assert s["kinds"] == {"python": 2, "markdown": 1, "html": 1}


def test_over_budget_lines_are_counted_and_marked(tmp_path, capsys):
    f = tmp_path / "long.py"
    f.write_text("X = '" + "a" * 500 + "'\n\ny = 1\n")
    assert main(["chunk", str(f), "--size", "100", "--no-progress"]) == 0
    assert "1 chunks over 100 chars (1 single indivisible lines marked oversize)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["chunk", "/no/such/path"],
        ["chunk"],
        ["chunk", ".", "--size", "0"],
        ["chunk", ".", "--jobs", "0"],
        ["chunk", ".", "--overlap", "10"],
        ["chunk", ".", "--strategy", "recursive", "--overlap", "2000"],
    ],
)
def test_bad_invocations_exit_2_with_a_message(argv, capsys):
    assert main(argv) == 2
    assert "chunklab chunk: error:" in capsys.readouterr().err
