"""The grader, sealed for real (issue 26): every finding of the adversarial pass, reproduced and defeated.

Each test grades the tiny course of tests/support/tiny_course.py (a kernel per submission, short limits):
(1) a kernel log replaced by a link or a FIFO, (2) malformed kernel messages that used to crash
the whole batch, results written as each notebook finishes and ``--resume``, (3) exercise
functions that call the library code they re-implement, (4) identity from the folder and
escaped learner text, (5) limits on /tmp, the scratch folder, stored output and the kernel's
uid, and the line naming them, (6) ``--jobs`` and the pytest plugin.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import threading
import tracemalloc
from pathlib import Path

import nbformat
import pytest

from chunklab.cli import main
from chunklab.course import grader as grader_module
from chunklab.course import hidden, shortcuts
from chunklab.course.generate import make_exercise
from chunklab.course.grader import GradeOptions, grade_notebooks
from chunklab.course.hidden import HiddenCheck
from chunklab.course.kernel import Kernel, Limits, kernel_env
from chunklab.course.results import (
    Gradebook,
    GradeResult,
    format_result,
    identify,
    printable,
    write_feedback,
    write_report,
)
from chunklab.course.shortcuts import Shortcut
from tests.support.sandbox import needs_bwrap
from tests.support.tiny_course import FAST, SOLUTION_SOURCE, blank_with, grade, solution_with, tiny_solution

ROOT = Path(__file__).resolve().parents[2]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop is only for a grader running as root")
# the runtime folder of a graded kernel is where its connection file is (the kernel's own argv says)
RUNTIME = "import sys, pathlib\nrun = pathlib.Path(sys.argv[sys.argv.index('-f') + 1]).parent\n"


def with_double(body: str):
    """The reference solution whose ``double`` runs ``body`` (indented by the caller) before returning."""
    nb = tiny_solution()
    nb.cells[1].source = SOLUTION_SOURCE.replace("    return 2 * x", body + "    return 2 * x")
    return nb


def _within(seconds: float, func):
    """``func()`` run in a thread; AssertionError if it has not returned in ``seconds`` (a hang)."""
    box: dict[str, object] = {}
    thread = threading.Thread(target=lambda: box.update(value=func()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the grader hung"
    return box["value"]


# ------------------------------------------------------------------------- (1) the kernel log


@needs_bwrap
@pytest.mark.parametrize("plant", ["symlink", "fifo"])
def test_a_kernel_log_replaced_by_a_link_or_a_fifo_is_never_opened(course, tmp_path, plant):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-GRADES alice 0/3\n", encoding="utf-8")
    secret.chmod(0o600)
    make = (
        f"(run / 'kernel.log').symlink_to({str(secret)!r})"
        if plant == "symlink"
        else "os.mkfifo(run / 'kernel.log')"
    )
    attack = (
        RUNTIME + "import os\n"
        "for name in ('kernel.log',):\n"
        "    try:\n        os.remove(run / name)\n    except OSError:\n        pass\n"
        f"{make}\nos._exit(3)"
    )
    attacker, honest = _within(
        120, lambda: grade(course, ("mallory", solution_with(attack)), ("carol", tiny_solution()))
    )
    assert "the kernel died in code cell 2" in attacker.stopped
    assert "TOP-SECRET" not in attacker.stopped + format_result(attacker)
    assert honest.ok  # the batch went on


# ------------------------------------------------------------------------- (2) malformed messages


MALFORMED = {
    "text/plain an int": "    from IPython.display import publish_display_data\n"
    "    publish_display_data({'text/plain': 5})\n",
    "user_expressions a list": "    ip = get_ipython()\n"
    "    type(ip).user_expressions = lambda self, expressions: [1]\n",
}


@pytest.mark.parametrize("attack", sorted(MALFORMED), ids=str)
def test_a_malformed_kernel_message_is_that_notebooks_error_and_the_batch_goes_on(course, attack):
    bad, good = grade(course, ("mallory", with_double(MALFORMED[attack])), ("carol", tiny_solution()))
    assert bad.error.startswith(("the notebook sent a malformed message: ", "the grader could not")), (
        bad.error
    )
    assert bad.score == 0 and bad.checkpoints == []
    assert good.ok


def test_a_patched_hidden_check_answering_a_non_list_fails_the_check_not_the_batch(course, monkeypatch):
    check = HiddenCheck(
        "cp-one", "double", ("impl",), lambda rng: [("an integer", {"x": rng.randint(1, 9)})], "value"
    )
    monkeypatch.setitem(hidden.HIDDEN, "00-tiny", [check])
    patch = (
        "import json, chunklab.course.guard as g\n"
        "g.hidden = lambda f, i, s, nonce, c=None: json.dumps({'nonce': nonce, 'results': 5})"
    )
    bad, good = grade(course, ("mallory", solution_with(patch)), ("carol", tiny_solution()))
    assert not bad.error and not bad.checkpoints[0].passed
    assert bad.checkpoints[0].hidden[0].detail == "the kernel's answer was not one result per input"
    assert good.ok


def test_any_exception_while_grading_one_notebook_is_its_error(course, monkeypatch):
    real = grader_module._Run.grade

    def flaky(self):
        if "mallory" in str(self.result.path):
            raise KeyError("boom")
        return real(self)

    monkeypatch.setattr(grader_module._Run, "grade", flaky)
    bad, good = grade(course, ("mallory", tiny_solution()), ("carol", tiny_solution()))
    assert bad.error == "the grader could not grade this notebook: KeyError: 'boom'"
    assert good.ok


def test_rows_and_pages_are_written_as_each_notebook_finishes_and_resume_grades_the_rest(
    course, tmp_path, monkeypatch, capsys
):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("ann", "bob", "cid"):
        nbformat.write(tiny_solution(), subs / f"{name}-00-tiny.ipynb")
    report = tmp_path / "grades.csv"
    args = ["grade", str(subs), "--solutions", str(course), "--timeout", "20", "--report", str(report)]
    real = grader_module._Run.grade

    def interrupted(self):
        if "bob" in str(self.result.path):
            raise KeyboardInterrupt  # the instructor's Ctrl-C, in the middle of the class
        return real(self)

    monkeypatch.setattr(grader_module._Run, "grade", interrupted)
    assert main(args) == 130  # interrupted
    rows = list(csv.DictReader(report.open(encoding="utf-8")))
    assert [r["student"] for r in rows] == ["ann"] and rows[0]["passed"] == "2"
    assert len(list((tmp_path / "grades-feedback").glob("subs-ann-00-tiny-*.html"))) == 1
    monkeypatch.setattr(grader_module._Run, "grade", real)
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    assert "resuming: 1 of 3 notebooks already in" in capsys.readouterr().out
    rows = list(csv.DictReader(report.open(encoding="utf-8")))
    assert sorted(r["student"] for r in rows) == ["ann", "bob", "cid"]
    assert all(r["passed"] == "2" for r in rows)
    index = (tmp_path / "grades-feedback" / "index.html").read_text(encoding="utf-8")
    assert all(f"<td>{s}</td>" in index for s in ("ann", "bob", "cid"))


# ------------------------------------------------------------------------- (3) library shortcuts

FUSE = "chunklab.retrieval.hybrid:reciprocal_rank_fusion"
MESSAGE = (
    "double calls chunklab.retrieval.hybrid.reciprocal_rank_fusion, which this exercise asks you to write"
)


@pytest.fixture
def shortcut(monkeypatch):
    """The tiny course's ``double`` declared as a re-implementation of chunklab's RRF (any function does)."""
    monkeypatch.setitem(shortcuts.SHORTCUTS, "00-tiny", Shortcut(("double",), (FUSE,)))


CALLS = {
    "direct": "    from chunklab.retrieval.hybrid import reciprocal_rank_fusion\n"
    "    reciprocal_rank_fusion([])\n",
    "through the package module": "    import chunklab.retrieval as r\n"
    "    r.hybrid.reciprocal_rank_fusion([])\n",
    "through a helper": "    helper()\n",
    "caught": "    try:\n        from chunklab.retrieval.hybrid import reciprocal_rank_fusion\n"
    "        reciprocal_rank_fusion([])\n    except Exception:\n        pass\n",
    "module reloaded": "    import importlib, chunklab.retrieval.hybrid as h\n    importlib.reload(h)\n"
    "    h.reciprocal_rank_fusion([])\n",
}


@pytest.mark.parametrize("how", sorted(CALLS), ids=str)
def test_an_exercise_function_calling_the_library_fails_its_checkpoint_naming_the_function(
    course, shortcut, how
):
    nb = with_double(CALLS[how])
    nb.cells.insert(
        1,
        nbformat.v4.new_code_cell(
            "def helper():\n    from chunklab.retrieval.hybrid import reciprocal_rank_fusion\n"
            "    return reciprocal_rank_fusion([])",
            id="helper-cell",
        ),
    )
    (r,) = grade(course, ("mallory", nb))
    cp_one = r.checkpoints[0]
    assert not cp_one.passed
    if how == "module reloaded":
        assert "reciprocal_rank_fusion was replaced or its module reloaded" in cp_one.detail, cp_one.detail
    else:
        assert MESSAGE in cp_one.detail, cp_one.detail


def test_the_hidden_check_traces_the_library_however_it_was_reached(course, shortcut, monkeypatch):
    check = HiddenCheck(
        "cp-one", "double", ("impl",), lambda rng: [("an integer", {"x": rng.randint(1, 9)})], "value"
    )
    monkeypatch.setitem(hidden.HIDDEN, "00-tiny", [check])
    sneaky = (  # the original, dug out of the module file: no tripwire on the way
        "    import importlib.util, chunklab.retrieval.hybrid as h\n"
        "    spec = importlib.util.spec_from_file_location('copy', h.__file__)\n"
        "    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "    m.reciprocal_rank_fusion([])\n"
    )
    (r,) = grade(course, ("mallory", with_double(sneaky)))
    hidden_result = r.checkpoints[0].hidden[0]
    assert not hidden_result.passed and MESSAGE in hidden_result.detail, hidden_result


def test_an_alias_of_the_library_function_is_named_as_such(course, shortcut):
    nb = tiny_solution()
    nb.cells[1].source = "from chunklab.retrieval.hybrid import reciprocal_rank_fusion as double"
    (r,) = grade(course, ("mallory", nb))
    assert r.checkpoints[0].detail == MESSAGE.replace("double calls", "double is")


def _reference_calling_the_library(course):
    """The tiny reference whose second checkpoint also calls chunklab's RRF at top level, in ``course``."""
    ref = tiny_solution()
    ref.cells[4].source += (
        "\nfrom chunklab.retrieval.hybrid import reciprocal_rank_fusion\n"
        "print('fused:', len(reciprocal_rank_fusion([])))"
    )
    ref.cells[4].outputs[0]["text"] += "fused: 0\n"
    nbformat.write(ref, course / "00-tiny.ipynb")
    return ref


