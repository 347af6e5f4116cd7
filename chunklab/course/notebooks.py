"""Reading course notebooks and telling their checkpoint cells apart."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = [
    "CHECKPOINT_TAG",
    "GradingError",
    "cell_headings",
    "checkpoint_cells",
    "is_checkpoint",
    "notebook_text",
    "read_notebook",
]

#: the cell tag that marks a checkpoint cell
CHECKPOINT_TAG = "checkpoint"


class GradingError(ValueError):
    """A notebook cannot be graded: missing, malformed, or not one of the course's."""


#: the largest notebook file read (a bigger one is refused, not loaded); the course's are under 100 KB
MAX_NOTEBOOK_BYTES = 16 * 1024**2
#: the most cells a notebook may have (the course's have under 50); counted before it is parsed
MAX_NOTEBOOK_CELLS = 2000


def read_notebook(
    path: str | os.PathLike, max_bytes: int = MAX_NOTEBOOK_BYTES, max_cells: int = MAX_NOTEBOOK_CELLS
):
    """Read a notebook (nbformat 4), raising :class:`GradingError` with a clear message if it can't.

    A submission is hostile data: a link is not followed, a FIFO or device is not opened for
    long (non-blocking, then refused), a file past ``max_bytes`` is refused unread, and one with
    more than ``max_cells`` cells is refused before nbformat parses and validates it (what made a
    600,000-cell notebook cost minutes and gigabytes).
    """
    import nbformat
    from nbformat.validator import ValidationError

    p = Path(path)
    if p.is_symlink():
        raise GradingError(f"{p}: is a symbolic link, not a notebook file (links are never followed)")
    if not p.exists():
        raise GradingError(f"{p}: no such file")
    if p.is_dir():
        raise GradingError(f"{p}: is a folder, not a notebook")
    if p.suffix != ".ipynb":
        raise GradingError(f"{p}: not a notebook (expected a .ipynb file)")
    try:
        raw = _read_regular(p, max_bytes)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GradingError(f"{p}: cannot be read ({exc})") from exc
    # a quoted "cell_type" outside a string can only be a JSON key or value: at least one per cell
    if raw.count(b'"cell_type"') > max_cells:
        raise GradingError(f"{p}: more than {max_cells:,} cells (the limit for a notebook)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GradingError(f"{p}: malformed notebook, not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise GradingError(f"{p}: malformed notebook (no list of cells)")
    if len(data["cells"]) > max_cells:
        raise GradingError(f"{p}: {len(data['cells']):,} cells, more than the limit of {max_cells:,}")
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except (ValidationError, KeyError, TypeError, AttributeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise GradingError(f"{p}: malformed notebook ({first})") from exc
    return nb


def _read_regular(p: Path, max_bytes: int) -> bytes:
    fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"not a regular file (mode {stat.filemode(info.st_mode)})")
        if info.st_size > max_bytes:
            raise OSError(f"{info.st_size} bytes, over the {max_bytes} byte limit for a notebook")
        chunks, left = [], max_bytes + 1
        while left > 0:
            data = os.read(fd, min(left, 1024**2))
            if not data:
                break
            chunks.append(data)
            left -= len(data)
        if left <= 0:
            raise OSError(f"over the {max_bytes} byte limit for a notebook")
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_checkpoint(cell: NotebookNode) -> bool:
    """Whether ``cell`` is a checkpoint cell (a code cell tagged ``checkpoint``)."""
    return cell.get("cell_type") == "code" and CHECKPOINT_TAG in (cell.get("metadata", {}).get("tags") or [])


def checkpoint_cells(nb: NotebookNode) -> list[NotebookNode]:
    """The checkpoint cells of a notebook, in order."""
    return [c for c in nb.cells if is_checkpoint(c)]


def cell_headings(nb: NotebookNode) -> list[str]:
    """For each cell, the last Markdown heading above it ('' before the first), without its ``#`` marks.

    How the course names a cell to a learner: JupyterLab shows neither cell ids nor numbers for
    cells not yet run, but the section a cell sits under is on the screen.
    """
    headings, current = [], ""
    for cell in nb.cells:
        headings.append(current)
        if cell.get("cell_type") == "markdown":
            for line in str(cell.get("source", "")).split("\n"):
                match = _HEADING.match(line)
                if match:
                    current = match["title"].strip()
    return headings


_HEADING = re.compile(r"^#{1,6}\s+(?P<title>\S.*?)\s*#*\s*$")


def notebook_text(nb: NotebookNode) -> str:
    """The exact text a notebook is written as (nbformat's layout, trailing newline)."""
    import nbformat

    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"
