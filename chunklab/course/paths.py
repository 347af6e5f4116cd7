"""Where the course lives: its root, its solutions, the reference of a learner's notebook."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from chunklab.course.notebooks import GradingError
from chunklab.paths import find_project_root

__all__ = ["collect_notebooks", "collect_submissions", "course_root", "find_reference", "sanitize_file"]

#: the sanitize file, relative to the course root
SANITIZE_NAME = "solutions/nbval_sanitize.cfg"


def course_root(start: str | os.PathLike | None = None) -> Path:
    """The course directory: the project root (:func:`chunklab.paths.find_project_root`) with ``solutions/``.

    Found from ``start`` (default: the working directory), else the checkout chunklab runs
    from. No environment variable is read: a graded notebook's kernel runs outside the course
    and must not be pointed back at it.
    """
    for cand in (
        find_project_root(Path(start) if start is not None else None),
        Path(__file__).resolve().parents[2],
    ):
        if (cand / "solutions").is_dir():
            return cand
    raise GradingError(
        "cannot find the course's solutions/ folder: run from the course checkout or pass --solutions"
    )


def sanitize_file(root: Path | None = None) -> Path:
    """The nbval sanitize file (timings, memory addresses, progress rates)."""
    return (root or course_root()) / SANITIZE_NAME


def find_reference(path: str | os.PathLike, solutions_dir: str | os.PathLike | None = None) -> Path:
    """The reference solution a learner's notebook is graded against, found by notebook name.

    ``exercises/03-structural.ipynb`` and ``alice/03-structural.ipynb`` map to
    ``solutions/03-structural.ipynb``; a file name that merely contains a course notebook's
    name (``alice-03-structural.ipynb``) maps to it when exactly one matches, and a name
    holding two is refused as ambiguous.
    """
    sol = Path(solutions_dir) if solutions_dir else course_root() / "solutions"
    names = sorted(p.stem for p in sol.glob("*.ipynb"))
    stem = Path(path).stem
    if stem in names:
        return sol / f"{stem}.ipynb"
    contained = [n for n in names if n in stem]
    if len(contained) == 1:
        return sol / f"{contained[0]}.ipynb"
    if len(contained) > 1:
        raise GradingError(
            f"{path}: ambiguous, the name holds several course notebooks ({', '.join(contained)})"
        )
    listing = ", ".join(names) or "(none)"
    raise GradingError(f"{path}: not one of the course's notebooks (expected one of: {listing})")


def collect_notebooks(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Expand folders into the ``.ipynb`` files below them (sorted); files are kept as given."""
    return list(collect_submissions(paths))


def collect_submissions(paths: Iterable[str | os.PathLike]) -> dict[Path, Path | None]:
    """Each notebook to grade and the folder it was found in (None for a file given as such), in order."""
    out: dict[Path, Path | None] = {}
    for p in map(Path, paths):
        if p.is_dir() and not p.is_symlink():
            # links are listed too (and refused when read, with a reason), never followed
            found = sorted(
                f
                for f in p.rglob("*.ipynb")
                if ".ipynb_checkpoints" not in f.parts and (f.is_symlink() or not f.is_dir())
            )
            if not found:
                raise GradingError(f"{p}: folder holds no .ipynb notebooks")
            out.update((f, p) for f in found)
        else:
            out.setdefault(p, None)
    return out