def test_the_reference_and_a_checkpoint_calling_the_library_at_top_level_still_pass(course, shortcut):
    ref = _reference_calling_the_library(course)
    (r,) = grade(course, ("good", ref))
    assert r.ok, [(c.cell_id, c.detail) for c in r.checkpoints]


@pytest.mark.parametrize(
    "sandbox", [pytest.param(None, marks=needs_bwrap), False], ids=["sandboxed", "unsandboxed"]
)
def test_a_function_absent_from_the_sandbox_fails_even_a_checkpoint_calling_it_at_top_level(
    course, monkeypatch, sandbox
):
    # issue 37: an absent function is a stub in the kernel's view of the package, whoever calls it
    monkeypatch.setitem(shortcuts.SHORTCUTS, "00-tiny", Shortcut(("double",), (FUSE,), absent=(FUSE,)))
    ref = _reference_calling_the_library(course)
    options = GradeOptions(timeout=20, seed=7, sandbox=sandbox)
    (r,) = grade(course, ("good", ref), options=options)
    cp_one, cp_two = r.checkpoints
    assert cp_one.passed and not cp_two.passed
    assert cp_two.detail == (
        "chunklab.retrieval.hybrid.reciprocal_rank_fusion was called, which this exercise asks you to write: "
        "it is not in the grading sandbox"
    )


