"""check() finds its notebook from the kernel, advises a working path otherwise, is inert when graded."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from chunklab.course import selfcheck
from chunklab.course.selfcheck import GRADING_ENV, check, find_notebook

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course folder with two exercise notebooks; the kernel's working folder is its exercises/."""
    ex = tmp_path / "course" / "exercises"
    ex.mkdir(parents=True)
    for name in ("01-fixed.ipynb", "02-recursive.ipynb"):
        (ex / name).write_text("{}", encoding="utf-8")
    monkeypatch.chdir(ex)
    for var in ("JPY_SESSION_NAME", GRADING_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(selfcheck, "_kernel_id", lambda: None)
    return ex


@pytest.mark.parametrize("form", ["server-relative", "absolute", "kernel-relative"])
def test_the_session_name_jupyter_gives_the_kernel_finds_the_notebook(course, monkeypatch, form):
    target = course / "02-recursive.ipynb"
    value = {
        "server-relative": "exercises/02-recursive.ipynb",  # relative to Lab's root, one folder up
        "absolute": str(target),
        "kernel-relative": "02-recursive.ipynb",
    }[form]
    monkeypatch.setenv("JPY_SESSION_NAME", value)
    assert find_notebook() == target.resolve()


def test_a_stale_session_name_falls_back_to_the_servers_session_of_this_kernel(course, monkeypatch, tmp_path):
    """The notebook was renamed after the kernel started: the server's session list knows the new path."""
    monkeypatch.setenv("JPY_SESSION_NAME", str(course / "renamed-away.ipynb"))
    sessions = [
        {"path": "exercises/01-fixed.ipynb", "kernel": {"id": "other-kernel"}},
        {"path": "exercises/02-recursive.ipynb", "kernel": {"id": "abc-123"}},
    ]
    seen_tokens: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            seen_tokens.append(self.headers.get("Authorization"))
            body = json.dumps(sessions if self.path == "/api/sessions" else []).encode()
            self.send_response(200 if self.path == "/api/sessions" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        runtime = tmp_path / "runtime"
        runtime.mkdir()
        info = {
            "url": f"http://127.0.0.1:{server.server_port}/",
            "token": "t0k",
            "root_dir": str(course.parent),
        }
        (runtime / "jpserver-1.json").write_text(json.dumps(info), encoding="utf-8")
        (runtime / "jpserver-2.json").write_text("not json", encoding="utf-8")  # a broken file is skipped
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
        monkeypatch.setattr(selfcheck, "_kernel_id", lambda: "abc-123")
        assert find_notebook() == (course / "02-recursive.ipynb").resolve()
        assert seen_tokens == ["token t0k"]
    finally:
        server.shutdown()


def test_when_it_cannot_tell_the_advised_path_works_from_the_kernels_folder(course, monkeypatch):
    monkeypatch.setattr(selfcheck, "_server_sessions", lambda: iter(()))
    with pytest.raises(ValueError, match="cannot tell which notebook") as info:
        check("cp-small")
    advised = str(info.value).split("notebook=")[1].split(" ")[0].strip("'\"")
    assert (Path.cwd() / advised).is_file(), info.value


def test_the_course_relative_path_the_book_shows_works_from_exercises(course):
    """``notebook='exercises/01-fixed.ipynb'`` (as the book and old advice say) resolves from exercises/."""
    assert selfcheck._given(Path("exercises/01-fixed.ipynb")) == (course / "01-fixed.ipynb").resolve()
    with pytest.raises(ValueError, match="missing.ipynb is not a saved notebook"):
        check(notebook="missing.ipynb")


def test_inside_a_graded_kernel_check_does_nothing_and_passes(course, monkeypatch, capsys):
    monkeypatch.setenv(GRADING_ENV, "1")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("check() ran the grader when graded"))
    assert check("cp-small") is None
    assert "skipped while the notebook is being graded" in capsys.readouterr().out


def test_a_notebook_holding_a_check_cell_still_self_checks_and_grades(tmp_path):
    """The defect: a ``check("cp-small")`` cell made every later check and grade fail."""
    nb = nbformat.read(ROOT / "solutions" / "01-fixed.ipynb", as_version=4)
    after = next(i for i, c in enumerate(nb.cells) if c.get("id") == "cp-small")
    nb.cells.insert(after + 1, new_code_cell('from chunklab.course import check\ncheck("cp-small")'))
    path = tmp_path / "01-fixed.ipynb"
    nbformat.write(nb, path)
    proc = subprocess.run(
        [sys.executable, "-m", "chunklab.cli", "check", str(path), "--solutions", str(ROOT / "solutions")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checkpoints passed (100%)" in proc.stdout
    assert "raised" not in proc.stdout and "cannot tell" not in proc.stdout, proc.stdout


def test_check_shows_which_cell_it_has_reached_and_returns_nothing(tmp_path, capsys):
    """In Lab a check takes half a minute: a first line says what runs, a progress line (each over the
    last) names the code cell reached, then the report; no True/False lands under it."""
    path = tmp_path / "03b-documents.ipynb"
    shutil.copyfile(ROOT / "exercises" / "03b-documents.ipynb", path)
    assert check(notebook=path) is None
    first, rest = capsys.readouterr().out.split("\n", 1)
    assert first.startswith("check(): running 03b-documents.ipynb in a fresh kernel")
    assert '\rrunning code cell 2 of 5 under "1. Removing the margins"' in rest
    report = rest.rsplit("\r", 1)[1]
    assert "FAILED  cp-small" in report and "progress" not in report
    assert 'write remove_margins() in the cell under "1. Removing the margins"' in report
    assert 'NotImplementedError still raised in code cell 2 under "1. Removing the margins"' in report
