"""The grader: a learner's notebook, executed in a sealed kernel with the reference's checkpoints.

The graded notebook is the learner's own code cells with the **reference** solution's
checkpoint cells put in (matched by cell id; inserted from the reference when the learner
deleted one). Each submission runs alone: a fresh scratch folder holding only a copy of the
submission, a kernel in a sandbox (:mod:`chunklab.course.kernel`), a time limit per cell and
per notebook. The kernel receives cell sources only; the grader's own process reads every
output from the kernel's messages and compares the checkpoints' outputs with the reference's
stored ones (through the course's sanitize file), then runs the hidden checks
(:mod:`chunklab.course.hidden`), whose expected values never leave this process. Before
every checkpoint :mod:`chunklab.course.guard` puts back what learner cells may have patched.
Stored outputs in the learner's notebook are never compared, so editing them earns nothing.

Each notebook is graded on its own: whatever goes wrong with one (a malformed message, a
kernel that dies, a bug) becomes that notebook's error and the batch goes on; ``on_result``
hears of each notebook as it finishes (the CLI writes its CSV row and feedback page then), and
``jobs`` notebooks are graded at once, each in its own sealed kernel. The library code an
exercise asks the learner to write is not in that kernel's view of the package
(:mod:`chunklab.course.redact`, from the list in :mod:`chunklab.course.shortcuts`); the rest of
the declared shortcuts the learner's exercise functions may not call (:mod:`chunklab.course.guard`).
"""

from __future__ import annotations

import builtins
import copy
import difflib
import json
import os
import random
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from chunklab.course.answers import (
    _call,
    _capped,
    _error_text,
    _hidden_verdicts,
    _interrupted,
    _json_value,
    _value,
    _weight,
)
from chunklab.course.graded import (
    assigned_names,
    build_graded_notebook,
    chunklab_imports,
    loaded_names,
    output_text,
    sanitizer,
)
from chunklab.course.hidden import HIDDEN, HiddenCheck, arguments, reference_function
from chunklab.course.kernel import Execution, Kernel, MalformedMessage, kernel_env
from chunklab.course.notebooks import (
    GradingError,
    cell_headings,
    checkpoint_cells,
    is_checkpoint,
    read_notebook,
)
from chunklab.course.options import GradeOptions, default_cache, describe_grading
from chunklab.course.paths import SANITIZE_NAME, course_root, find_reference
from chunklab.course.redact import Views
from chunklab.course.results import CheckpointResult, GradeResult, HiddenResult, identify
from chunklab.course.shortcuts import shortcuts_for

__all__ = ["GradeOptions", "describe_grading", "grade_notebook", "grade_notebooks"]
_GUARD = "__import__('chunklab.course.guard', fromlist=['guard'])"
_REFERENCE_LOCK = threading.Lock()  # the reference functions run in this process, one at a time


ResultHook = Callable[[GradeResult], None]


def grade_notebook(path: str | os.PathLike, **kwargs: Any) -> GradeResult:
    """Grade one learner notebook (see :func:`grade_notebooks` for the options)."""
    return grade_notebooks([path], **kwargs)[0]