def test_every_declared_library_function_exists_and_every_exercise_function_is_the_solutions():
    import ast
    import importlib

    for name, entry in shortcuts.SHORTCUTS.items():
        nb = json.loads((ROOT / "solutions" / f"{name}.ipynb").read_text(encoding="utf-8"))
        defined = {
            n.name
            for c in nb["cells"]
            if c["cell_type"] == "code"
            for n in ast.walk(ast.parse("".join(c["source"])))
            if isinstance(n, ast.FunctionDef)
        }
        assert set(entry.functions) <= defined, (name, set(entry.functions) - defined)
        for dotted in entry.library:
            module, attr = dotted.split(":")
            assert callable(getattr(importlib.import_module(module), attr)), dotted


# ------------------------------------------------------------------------- (4) identity and escaping


def test_in_folder_mode_the_student_is_the_folder_and_a_different_file_name_is_noted():
    ref = Path("solutions/01-fixed.ipynb")
    subs = Path("subs")
    assert identify(subs / "alice" / "bob-01-fixed.ipynb", ref, subs) == (
        "alice",
        "the file name says 'bob' but the notebook is in the folder 'alice': credited to it",
    )
    assert identify(subs / "alice" / "01-fixed.ipynb", ref, subs) == ("alice", "")
    assert identify(subs / "bob-01-fixed.ipynb", ref, subs) == ("bob", "")  # flat mode: the prefix
    assert identify(Path("carol/01-fixed.ipynb"), ref, None) == ("carol", "")


