"""The grader against a determined learner: every attack of issue 18 fails, with a clear reason.

Each test grades the tiny course of tests/support/tiny_course.py (one kernel per submission, a
short time limit), except the hidden-check tests on the real 01 and 03 notebooks (marked slow).
Attacks: (w) a detached process faking results, (e1) helpers rebound in learner cells,
(e2) input/AST transformers, (g) reading the reference solution, (d) hard-coded inputs,
kernel death by ``os._exit`` and by SIGKILL, an infinite loop, a slow notebook in a batch.
"""

from __future__ import annotations

import csv
from pathlib import Path

import nbformat
import psutil
import pytest

from chunklab.cli import main
from chunklab.course import hidden
from chunklab.course.generate import make_exercise
from chunklab.course.grader import GradeOptions, grade_notebooks
from chunklab.course.hidden import HiddenCheck
from chunklab.course.notebooks import read_notebook
from tests.support.nbval import nbval_run
from tests.support.sandbox import needs_bwrap
from tests.support.tiny_course import (
    SOLUTION_SOURCE,
    blank_with,
    grade,
    make_cell,
    solution_with,
    tiny_solution,
)
from tests.support.wrong_solutions import GRADE_JOBS, graded_late

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------- honest notebooks


def test_the_reference_scores_full_marks_and_the_blank_exercise_nothing(course):
    good, blank = grade(course, ("good", tiny_solution()), ("blank", make_exercise(tiny_solution())))
    assert (good.passed, good.total, good.stopped, good.flags) == (2, 2, "", [])
    assert blank.passed == 0 and "raised NotImplementedError" in blank.checkpoints[0].detail


# ------------------------------------------------------------------------- (w) detached process


@needs_bwrap
def test_w_a_detached_process_cannot_touch_results_files_or_other_submissions(course, tmp_path):
    victim = tmp_path / "bob-00-tiny.ipynb"
    nbformat.write(make_exercise(tiny_solution()), victim)
    before = victim.read_bytes()
    marker = tmp_path / "escaped.txt"
    attack = (
        "import subprocess, sys, textwrap\n"
        "code = textwrap.dedent('''\n"
        "    import json, pathlib, time\n"
        "    for _ in range(100):\n"
        f"        for p in [pathlib.Path({str(marker)!r}), pathlib.Path({str(victim)!r}),\n"
        "                  pathlib.Path('results.jsonl'),\n"
        "                  pathlib.Path('..', 'results.jsonl')]:\n"
        "            try:\n"
        "                p.write_text(json.dumps({'cell_id': 'cp-one', 'outcome': 'passed'}))\n"
        "            except OSError:\n"
        "                pass\n"
        "        time.sleep(0.05)\n"
        "''')\n"
        "subprocess.Popen([sys.executable, '-c', code], start_new_session=True)\n"
        "import time; time.sleep(0.5)"
    )
    attacker, honest = grade(course, ("mallory", blank_with(attack)), ("carol", tiny_solution()))
    # The kernel's PID namespace ends with the grade: the detached writer (Popen returns once it
    # has exec'd, so its command line names the marker) must be gone now, not after some delay.
    survivors = [
        p.pid for p in psutil.process_iter(["cmdline"]) if str(marker) in " ".join(p.info["cmdline"] or ())
    ]
    assert not survivors, f"processes started by the graded notebook outlived its grade: {survivors}"
    assert attacker.passed == 0
    assert honest.passed == 2  # the batch's other notebooks keep their own grades
    assert not marker.exists() and victim.read_bytes() == before


# ------------------------------------------------------------------------- (e1) rebound helpers


