"""Execute the book's pages one at a time, as the build does, and report each code cell's cost.

Usage::

    python scripts/profile_book.py                       # every executable page, in the book's order
    python scripts/profile_book.py chapters/03-structural.md --out /tmp/prof.json
    python scripts/profile_book.py --cold                 # a fresh, empty embedding cache

Each page runs in its own kernel in its own folder (as Jupyter Book runs it, one kernel per
page). For every cell it records wall seconds and the CPU seconds of the kernel process and its
children (user + system, from ``psutil``): on a loaded machine the CPU seconds are the number to
compare, the wall seconds only say how long a reader waited. ``--cold`` points
``CHUNKLAB_CACHE`` at a new temporary folder, so the first page that embeds a text pays for it
and later pages read it from that one on-disk cache, as in a cold build.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def book_pages() -> list[Path]:
    """The pages of ``_toc.yml`` that hold code cells, in the book's order."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries: list[dict[str, Any]]) -> None:
        for entry in entries:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections", []))
            walk(entry.get("chapters", []))

    walk(toc.get("parts", []))
    pages = [ROOT / f"{name}.md" for name in files]
    return [page for page in pages if "```{code-cell}" in page.read_text(encoding="utf-8")]


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and its children, living or reaped."""
    import psutil

    try:
        proc = psutil.Process(pid)
        total = sum(proc.cpu_times()[:4])  # user, system, children_user, children_system
        for child in proc.children(recursive=True):
            try:
                times = child.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                pass
        return float(total)
    except psutil.Error:
        return float("nan")


def profile_page(page: Path, timeout: int = 3600) -> dict[str, Any]:
    """Execute ``page`` in a fresh kernel; its start-up and per-cell wall and CPU seconds."""
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(page)
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(page.parent)}}
    )
    cells: list[dict[str, Any]] = []
    state: dict[str, float] = {}

    def pid() -> int:
        return int(client.km.provisioner.process.pid)  # type: ignore[union-attr]

    def started(cell: Any, cell_index: int, **_: Any) -> None:
        state["wall"], state["cpu"] = time.perf_counter(), _cpu(pid())

    def finished(cell: Any, cell_index: int, **_: Any) -> None:
        source = cell.source.strip().splitlines()
        cells.append(
            {
                "index": cell_index,
                "wall_s": round(time.perf_counter() - state["wall"], 2),
                "cpu_s": round(_cpu(pid()) - state["cpu"], 2),
                "first_line": next((line for line in source if not line.startswith("#")), "")[:90],
            }
        )

    client.on_cell_execute = started
    client.on_cell_executed = finished
    t0, c0 = time.perf_counter(), time.process_time()
    with client.setup_kernel():
        startup_wall = time.perf_counter() - t0
        startup_cpu = _cpu(pid())
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        total_cpu = _cpu(pid())
    return {
        "page": str(page.relative_to(ROOT)),
        "wall_s": round(time.perf_counter() - t0, 1),
        "kernel_cpu_s": round(total_cpu, 1),
        "startup_wall_s": round(startup_wall, 1),
        "startup_cpu_s": round(startup_cpu, 1),
        "driver_cpu_s": round(time.process_time() - c0, 1),
        "cells": cells,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: profile the named pages (default: all), print a summary, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", type=Path)
    parser.add_argument("--cold", action="store_true", help="a fresh, empty CHUNKLAB_CACHE")
    parser.add_argument("--out", type=Path, default=None, help="write the profile as JSON here")
    parser.add_argument("--top", type=int, default=5, help="slowest cells listed per page")
    args = parser.parse_args(argv)
    if args.cold:
        os.environ["CHUNKLAB_CACHE"] = tempfile.mkdtemp(prefix="chunklab-cold-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    pages = [p.resolve() for p in args.pages] or book_pages()
    results = []
    for page in pages:
        load0 = os.getloadavg()[0]
        result = profile_page(page)
        result["loadavg_1min_before"] = round(load0, 2)
        results.append(result)
        print(
            f"{result['page']}: cpu {result['kernel_cpu_s']} s, wall {result['wall_s']} s "
            f"(kernel start {result['startup_cpu_s']} cpu s; load {load0:.1f})",
            flush=True,
        )
        for cell in sorted(result["cells"], key=lambda c: -c["cpu_s"])[: args.top]:
            cost = f"cpu {cell['cpu_s']:>7} wall {cell['wall_s']:>7}"
            print(f"   cell {cell['index']:>3}: {cost}  {cell['first_line']}")
        if args.out:
            args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
