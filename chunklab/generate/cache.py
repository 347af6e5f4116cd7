"""The on-disk cache of generations: one small JSON file per (model, decoding, prompt), content-addressed.

A generation is keyed by the SHA-256 of the model's id, its weights' digest and size, the
decoding parameters and the prompt (:func:`generation_key`), so a second run of a chapter, a
benchmark or ``chunklab chunk`` generates nothing and never loads the model. Each entry is
written to a temporary file in its final folder and renamed into place (``os.replace``), so a
reader never sees half an entry and concurrent writers of the same prompt agree. The folder is
``<cache root>/generations``, the cache root being the embedding cache's
(:func:`chunklab.paths.cache_dir`). An unreadable entry is a miss (and is rewritten).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from chunklab.paths import cache_dir as resolve_cache_dir

__all__ = ["GenerationCache", "generation_key"]

#: the sub-folder of the cache root that holds generations
FOLDER = "generations"


def generation_key(model_id: str, weights: str, params: Mapping[str, object], prompt: str) -> str:
    """The hex SHA-256 naming one generation: model id, weights (digest and size), decoding, prompt."""
    h = hashlib.sha256()
    for part in (model_id, weights, json.dumps(dict(params), sort_keys=True, default=str), prompt):
        h.update(part.encode("utf-8", errors="surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


class GenerationCache:
    """Generated texts on disk, one JSON file per key under ``directory/generations/<2 hex>/``.

    ``hits`` and ``misses`` count the lookups of this object (a miss is a prompt the model had to run).
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        self.root = resolve_cache_dir(directory) / FOLDER
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"GenerationCache({str(self.root)!r}, hits={self.hits}, misses={self.misses})"

    def path(self, key: str) -> Path:
        """The file that holds (or will hold) the generation ``key``."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        """The cached output for ``key``, or None (a missing or unreadable entry is a miss)."""
        try:
            record = json.loads(self.path(key).read_text(encoding="utf-8"))
            output = record["output"]
        except (OSError, ValueError, KeyError, TypeError):
            self.misses += 1
            return None
        if not isinstance(output, str):
            self.misses += 1
            return None
        self.hits += 1
        return output

    def put(self, key: str, output: str, **record: object) -> None:
        """Store ``output`` for ``key`` atomically, with ``record`` (prompt, model, tokens) beside it."""
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}-", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({**record, "output": output}, fh, ensure_ascii=False)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.is_dir() else 0
