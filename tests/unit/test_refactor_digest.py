"""Recursive and Python structural chunks on a fixed sample of the standard library stay identical.

The digests below were computed before the package was consolidated (issue 10); a change in
any span, kind or name of any chunk changes them. They depend on the interpreter's standard
library, so they are pinned per Python version and the test skips on another one.
"""

from __future__ import annotations

import hashlib
import json
import sys
import sysconfig
from pathlib import Path

import pytest

from chunklab import chunk_python, chunk_recursive

#: (major, minor, micro) -> (files sampled, recursive digest, structural digest)
PINNED = {
    (3, 11, 7): (
        87,
        "e5657de23883cd8322c823304025abde48484281a4f48684875965954d0cd7c7",
        "b03784200d073829029923f28e5b215314e7690df1a04c516a47552ea34b6662",
    ),
}


def stdlib_sample(every: int = 10, limit: int = 100) -> list[Path]:
    """Every ``every``-th ``.py`` file of the standard library, in sorted order, up to ``limit``."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and "test" not in p.parts)
    return files[::every][:limit]


def _digest(rows: list) -> str:
    blob = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def chunk_digests() -> tuple[int, str, str]:
    """Digests of (file, start, end, kind, name) over the sample for both strategies."""
    root = Path(sysconfig.get_paths()["stdlib"])
    rec_rows: list = []
    py_rows: list = []
    files = stdlib_sample()
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        name = path.relative_to(root).as_posix()
        for c in chunk_recursive(text, 800, 80, doc_id=name):
            rec_rows.append([name, c.start, c.end, c.metadata.get("cut")])
        for c in chunk_python(text, max_chars=1500, doc_id=name):
            py_rows.append([name, c.start, c.end, c.metadata.get("kind"), c.metadata.get("name")])
    return len(files), _digest(rec_rows), _digest(py_rows)


def test_recursive_and_python_chunks_on_stdlib_sample_are_unchanged():
    key = tuple(sys.version_info[:3])
    if key not in PINNED:
        pytest.skip(f"digests pinned for Python {sorted(PINNED)}, not {key}")
    assert chunk_digests() == PINNED[key]


if __name__ == "__main__":
    print(chunk_digests())
