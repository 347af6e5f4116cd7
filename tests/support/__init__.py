"""Test scaffolding shared by the test layers: generators of files and archives, a stand-in encoder, servers.

Imported as ``tests.support.<module>`` (pytest puts the repository root on ``sys.path``: ``pythonpath``
in pyproject.toml); fixtures built on these live in the ``conftest.py`` files.
"""

from pathlib import Path

#: the folder put on Ray's helper processes' PYTHONPATH (an rfc3987 stub, the fault-injection hook)
RAY_SHIM = Path(__file__).resolve().parent / "_rayshim"
