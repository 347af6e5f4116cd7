"""Where the book's stored numbers come from: dated, machine-named, and still about what the code computes.

The chapters compute their counts and intervals at build time, but read timings (and the
benchmarks that run for hours) from ``benchmarks/results/``, so that both editions show the
same measurement (``chunklab.book.provenance``). These tests pin that contract:

- every results file a chapter reads names its date and machine, and the page glues them;
- no chapter times anything itself (a build's own clock made the editions disagree);
- ``book_timings.json`` still describes the documents, strategies and counts the code
  computes now: each section is re-run without the clock (``benchmarks.book_timings``, the
  same functions that measured it) and compared with what is stored.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from benchmarks import book_timings as BT
from chunklab.book import labels as L
from chunklab.book import provenance as P

ROOT = Path(__file__).resolve().parents[2]
#: the numbered chapters: every number there is computed at build time or dated and machine-named
CHAPTERS = sorted((ROOT / "chapters").glob("0*.md"))
#: the "beyond the kit" pages: every number they read from benchmarks/results is dated and machine-named
BEYOND = [
    ROOT / "chapters" / f"{name}.md"
    for name in ("your-documents", "scaling-out", "scaling-faults", "code-rag-50k")
]
RESULTS_READ = re.compile(r"""["'/]([\w.-]+\.json)["']""")


def code_cells(page: Path) -> list[str]:
    """The sources of a page's code cells."""
    return re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", page.read_text(encoding="utf-8"), re.S | re.M)


def results_read(page: Path) -> set[str]:
    """The ``benchmarks/results`` files a page's code cells open."""
    names = {m for cell in code_cells(page) for m in RESULTS_READ.findall(cell)}
    return {n for n in names if (ROOT / "benchmarks" / "results" / n).is_file()}


def test_the_chapters_read_stored_results() -> None:
    read = {page.name: results_read(page) for page in CHAPTERS}
    assert "book_timings.json" in set().union(*read.values()) or any(
        "book_timings(" in cell for page in CHAPTERS for cell in code_cells(page)
    )
    assert {"code_poly.json", "code_poly_retrieval.json"} <= read["03-structural.md"]
    assert "pdf_elements.json" in read["03b-documents.md"]


@pytest.mark.parametrize("page", CHAPTERS + BEYOND, ids=lambda p: p.stem)
def test_every_results_file_a_chapter_reads_names_its_date_and_machine(page: Path) -> None:
    source = "\n".join(code_cells(page))
    for name in sorted(results_read(page)):
        date, machine = P.provenance(P.load_results(name))
        # a day, or two (12-02/03), or a day and its UTC time (2026-12-03 17:07 UTC)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}(/\d{2}| \d{2}:\d{2} UTC)?", date), (name, date)
        assert machine, name
    if results_read(page) or "book_timings(" in source:
        assert "measured_on(" in source, (
            f"{page.name} reads stored numbers but never names their date and machine"
        )


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_no_chapter_times_anything_while_the_book_builds(page: Path) -> None:
    """Timings come from benchmarks/results/book_timings.json, the same in both editions."""
    source = "\n".join(code_cells(page))
    for clock in ("perf_counter", "process_time", "time.time(", "monotonic(", "cache_dir=False"):
        assert clock not in source, f"{page.name} measures time at build time ({clock})"


def test_measured_on_names_date_and_machine_in_both_editions() -> None:
    record = {"measured": {"date": "2026-12-03", "machine": {"cpu": "Xeon", "cores": 2}}}
    assert P.measured_on(record, "en") == "measured on 2026-12-03 on Xeon, 2 CPU cores"
    assert P.measured_on(record, "es") == "medición del 2026-12-03 en Xeon, 2 núcleos de CPU"
    section = {"measured": "2026-12-03", "machine": {"cpu": "Xeon", "cores": 16, "description": "x"}}
    assert P.provenance(section) == ("2026-12-03", section["machine"])
    assert L.label("machine_cores", "es", cpu="c", cores=2) == "c, 2 núcleos de CPU"


@pytest.mark.parametrize(
    "record",
    [{}, {"measured": {"date": "2026-12-03"}}, {"measured": "2026-12-03", "machine": {"cpus": 2}}],
    ids=["nothing", "no machine", "machine without cpu and cores"],
)
def test_a_record_without_date_or_machine_is_refused(record: dict) -> None:
    with pytest.raises(ValueError, match="no date or no machine"):
        P.measured_on(record)


def test_check_stored_names_what_changed() -> None:
    P.check_stored({"doc_id": "a", "chunks": 3}, {"doc_id": "a", "chunks": 3}, "x")
    with pytest.raises(ValueError, match=r"chunks: stored 3, now 4.*book_timings"):
        P.check_stored({"doc_id": "a", "chunks": 3}, {"doc_id": "a", "chunks": 4}, "x")


def test_results_path_refuses_a_path() -> None:
    with pytest.raises(ValueError, match="name must be"):
        P.results_path("../secrets.json")
    with pytest.raises(ValueError, match="section must be one of"):
        P.book_timings("nope")


# ------------------------------------------------------------------ book_timings.json vs the code
@pytest.fixture(scope="module")
def stored() -> dict:
    """The sections of benchmarks/results/book_timings.json."""
    return dict(P.load_results("book_timings.json")["sections"])


def test_every_section_is_stored_with_date_and_machine(stored: dict) -> None:
    assert set(stored) == set(BT.SECTIONS)
    for name, section in stored.items():
        date, machine = P.provenance(section)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date), name
        assert isinstance(machine, dict) and machine["cores"] >= 1, name