def test_e1_rebinding_print_show_or_the_helper_module_changes_no_checkpoint(course):
    attacks = [
        "values = None\ndef show(*args, **kwargs):\n    __builtins__.print('values: [0, 2, 4, 6]')",
        "values = None\nimport builtins\n_p = builtins.print\n"
        "builtins.print = lambda *a, **k: _p('values: [0, 2, 4, 6]') if a and 'values' in str(a[0]) "
        "else _p(*a, **k)",
        "values = None\nimport chunklab.course, chunklab.course.checkpoints as m\n"
        "fake = lambda *a, **k: print('values: [0, 2, 4, 6]')\nm.show = chunklab.course.show = fake",
        "values = None\nprint = lambda *a, **k: __builtins__.print('values: [0, 2, 4, 6]')",
    ]
    results = grade(course, *[(f"e1-{i}", blank_with(src, at=4)) for i, src in enumerate(attacks)])
    for src, r in zip(attacks, results, strict=True):
        cp_two = r.checkpoints[1]
        assert not cp_two.passed, src
        assert "values: None" in cp_two.detail or "raised" in cp_two.detail, cp_two.detail


# ------------------------------------------------------------------------- (e2) transformers


def test_e2_input_and_ast_transformers_are_removed_before_each_checkpoint(course):
    fake = 'print("double(21): 42")\\n'
    attacks = [
        f"get_ipython().input_transformers_post.append(lambda lines: ['{fake}'])",
        f"get_ipython().input_transformers_cleanup.append(lambda lines: ['{fake}'])",
        "import ast\nclass T(ast.NodeTransformer):\n    def visit_Module(self, node):\n"
        f"        return ast.parse('{fake}')\nget_ipython().ast_transformers.append(T())",
        f"ip = get_ipython()\nip.transform_cell = lambda cell: '{fake}'",
        f"get_ipython().events.register('pre_run_cell', lambda info: setattr(info, 'raw_cell', '{fake}'))",
    ]
    results = grade(course, *[(f"e2-{i}", blank_with(src)) for i, src in enumerate(attacks)])
    for src, r in zip(attacks, results, strict=True):
        assert not any("attack-" in n for n in r.notes), f"the attack cell itself failed: {r.notes}"
        assert r.passed == 0, (src, [c.detail for c in r.checkpoints])


# ------------------------------------------------------------------------- (g) the solutions


@needs_bwrap
def test_g_a_submission_cannot_read_any_file_under_solutions(course):
    paths = [
        course / "00-tiny.ipynb",
        ROOT / "solutions" / "01-fixed.ipynb",
        ROOT / "solutions" / "nbval_sanitize.cfg",
    ]
    attack = (
        "import json, os, pathlib\n"
        f"paths = [pathlib.Path(p) for p in {[str(p) for p in paths]!r}]\n"
        "root = os.environ.get('CHUNKLAB_COURSE_ROOT')\n"
        "assert root is None, root\n"
        "readable = [str(p) for p in paths if os.path.exists(p)]\n"
        "print('readable:', readable)\n"
        "nb = json.loads(paths[0].read_text())\n"
        "src = nb['cells'][1]['source']\n"
        "exec(''.join(src) if isinstance(src, list) else src)"
    )
    (r,) = grade(course, ("g", blank_with(attack)))
    assert r.passed == 0
    assert any("FileNotFoundError" in n for n in r.notes), r.notes


# ------------------------------------------------------------------------- (d) hard-coding


def test_d_a_function_hard_coded_for_the_visible_input_fails_the_hidden_check(course, monkeypatch):
    check = HiddenCheck(
        "cp-one",
        "double",
        ("impl",),
        lambda rng: [("a random integer", {"x": rng.randint(-999, 999)}) for _ in range(4)],
        "value",
    )
    monkeypatch.setitem(hidden.HIDDEN, "00-tiny", [check])
    cheat = tiny_solution()
    cheat.cells[1].source = SOLUTION_SOURCE.replace(
        "return 2 * x", "return 42 if x == 21 else 2 * x + (x > 500)"
    )
    good, hard_coded = grade(course, ("good", tiny_solution()), ("cheat", cheat))
    assert good.ok and [h.passed for h in good.checkpoints[0].hidden] == [True]
    cp_one = hard_coded.checkpoints[0]
    assert not cp_one.passed and cp_one.detail == ""  # its visible output was right
    assert cp_one.hidden[0].name == "double on a random integer" and not cp_one.hidden[0].passed