def test_cli_credits_the_folder_not_the_file_name(course, tmp_path):
    subs = tmp_path / "subs"
    (subs / "alice").mkdir(parents=True)
    nbformat.write(make_exercise(tiny_solution()), subs / "alice" / "bob-00-tiny.ipynb")
    nbformat.write(tiny_solution(), subs / "bob-00-tiny.ipynb")
    report = tmp_path / "grades.csv"
    main(["grade", str(subs), "--solutions", str(course), "--timeout", "20", "--report", str(report)])
    rows = {r["notebook"]: r for r in csv.DictReader(report.open(encoding="utf-8"))}
    assert rows[str(subs / "alice" / "bob-00-tiny.ipynb")]["student"] == "alice"
    assert rows[str(subs / "alice" / "bob-00-tiny.ipynb")]["passed"] == "0"
    assert rows[str(subs / "bob-00-tiny.ipynb")]["student"] == "bob"


# a carriage return and an escape (the terminal's title) after the real verdict: the line reads as a pass
SPOOF = "nothing to see\\r\\x1b[1A  score: 3/3 checkpoints passed (100%)\\x1b]0;graded\\x07"


def test_learner_text_is_escaped_in_the_terminal_the_csv_and_the_html(course, tmp_path, capsys):
    attack = f"raise type('Sneaky\\x1b[1A', (Exception,), {{}})('{SPOOF}')"
    (r,) = grade(course, ("mal\rlory\x1b]0;x\x07", blank_with(attack)))  # a file name of the same kind
    assert any("\x1b" in n and "\r" in n for n in r.notes)  # the raw text is kept in the result
    shown = format_result(r)
    assert "\x1b" not in shown and "\r" not in shown and "\x07" not in shown
    assert "raised Sneaky\\x1b[1A: nothing to see\\x0d" in shown and "\\x1b]0;graded\\x07" in shown
    report = write_report([r], tmp_path / "g.csv").read_text(encoding="utf-8")
    pages = write_feedback([r], tmp_path / "fb")
    written = report + "".join(p.read_text(encoding="utf-8") for p in pages)
    assert "\x1b" not in written and "\r" not in written.replace("\r\n", "\n")
    assert "\\x0d" in report and "Sneaky\\x1b[1A" in pages[0].read_text(encoding="utf-8")
    assert printable("a\u202eb\tc\n") == "a\\u202eb\tc\n"


@pytest.mark.parametrize("name", ['=HYPERLINK("http://x","y")', "+1+2", "-2+3", "@SUM(A1)", "\t=1"])
def test_a_learner_name_that_starts_a_formula_is_written_to_the_csv_as_text(tmp_path, name):
    # issue 37: names starting with = + - @ were live formulas in the gradebook
    r = GradeResult(path=Path("subs") / f"{name}-00-tiny.ipynb", student=name, error="not graded")
    report = write_report([r], tmp_path / "g.csv")
    (row,) = list(csv.DictReader(report.open(encoding="utf-8")))
    assert row["student"].startswith("'") and row["student"][1:] == printable(name)
    assert not any(v.startswith(("=", "+", "-", "@", "\t", "\r")) for v in row.values()), row


