"""The compiled floor of the recursive chunker: its walk in C (``benchmarks/compiled/rspans.c``).

A prototype, not part of the package: ``build()`` compiles the C file with the machine's C
compiler against the running interpreter's headers into ``benchmarks/compiled/build/`` and imports
it; ``benchmarks/throughput.py --compiled`` then times ``chunk_recursive`` with its walk in C
(the chunks are built by the same Python code, so the difference is the walk alone) and records
the compile time and whether the C walk gave the same spans on every file.

    python benchmarks/throughput.py --compiled
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

SOURCE = Path(__file__).parent / "compiled" / "rspans.c"
BUILD = Path(__file__).parent / "compiled" / "build"


def build() -> tuple[ModuleType | None, dict[str, Any]]:
    """The compiled prototype (None without a C compiler or Python's headers) and how it was built."""
    cc = shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    facts: dict[str, Any] = {"source": str(SOURCE.relative_to(SOURCE.parents[2])), "compiler": cc}
    if cc is None or not (Path(include) / "Python.h").exists():
        facts["built"] = False
        facts["why_not"] = "no C compiler" if cc is None else f"no Python.h in {include}"
        return None, facts
    BUILD.mkdir(parents=True, exist_ok=True)
    target = BUILD / ("rspans" + sysconfig.get_config_var("EXT_SUFFIX"))
    command = [cc, "-O2", "-shared", "-fPIC", f"-I{include}", "-o", str(target), str(SOURCE)]
    t0 = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    facts["compile_seconds"] = round(time.perf_counter() - t0, 2)
    shown = [Path(cc).name, *command[1:4], "-I<Python.h>", "-o", target.name, SOURCE.name]
    facts["command"] = " ".join(shown)
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()
    facts["compiler_version"] = version[0] if version else ""
    spec = importlib.util.spec_from_file_location("rspans", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    facts["built"] = True
    return module, facts


def c_walk(module: ModuleType) -> Callable[..., list[tuple[int, int, int, int]]]:
    """``_char_spans`` with the same signature, walked by the compiled prototype."""

    def spans(text: str, size: int, overlap: int, levels) -> list[tuple[int, int, int, int]]:
        return module.spans(text, size, overlap, tuple(tuple(g) for g in levels))

    return spans


def chunk_recursive_in_c(module: ModuleType, size: int, overlap: int) -> Callable[[str], list]:
    """``chunk_recursive(text, size, overlap)`` walking in C (its chunks still built in Python)."""
    from chunklab.chunkers import recursive

    python_walk, walk = recursive._char_spans, c_walk(module)

    def chunk(text: str) -> list:
        recursive._char_spans = walk  # type: ignore[assignment]
        try:
            return recursive.chunk_recursive(text, size, overlap)
        finally:
            recursive._char_spans = python_walk  # type: ignore[assignment]

    return chunk
