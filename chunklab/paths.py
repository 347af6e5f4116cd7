"""Where chunklab keeps its files: the project root, found once, and the cache directory.

The project root is the nearest ancestor of the working directory that holds ``_toc.yml``
or ``pyproject.toml`` (so chapters executed from ``chapters/`` share the book's cache),
else the working directory itself. It is looked up on the first call and remembered for
the life of the process. The embedding cache is one place per project or per user, never
the working directory: ``$CHUNKLAB_CACHE`` when set, else ``<project root>/.chunklab/cache``
inside a project (a folder with a root marker), else the per-user cache directory
(``$XDG_CACHE_HOME/chunklab``, ``~/.cache/chunklab``, or the platform's equivalent), so
indexing the same files from another folder embeds nothing again. Nothing here writes
environment variables.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

__all__ = [
    "ROOT_MARKERS",
    "cache_dir",
    "chunklab_dir",
    "find_project_root",
    "in_project",
    "project_root",
    "user_cache_dir",
]

#: files whose presence marks a folder as the project root
ROOT_MARKERS = ("_toc.yml", "pyproject.toml")


def find_project_root(start: str | Path | None = None) -> Path:
    """The nearest ancestor of ``start`` (default: the working directory) holding a root marker.

    Falls back to ``start`` itself when no ancestor holds one. Not cached: use
    :func:`project_root` for the process-wide answer.
    """
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).is_file() for marker in ROOT_MARKERS):
            return folder
    return here


@functools.cache
def project_root() -> Path:
    """The project root of this process, found once from the working directory at first use.

    Tests that change directory call ``project_root.cache_clear()`` to look again.
    """
    return find_project_root()


def chunklab_dir() -> Path:
    """``<project root>/.chunklab``: where the default store and cache live."""
    return project_root() / ".chunklab"


def in_project(root: Path | None = None) -> bool:
    """Whether the project root (default: this process's) really holds a root marker."""
    folder = root if root is not None else project_root()
    return any((folder / marker).is_file() for marker in ROOT_MARKERS)


def in_notebook_kernel() -> bool:
    """Whether this process writes to a notebook kernel's stderr (a book page, an exercise).

    What a kernel writes there shows on the page, so notices and loading bars that suit a
    command line (a machine path, a changing time, an ipywidgets bar) are kept off it.
    """
    return type(sys.stderr).__module__.startswith("ipykernel")  # ipykernel.iostream.OutStream


def user_cache_dir() -> Path:
    """The per-user cache directory: ``$XDG_CACHE_HOME/chunklab``, else the platform's user cache dir."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "chunklab"
    try:
        import platformdirs
    except ImportError:  # platformdirs is optional: the XDG default
        return Path.home() / ".cache" / "chunklab"
    return Path(platformdirs.user_cache_dir("chunklab", appauthor=False))


def cache_dir(explicit: str | Path | None = None) -> Path:
    """The cache directory: ``explicit``, else ``$CHUNKLAB_CACHE``, else the project's or the user's.

    The project's is ``<project root>/.chunklab/cache`` when the working directory is inside a
    project (an ancestor holds ``_toc.yml`` or ``pyproject.toml``); elsewhere it is
    :func:`user_cache_dir`, so a documents folder never gets a ``.chunklab`` of its own.

    ``explicit`` is the ``cache_dir=`` argument of an API that takes one: a caller that names
    a folder (a test wanting a cold cache, a benchmark) gets it even when the environment
    redirects the default, which is how an instructor or CI moves every other cache at once.
    """
    if explicit is not None:
        if isinstance(explicit, bool) or not isinstance(explicit, (str, os.PathLike)):
            raise ValueError(f"cache_dir must be a path, got {explicit!r}")
        return Path(explicit).expanduser()
    env = os.environ.get("CHUNKLAB_CACHE")
    if env:
        return Path(env).expanduser()
    return chunklab_dir() / "cache" if in_project() else user_cache_dir()
