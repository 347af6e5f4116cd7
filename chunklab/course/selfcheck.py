"""``check("cp-…")`` in an exercise notebook: the visible checks of one checkpoint, now."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["check"]


def check(*checkpoints: str, notebook: str | os.PathLike | None = None, timeout: float = 1200.0) -> bool:
    """Self-check the saved notebook: run it as the grader does and print the named checkpoints' verdicts.

    ``notebook`` defaults to the notebook this kernel belongs to (JupyterLab tells the kernel
    its path). Save the notebook first: the saved file is what gets checked. Hidden checks do
    not run; the grader adds them. Returns True when every reported checkpoint passed.
    """
    path = notebook or os.environ.get("JPY_SESSION_NAME")
    if not path:
        raise ValueError(
            "notebook: cannot tell which notebook this is; pass notebook='exercises/NN-name.ipynb'"
        )
    if not Path(path).is_file():
        raise ValueError(f"notebook: {path} is not a saved notebook file")
    cmd = [sys.executable, "-m", "chunklab.cli", "check", str(path), "--timeout", f"{timeout:g}"]
    for cp in checkpoints:
        cmd += ["--checkpoint", cp]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    print(proc.stdout.rstrip() or proc.stderr.rstrip())
    return proc.returncode == 0
