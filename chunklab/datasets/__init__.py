"""Corpora and question sets: named corpora through one registry, question sets through one model.

``corpus(name)`` resolves a named corpus (``installed``, ``stdlib``, ``code-50k``;
:mod:`chunklab.datasets.registry`, whose ``corpora()`` lists them); ``code_corpus()`` lists the
installed ``.py`` files (:mod:`chunklab.datasets.corpora.code`); ``load_docs()`` loads the kit's own
documents with gold quotes (:mod:`chunklab.datasets.corpora.docs`); the code questions are
:func:`chunklab.datasets.questions.code.code_questions`. The corpora fetched on demand
(``code-50k``, ``code-poly``, ``pdf-docs``) share one pinned, verified fetch
(:mod:`chunklab.datasets.corpora.pinned`). Every question set is a
:class:`~chunklab.datasets.model.QuestionSet` and satisfies the
:class:`~chunklab.datasets.model.Dataset` protocol. Names are loaded lazily so importing the
package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CodeCorpus": "chunklab.datasets.corpora.code",
    "code_corpus": "chunklab.datasets.corpora.code",
    "Dataset": "chunklab.datasets.model",
    "GoldQuestion": "chunklab.datasets.model",
    "QuestionSet": "chunklab.datasets.model",
    "corpus": "chunklab.datasets.registry",
    "register_corpus": "chunklab.datasets.registry",
    "load_docs": "chunklab.datasets.corpora.docs",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'chunklab.datasets' has no attribute {name!r}")