@pytest.mark.parametrize("section", BT.SECTIONS)
def test_stored_timings_describe_what_the_code_computes_now(section: str, stored: dict) -> None:
    """A quick run of the same function, clock off: the same documents, strategies and counts."""
    quick = BT.MEASURE[section](timed=False)
    for key, value in quick.items():
        assert stored[section][key] == value, (
            f"{section}.{key}: stored {stored[section][key]!r}, now {value!r}"
        )


def test_stored_timings_are_positive_numbers(stored: dict) -> None:
    probe, latency, speed = stored["probe"], stored["latency"], stored["speed"]
    values = [
        probe["semantic_cpu_s"],
        probe["recursive_cpu_s"],
        latency["leaf_cpu_ms"],
        latency["merge_cpu_ms"],
    ]
    values += [latency["embed_cpu_ms"], *speed["chunks_per_cpu_s"].values()]
    for row in stored["costs"]["per_strategy"].values():
        values += [row["ingest_cpu_s"], row["query_p50_cpu_ms"], row["query_p95_cpu_ms"]]
    assert all(isinstance(v, float | int) and math.isfinite(v) and v > 0 for v in values)
    assert set(speed["chunks_per_cpu_s"]) == {"MiniLM", "static", "BM25", "contextual BM25"}
    assert set(stored["costs"]["per_strategy"]) == set(BT.COST_STRATEGIES)


def test_costs_remeasured_for_some_configurations_keep_the_others_and_refuse_another_machine() -> None:
    """``--strategies``: the rows measured replace or join the stored ones, on the same machine only."""
    box = {"cpu": "Xeon", "cores": 2, "torch_threads": 1, "description": "Xeon, 2 cores"}
    stored = {
        "measured": "2026-12-01",
        "machine": box,
        "strategies": ["fixed", "semantic"],
        "per_strategy": {"fixed": {"chunks": 3}, "semantic": {"chunks": 5}},
        "chunks": {"fixed": 3},
        "semantic_chunks": 5,
    }
    measured = {
        "measured": "2026-12-03",
        "machine": {**box, "loadavg_start": [9.0]},
        "strategies": list(BT.COST_STRATEGIES),
        "per_strategy": {"leaf → parent": {"chunks": 9}},
        "chunks": {"leaf → parent": 9},
        "cache": "empty at the start of each ingest",
    }
    merged = BT.merge_costs(stored, measured)
    assert list(merged["per_strategy"]) == ["fixed", "semantic", "leaf → parent"]  # the book's order
    assert merged["chunks"] == {"fixed": 3, "leaf → parent": 9} and merged["semantic_chunks"] == 5
    assert merged["machine"] == box and merged["measured"] == "2026-12-03"
    with pytest.raises(ValueError, match="measure every configuration"):
        BT.merge_costs(stored, {**measured, "machine": {**box, "cores": 16}})


def test_cost_strategies_are_the_decision_tables_configurations() -> None:
    built = BT.cost_strategies()
    assert tuple(built) == BT.COST_STRATEGIES
    assert built["leaf → parent"].postprocess is not None  # leaves searched, parents returned
    with pytest.raises(ValueError, match="names must be among"):
        BT.cost_strategies(("fixed", "nope"))
