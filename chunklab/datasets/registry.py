"""Named corpora resolved in one place: ``corpus("installed")``, ``corpus("stdlib")``, ``corpus("code-50k")``.

:func:`corpus` looks a name up among the corpora registered here (the interpreter's own
files, the document corpora ``pdf-docs`` and ``real-docs``) and then among the committed manifests: every
``chunklab/data/corpora/<name>.txt`` is a wheel corpus (:mod:`chunklab.datasets.corpora.wheels`, read
by :func:`chunklab.datasets.corpora.code50k.wheel_corpus`) and every ``<name>.pins`` an archive corpus
(:mod:`chunklab.datasets.corpora.archives`, read by :func:`chunklab.datasets.corpora.code_poly.poly_corpus`).
A fetched corpus's entry also carries its pins and its fetch, so ``chunklab corpus`` lists,
describes and fetches every one of them the same way. A new kind of corpus registers its
loader with :func:`register_corpus`; an unknown name is a ``ValueError`` listing the known ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from chunklab.datasets.corpora.code import CodeCorpus, code_corpus

if TYPE_CHECKING:
    from chunklab.datasets.corpora.pdfdocs import PdfDocsFetch
    from chunklab.datasets.corpora.pinned import Pin

__all__ = ["CorpusEntry", "FetchSummary", "corpora", "corpus", "register_corpus"]


class FetchSummary(Protocol):
    """What a corpus's ``fetch`` returns: a report of the run that sums itself up for the terminal."""

    def summary(self) -> str:
        """The lines ``chunklab corpus fetch`` prints."""
        ...


@dataclass(frozen=True)
class CorpusEntry:
    """One named corpus: what it is, and the function that lists its files (keyword options only).

    A corpus fetched on demand also has ``pins`` (its manifest, as
    :class:`~chunklab.datasets.corpora.pinned.Pin` records), ``fetch(cache_dir=..., progress=...)``
    (returns a report with a ``summary()``) and ``noun``, what one of its pins is called.
    """

    name: str
    description: str
    load: Callable[..., CodeCorpus]
    noun: str = "file"
    pins: Callable[[], list[Pin]] | None = None
    fetch: Callable[..., FetchSummary] | None = None

    @property
    def pinned(self) -> bool:
        """Whether the corpus is fetched on demand from a pinned manifest."""
        return self.pins is not None


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
    """Every known corpus by name, sorted: the registered ones and each committed manifest."""
    from chunklab.datasets.corpora.archives import pinned_archive_corpora
    from chunklab.datasets.corpora.wheels import corpus_names

    found = dict(_REGISTRY)
    for name in corpus_names():
        found.setdefault(name, _wheel_entry(name))
    for name in pinned_archive_corpora():
        found.setdefault(name, _archive_entry(name))
    return dict(sorted(found.items()))


def register_corpus(
    name: str,
    description: str,
    load: Callable[..., CodeCorpus],
    *,
    noun: str = "file",
    pins: Callable[[], list[Pin]] | None = None,
    fetch: Callable[..., FetchSummary] | None = None,
) -> None:
    """Make ``corpus(name, **options)`` return ``load(**options)``; a name is registered once.

    A corpus fetched on demand passes its ``pins``, its ``fetch`` and its ``noun`` too
    (see :class:`CorpusEntry`).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"corpus {name!r} is already registered ({_REGISTRY[name].description})")
    _REGISTRY[name] = CorpusEntry(name, description, load, noun, pins, fetch)


def _wheel_entry(name: str) -> CorpusEntry:
    from chunklab.datasets.corpora import code50k, wheels

    def pins() -> list[Pin]:
        return [p.pin for p in wheels.load_pins(name)]

    load, fetch = partial(code50k.wheel_corpus, name), partial(wheels.fetch_corpus, name)
    return CorpusEntry(name, f"pinned wheels ({name}.txt)", load, "wheel", pins, fetch)


def _archive_entry(name: str) -> CorpusEntry:
    from chunklab.datasets.corpora import archives, code_poly

    def pins() -> list[Pin]:
        return [p.pin for p in archives.load_archive_pins(name)]

    load, fetch = partial(code_poly.poly_corpus, name), partial(archives.fetch_archives, name)
    description = f"source files read out of pinned npm, PyPI-sdist and Debian archives ({name}.pins)"
    return CorpusEntry(name, description, load, "archive", pins, fetch)


register_corpus(
    "installed", "every .py file of this interpreter: standard library and site-packages", code_corpus
)
register_corpus(
    "stdlib",
    "the standard library's .py files of this interpreter",
    partial(code_corpus, include_site_packages=False),
)


def _document_corpus(name: str, **options: Any) -> CodeCorpus:
    from chunklab.datasets.corpora.pdfdocs import pdf_docs_corpus

    return pdf_docs_corpus(name=name, **options)


def _document_pins(name: str) -> list[Pin]:
    from chunklab.datasets.corpora.pdfdocs import load_manifest, manifest_path

    return [f.pin for f in load_manifest(manifest_path(name)).files]


def _document_fetch(name: str, **options: Any) -> PdfDocsFetch:
    from chunklab.datasets.corpora.pdfdocs import fetch_pdf_docs

    return fetch_pdf_docs(name=name, **options)


for _name, _description in (
    ("pdf-docs", "real PDF and Word files from Debian and PyPI archives (pdf-docs.toml)"),
    (
        "real-docs",
        "TeX Live and Debian PDFs, PyDocX and mammoth Word fixtures, nbsphinx notebooks (real-docs.toml)",
    ),
):
    register_corpus(
        _name,
        _description,
        partial(_document_corpus, _name),
        pins=partial(_document_pins, _name),
        fetch=partial(_document_fetch, _name),
    )
