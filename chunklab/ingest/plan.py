"""The plan stage: what to ingest (work items with their doc ids), with which strategy, recorded how.

Run once, in the driver, before anything is read: paths, directories, glob patterns and named
corpora become :class:`WorkItem` s whose ``doc_id`` is computed here (relative to the corpus
root), so every worker, engine and re-run gives a document the same id. The strategy travels
to workers as a catalog :class:`~chunklab.chunkers.catalog.StrategySpec`, rebuilt once per
process; :func:`collection_config` is the one record a sink keeps of how it was filled.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunklab.chunkers.catalog import Strategy, StrategySpec
from chunklab.retrieval.filters import json_default

if TYPE_CHECKING:
    from chunklab.datasets.corpora.code import CorpusFile
    from chunklab.retrieval.chroma.records import CollectionConfig

__all__ = ["Sources", "WorkItem", "collection_config", "named_corpus", "resolve_sources"]

#: what an ingest takes: a path, a directory, a glob pattern or a corpus name, or several of them
Sources = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


@dataclass(frozen=True)
class WorkItem:
    """One document to ingest: a file under ``root``, or a member of a named corpus (``member``)."""

    source: str
    root: str | None = None
    member: CorpusFile | None = None  # a corpus member: loaded by its format (archive members are not files)
    doc_id: str = ""


def resolve_sources(sources: Sources, root: str | None = None) -> tuple[list[WorkItem], str | None]:
    """Work items for paths, directories, glob patterns and named corpora, and the corpus root.

    Files are listed by :func:`chunklab.documents.iter_paths` and get ids relative to ``root``
    (default: :func:`chunklab.documents.corpus_root` of the paths); a file outside ``root``
    is a ValueError now, not a failure in a worker. A corpus member's id is its ``doc_id``
    (``"root:relpath"``, ``"project:relpath"`` in ``code-poly``), as the question sets name it.
    """
    from chunklab.documents import corpus_root, doc_id_for, iter_paths

    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    paths: list[str] = []
    members: list[WorkItem] = []
    for src in sources:
        if not isinstance(src, (str, os.PathLike)):
            raise ValueError(
                f"sources must be paths, glob patterns or corpus names, got {type(src).__name__}"
            )
        name = os.fspath(src)
        if os.path.lexists(name):
            paths.append(name)
        elif glob.has_magic(name):
            found = sorted(glob.glob(name, recursive=True))
            if not found:
                raise FileNotFoundError(f"no file matches the pattern {name!r}")
            paths.extend(found)
        else:
            members.extend(WorkItem(f.path, None, f, f.doc_id) for f in named_corpus(name))
    if not paths:
        return members, None
    base = os.path.abspath(root) if root is not None else corpus_root(paths)
    files = [os.path.abspath(p) for p in iter_paths(paths)]
    return [WorkItem(p, base, None, doc_id_for(p, base)) for p in files] + members, base


def named_corpus(name: str) -> Sequence[CorpusFile]:
    """The named corpus of code files ``name`` (``installed``, a wheel corpus such as ``code-50k``).

    The one place the pipeline resolves corpus names; a name that is none of them is a
    FileNotFoundError listing what exists.
    """
    from chunklab.datasets.registry import corpora, corpus

    if name in corpora():
        return corpus(name)
    raise FileNotFoundError(
        f"{name!r} is neither a file, a directory, a glob pattern matching files, nor a corpus name "
        f"(corpora: {', '.join(corpora())})"
    )


def collection_config(
    strategy: StrategySpec | Strategy,
    root: str | None = None,
    context: bool = False,
    embed_context: bool = True,
) -> CollectionConfig:
    """The one record a collection keeps of how it was filled; another run must match it (or ``--clear``).

    ``{strategy, params, root, context}`` (plus ``embed_context: false`` when the bare text is
    embedded): the chunker (its catalog name and parameters), where doc ids are relative to,
    and what is embedded. Every sink of every engine and the benchmark's stores record it, so
    a store built by one engine is updated by any other.
    """
    spec = StrategySpec.of(strategy)
    config: CollectionConfig = {
        "strategy": spec.family,
        "params": dict(spec.params),
        "root": root,
        "context": bool(context),
    }
    if not embed_context:
        config["embed_context"] = False
    return json.loads(json.dumps(config, default=json_default))