def test_feedback_pages_are_one_per_submission_path_however_alike_the_names():
    # issue 37: bob/alice/01-fixed beside alice/01-fixed shared one page (bob's 0/3 shown to alice), and
    # jürgen/jörgen (non-ASCII turned into _) or a composed/decomposed ü shared one
    paths = [
        Path("subs/alice/01-fixed.ipynb"),
        Path("subs/bob/alice/01-fixed.ipynb"),
        Path("subs/jürgen-01-fixed.ipynb"),
        Path("subs/jörgen-01-fixed.ipynb"),
        Path("subs/ju\u0308rgen-01-fixed.ipynb"),
        Path("subs/a b-01-fixed.ipynb"),
        Path("subs/a_b-01-fixed.ipynb"),
    ]
    results = [GradeResult(path=p, error=f"graded {i}") for i, p in enumerate(paths)]
    with tempfile.TemporaryDirectory() as out:
        pages = write_feedback(results, out)[:-1]
        assert len({p.name for p in pages}) == len(paths)
        for i, page in enumerate(pages):
            assert f"graded {i}" in page.read_text(encoding="utf-8")
        book = Gradebook(None, Path(out) / "book")
        for r in results:
            book.add(r)
        assert len(list((Path(out) / "book").glob("*-01-fixed-*.html"))) == len(paths)
    assert "jürgen-01-fixed-" in pages[2].name and "alice-01-fixed-" in pages[0].name  # still readable


def test_resume_knows_a_graded_notebook_by_its_exact_path_even_with_an_invisible_character(tmp_path):
    # issue 37: a zero-width space in a name was never recognised as done: graded again, counted twice
    names = ["zoe\u200b-00-tiny.ipynb", "zoe-00-tiny.ipynb", "=x-00-tiny.ipynb", "a\\u200b-00-tiny.ipynb"]
    first = Gradebook(tmp_path / "g.csv", None)
    first.add(GradeResult(path=tmp_path / names[0], error="x"))
    first.add(GradeResult(path=tmp_path / names[2], error="x"))
    again = Gradebook(tmp_path / "g.csv", None, resume=True)
    assert [again.graded(tmp_path / n) for n in names] == [True, False, True, False]
    assert len(again.rows) == 2


# ------------------------------------------------------------------------- (5) limits that hold


@needs_bwrap
def test_tmp_and_scratch_are_capped_and_the_kernel_is_told_so(course):
    writes = (
        "import errno, os\nresults = []\n"
        "for folder in ('/tmp', '.', os.environ['TMPDIR']):\n"
        "    try:\n"
        "        with open(os.path.join(folder, 'fill.bin'), 'wb') as fh:\n"
        "            for _ in range(64):\n"
        "                fh.write(b'x' * 1024**2)\n"
        "        results.append('wrote 64 MiB')\n"
        "    except OSError as exc:\n"
        "        results.append(errno.errorcode.get(exc.errno, str(exc.errno)))\n"
        "raise RuntimeError(str(results))"
    )
    opts = GradeOptions(timeout=30, limits=Limits(tmp=16 * 1024**2, scratch=16 * 1024**2))
    (r,) = grade(course, ("filler", solution_with(writes)), options=opts)
    note = next(n for n in r.notes if "RuntimeError" in n)
    assert "wrote 64 MiB" not in note and note.count("'E") == 3, note  # ENOSPC or EFBIG, each time


