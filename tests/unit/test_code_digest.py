"""The tree-sitter code chunker's chunks on a fixed sample of the standard library stay identical.

Pinned before its walk was made faster (issue 41): any change in a span, a text or any metadata
(kind, names, ``defines``, headings, docstrings, lines) of any chunk changes the digest. The
sample is the one ``test_refactor_digest`` uses, chunked by ``chunk_code(engine="tree-sitter")``
at a small budget (600), so most definitions are split and the walk's split, merge, naming and
description paths all run. It depends on
the interpreter's standard library, so it is pinned per Python version and skips on another.
"""

from __future__ import annotations

import hashlib
import json
import sys
import sysconfig
from pathlib import Path

import pytest

from chunklab.chunkers.structural.code import chunk_code
from tests.unit.test_refactor_digest import stdlib_sample

#: (major, minor, micro) -> (files sampled, chunks, digest)
PINNED = {
    (3, 11, 7): (87, 3138, "55545dcdb54d0c2886e81b5989b1925ef5ef13b63565808a40d575221dd271ad"),
}


def code_digest() -> tuple[int, int, str]:
    """Files, chunks and the sha256 of every chunk's offsets, text and metadata over the sample."""
    root = Path(sysconfig.get_paths()["stdlib"])
    rows: list = []
    files = stdlib_sample()
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        name = path.relative_to(root).as_posix()
        for c in chunk_code(text, "python", 600, engine="tree-sitter", doc_id=name):
            rows.append([name, c.start, c.end, c.text, c.metadata])
    blob = json.dumps(rows, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return len(files), len(rows), hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def test_tree_sitter_code_chunks_on_stdlib_sample_are_unchanged():
    key = tuple(sys.version_info[:3])
    if key not in PINNED:
        pytest.skip(f"digest pinned for Python {sorted(PINNED)}, not {key}")
    assert code_digest() == PINNED[key]


if __name__ == "__main__":
    print(code_digest())