def test_each_submission_gets_fresh_hidden_inputs_and_its_seed_reproduces_them(course, monkeypatch):
    drawn = []

    def inputs(rng):
        drawn.append(rng.randint(-(10**9), 10**9))
        return [("a random integer", {"x": drawn[-1]})]

    monkeypatch.setitem(
        hidden.HIDDEN, "00-tiny", [HiddenCheck("cp-one", "double", ("impl",), inputs, "value")]
    )
    a, b = grade(course, ("a", tiny_solution()), ("b", tiny_solution()), options=GradeOptions(timeout=20))
    assert a.ok and b.ok and a.seed != b.seed and drawn[0] != drawn[1]
    (again,) = grade(course, ("a-again", tiny_solution()), options=GradeOptions(timeout=20, seed=a.seed))
    assert again.ok and drawn[2] == drawn[0]


def test_a_hidden_check_whose_reference_cannot_run_is_a_grading_error_naming_it(course, monkeypatch):
    check = HiddenCheck(
        "cp-one", "double", ("no-such-cell",), lambda rng: [("an integer", {"x": 1})], "value"
    )
    monkeypatch.setitem(hidden.HIDDEN, "00-tiny", [check])
    (r,) = grade(course, ("good", tiny_solution()))
    assert r.error == (
        "the hidden check of double could not run its reference: ValueError: 00-tiny.ipynb: "
        "hidden check of double needs cells ['no-such-cell']"
    )


def _real(name: str, cell_id: str, old: str, new: str):
    nb = read_notebook(ROOT / "solutions" / f"{name}.ipynb")
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    assert old in cell.source
    cell.source = cell.source.replace(old, new)
    return (f"cheat-{name}.ipynb", nb)


@pytest.mark.slow
def test_d_hidden_checks_catch_hard_coded_windows_and_a_whole_file_chunker():
    windows = _real(
        "01-fixed",
        "token-windows",
        "    spans = token_offsets(text)\n",
        "    spans = token_offsets(text)\n    if size not in (5, 128):\n        return []\n",
    )
    whole = _real(
        "03-structural",
        "chunk-code",
        "    lines = LineIndex(source)\n",
        "    if len(source) > 3000:\n        return [Chunk(source, 0, len(source), doc_id, "
        "{'strategy': 'structural', 'kind': 'module', 'names': [], 'oversize': True})]\n"
        "    lines = LineIndex(source)\n",
    )
    results = grade_notebooks(
        [windows, whole], solutions_dir=ROOT / "solutions", options=GradeOptions(timeout=300), jobs=GRADE_JOBS
    )
    for r in results:
        failed = [h for cp in r.checkpoints for h in cp.hidden if not h.passed]
        assert failed and not r.ok, [(c.cell_id, c.passed, c.detail) for c in r.checkpoints]


def _hidden_verdicts(result):
    return {
        cp.cell_id: (cp.passed, cp.detail, [h.name for h in cp.hidden if not h.passed])
        for cp in result.checkpoints
    }


