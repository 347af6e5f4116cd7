"""The one ingest pipeline: plan → load → chunk → context → embed → sink, on any engine.

``chunklab index`` (in this process), ``--engine local`` (worker processes) and ``--engine
ray`` (Ray Data) run the same stages (:mod:`chunklab.ingest.stages`) through one driver loop
(:func:`chunklab.ingest.pipeline.run`) into the same sinks (:mod:`chunklab.ingest.sinks`),
with the same :class:`IngestOptions`, and return the same :class:`IngestReport`. A store or
Parquet folder written by one engine is updated by any other, embedding only what changed.
``get_engine("ray")`` works without Ray installed; running it then raises an ImportError that
says how to install the ``distributed`` extra. Importing this package never imports Ray.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from chunklab.ingest.pipeline import IngestOptions
from chunklab.ingest.plan import Sources
from chunklab.ingest.report import SKIP_REASONS, IngestReport

__all__ = ["ENGINES", "SKIP_REASONS", "IngestOptions", "IngestReport", "get_engine", "ingest"]

#: engine name -> module under chunklab.ingest
ENGINES = {"local": "engines.local", "ray": "engines.ray"}


def get_engine(name: str) -> Callable[..., IngestReport]:
    """The ``ingest`` function of the engine ``name`` (``"local"`` or ``"ray"``)."""
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {name!r}")
    return importlib.import_module(f"chunklab.ingest.{ENGINES[name]}").ingest


def ingest(sources: Sources, *, engine: str = "local", **options: Any) -> IngestReport:
    """Ingest ``sources`` with ``engine``; ``options``: :class:`IngestOptions` fields and the engine's own."""
    return get_engine(engine)(sources, **options)
