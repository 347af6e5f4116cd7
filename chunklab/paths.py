"""Where chunklab keeps its files: the project root, found once, and the cache directory.

The project root is the nearest ancestor of the working directory that holds ``_toc.yml``
or ``pyproject.toml`` (so chapters executed from ``chapters/`` share the book's cache),
else the working directory itself. It is looked up on the first call and remembered for
the life of the process. Nothing here writes environment variables; the only one read is
``CHUNKLAB_CACHE``, which :func:`cache_dir` honours.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

__all__ = ["ROOT_MARKERS", "cache_dir", "chunklab_dir", "find_project_root", "project_root"]

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


def cache_dir(explicit: str | Path | None = None) -> Path:
    """The cache directory: ``explicit``, else ``$CHUNKLAB_CACHE``, else ``<project root>/.chunklab/cache``.

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
    return chunklab_dir() / "cache"
