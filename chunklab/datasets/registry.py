"""Named corpora resolved in one place: ``corpus("installed")``, ``corpus("stdlib")``, ``corpus("code-50k")``.

:func:`corpus` looks a name up among the corpora registered here (the interpreter's own
files) and then among the committed pin lists of :mod:`chunklab.datasets.wheels` (every
``chunklab/data/corpora/<name>.txt`` is a wheel corpus, read by
:func:`chunklab.datasets.code50k.wheel_corpus`). A new kind of corpus registers its loader
with :func:`register_corpus`; an unknown name is a ``ValueError`` listing the known ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from chunklab.datasets.code import CodeCorpus, code_corpus

__all__ = ["CorpusEntry", "corpora", "corpus", "register_corpus"]


@dataclass(frozen=True)
class CorpusEntry:
    """One named corpus: what it is, and the function that lists its files (keyword options only)."""

    name: str
    description: str
    load: Callable[..., CodeCorpus]


_REGISTRY: dict[str, CorpusEntry] = {}


def corpus(name: str, **options: Any) -> CodeCorpus:
    """The files of the corpus called ``name``, in its fixed order.

    ``options`` go to its loader: ``dedupe`` for every corpus, ``cache_dir`` for the wheel
    corpora. A pinned wheel corpus that is not fetched yet raises ``FileNotFoundError`` naming
    the fetch command.
    """
    if not isinstance(name, str):
        raise ValueError(f"corpus name must be a string, got {type(name).__name__}")
    entry = corpora().get(name)
    if entry is None:
        raise ValueError(f"unknown corpus {name!r}; known corpora: {', '.join(corpora())}")
    return entry.load(**options)


def corpora() -> dict[str, CorpusEntry]:
    """Every known corpus by name, sorted: the registered ones and each committed wheel pin list."""
    from chunklab.datasets.wheels import corpus_names

    found = dict(_REGISTRY)
    for name in corpus_names():
        found.setdefault(name, CorpusEntry(name, f"pinned wheels ({name}.txt)", _wheel_loader(name)))
    return dict(sorted(found.items()))


def register_corpus(name: str, description: str, load: Callable[..., CodeCorpus]) -> None:
    """Make ``corpus(name, **options)`` return ``load(**options)``; a name is registered once."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"corpus {name!r} is already registered ({_REGISTRY[name].description})")
    _REGISTRY[name] = CorpusEntry(name, description, load)


def _wheel_loader(name: str) -> Callable[..., CodeCorpus]:
    def load(**options: Any) -> CodeCorpus:
        from chunklab.datasets.code50k import wheel_corpus

        return wheel_corpus(name, **options)

    return load


register_corpus(
    "installed", "every .py file of this interpreter: standard library and site-packages", code_corpus
)
register_corpus(
    "stdlib",
    "the standard library's .py files of this interpreter",
    partial(code_corpus, include_site_packages=False),
)


def _pdf_docs(**options: Any) -> CodeCorpus:
    from chunklab.datasets.pdfdocs import pdf_docs_corpus

    return pdf_docs_corpus(**options)


register_corpus(
    "pdf-docs", "real PDF and Word files from Debian and PyPI archives (pdf-docs.toml)", _pdf_docs
)


def _poly_loader(**options: Any) -> CodeCorpus:
    from chunklab.datasets.code_poly import poly_corpus

    return poly_corpus("code-poly", **options)


register_corpus(
    "code-poly",
    "source files of ten languages read out of pinned npm, PyPI-sdist and Debian archives (code-poly.pins)",
    _poly_loader,
)
