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
    (root / "image.gif").write_bytes(b"GIF89a not text")  # not a document format: not walked
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
    assert {"pkg/good.py", "guide.md", "page.html"} <= docs  # relative to the corpus root
    assert not any(d.endswith(".gif") for d in docs)
    for r in rows:
        c = Chunk.from_dict(r)
        assert c.id == r["id"]
        if not r["doc_id"].endswith(".html"):
            source = (tree / r["doc_id"]).read_text(encoding="utf-8")
            assert source[c.start : c.end] == c.text
    html_rows = [r for r in rows if r["doc_id"].endswith(".html")]
    assert "x()" not in " ".join(r["text"] for r in html_rows)
    summary = capsys.readouterr().out
    assert "files     ok 4, skipped 0, failed 0" in summary
    assert "fallback  1 file (25.00%)" in summary
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
        args = [
            "chunk",
            str(tree / "pkg" / "bad.py"),
            "--strategy",
            strategy,
            "--size",
            "100",
            "--overlap",
            "20",
        ]
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
    assert "1 chunk over 100 chars (1 single indivisible line marked oversize)" in capsys.readouterr().out


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


def test_bad_files_are_reported_skipped_and_the_run_goes_on(tree, tmp_path, capsys):
    import os

    (tree / "renamed.md").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64)
    os.mkfifo(tree / "pipe.md")
    os.symlink(tree / "gone.md", tree / "dangling.md")
    js = tmp_path / "s.json"
    assert main(["chunk", str(tree), "--no-progress", "--summary-json", str(js)]) == 1
    out = capsys.readouterr().out
    assert "files     ok 4, skipped 2, failed 1" in out
    s = json.loads(js.read_text())
    assert s["reasons"] == {"failed: missing": 1, "skipped: binary": 1, "skipped: not-regular": 1}
    assert [os.path.basename(p) for p, _d in s["failed"]] == ["dangling.md"]


def test_fifo_in_the_folder_neither_hangs_nor_destroys_the_previous_output(tree, tmp_path):
    import os

    out = tmp_path / "chunks.jsonl"
    out.write_text("previous result\n")
    os.mkfifo(tree / "pipe.md")
    assert main(["chunk", str(tree), "--out", str(out), "--no-progress", "--jobs", "2"]) == 0
    assert out.read_text() != "previous result\n" and len(read_jsonl(out)) > 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunks.jsonl", "docs"]  # no temp file left


def test_a_worker_killed_with_sigkill_is_reported_and_the_run_finishes(tree, tmp_path, monkeypatch, capsys):
    import os
    import signal

    from chunklab.commands import chunk as chunk_command

    (tree / "killer.md").write_text("# boom\n")
    real = chunk_command.chunk_file

    def deadly(path, config):  # runs in the forked worker, as the OOM killer would strike
        if path.endswith("killer.md"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, config)

    monkeypatch.setattr(chunk_command, "chunk_file", deadly)
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", str(tree), "--jobs", "2", "--out", str(out), "--no-progress"]) == 1
    report = capsys.readouterr().out
    assert "failed: worker-died" in report and "killer.md: the worker process died (SIGKILL)" in report
    assert {r["doc_id"] for r in read_jsonl(out)} == {"guide.md", "page.html", "pkg/bad.py", "pkg/good.py"}


def test_ctrl_c_stops_cleanly_with_one_line_and_keeps_the_previous_output(
    tree, tmp_path, monkeypatch, capsys
):
    import os
    import signal

    from chunklab.commands import chunk as chunk_command

    real = chunk_command.chunk_file

    def interrupting(path, config):
        if path.endswith("guide.md"):
            os.kill(os.getpid(), signal.SIGINT)
        return real(path, config)

    monkeypatch.setattr(chunk_command, "chunk_file", interrupting)
    # Python's own Ctrl-C handler, whatever this test process inherited (a job started with `&` from a
    # shell without job control ignores SIGINT, and Python then never raises KeyboardInterrupt)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    out = tmp_path / "chunks.jsonl"
    out.write_text("previous result\n")
    try:
        code = main(["chunk", str(tree), "--out", str(out), "--no-progress"])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert code == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == "chunklab chunk: interrupted"
    assert out.read_text() == "previous result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunks.jsonl", "docs"]


def test_out_that_is_a_directory_is_a_one_line_error(tree, tmp_path, capsys):
    assert main(["chunk", str(tree), "--out", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "chunklab chunk: error:" in err and "is a directory" in err and "Traceback" not in err


def test_doc_ids_follow_root_and_are_the_same_from_any_working_directory(tree, tmp_path, monkeypatch):
    ids = []
    for cwd, arg in ((tree.parent, "docs"), (tree, "."), (tmp_path.parent, str(tree))):
        monkeypatch.chdir(cwd)
        out = tmp_path / "c.jsonl"
        assert main(["chunk", arg, "--out", str(out), "--no-progress"]) == 0
        ids.append([r["id"] for r in read_jsonl(out)])
    assert ids[0] == ids[1] == ids[2]
    out = tmp_path / "r.jsonl"
    assert (
        main(["chunk", str(tree / "pkg"), "--root", str(tree.parent), "--out", str(out), "--no-progress"])
        == 0
    )
    assert {r["doc_id"] for r in read_jsonl(out)} == {"docs/pkg/good.py", "docs/pkg/bad.py"}
    assert main(["chunk", str(tree), "--root", str(tree / "pkg"), "--no-progress"]) == 2  # outside the root


def test_a_subcommand_that_fails_to_import_is_listed_with_its_error(monkeypatch, capsys):
    from chunklab import cli

    monkeypatch.setitem(cli.COMMANDS, "broken", "no_such_module_here")
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "broken" in capsys.readouterr().out
    assert main(["broken"]) == 2
    assert "no_such_module_here" in capsys.readouterr().err


def test_chunk_and_evaluate_help_list_the_same_strategy_names(capsys):
    from chunklab.chunkers.catalog import available_strategies

    for command in ("chunk", "evaluate"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert all(name in text for name in available_strategies()), command


def test_a_closed_stdout_pipe_ends_the_run_quietly(tmp_path):
    import subprocess
    import sys

    docs = tmp_path / "many"
    docs.mkdir()
    for i in range(300):
        (docs / f"f{i:03d}.md").write_text(f"# Doc {i}\n\n" + "Some words here. " * 40 + "\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chunklab.cli",
            "chunk",
            str(docs),
            "--out",
            "-",
            "--no-progress",
            "--size",
            "100",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.readline()  # like `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_a_fifo_or_symlink_loop_named_on_the_command_line_is_reported_as_such(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "pipe.md")
    os.symlink(tmp_path / "b.md", tmp_path / "a.md")
    os.symlink(tmp_path / "a.md", tmp_path / "b.md")
    (tmp_path / "ok.md").write_text("# ok\n")
    args = [
        "chunk",
        str(tmp_path / "pipe.md"),
        str(tmp_path / "a.md"),
        str(tmp_path / "ok.md"),
        "--no-progress",
    ]
    assert main(args) == 0  # skipped, not failed
    out = capsys.readouterr().out
    assert "pipe.md: not a regular file (FIFO)" in out and "a.md: symbolic link loop" in out
    assert "no such file" not in out
