"""``check("cp-…")`` in an exercise notebook: the visible checks of one checkpoint, now.

The notebook to check is found from the kernel: the path Jupyter gives it (``JPY_SESSION_NAME``,
IPython's ``__session__``), else the running Jupyter servers' session list matched by this
kernel's id. Inside a graded kernel (the grader or ``chunklab check`` running the notebook),
``check()`` does nothing: a self-check cell never makes the notebook it sits in fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["GRADING_ENV", "PROGRESS", "check", "find_notebook"]

#: set in a graded kernel's environment (chunklab.course.kernel.kernel_env)
GRADING_ENV = "CHUNKLAB_GRADING"
#: how a progress line of ``chunklab check --progress`` starts on its stderr
PROGRESS = "progress: "


def check(*checkpoints: str, notebook: str | os.PathLike | None = None, timeout: float = 1200.0) -> None:
    """Self-check the saved notebook: run it as the grader does and print the named checkpoints' verdicts.

    ``notebook`` defaults to the notebook this kernel belongs to (found from the kernel: see
    :func:`find_notebook`); a relative path is read from the kernel's working folder, or from
    the course folder above it. Save the notebook first: the saved file is what gets checked.
    Hidden checks do not run; the grader adds them. While it runs, one line says which code cell
    the check has reached; the report then replaces it. Returns nothing, so that no ``True`` or
    ``False`` lands under the report; the report says what passed.
    """
    if os.environ.get(GRADING_ENV):
        print("check(): skipped while the notebook is being graded")
        return
    path = _given(Path(notebook)) if notebook is not None else find_notebook()
    if path is None:
        raise ValueError(_advice(notebook))
    cmd = [
        sys.executable,
        "-m",
        "chunklab.cli",
        "check",
        str(path),
        "--timeout",
        f"{timeout:g}",
        "--progress",
    ]
    for cp in checkpoints:
        cmd += ["--checkpoint", cp]
    print(f"check(): running {path.name} in a fresh kernel, as the grader does (usually under a minute)")
    report = _run_showing_progress(cmd)
    print(report)


def _run_showing_progress(cmd: list[str]) -> str:
    """Run ``chunklab check``; show its progress lines, each over the last (a carriage return), as
    they come; return its report (stdout, else the error it wrote)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out: list[str] = []
    reader = threading.Thread(
        target=lambda: out.append(proc.stdout.read() if proc.stdout else ""), daemon=True
    )
    reader.start()
    errors: list[str] = []
    width = 0
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith(PROGRESS):
            text = line[len(PROGRESS) :].rstrip("\n")
            print("\r" + text.ljust(width), end="", flush=True)
            width = max(width, len(text))
        else:
            errors.append(line)
    proc.wait()
    reader.join()
    if width:
        print("\r" + " " * width + "\r", end="", flush=True)
    return "".join(out).rstrip() or "".join(errors).rstrip()


def find_notebook() -> Path | None:
    """The saved notebook this kernel runs, or None when the kernel cannot tell."""
    for cand in _candidates():
        path = Path(cand).expanduser()
        found = _given(path) if path.suffix == ".ipynb" else None
        if found is not None:
            return found
    return None


def _candidates() -> Iterator[str]:
    """Names Jupyter gives a kernel for its notebook, best first."""
    env = os.environ.get("JPY_SESSION_NAME")
    if env:
        yield env
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython comes with the kernel
        shell = None
    session = shell.user_ns.get("__session__") if shell is not None else None
    if isinstance(session, str) and session:
        yield session
    yield from _server_sessions()


def _server_sessions() -> Iterator[str]:
    """The notebook path of this kernel's session on each running Jupyter server (its API)."""
    kernel_id = _kernel_id()
    if not kernel_id:
        return
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:  # pragma: no cover
        return
    for info_file in sorted(Path(jupyter_runtime_dir()).glob("jpserver-*.json")):
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
            req = urllib.request.Request(
                f"{info['url'].rstrip('/')}/api/sessions",
                headers={"Authorization": f"token {info.get('token', '')}"},
            )
            with urllib.request.urlopen(req, timeout=2) as resp:  # noqa: S310 - a local server's own URL
                sessions = json.load(resp)
        except (OSError, ValueError, KeyError):
            continue
        for s in sessions:
            if s.get("kernel", {}).get("id") == kernel_id and s.get("path"):
                yield str(Path(info.get("root_dir", ".")) / s["path"])


def _kernel_id() -> str | None:
    """This kernel's id, from its connection file's name (``kernel-<id>.json``)."""
    try:
        from ipykernel.connect import get_connection_file

        name = Path(get_connection_file()).stem
    except Exception:  # noqa: BLE001 - not in a kernel, or no connection file
        return None
    return name.removeprefix("kernel-") if name.startswith("kernel-") else None


def _given(path: Path) -> Path | None:
    """A notebook path as given, else from the working folder or a folder above it (the course's)."""
    cwd = Path.cwd()
    for full in (path, *(base / path for base in (cwd, *cwd.parents))):
        if full.is_file():
            return full.resolve()
    return None


def _advice(notebook: str | os.PathLike | None) -> str:
    """What to pass instead: names that work from this kernel's working folder."""
    here = sorted(p.name for p in Path.cwd().glob("*.ipynb"))
    example = here[0] if here else "NN-name.ipynb"
    what = (
        f"{notebook} is not a saved notebook file"
        if notebook is not None
        else ("cannot tell which notebook this is")
    )
    return (
        f"notebook: {what}; pass notebook={example!r} (a path from this kernel's working folder, "
        f"{Path.cwd()})"
    )
