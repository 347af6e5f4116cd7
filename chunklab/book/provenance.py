"""Where a number on a page comes from: the benchmark results the chapters read, with date and machine.

A page computes its counts and recalls when the book is built; a number it cannot compute at
build time (a timing, which says more about the build machine's load and cache than about the
code, or a benchmark that runs for hours) is read from a results file under
``benchmarks/results/``, and the page names the date and the machine it was measured on with
:func:`measured_on`. Both editions read the same files, so they cannot disagree.

A results file states its provenance in a ``measured`` block (``{"date": "2026-12-02",
"machine": {"cpu": "...", "cores": 2}}``), or per section (``benchmarks/book_timings.py``
writes ``measured`` and a ``machine`` record in each section).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chunklab.book import labels as L
from chunklab.paths import project_root

__all__ = ["book_timings", "check_stored", "load_results", "measured_on", "provenance", "results_path"]

#: the results file of the book's own timings (``python -m benchmarks.book_timings``)
BOOK_TIMINGS = "book_timings.json"


def results_path(name: str) -> Path:
    """``benchmarks/results/<name>`` under the project root."""
    if not isinstance(name, str) or not name.endswith(".json") or "/" in name:
        raise ValueError(f"name must be a file name ending in .json, got {name!r}")
    return project_root() / "benchmarks" / "results" / name


def load_results(name: str) -> dict[str, Any]:
    """A results file of ``benchmarks/results/`` as a dict."""
    return dict(json.loads(results_path(name).read_text(encoding="utf-8")))


def book_timings(section: str) -> dict[str, Any]:
    """One section of ``book_timings.json`` (``probe``, ``latency``, ``costs``, ``speed``)."""
    sections = load_results(BOOK_TIMINGS).get("sections", {})
    if section not in sections:
        raise ValueError(
            f"section must be one of {sorted(sections)}, got {section!r} "
            "(run python -m benchmarks.book_timings --only SECTION)"
        )
    return dict(sections[section])


def provenance(record: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | str]:
    """``(date, machine)`` of a results record: its ``measured`` block, or its own fields.

    The machine is a record (``cpu``, ``cores``) or, in older files, a line of text.
    ``ValueError`` when the record names no date or no machine: such a number cannot be shown.
    """
    measured = record.get("measured")
    block: Mapping[str, Any] = measured if isinstance(measured, Mapping) else record
    date = block.get("date") or (measured if isinstance(measured, str) else None)
    machine = block.get("machine", record.get("machine"))
    if isinstance(machine, Mapping) and not ("cpu" in machine and "cores" in machine):
        machine = None
    if not date or not machine:
        raise ValueError(
            f"the results record names no date or no machine (cpu, cores): keys {sorted(record)}"
        )
    return str(date), machine


def measured_on(record: Mapping[str, Any], lang: str | None = None) -> str:
    """The phrase a page puts beside a stored number: "measured on DATE on CPU, N CPU cores"."""
    date, machine = provenance(record)
    if isinstance(machine, Mapping):
        machine = L.label("machine_cores", lang, cpu=machine["cpu"], cores=machine["cores"])
    return L.label("measured_on", lang, date=date, machine=machine)


def check_stored(stored: Mapping[str, Any], live: Mapping[str, Any], what: str) -> None:
    """Stop the page when a stored timing is about other data than the page computes now.

    ``live`` holds what the page computed (documents, counts); each key must equal the
    stored one, else ``ValueError`` says which and how to re-measure.
    """
    wrong = {k: (stored.get(k), v) for k, v in live.items() if stored.get(k) != v}
    if wrong:
        detail = ", ".join(f"{k}: stored {s!r}, now {v!r}" for k, (s, v) in wrong.items())
        raise ValueError(
            f"the stored timings of {what} describe other data than this page computes ({detail}); "
            "re-run python -m benchmarks.book_timings"
        )
