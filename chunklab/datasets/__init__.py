"""Corpora and question sets: the installed Python code and the kit's own documents.

Submodules: ``chunklab.datasets.code`` (installed ``.py`` files, docstring questions) and
``chunklab.datasets.docs`` (the kit's own documents with gold quotes). Names are loaded
lazily so importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "code_corpus": "chunklab.datasets.code",
    "CodeCorpus": "chunklab.datasets.code",
    "code_questions": "chunklab.datasets.code_questions",
    "docs": "chunklab.datasets.docs",
    "load_docs": "chunklab.datasets.docs",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'chunklab.datasets' has no attribute {name!r}")
