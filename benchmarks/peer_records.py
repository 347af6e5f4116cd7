"""The loop both peer workers share (standard library only: it runs in the peers' environments).

``peer_unstructured.py`` and ``peer_docling.py`` each hand :func:`print_records` their
``chunks(path)``; one warm-up file first (model loading and lazy imports stay out of the timing),
then one JSON line per path: its chunk texts, the seconds they took, or the error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable


def print_records(paths: list[str], chunks: Callable[[str], list[str]]) -> None:
    """Chunk every path after one untimed warm-up; one JSON record per path on stdout."""
    if paths:
        try:
            chunks(paths[0])
        except Exception:
            pass
    for path in paths:
        t = time.perf_counter()
        try:
            texts, error = chunks(path), None
        except Exception as exc:
            texts, error = [], f"{type(exc).__name__}: {str(exc)[:300]}"
        secs = time.perf_counter() - t
        print(json.dumps({"path": path, "texts": texts, "seconds": secs, "error": error}), flush=True)