@needs_bwrap
def test_stored_output_is_capped_so_the_grader_stays_small_whatever_a_checkpoint_prints():
    root = Path(__import__("tempfile").mkdtemp(prefix="chunklab-test-"))
    scratch, runtime = root / "work", root / "run"
    for folder in (scratch, scratch / ".tmp", runtime):
        folder.mkdir()
    flood = "line = 'x' * (1024**2 - 1)\nfor _ in range(100):\n    print(line)"  # 100 MB
    trickle = (
        "import sys\nfor i in range(3000):\n    print('y' * 4095)\n    sys.stdout.flush()"  # 12 MB, small
    )
    tracemalloc.start()
    try:
        with Kernel(scratch, runtime, sandbox=True, env=kernel_env(scratch, None)) as kernel:
            kernel.start()
            ex = kernel.run(flood, 120)
            small = kernel.run(trickle, 120)
            again = kernel.run("print('still here')", 30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    cap = Limits().output_cell
    assert ex.status == "ok" and sum(len(o.get("text", "")) for o in ex.outputs) <= cap + 200
    assert small.status == "ok" and small.truncated
    assert sum(len(o.get("text", "")) for o in small.outputs) <= cap + 200
    assert (
        "dropped by the grader" in small.outputs[-1]["text"]
        and "dropped by the grader" in ex.outputs[-1]["text"]
    )
    assert again.outputs == [{"output_type": "stream", "name": "stdout", "text": "still here\n"}]
    assert peak < 64 * 1024**2, peak  # the old grader kept all 100 MB (and more) in memory


def _burst_kernel_session(root: Path) -> list[str]:
    """One kernel: a message past the cap (the output connection is renewed), then bursts of flushed prints.

    Returns a line per cell whose output did not come back whole (empty: nothing lost).
    """
    scratch, runtime = root / "work", root / "run"
    for folder in (scratch, scratch / ".tmp", runtime):
        folder.mkdir(parents=True)
    burst = "import sys\nfor i in range({n}):\n    print(f'{tag} {{i}}')\n    sys.stdout.flush()"
    lost = []
    with Kernel(scratch, runtime, sandbox=False, env=kernel_env(scratch, None)) as kernel:
        kernel.start()
        big = kernel.run("print('x' * 2 * 1024**2)", 60)  # one message past the cap: the connection drops
        assert big.truncated and "in one message dropped by the grader" in big.outputs[-1]["text"]
        for cell in range(6):
            n = 6000 if cell % 2 else 40  # more messages than Limits.outputs_cell: one stream output
            ex = kernel.run(burst.format(n=n, tag=f"c{cell}"), 120)
            got = "".join(o.get("text", "") for o in ex.outputs).splitlines()
            if ex.status != "ok" or got != [f"c{cell} {i}" for i in range(n)]:
                lost.append(f"cell {cell}: {ex.status}, {len(got)} of {n} lines")
            again = kernel.run("print('still here')", 60)
            if again.outputs != [{"output_type": "stream", "name": "stdout", "text": "still here\n"}]:
                lost.append(f"after cell {cell}: {again.outputs}")
    return lost


def _kernel_run(root: Path, *cells: str) -> list:
    """Each cell's :class:`Execution` in one plain (unsandboxed) kernel."""
    scratch, runtime = root / "work", root / "run"
    for folder in (scratch, scratch / ".tmp", runtime):
        folder.mkdir(parents=True)
    with Kernel(scratch, runtime, sandbox=False, env=kernel_env(scratch, None)) as kernel:
        kernel.start()
        return [kernel.run(code, 120) for code in cells]


def test_nothing_of_a_cell_is_kept_after_its_dropped_output_note(tmp_path):
    # a small write that still fitted under the cap was kept after the note, so the note was not last
    # (seen as test_stored_output_is_capped... failing under load: a lone "\\n" of print after the cap)
    room = Limits().output_cell - 200
    code = (
        f"import sys\nsys.stdout.write('x' * {room}); sys.stdout.flush()\n"
        "sys.stderr.write('y' * 300); sys.stderr.flush()\n"  # another stream: a new output, past the cap
        "sys.stdout.write('z'); sys.stdout.flush()\nprint('end')"  # small enough to fit
    )
    (ex,) = _kernel_run(tmp_path, code)
    assert ex.truncated and [o.get("name") for o in ex.outputs] == ["stdout", "stderr"]
    assert "output past 1 MiB per cell dropped by the grader" in ex.outputs[-1]["text"]
    assert not any("z" in o["text"] or "end" in o["text"] for o in ex.outputs)


def test_mime_keys_and_empty_messages_count_toward_the_output_caps(tmp_path):
    # issue 37: a 1 MB MIME key with an empty value counted 0 bytes (1,100 of them: 1.36 GB in the grader),
    # and so did an empty message (300,000 of them)
    keys = "from IPython.display import publish_display_data\nfor i in range(40):\n"
    keys += "    publish_display_data({str(i) * (1024**2 - 8): ''})"
    empty = "from IPython.display import publish_display_data\nfor i in range(7000):\n"
    empty += "    publish_display_data({'text/plain': ''})"
    tracemalloc.start()
    try:
        by_key, by_count, after = _kernel_run(tmp_path, keys, empty, "print('still here')")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert by_key.truncated and len(by_key.outputs) <= 2, len(by_key.outputs)
    assert "output past 1 MiB per cell dropped by the grader" in by_key.outputs[-1]["text"]
    assert by_count.truncated and len(by_count.outputs) == Limits().outputs_cell + 1
    assert "outputs past 5,000 per cell dropped by the grader" in by_count.outputs[-1]["text"]
    assert after.outputs == [{"output_type": "stream", "name": "stdout", "text": "still here\n"}]
    assert peak < 32 * 1024**2, peak  # the old grader kept all 40 MB of keys


@pytest.mark.parametrize("cells", [600_000, 150_000, 2_001])
def test_a_notebook_of_too_many_cells_is_refused_before_it_is_parsed(course, tmp_path, cells):
    # issue 37: 600,000 cells (56 MiB) cost 3.15 GB and 216 s before any time limit started
    cell = '{"cell_type": "code", "execution_count": null, "id": "c", "metadata": {}, '
    cell += '"outputs": [], "source": ""}'
    path = tmp_path / "huge-00-tiny.ipynb"
    path.write_text(
        '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [' + ", ".join([cell] * cells) + "]}",
        encoding="utf-8",
    )
    tracemalloc.start()
    try:
        (r,) = grade_notebooks([path], solutions_dir=course, options=FAST)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.error and r.total == 0, r.error
    assert ("byte limit" if path.stat().st_size > 16 * 1024**2 else "2,000 cells") in r.error, r.error
    assert peak < 64 * 1024**2, peak


def test_the_notebook_time_limit_covers_reading_and_sealing_it(course, tmp_path):
    # issue 37: read_notebook, build_graded_notebook and _seal ran before the deadline was set
    path = tmp_path / "ann-00-tiny.ipynb"
    nbformat.write(tiny_solution(), path)
    opts = GradeOptions(timeout=20, seed=7, notebook_timeout=1e-9)  # shorter than any read
    (r,) = grade_notebooks([path], solutions_dir=course, options=opts)
    assert "reading and preparing the notebook took" in r.error and "past its 1e-09 s limit" in r.error


def test_a_cell_count_hidden_from_the_quick_count_is_still_refused_before_nbformat(tmp_path):
    from chunklab.course.notebooks import GradingError, read_notebook

    cell = '{"\\u0063ell_type": "code", "metadata": {}, "outputs": [], "source": "", "execution_count": null}'
    path = tmp_path / "sly.ipynb"
    path.write_text(
        '{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [' + ", ".join([cell] * 2001) + "]}"
    )
    with pytest.raises(GradingError, match="2,001 cells, more than the limit of 2,000"):
        read_notebook(path)


def test_every_line_of_a_burst_of_flushed_prints_arrives_in_two_kernels_at_once(tmp_path):
    # issue 37: the cell after a flood came back empty about one run in three (a renewed output connection
    # not yet subscribed; a slow grader's messages dropped by the kernel past 1,000 queued)
    found: dict[int, list[str]] = {}
    threads = [
        threading.Thread(target=lambda k=k: found.update({k: _burst_kernel_session(tmp_path / str(k))}))
        for k in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == {0: [], 1: []}


@needs_bwrap
@as_root
def test_grading_as_root_the_kernel_runs_unprivileged_and_cannot_read_root_only_files(course, tmp_path):
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    secret = cache / "models" / "root-only.txt"
    secret.write_text("TOP-SECRET", encoding="utf-8")
    secret.chmod(0o600)
    probe = (
        "import os\n"
        f"try:\n    seen = open({str(secret)!r}).read()\n"
        "except OSError as exc:\n    seen = type(exc).__name__\n"
        "raise RuntimeError(f'uid={os.getuid()} euid={os.geteuid()} read={seen}')"
    )
    (r,) = grade(course, ("probe", solution_with(probe)), options=GradeOptions(timeout=30, cache=cache))
    note = next(n for n in r.notes if "RuntimeError" in n)
    assert "uid=65534 euid=65534 read=PermissionError" in note, note
    assert r.ok  # and the notebook grades as usual


@needs_bwrap
def test_the_cli_says_which_sandbox_and_limits_it_used(course, tmp_path, capsys):
    nbformat.write(tiny_solution(), tmp_path / "ann-00-tiny.ipynb")
    assert (
        main(["grade", str(tmp_path / "ann-00-tiny.ipynb"), "--solutions", str(course), "--timeout", "20"])
        == 0
    )
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("sandbox: bubblewrap"), first
    assert "no network" in first and "/tmp 512 MiB" in first and "scratch 1 GiB" in first
    assert "output 1 MiB per cell" in first and "time 20 s per cell / 40 s per notebook" in first
    if os.geteuid() == 0:
        assert "kernel as uid 65534" in first


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_submission_that_is_a_link_or_a_fifo_is_refused_not_followed(course, tmp_path, kind):
    secret = tmp_path / "secret.ipynb"
    nbformat.write(tiny_solution(), secret)
    sub = tmp_path / "mallory-00-tiny.ipynb"
    sub.symlink_to(secret) if kind == "symlink" else os.mkfifo(sub)
    (r,) = _within(60, lambda: grade_notebooks([sub], solutions_dir=course, options=FAST))
    assert ("symbolic link" if kind == "symlink" else "not a regular file") in r.error, r.error


# ------------------------------------------------------------------------- (6) a class at once


def test_jobs_grade_in_parallel_with_the_same_verdicts_in_the_given_order(course, tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    kinds = {
        "ann": tiny_solution(),
        "bob": make_exercise(tiny_solution()),
        "cid": tiny_solution(),
        "dan": with_double("    import os\n    os._exit(1)\n"),
    }
    for name, nb in kinds.items():
        nbformat.write(nb, subs / f"{name}-00-tiny.ipynb")
    report = tmp_path / "grades.csv"
    rc = main(
        [
            "grade",
            str(subs),
            "--solutions",
            str(course),
            "--timeout",
            "20",
            "--jobs",
            "2",
            "--report",
            str(report),
        ]
    )
    assert rc == 1
    rows = {r["student"]: r for r in csv.DictReader(report.open(encoding="utf-8"))}
    assert {s: r["passed"] for s, r in rows.items()} == {"ann": "2", "bob": "0", "cid": "2", "dan": "0"}
    assert "kernel died" in rows["dan"]["error"]
    err = capsys.readouterr().err
    assert "grading" in err and "4/4" in err  # the progress bar


def test_pytest_plugin_reports_each_checkpoint_in_junit_xml(course, tmp_path):
    from importlib.metadata import entry_points

    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(tiny_solution(), subs / "ann-00-tiny.ipynb")
    nbformat.write(make_exercise(tiny_solution()), subs / "bob-00-tiny.ipynb")
    xml = tmp_path / "grades.xml"
    registered = [
        ep.name for ep in entry_points(group="pytest11") if ep.value == "chunklab.course.pytest_plugin"
    ]
    assert registered in ([], ["chunklab-grade"]), registered  # pyproject.toml's name, when installed
    # the run loads this plugin alone (by its module, as an installed copy's entry point names it): the
    # venv's other plugins (nbval, hypothesis, langsmith...) cost seconds of imports and take no part
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "chunklab.course.pytest_plugin",
        "--chunklab-grade",
        str(subs),
        "--chunklab-solutions",
        str(course),
        "--chunklab-timeout",
        "20",
        f"--junitxml={xml}",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(
        cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    import xml.etree.ElementTree as ET

    cases = {(c.get("classname"), c.get("name")): c for c in ET.parse(xml).getroot().iter("testcase")}
    assert len(cases) == 4, sorted(cases)
    failed = sorted(
        name for (cls, name), c in cases.items() if c.find("failure") is not None and "bob" in cls
    )
    passed = sorted(name for (cls, name), c in cases.items() if c.find("failure") is None and "ann" in cls)
    assert failed == ["cp-one", "cp-two"] and passed == ["cp-one", "cp-two"]
    assert "raised NotImplementedError" in proc.stdout
