"""Output files of a command, written atomically: the previous file stays until the run succeeded."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TextIO

__all__ = ["atomic_output"]


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[TextIO]:
    """A text file written under a temporary name beside ``path``, renamed over it only on success.

    A run that fails or is interrupted leaves the previous ``path`` as it was.
    """
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"--out {path} is a directory")
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # what open() would have made, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
