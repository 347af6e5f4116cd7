"""How a corpus is ingested: ``local`` (worker processes) and ``ray`` (Ray Data), same ids and vectors.

Both engines take the same arguments (see :func:`chunklab.ingest.local.ingest`) and return
an :class:`IngestReport`. ``get_engine("ray")`` works without Ray installed; running it then
raises an ImportError that says how to install the ``distributed`` extra. Importing this
package never imports Ray.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from chunklab.ingest._common import IngestReport

__all__ = ["ENGINES", "IngestReport", "get_engine", "ingest"]

#: engine name -> module under chunklab.ingest
ENGINES = {"local": "local", "ray": "ray"}


def get_engine(name: str) -> Callable[..., IngestReport]:
    """The ``ingest`` function of the engine ``name`` (``"local"`` or ``"ray"``)."""
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {name!r}")
    return importlib.import_module(f"chunklab.ingest.{ENGINES[name]}").ingest


def ingest(sources: Any, *, engine: str = "local", **options: Any) -> IngestReport:
    """Ingest ``sources`` with ``engine``; ``options`` are the engine's keyword arguments."""
    return get_engine(engine)(sources, **options)
