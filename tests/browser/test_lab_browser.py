"""The learner's JupyterLab path in a real browser: Playwright driving Debian's Chromium.

JupyterLab is started as ``make lab`` starts it (the venv's ``jupyter lab`` with
jupyter_lab_config.json, the venv first on ``PATH``), on a free port, in a temporary copy of
the course. In exercise 01 the test runs every cell and sees the first stub's
NotImplementedError (naming the function to write and its cell's heading), runs ``check()`` on the
unfinished notebook (a checkpoint that fails because an earlier cell is unfinished says so, by
that cell's heading), pastes the reference solution into the stubs through the editor, runs
``check()`` to full marks, grades from a Lab terminal (exit 0), and moves the slider of chapter 2's
explorer in exercise 02. In capstone 09 the index cell shows its progress bar (chunks done of
all, rate and time left) while it embeds. No news pop-up may appear. Screenshots of every step go
to ``$LAB_SHOTS`` (default /tmp/lab-shots).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import nbformat
import pytest

from chunklab.course.generate import has_solution
from chunklab.paths import cache_dir

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium") if p and Path(p).is_file()), None)
SHOTS = Path(os.environ.get("LAB_SHOTS", "/tmp/lab-shots"))
TOKEN = "chunklab-browser-test"
#: the notebook on show (other open notebooks stay in the page, hidden)
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
#: copied into the temporary course: what Lab, the kernel and the grader read
COURSE_FILES = (
    "exercises",
    "solutions",
    "lab-settings",
    "jupyter_lab_config.json",
    "pyproject.toml",
    "_toc.yml",
)

pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None, reason="Debian's chromium is not installed (make sysdeps installs it)"
    ),
]
playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright (requirements.txt) not installed"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A running JupyterLab on a copy of the course: (base URL, course folder)."""
    base = tmp_path_factory.mktemp("lab")
    course = base / "course"
    course.mkdir()
    for name in COURSE_FILES:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, course / name)
    home = base / "home"
    home.mkdir()
    venv_bin = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),  # this checkout's chunklab in the kernel and the terminal
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "lab-user-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "lab-workspaces"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        # this checkout's embedding cache (the copy's own would start cold): capstone 09 embeds its
        # corpus once per checkout, not once per run
        "CHUNKLAB_CACHE": str(cache_dir()),
    }
    port = _free_port()
    cmd = [
        str(venv_bin / "jupyter"),
        "lab",
        "--config=jupyter_lab_config.json",
        f"--ServerApp.root_dir={course}",
        "--LabApp.default_url=/lab/tree/exercises",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={TOKEN}",
        "--ServerApp.open_browser=False",
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = (base / "lab.log").open("w")
    proc = subprocess.Popen(cmd, cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # a loaded machine starts Lab slowly; a dead one is seen at once
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + (base / "lab.log").read_text())
                time.sleep(0.3)
        yield url, course
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def page(lab):
    """One Chromium page (1400x1000) on the Lab."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.set_default_timeout(60_000)
        yield pg
        browser.close()


def shot(pg, name: str) -> None:
    """A screenshot of the whole window, numbered in step order."""
    pg.screenshot(path=str(SHOTS / f"{name}.png"))


def open_notebook(pg, url: str, path: str) -> None:
    """Open a notebook by URL and wait for its kernel to be idle."""
    pg.goto(f"{url}/lab/tree/{path}?token={TOKEN}")
    # Lab restores the previous test's notebooks too, and may activate one of them after this one:
    # once the layout is restored, open (activate) this path, then wait until it is the current
    # widget with its cells loaded; menus, wait_idle and set_source act on the current widget
    pg.wait_for_function("() => window.jupyterapp !== undefined", timeout=120_000)
    pg.evaluate(
        "async (path) => { await window.jupyterapp.restored;"
        " await window.jupyterapp.commands.execute('docmanager:open', {path}); }",
        path,
    )
    pg.wait_for_function(
        "(path) => { const w = window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.context && w.context.path === path && w.content && w.content.model"
        " && w.content.model.cells.length > 0); }",
        arg=path,
        timeout=120_000,
    )
    pg.locator(f"{PANEL} .jp-Cell").first.wait_for()
    wait_idle(pg)


def wait_idle(pg, timeout: float = 120_000) -> None:
    """Until the current notebook's kernel is idle (read through the app object Lab exposes)."""
    pg.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle' && !w.sessionContext.pendingInput; }",
        timeout=timeout,
    )


def wait_ran(pg, index: int, timeout: float = 120_000) -> None:
    """Until cell ``index`` has run: its prompt shows an execution count ("[3]:"), then the kernel is idle.

    Waiting for an idle kernel alone races the keypress: right after Shift+Enter the request may
    not have reached the kernel yet, and the kernel still reads idle (a CI run read the cell's
    output as empty while it was still running).
    """
    prompt = f"document.querySelectorAll('{PANEL} .jp-Cell')[{index}].querySelector('.jp-InputPrompt')"
    counted = f"() => {{ const p = {prompt}; return p && /\\[\\d+\\]/.test(p.innerText); }}"
    pg.wait_for_function(counted, timeout=timeout)
    wait_idle(pg, timeout=timeout)