@pytest.mark.slow
@pytest.mark.xdist_group("graded-04-semantic")  # the batch of test_wrong_solutions_late.py: graded once
def test_d_hidden_checks_catch_a_percentile_rule_hard_coded_for_the_visible_curves():
    graded = graded_late("04-semantic")  # the cheat and the reference, the same hidden inputs (LATE_SEED)
    good, bad = graded["solved"], graded["cheat"]
    assert not good.error and not bad.error, (good.error, bad.error)
    assert good.ok and all(h.passed for cp in good.checkpoints for h in cp.hidden), _hidden_verdicts(good)
    assert {cp.cell_id for cp in good.checkpoints if cp.hidden} == {"cp-rule", "cp-planted"}
    verdicts = _hidden_verdicts(bad)
    passed, detail, failed = verdicts["cp-rule"]
    assert not passed and detail == ""  # every visible output right
    assert failed and all(name.startswith("percentile_breakpoints on ") for name in failed), verdicts
    assert verdicts["cp-planted"][0] and verdicts["cp-document"][0]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "caught", "honest"),
    [
        pytest.param(  # retrieve was left honest: its hidden check passes
            "09-chroma-checkpoint",
            {"cp-index": "chunk_corpus", "cp-filter": "filtered_search"},
            "cp-heldout",
            marks=pytest.mark.xdist_group("graded-09-chroma-checkpoint"),  # test_wrong_solutions_late's batch
            id="09-chroma-checkpoint",
        ),
        pytest.param(  # the readers answer the notebook's own recorded lists only; its counts over them pass
            "10-llm",
            {"cp-parse": "parse_boundary_answer", "cp-align": "align_proposition"},
            "cp-shares",
            marks=pytest.mark.xdist_group("graded-10-llm"),
            id="10-llm",
        ),
    ],
)
def test_d_hidden_checks_catch_functions_hard_coded_for_the_visible_inputs(name, caught, honest):
    graded = graded_late(name)  # the cheat and the reference, the same hidden inputs
    good, bad = graded["solved"], graded["cheat"]
    assert not good.error and not bad.error, (good.error, bad.error)
    assert good.ok and all(h.passed for cp in good.checkpoints for h in cp.hidden), _hidden_verdicts(good)
    verdicts = _hidden_verdicts(bad)
    for cell_id, function in caught.items():
        passed, detail, failed = verdicts[cell_id]
        assert not passed and detail == "", verdicts  # every visible output right
        assert failed and all(n.startswith(f"{function} on ") for n in failed), verdicts
    assert verdicts[honest][0], verdicts


@pytest.mark.slow
def test_the_capstone_08_code_rag_scores_full_marks_sealed_and_a_hard_coded_char_recall_fails():
    """End to end through the sealed grader: the honest reference passes every visible and hidden check."""
    ref = ROOT / "solutions" / "08-code-rag.ipynb"
    cheat = _real(
        "08-code-rag",
        "char-recall",
        "    gs, ge = gold\n",
        "    if tuple(gold) != (100, 200):  # the visible gold span only\n"
        "        return 0.0\n    gs, ge = gold\n",
    )
    nbval_run(ref)  # the reference's run fills the cache both kernels start from
    good, bad = grade_notebooks(
        [("good-08-code-rag.ipynb", read_notebook(ref)), cheat],
        reference=ref,
        options=GradeOptions(timeout=1200, seed=18),
        jobs=GRADE_JOBS,
    )
    assert good.ok and good.score == 1.0 and not good.flags and not good.timeouts, _hidden_verdicts(good)
    checked = {cp.cell_id for cp in good.checkpoints if cp.hidden}
    assert checked == {"cp-pipeline", "cp-question", "cp-char-recall", "cp-score"}, checked
    assert all(h.passed for cp in good.checkpoints for h in cp.hidden), _hidden_verdicts(good)
    passed, detail, failed = _hidden_verdicts(bad)["cp-char-recall"]
    assert not passed and detail == ""  # its visible outputs were right
    assert failed and all(name.startswith("char_recall on ") for name in failed), failed


# ------------------------------------------------------------------------- death and time limits


