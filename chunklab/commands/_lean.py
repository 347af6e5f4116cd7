"""What a one-shot query process does without: optional extras that ``import chromadb`` pulls in.

Importing ``chromadb`` imports, among much else, ``jsonschema`` (whose ``_format`` module imports
every optional format checker that is installed) and ``httpx`` (which imports its command-line
client when ``rich``, ``click`` and ``pygments`` are installed). Three of those extras are slow to
import and never used by a query, and each is optional by design: the importer catches the
``ImportError`` and goes on without it.

* ``rfc3987_syntax`` compiles an Earley grammar for IRIs on import: over half of
  ``import chromadb``'s CPU time in this environment, where Jupyter's
  ``jsonschema[format-nongpl]`` installs it;
* ``isoduration`` (``jsonschema``'s ``duration`` check) imports ``arrow``;
* ``httpx._main`` is ``httpx``'s own command-line client.

:func:`lean_imports` runs a block of imports with those reported missing; afterwards ``iri``,
``iri-reference`` and ``duration`` go unchecked by ``jsonschema`` and ``httpx.main`` says its
extras are missing, for the rest of the process. A module already imported is left as it is,
and each name can be imported normally once the block ends. Only the CLI's one-shot query path
uses it (``chunklab search``): the library never changes what a user's process imports.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["SKIPPED", "lean_imports"]

#: optional modules a query never uses, each slow to import, and what it would have given
SKIPPED = {
    "rfc3987_syntax": "jsonschema's iri and iri-reference format checks (an Earley grammar built on import)",
    "isoduration": "jsonschema's duration format check (imports arrow)",
    "httpx._main": "httpx's command-line client (imports rich, click and pygments)",
}


@contextlib.contextmanager
def lean_imports() -> Iterator[None]:
    """Inside: the modules of :data:`SKIPPED` not yet imported fail to import (``ImportError``)."""
    blocked = [name for name in SKIPPED if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # the import system raises ImportError
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