def run_all(pg, timeout: float = 180_000) -> None:
    """Run > Run All Cells, through the menu, then wait until the kernel is done.

    Done means: some cell ran in this run (an execution count above any shown before), no cell is
    still queued ("[*]"), and the kernel is idle: conditions, with no window in which the run
    must be seen to start.
    """
    prompts = f"[...document.querySelectorAll('{PANEL} .jp-InputPrompt')]"
    counts = f"{prompts}.map(p => parseInt((p.innerText.match(/\\[(\\d+)\\]/) || [0, 0])[1], 10))"
    before = pg.evaluate(f"() => Math.max(0, ...{counts})")
    pg.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    pg.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).first.click()
    pg.wait_for_function(f"() => Math.max(0, ...{counts}) > {before}", timeout=timeout)
    pg.wait_for_function(f"() => !{prompts}.some(p => p.innerText.includes('*'))", timeout=timeout)
    wait_idle(pg, timeout=timeout)


def cell(pg, index: int):
    """The notebook's cell number ``index`` (0-based)."""
    return pg.locator(f"{PANEL} .jp-Cell").nth(index)


def replace_source(pg, index: int, source: str) -> None:
    """Click into the cell's editor, select all, insert ``source`` as a learner's paste would."""
    target = cell(pg, index)
    target.scroll_into_view_if_needed()
    target.locator(".cm-content").click()
    pg.keyboard.press("Control+a")
    pg.keyboard.insert_text(source)
    pg.keyboard.press("Escape")


def wait_saved(pg, path: Path, saved: Callable[[nbformat.NotebookNode], bool], timeout: float = 120) -> None:
    """Wait until the notebook on disk at ``path`` is what Lab was asked to save (``saved`` says so).

    A condition, not a pause: ``check()`` and the grader read the file, so the test goes on only
    once Lab's save has reached the disk (a file read mid-write counts as not saved yet).
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            done = saved(nbformat.read(path, as_version=4))
        except (OSError, ValueError, KeyError, IndexError, AttributeError):
            done = False
        if done:
            return
        assert time.monotonic() < deadline, f"Lab did not save {path.name} within {timeout:.0f} s"
        pg.wait_for_timeout(100)


def news_prompts(pg) -> int:
    """How many visible notifications talk about Jupyter news."""
    return pg.get_by_text(re.compile("Jupyter news", re.IGNORECASE)).count()


def solution_cells(name: str) -> list[tuple[str, str]]:
    """(cell id, reference source without the markers) of the solution's cells that the exercise stubs."""
    nb = nbformat.read(ROOT / "solutions" / name, as_version=4)
    markers = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$\n?", re.MULTILINE)
    return [(c.id, markers.sub("", c.source)) for c in nb.cells if has_solution(c.source)]


def test_exercise_01_in_jupyterlab_runs_fails_at_the_stub_is_solved_checked_graded(lab, page):
    url, course = lab
    name = "01-fixed.ipynb"
    open_notebook(page, url, f"exercises/{name}")
    shot(page, "01-opened")

    run_all(page)
    error = page.locator(f"{PANEL} .jp-OutputArea-output", has_text="NotImplementedError").first
    error.wait_for()
    error.scroll_into_view_if_needed()
    shot(page, "02-run-all-not-implemented")
    # the stub says what to write and where, by the heading the learner sees above the cell
    assert 'write token_windows() in the cell under "1. Token windows"' in error.inner_text()

    ids = [c["id"] for c in nbformat.read(course / "exercises" / name, as_version=4).cells]
    # a new cell at the end: check() finds the saved notebook from the kernel; on the unfinished
    # notebook, the checkpoint that fails because of an earlier stub names that stub's cell
    last = cell(page, len(ids) - 1)
    last.scroll_into_view_if_needed()
    last.locator(".jp-InputPrompt").click()
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.insert_text("from chunklab.course import check\n\ncheck()")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    saved = course / "exercises" / name
    wait_saved(page, saved, lambda nb: nb.cells[-1].source.rstrip().endswith("check()"))
    page.keyboard.press("Shift+Enter")
    wait_ran(page, len(ids), timeout=180_000)
    out = cell(page, len(ids)).locator(".jp-OutputArea").inner_text()
    cell(page, len(ids)).scroll_into_view_if_needed()
    shot(page, "03-check-unfinished")
    assert 'code cell 2 under "1. Token windows" is not finished yet; this checkpoint depends on it' in out, (
        out
    )
    assert "score: 0/3 checkpoints passed" in out, out

    for cell_id, source in solution_cells(name):
        replace_source(page, ids.index(cell_id), source)
    shot(page, "04-solution-pasted")
    page.keyboard.press("Control+s")
    pasted = dict(solution_cells(name))
    wait_saved(
        page,
        saved,
        lambda nb: all(c.source.rstrip() == pasted[c.id].rstrip() for c in nb.cells if c.id in pasted),
    )
    run_all(page)  # the check() cell last: it grades the saved, now solved notebook
    assert page.get_by_text("NotImplementedError").count() == 0
    out = cell(page, len(ids)).locator(".jp-OutputArea").inner_text()
    shot(page, "05-check-solved")
    total = sum(1 for i in ids if i.startswith("cp-"))
    assert f"score: {total}/{total} checkpoints passed (100%)" in out, out
    assert out.startswith("check(): running 01-fixed.ipynb"), out  # said at once, before the half minute
    assert not out.rstrip().endswith(("True", "False")), out  # check() returns nothing printable

    # a Lab terminal, opened in the course folder: grade to exit 0
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^File$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^New$")).first.hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Terminal$")).first.click()
    page.wait_for_selector(".jp-Terminal .xterm-screen")
    page.locator(".jp-Terminal .xterm-screen").click()
    page.keyboard.type(
        f"chunklab grade exercises/{name} 2>&1 | tee grade.log; echo EXIT=${{PIPESTATUS[0]}} > grade.rc\n"
    )
    rc_file = course / "grade.rc"
    deadline = time.monotonic() + 180
    while not rc_file.is_file() or not rc_file.read_text().strip():
        assert time.monotonic() < deadline, "the grade command did not finish"
        time.sleep(0.5)
    page.wait_for_timeout(500)
    shot(page, "06-terminal-grade")
    assert rc_file.read_text().strip() == "EXIT=0", (course / "grade.log").read_text()
    graded = (course / "grade.log").read_text()
    assert f"{total}/{total} checkpoints passed" in graded
    assert "raised" not in graded, "the check() cell failed inside the grader"
    assert news_prompts(page) == 0, "a Jupyter news notification appeared"