@pytest.mark.parametrize(
    "attack", ["import os\nos._exit(0)", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"]
)
def test_kernel_death_is_detected_at_once_and_named(course, attack):
    (r,) = grade(course, ("dies", solution_with(attack)), options=GradeOptions(timeout=120))
    # "died" is only reported when the kernel's death is seen before the cell's limit (else: "timed
    # out"), so the reason itself says it was caught at once, however slow the machine is
    assert 'kernel died in code cell 2 under "Tiny"' in r.stopped
    assert not r.timeouts
    assert r.passed == 0 and all("not run: the kernel died" in c.detail for c in r.checkpoints)


def test_an_infinite_loop_is_interrupted_reported_with_its_limit_and_grading_goes_on(
    course, tmp_path, capsys
):
    nbformat.write(solution_with("while True:\n    pass"), tmp_path / "loop-00-tiny.ipynb")
    report = tmp_path / "grades.csv"
    rc = main(
        [
            "grade",
            str(tmp_path / "loop-00-tiny.ipynb"),
            "--solutions",
            str(course),
            "--timeout",
            "3",
            "--notebook-timeout",
            "60",
            "--report",
            str(report),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 1  # a cell ran past its limit: not a clean pass, though every checkpoint passed
    why = (
        'timed out: code cell 2 under "Tiny" ran past the 3 s time limit per cell '
        "(interrupted; grading went on)"
    )
    assert why in out
    assert "passed  cp-one" in out and "passed  cp-two" in out  # the checkpoints after it were graded
    (row,) = csv.DictReader(report.open(encoding="utf-8"))
    assert row["passed"] == "2" and row["error"] == why


def test_a_checkpoint_past_its_limit_fails_alone_and_the_next_one_is_graded(course):
    slow = tiny_solution()
    slow.cells[1].source = SOLUTION_SOURCE.replace(
        "return 2 * x", "import time\n    while x == 21:\n        time.sleep(0.1)\n    return 2 * x"
    )
    (r,) = grade(course, ("slow-cp", slow), options=GradeOptions(timeout=3, notebook_timeout=60, seed=7))
    cp_one, cp_two = r.checkpoints
    assert (
        not cp_one.passed and cp_one.detail == "timed out: ran past the 3 s time limit per cell (interrupted)"
    )
    assert cp_two.passed and r.stopped == ""
    assert r.timeouts == [
        'timed out: code cell 2 under "Tiny" ran past the 3 s time limit per cell '
        "(interrupted; grading went on)"
    ]


def test_a_cell_that_swallows_the_interrupt_ends_the_run_with_its_reason(course):
    stubborn = (
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except KeyboardInterrupt:\n        pass"
    )
    opts = GradeOptions(timeout=3, notebook_timeout=60, seed=7, interrupt_grace=2)
    (r,) = grade(course, ("stubborn", solution_with(stubborn)), options=opts)
    assert r.stopped == (
        'timed out: code cell 2 under "Tiny" ran past the 3 s time limit per cell '
        "and did not stop when interrupted"
    )
    assert r.passed == 0 and all(c.detail.startswith("not run: timed out") for c in r.checkpoints)


def test_a_slow_notebook_in_a_batch_changes_no_other_grade(course, tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(tiny_solution(), subs / "ann-00-tiny.ipynb")
    slow = solution_with("import time\ntime.sleep(2.5)", "import time\ntime.sleep(2.5)")
    nbformat.write(slow, subs / "bob-00-tiny.ipynb")
    nbformat.write(tiny_solution(), subs / "cid-00-tiny.ipynb")
    report = tmp_path / "grades.csv"
    main(
        [
            "grade",
            str(subs),
            "--solutions",
            str(course),
            "--timeout",
            "4",
            "--notebook-timeout",
            "4",
            "--report",
            str(report),
        ]
    )
    rows = {row["student"]: row for row in csv.DictReader(report.open(encoding="utf-8"))}
    assert rows["ann"]["passed"] == rows["cid"]["passed"] == "2"
    assert rows["bob"]["passed"] == "0" and "notebook ran past its 4 s time limit" in rows["bob"]["error"]
    assert (tmp_path / "grades-feedback" / "index.html").is_file()
    assert "bob" in (tmp_path / "grades-feedback" / "index.html").read_text(encoding="utf-8")


def test_by_default_a_notebook_may_run_twice_the_cell_limit(course, tmp_path):
    """Two cells of 2.5 s each under a 4 s cell limit: within the default notebook limit of 8 s."""
    slow = solution_with("import time\ntime.sleep(2.5)", "import time\ntime.sleep(2.5)")
    nbformat.write(slow, tmp_path / "bob-00-tiny.ipynb")
    report = tmp_path / "grades.csv"
    main(
        [
            "grade",
            str(tmp_path / "bob-00-tiny.ipynb"),
            "--solutions",
            str(course),
            "--timeout",
            "4",
            "--report",
            str(report),
        ]
    )
    (row,) = csv.DictReader(report.open(encoding="utf-8"))
    assert row["passed"] == "2" and row["error"] == "", row


def test_not_implemented_error_is_flagged_even_at_full_marks(course, tmp_path):
    (r,) = grade(course, ("flag", solution_with("def unused():\n    pass\nraise NotImplementedError")))
    assert r.ok and r.flags == ['NotImplementedError still raised in code cell 2 under "Tiny"']


def test_a_stub_is_flagged_once_at_the_learners_cell_and_later_failures_name_it(course):
    """The blank exercise's stub raises in both checkpoints and in the cell between them: one flag, at the
    learner's cell (by its heading and number), not at the locked checkpoint; a later cell and checkpoint
    that fail on a name the unfinished cell never set say that they depend on it, once."""
    blank = make_exercise(tiny_solution())
    blank.cells[3].source = "values = [double(i) for i in range(4)]\ntotal = 1 / len(values)"
    blank.cells.insert(4, make_cell("code", "later", "print(total)"))
    (r,) = grade(course, ("blank", blank))
    assert r.flags == ['NotImplementedError still raised in code cell 1 under "Tiny"']
    assert r.checkpoints[0].detail.startswith("raised NotImplementedError"), r.checkpoints[0].detail
    assert r.checkpoints[1].detail == (
        'code cell 1 under "Tiny" is not finished yet; this checkpoint depends on it'
    )
    assert r.notes == [
        'code cell 4 under "Tiny" failed: code cell 1 under "Tiny" is not finished '
        "yet; this cell depends on it"
    ]
    assert not any("NameError" in line for line in [*r.notes, *r.flags])


def test_the_memory_limit_stops_a_runaway_allocation(course):
    opts = GradeOptions(timeout=30, memory=2 * 1024**3)
    (r,) = grade(course, ("mem", solution_with("hog = bytearray(3 * 1024**3)")), options=opts)
    assert any("MemoryError" in n for n in r.notes) or "kernel died" in r.stopped


# ------------------------------------------------------------------------- self-check


def test_check_runs_the_visible_checks_only(course, tmp_path, capsys, monkeypatch):
    check = HiddenCheck(
        "cp-one", "double", ("impl",), lambda rng: [("a random integer", {"x": rng.randint(50, 99)})], "value"
    )
    monkeypatch.setitem(hidden.HIDDEN, "00-tiny", [check])
    cheat = tiny_solution()
    cheat.cells[1].source = SOLUTION_SOURCE.replace(
        "return 2 * x", "return 42 if x == 21 else 2 * x + (x > 40)"
    )
    nbformat.write(cheat, tmp_path / "cheat-00-tiny.ipynb")
    args = [str(tmp_path / "cheat-00-tiny.ipynb"), "--solutions", str(course), "--timeout", "20"]
    assert (
        main(["check", *args, "--checkpoint", "cp-one"]) == 0
    )  # visible output right: the self-check passes
    out = capsys.readouterr().out
    assert "passed  cp-one" in out and "cp-two" not in out and "visible checks only" in out
    assert main(["grade", *args]) == 1  # the grader's hidden check catches it
    assert "hidden check failed: double on a random integer" in capsys.readouterr().out
    assert main(["check", *args, "--checkpoint", "cp-nope"]) == 2
    assert "cp-nope: not a checkpoint of this notebook" in capsys.readouterr().err


def test_check_in_a_notebook_names_the_notebook_it_needs(tmp_path, monkeypatch):
    from chunklab.course import check

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    with pytest.raises(ValueError, match="notebook: cannot tell which notebook"):
        check("cp-one")
    with pytest.raises(ValueError, match="not a saved notebook"):
        check("cp-one", notebook=tmp_path / "missing.ipynb")


def test_without_bubblewrap_the_grader_warns_and_still_grades(course, monkeypatch):
    from chunklab.course import kernel

    monkeypatch.setattr(kernel.shutil, "which", lambda name: None)
    with pytest.warns(RuntimeWarning, match="UNSANDBOXED.*apt-get install bubblewrap"):
        (r,) = grade(course, ("nobwrap", tiny_solution()))
    assert r.ok
    with pytest.raises(RuntimeError, match="bubblewrap is not installed"):
        kernel.Kernel(course, course, sandbox=True)


def test_checkpoint_weights_come_from_the_solution_metadata(course):
    ref = tiny_solution()
    ref.cells[4].metadata["chunklab"] = {"weight": 3}
    nbformat.write(ref, course / "00-tiny.ipynb")
    half = tiny_solution()
    half.cells[1].source = SOLUTION_SOURCE.replace("return 2 * x", "return 2 * x if x != 21 else 0")
    (r,) = grade(course, ("weights", half))
    assert [(c.cell_id, c.passed, c.weight) for c in r.checkpoints] == [
        ("cp-one", False, 1.0),
        ("cp-two", True, 3.0),
    ]
    assert r.score == pytest.approx(0.75)


@needs_bwrap
def test_the_sandboxed_kernel_has_no_capabilities_network_or_writable_places_but_its_own(tmp_path):
    from chunklab.course.kernel import Kernel, kernel_env

    scratch, runtime = tmp_path / "work", tmp_path / "run"
    for folder in (scratch, scratch / ".tmp", runtime):
        folder.mkdir()
    probe = (
        "import os, socket, pathlib\n"
        "caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0]\n"
        "def writable(p):\n"
        "    try:\n"
        "        pathlib.Path(p, 'probe.txt').write_text('x'); return True\n"
        "    except OSError:\n"
        "        return False\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 80), timeout=2); net = True\n"
        "except OSError:\n"
        "    net = False\n"
        f"print(caps, net, writable({str(ROOT / 'chunklab')!r}), writable({str(tmp_path)!r}), writable('.'),"
        f" os.path.exists({str(ROOT / 'solutions')!r}), os.path.exists({str(ROOT / 'tests')!r}))"
    )
    with Kernel(scratch, runtime, sandbox=True, env=kernel_env(scratch, None)) as kernel:
        kernel.start()
        ex = kernel.run(probe, 30)
    assert ex.status == "ok", ex
    caps, net, package, _, scratch_ok, solutions, tests = ex.outputs[0]["text"].split()
    assert (caps, net, package, scratch_ok, solutions, tests) == (
        "0000000000000000",
        "False",
        "False",
        "True",
        "False",
        "False",
    )
    assert not (tmp_path / "probe.txt").exists()  # what it wrote above its scratch stayed in its private /tmp
    assert not (scratch / "probe.txt").exists()  # and its scratch folder is a size-capped memory file system


@pytest.mark.parametrize("name", sorted(hidden.HIDDEN), ids=str)
def test_every_hidden_check_names_real_cells_and_its_reference_runs_on_every_input(name):
    import json
    import random

    from chunklab.course.notebooks import checkpoint_cells, read_notebook

    path = ROOT / "solutions" / f"{name}.ipynb"
    checkpoints = {c["id"] for c in checkpoint_cells(read_notebook(path))}
    for check in hidden.HIDDEN[name]:
        assert check.checkpoint in checkpoints, f"{name}: no checkpoint {check.checkpoint}"
        ref = hidden.reference_function(path, check)
        cases = check.inputs(random.Random(0))
        assert len({kind for kind, _ in cases}) >= 2, "name at least two kinds of input"
        assert check.inputs(random.Random(0)) == cases  # the seed fixes the inputs
        for _, kwargs in cases:
            json.dumps(kwargs)  # inputs travel to the kernel as JSON
        for kwargs in hidden.arguments([kw for _, kw in cases], check.convert):
            json.dumps(hidden.summarize(ref(**kwargs), check.summary))