def grade_notebooks(
    paths: Sequence[str | os.PathLike | tuple[str, Any]],
    *,
    solutions_dir: str | os.PathLike | None = None,
    sanitize: str | os.PathLike | None = None,
    timeout: float = 1200.0,
    reference: str | os.PathLike | None = None,
    options: GradeOptions | None = None,
    jobs: int = 1,
    on_result: ResultHook | None = None,
    folders: dict[Path, Path] | None = None,
) -> list[GradeResult]:
    """Grade learner notebooks, each in its own sealed kernel, ``jobs`` at a time.

    Each item of ``paths`` is a notebook path, or ``(label, notebook)`` with an in-memory
    notebook (used by tests to grade patched solutions). The reference is found by name in
    ``solutions_dir`` unless ``reference`` names it. ``timeout`` limits each cell and,
    separately, each notebook (``options`` may set it instead, with the other limits). A
    notebook that can't be graded, for whatever reason, gets ``error`` set instead of raising;
    ``on_result`` is called with each result as soon as it is final (one call at a time).
    ``folders`` maps a notebook to the submissions folder it was found in (its student is
    then the sub-folder's name; see :func:`chunklab.course.results.identify`). Results come
    back in the order of ``paths``.
    """
    if not paths:
        raise GradingError("no notebooks to grade")
    opts = options or GradeOptions(timeout=timeout)
    if not float(opts.timeout) > 0:
        raise GradingError(f"timeout must be > 0 seconds, got {opts.timeout}")
    if opts.notebook_timeout is not None and not float(opts.notebook_timeout) > 0:
        raise GradingError(f"notebook_timeout must be > 0 seconds, got {opts.notebook_timeout}")
    if not isinstance(jobs, int) or jobs < 1:
        raise GradingError(f"jobs must be a whole number >= 1, got {jobs!r}")
    solutions = Path(solutions_dir) if solutions_dir is not None else course_root() / "solutions"
    if sanitize is None:
        sanitize = solutions.parent / SANITIZE_NAME
        if not Path(sanitize).is_file():
            sanitize = solutions / "nbval_sanitize.cfg"
    clean = sanitizer(Path(sanitize))
    cache = opts.cache or default_cache()
    lock = threading.Lock()
    views = Views()  # one redacted view of the package per exercise, built at its first submission

    def one(item: Any) -> GradeResult:
        label, learner = item if isinstance(item, tuple) else (item, None)
        result = GradeResult(Path(label))
        t0 = time.monotonic()
        try:
            if learner is None:
                learner = read_notebook(result.path)
            ref_path = Path(reference) if reference else find_reference(result.path, solutions)
            result.reference = ref_path
            ref_nb = read_notebook(ref_path)
            if not checkpoint_cells(ref_nb):
                raise GradingError(f"{ref_path}: the reference has no checkpoint cells")
            _Run(result, learner, ref_nb, opts, clean, cache, started=t0, views=views).grade()
        except GradingError as exc:
            result.error = _capped(str(exc))
        except MalformedMessage as exc:
            result.error = _capped(f"the notebook sent a malformed message: {exc}")
        except Exception as exc:  # one notebook's failure, whatever it is, is that notebook's error
            result.error = _capped(f"the grader could not grade this notebook: {type(exc).__name__}: {exc}")
        if result.error:
            result.checkpoints = []
        result.student, note = identify(result.path, result.reference, (folders or {}).get(result.path))
        if note:
            result.notes.insert(0, note)
        result.seconds = time.monotonic() - t0
        if on_result is not None:
            with lock:
                on_result(result)
        return result

    with views:
        if jobs == 1 or len(paths) == 1:
            return [one(item) for item in paths]
        results: list[GradeResult | None] = [None] * len(paths)
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="chunklab-grade") as pool:
            futures = {pool.submit(one, item): i for i, item in enumerate(paths)}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
        return [r for r in results if r is not None]