def test_the_explorer_in_exercise_02_redraws_when_its_slider_moves(lab, page):
    url, _course = lab
    open_notebook(page, url, "exercises/02-recursive.ipynb")
    run_all(page)  # stops at the first stub, after the explorer
    widget = page.locator(f"{PANEL} .widget-vbox").first
    widget.wait_for()
    widget.scroll_into_view_if_needed()
    status = widget.locator(".widget-html").first
    before = status.inner_text()
    shot(page, "07-explorer-before")
    handle = widget.locator(".widget-slider .noUi-handle").first
    box = handle.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 80, box["y"] + box["height"] / 2, steps=8)
    page.mouse.up()
    page.wait_for_function(
        "([el, before]) => el.innerText !== before", arg=[status.element_handle(), before], timeout=30_000
    )
    shot(page, "08-explorer-after")
    after = status.inner_text()
    assert after != before
    sizes = (
        [int(m) for m in re.findall(r"\b(\d+)\b", before)],
        [int(m) for m in re.findall(r"\b(\d+)\b", after)],
    )
    assert sizes[0] != sizes[1]
    assert news_prompts(page) == 0, "a Jupyter news notification appeared"


def set_source(pg, cell_id: str, source: str) -> None:
    """Set a cell's source through Lab's notebook model (a long notebook draws its editors lazily)."""
    pg.evaluate(
        "([id, src]) => { const cells = window.jupyterapp.shell.currentWidget.content.model.cells;"
        " for (let i = 0; i < cells.length; i++) { const c = cells.get(i);"
        " if (c.id === id) { c.sharedModel.setSource(src); return; } }"
        " throw new Error('no cell ' + id); }",
        [cell_id, source],
    )


def test_the_index_cell_of_capstone_09_shows_its_progress_while_it_embeds(lab, page):
    url, _course = lab
    name = "09-chroma-checkpoint.ipynb"
    open_notebook(page, url, f"exercises/{name}")
    for cell_id, source in solution_cells(name):
        if cell_id in ("chunk", "index"):
            set_source(page, cell_id, source)
    index = page.locator(f"{PANEL} .jp-CodeCell", has_text="def open_index(path")
    assert "return ChunkStore(path=path" in index.inner_text()  # the solution is in the cell
    run_all(page, timeout=600_000)  # stops at the first stub after the index (filtered search)
    output = index.locator(".jp-OutputArea")
    output.get_by_text(re.compile(r"\d+ chunks indexed")).wait_for(timeout=600_000)
    index.scroll_into_view_if_needed()
    shot(page, "09-capstone-index-progress")
    out = output.inner_text()
    total = re.search(r"embedding (\d+) chunks: a few minutes", out)
    assert total, out  # what the cell is waiting for, said before the wait
    # tqdm's bar in Lab (figure spaces between its parts): the chunks done of all, elapsed<left, rate
    bar = rf"indexing:\s*100%.*{total[1]}/{total[1]}\s*\[\d+:\d+<\d+:\d+,\s*[\d.]+chunk/s\]"
    assert re.search(bar, out, re.DOTALL), out
    assert f"{total[1]} chunks indexed" in out, out
    assert news_prompts(page) == 0, "a Jupyter news notification appeared"
