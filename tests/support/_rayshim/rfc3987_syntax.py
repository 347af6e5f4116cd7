"""Stand-in put first on PYTHONPATH for Ray's helper processes in the engine tests and benchmarks.

The real ``rfc3987_syntax`` builds ~40 Earley parsers when imported (several CPU seconds);
``jsonschema`` imports it only to check the ``iri`` string format, which Ray never uses. Every
Ray agent imports ``jsonschema``, and the raylet aborts when its agents take more than ~15 s
to start, which they do on a shared 2-core machine. Raising ImportError here makes
``jsonschema`` skip that format checker (it guards the import), nothing else changes.
"""

raise ImportError("rfc3987_syntax is left out of Ray's helper processes (tests/support/_rayshim)")