class _Run:
    """One submission, graded in its own scratch folder and kernel."""

    def __init__(
        self,
        result: GradeResult,
        learner: Any,
        reference: Any,
        opts: GradeOptions,
        clean: Callable[[str], str],
        cache: Path | None,
        *,
        started: float | None = None,
        views: Views | None = None,
    ) -> None:
        self.started = time.monotonic() if started is None else started  # reading the notebook began
        self.result, self.learner, self.reference, self.opts = result, learner, reference, opts
        self.clean, self.cache = clean, cache
        self.graded = build_graded_notebook(learner, reference)
        self.helpers = chunklab_imports(reference)
        self.assigned = assigned_names(reference)
        stem = result.reference.stem if result.reference is not None else ""
        declared = shortcuts_for(stem)
        self.shortcuts = declared.payload()
        self.absent, self.views = declared.absent, views
        self.nonce = secrets.token_hex(8)
        self.deadline = 0.0
        self.code: list[Any] = []  # the graded notebook's code cells, in order
        self.places: list[str] = []  # how a learner finds each of them (:func:`_place`)
        self.unfinished = ""  # the first learner cell whose stub still raises, once one has
        self.follow_on = False  # a later cell's failure was laid on it (said once)

    def grade(self) -> None:
        """Run every code cell of the graded notebook and fill in the result."""
        result, opts = self.result, self.opts
        result.seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)
        with tempfile.TemporaryDirectory(prefix="chunklab-grade-") as tmp:
            scratch, runtime, copy_dir = Path(tmp, "work"), Path(tmp, "run"), Path(tmp, "submission")
            for folder in (scratch, scratch / ".tmp", runtime, copy_dir):
                folder.mkdir()
            submission = self._seal(copy_dir, runtime)
            # the notebook's time limit covers reading, building and sealing it too (not the kernel's start)
            spent = time.monotonic() - self.started
            if spent > self.notebook_limit:
                raise GradingError(
                    f"{result.path}: reading and preparing the notebook took {spent:.0f} s, past its "
                    f"{self.notebook_limit:g} s limit"
                )
            kernel = Kernel(
                scratch,
                runtime,
                sandbox=opts.sandbox,
                limits=opts.kernel_limits,
                env=kernel_env(scratch, runtime / "cache" if self.cache else None),
                readonly=[self.cache.resolve()] if self.cache else [],
                files=[(submission, scratch / submission.name)],
                package_view=self.views.get(self.absent) if self.views is not None else None,
            )
            with kernel:
                try:
                    kernel.start(timeout=opts.startup_timeout)
                except RuntimeError as exc:
                    raise GradingError(f"{result.path}: {exc} ({kernel.log_tail()})") from exc
                self.deadline = time.monotonic() + self.notebook_limit - spent
                install = f"{_GUARD}.install({self.helpers!r}, {self.shortcuts!r})"
                setup = kernel.run("", 60, silent=True, user_expressions={"g": install})
                if _value(setup, "g") != "installed":
                    raise GradingError(
                        f"{result.path}: the grader's setup failed in the kernel: "
                        f"{_value(setup, 'g') or setup.status} {kernel.log_tail()}"
                    )
                self._cells(kernel)

    def _seal(self, copy_dir: Path, runtime: Path) -> Path:
        """The submission as read (never the file again: it may have changed), for the scratch folder;
        the cache copy goes beside it."""
        import shutil

        import nbformat

        src = self.result.path
        name = src.name if src.suffix == ".ipynb" and src.name.isprintable() else "submission.ipynb"
        nbformat.write(self.learner, copy_dir / name)
        if self.cache is not None:
            # the cache's files (the embedding database) are copied, so a submission cannot poison
            # another's; its folders (corpora, models) are linked, and read-only in the sandbox
            (runtime / "cache").mkdir()
            for entry in self.cache.iterdir():
                if entry.is_file():
                    shutil.copyfile(entry, runtime / "cache" / entry.name)
                elif entry.is_dir():
                    (runtime / "cache" / entry.name).symlink_to(entry.resolve(), target_is_directory=True)
        return copy_dir / name

    @property
    def notebook_limit(self) -> float:
        """Seconds the whole notebook may run: ``notebook_timeout``, by default twice the cell limit, so
        a cell interrupted at its limit leaves time to grade the checkpoints after it."""
        return self.opts.notebook_timeout or 2 * self.opts.timeout

    def _grace(self, kind: str) -> float:
        """How long an interrupted cell may take to stop.

        A per-cell timeout resumes; the notebook's ends the run.
        """
        return self.opts.interrupt_grace if kind == "cell" else 0.0

    def _limit(self) -> tuple[float, str]:
        remaining = self.deadline - time.monotonic()
        return (
            (self.opts.timeout, "cell")
            if self.opts.timeout <= remaining
            else (max(remaining, 0.01), "notebook")
        )

    def _cells(self, kernel: Kernel) -> None:
        result = self.result
        headings = cell_headings(self.graded)
        code = [
            (c, h) for c, h in zip(self.graded.cells, headings, strict=True) if c.get("cell_type") == "code"
        ]
        self.code = [c for c, _ in code]
        self.places = [_place(pos, c, h) for pos, (c, h) in enumerate(code, 1)]
        for pos, cell in enumerate(self.code, 1):
            where = self.places[pos - 1]
            if self.opts.progress is not None:
                self.opts.progress(f"running {_place(pos, cell, code[pos - 1][1], of=len(code))}")
            if is_checkpoint(cell):
                ex = self._checkpoint(kernel, cell, where, pos)
            else:
                limit, kind = self._limit()
                ex = kernel.run(cell.source, limit, interrupt=self._grace(kind))
                if ex.status == "interrupted":
                    result.timeouts.append(_interrupted(where, limit))
                elif ex.status == "error":
                    if ex.ename == "NotImplementedError":
                        self._not_implemented(pos, ex.evalue)
                    elif self.unfinished:
                        self._follow_on(where)
                    elif not result.notes:
                        result.notes.append(f"{where} raised {_error_text(ex.ename, ex.evalue)}")
            if getattr(ex, "truncated", False) and not any("output past" in n for n in result.notes):
                result.notes.append(f"{where}: its output past the grader's caps was dropped")
            if ex.status in ("timeout", "died"):
                result.stopped = self._stop_reason(kernel, ex, where)
                for cp in result.checkpoints:
                    if cp.detail == "not finished":
                        cp.detail = f"not finished: {result.stopped}"
                break
        done = {c.cell_id for c in result.checkpoints}
        for cell in checkpoint_cells(self.graded):
            if cell["id"] not in done:
                why = f"not run: {result.stopped}" if result.stopped else "not run"
                result.checkpoints.append(CheckpointResult(cell["id"], False, why, _weight(cell)))

    def _stop_reason(self, kernel: Kernel, ex: Any, where: str) -> str:
        if ex.status == "timeout":
            if ex.seconds + 0.5 >= self.opts.timeout:  # it had the whole per-cell limit
                return f"timed out: {where} ran past the {self.opts.timeout:g} s time limit per cell" + (
                    " and did not stop when interrupted" if ex.interrupted else ""
                )
            return f"timed out: the notebook ran past its {self.notebook_limit:g} s time limit (in {where})"
        time.sleep(0.2)
        code = kernel.exit_code()
        tail = kernel.log_tail()
        return (
            f"the kernel died in {where}"
            + (f" (exit status {code})" if code is not None else "")
            + (f": {tail}" if tail else "")
        )

    def _restore(self, kernel: Kernel, source: str) -> str:
        """Put the kernel's state back before a check; '' when done, else why it could not be."""
        shadowed = sorted(n for n in loaded_names(source) if hasattr(builtins, n) and n not in self.assigned)
        limit, _ = self._limit()
        ex = kernel.run(
            "",
            min(limit, 60),
            silent=True,
            user_expressions={"r": f"{_GUARD}.restore({shadowed!r}, {self.nonce!r})"},
        )
        if ex.status in ("timeout", "died"):
            return ex.status
        return "" if _value(ex, "r") == self.nonce else "the grader could not reset the kernel's state"

    def _follow_on(self, where: str) -> None:
        """Say once that a learner cell failed because an earlier one is not finished."""
        if not self.follow_on:
            self.follow_on = True
            self.result.notes.append(
                f"{where} failed: {self.unfinished} is not finished yet; this cell depends on it"
            )

    def _not_implemented(self, pos: int, message: object) -> None:
        """Flag, once, the learner cell whose stub raised (the message a generated stub carries names
        it; else the cell that raised, or the first stub above it); later failures are laid on it."""
        text = str(message)
        stubs = [
            i
            for i, c in enumerate(self.code[:pos], 1)
            if not is_checkpoint(c) and "raise NotImplementedError" in str(c.source)
        ]
        named = [
            i
            for i in stubs
            if text and (repr(text) in self.code[i - 1].source or text in self.code[i - 1].source)
        ]
        at = (named or ([pos] if pos in stubs else stubs) or [pos])[0]
        flag = f"NotImplementedError still raised in {self.places[at - 1]}"
        if flag not in self.result.flags:
            self.result.flags.append(flag)
        self.unfinished = self.unfinished or self.places[at - 1]

    def _checkpoint(self, kernel: Kernel, cell: Any, where: str, pos: int) -> Any:
        cp = CheckpointResult(cell["id"], False, weight=_weight(cell))
        problem = self._restore(kernel, cell.source)
        if problem in ("timeout", "died"):
            return Execution(problem)
        limit, kind = self._limit()
        ex = kernel.run(cell.source, limit, interrupt=self._grace(kind))
        self.result.checkpoints.append(cp)
        if ex.status in ("timeout", "died"):
            cp.detail = "not finished"
            return ex
        if ex.status == "interrupted":
            cp.detail = f"timed out: ran past the {limit:g} s time limit per cell (interrupted)"
            self.result.timeouts.append(_interrupted(where, limit))
            return ex
        expected = output_text(cell.get("outputs", []), self.clean)
        actual = output_text(ex.outputs, self.clean)
        shortcuts = self._shortcuts(kernel)
        if problem:
            cp.detail = problem
        elif shortcuts:
            cp.detail = "; ".join(shortcuts)
        elif ex.status == "error":
            if ex.ename == "NotImplementedError":
                cp.detail = f"raised {_error_text(ex.ename, ex.evalue)}"
                self._not_implemented(pos, ex.evalue)
            elif self.unfinished:
                cp.detail = f"{self.unfinished} is not finished yet; this checkpoint depends on it"
            else:
                cp.detail = f"raised {_error_text(ex.ename, ex.evalue)}"
        elif expected != actual:
            diff = difflib.unified_diff(
                expected.splitlines(), actual.splitlines(), "expected", "got", lineterm="", n=1
            )
            cp.detail = _capped("\n".join(diff) or "outputs differ")
        else:
            cp.passed = True
        if self.opts.hidden and self.result.reference is not None:
            for check in HIDDEN.get(self.result.reference.stem, []):
                if check.checkpoint == cell["id"]:
                    stop = self._hidden(kernel, check, cp)
                    if stop is not None:
                        return stop
        return ex

    def _shortcuts(self, kernel: Kernel) -> list[str]:
        """What the guard's check right after a checkpoint reports (a refused library call, ...).

        A separate request: the kernel evaluates no user expression for a cell that raised.
        """
        if not self.shortcuts["library"]:
            return []
        limit, _ = self._limit()
        ex = kernel.run(
            "", min(limit, 60), silent=True, user_expressions={"v": f"{_GUARD}.verify({self.nonce!r})"}
        )
        answer = _json_value(ex, "v")
        if not isinstance(answer, dict) or answer.get("nonce") != self.nonce:
            return ["the grader could not check this checkpoint for library shortcuts"]
        found = answer.get("shortcuts")
        if not isinstance(found, list) or not all(isinstance(m, str) for m in found):
            return ["the grader could not check this checkpoint for library shortcuts"]
        return [_capped(m, 300) for m in found[:5]]

    def _hidden(self, kernel: Kernel, check: HiddenCheck, cp: CheckpointResult) -> Any:
        rng = random.Random(f"{self.result.seed}:{check.checkpoint}:{check.function}")
        cases = check.inputs(rng)
        assert self.result.reference is not None
        with _REFERENCE_LOCK:  # the reference runs here, in the grader's process: one notebook at a time
            try:
                ref = reference_function(self.result.reference, check)
                ref_args = arguments(copy.deepcopy([kw for _, kw in cases]), check.convert)
            except Exception as exc:  # the course's own check is broken: say which, grade nothing
                raise GradingError(
                    f"the hidden check of {check.function} could not run its reference: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            expected = [_call(ref, kwargs, check.summary) for kwargs in ref_args]
        limit, scope = self._limit()
        payload = json.dumps([kwargs for _, kwargs in cases])
        expr = (
            f"{_GUARD}.hidden({check.function!r}, {payload!r}, {check.summary!r}, {self.nonce!r}, "
            f"{dict(check.convert)!r})"
        )
        ex = kernel.run("", limit, silent=True, user_expressions={"h": expr}, interrupt=self._grace(scope))
        if ex.status == "interrupted":
            cp.passed = False
            cp.hidden.append(
                HiddenResult(
                    f"{check.function} on fresh inputs",
                    False,
                    f"timed out: ran past the {limit:g} s time limit (interrupted)",
                )
            )
            self.result.timeouts.append(_interrupted(f"the hidden check of {check.function}", limit))
            return None
        if ex.status in ("timeout", "died"):
            cp.passed = False
            cp.hidden.append(HiddenResult(f"{check.function} on fresh inputs", False, ex.status))
            return ex
        _hidden_verdicts(ex, self.nonce, cases, expected, check, cp)
        if not all(h.passed for h in cp.hidden):
            cp.passed = False
        return None


def _place(pos: int, cell: Any, heading: str, of: int = 0) -> str:
    """A code cell as a learner finds it in JupyterLab: its number among the code cells (what ``[n]``
    shows after Run All; ``of`` them) and the section it sits under, else its id."""
    number = f"code cell {pos}" + (f" of {of}" if of else "")
    if heading:
        return f'{number} under "{heading[:80]}"'
    return f"{number} (id {cell.get('id')})"
