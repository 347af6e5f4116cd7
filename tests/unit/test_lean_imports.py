"""What a one-shot ``chunklab search`` imports (issue 41, item 5): nothing another command needs.

Checked in fresh interpreters through ``sys.modules``, never by timing: the first-query times
themselves are measured in ``benchmarks/first_query.py``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: what no query needs: other commands' stacks, dataframes, plots, Ray, the chunkers
NOT_FOR_A_QUERY = (
    "pandas",
    "pyarrow",
    "matplotlib",
    "ray",
    "chunklab.ingest",
    "chunklab.evaluate",
    "chunklab.chunkers",
    "chunklab.commands.index",
    "chunklab.commands.evaluate",
    "chunklab.commands.chunk",
)


def imported_in_fresh_process(code: str) -> set[str]:
    """The modules a new interpreter holds after running ``code`` (the package from this tree)."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_chunklab_loads_no_chunker_until_one_is_asked_for():
    mods = imported_in_fresh_process("import chunklab")
    assert not {m for m in mods if m.startswith("chunklab.chunkers")}
    mods = imported_in_fresh_process(
        "from chunklab import chunk_fixed, Chunk\nassert chunk_fixed('ab cd', 3)"
    )
    assert "chunklab.chunkers.fixed" in mods and "chunklab.chunk" in mods


def test_the_search_command_registers_and_imports_only_itself():
    code = (
        "import contextlib, io\nfrom chunklab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['search', '--help'])\n    except SystemExit:\n        pass\n"
    )
    mods = imported_in_fresh_process(code)
    assert "chunklab.commands.search" in mods
    assert not [m for m in NOT_FOR_A_QUERY if m in mods]
    assert "chromadb" not in mods  # the store is opened (and Chroma imported) when the search runs


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(sub.choices)


def test_every_command_is_still_listed_by_the_top_level_parser():
    from chunklab.cli import COMMANDS, build_parser

    assert _subcommands(build_parser()) == list(COMMANDS)
    assert _subcommands(build_parser("search")) == ["search"]


def test_lean_imports_skip_the_optional_extras_and_give_them_back():
    pytest.importorskip("jsonschema")
    code = (
        "import sys\nfrom chunklab.commands._lean import SKIPPED, lean_imports\n"
        "with lean_imports():\n    import jsonschema\n"
        "assert not [n for n in SKIPPED if sys.modules.get(n) is not None], 'an extra was imported'\n"
        "assert not [n for n in SKIPPED if n in sys.modules], 'a block was left behind'\n"
    )
    mods = imported_in_fresh_process(code)
    assert "jsonschema" in mods and "rfc3987_syntax" not in mods and "lark" not in mods
