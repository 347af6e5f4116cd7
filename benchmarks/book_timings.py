"""Every timing the book's chapters show, measured once and stored with its date and machine.

The chapters compute their counts, recalls and intervals when the book is built, but a
timing taken inside a build says more about the build than about the code: it depends on
the machine's load, on whether the on-disk embedding cache was warm (a first build and a
rebuild disagreed by a factor of 400), and on which edition ran last. So the seconds and
milliseconds of chapters 4 to 7 are measured here, on demand, and written to
``benchmarks/results/book_timings.json`` with the date and the machine; both editions read
that one file and name its date and machine where they quote it::

    python -m benchmarks.book_timings                      # every section (about 10 CPU minutes)
    python -m benchmarks.book_timings --only speed probe    # some sections, merged into the file
    python -m benchmarks.book_timings --only costs --strategies "leaf → parent"  # some rows of costs

Sections (each function below is what the page it feeds computes, with the clock added):

- ``probe`` (chapter 4): the semantic chunker's cut on the chapter's cheapest document and
  the recursive chunks of the same document, embedded by an encoder with its cache off.
- ``latency`` (chapter 5): a leaf search and a leaf search with auto-merging over the whole
  kit indexed hierarchically (in-memory Chroma), and the embedding of one new query.
- ``costs`` (chapter 6): the ingest time (chunk, embed, store) of every configuration of the
  decision table, each from its own empty embedding cache, and their query latency, from
  :class:`chunklab.evaluate.Benchmark`; ``--strategies`` re-measures some rows and keeps the rest.
- ``speed`` (chapter 7): chunks embedded per second by MiniLM and the static model (caches
  off, models loaded first) and chunks indexed per second by BM25, plain and contextual.

Times are CPU seconds of this process (``time.process_time``: user + system, all threads)
with one torch thread, the number that carries between machines and loads; the wall seconds
and the load average are stored beside them. ``tests/integration/test_book_timings.py``
re-runs each section without the clock and checks that the file still describes what the
code computes now (the documents, strategies and counts each timing is about).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "book_timings.json"
#: the sections of the file, in the book's order
SECTIONS = ("probe", "latency", "costs", "speed")
#: chapter 4's subset: the first documents (by id) of each structure label
PER_STRUCTURE = 5
#: chapter 6's decision table: the five strategies at the registry's defaults, then the two
#: configurations earlier chapters established (built by :func:`cost_strategies` as the chapter builds them)
COST_STRATEGIES = (
    "fixed",
    "recursive",
    "structural",
    "semantic",
    "hierarchical",
    "structural (headings), 1000",
    "leaf → parent",
)
#: chapter 5: the queries timed (the first of the kit's questions) and the new queries embedded
LATENCY_QUERIES, EMBED_QUERIES = 40, 20
#: chapter 7: chunks timed per model (MiniLM is slow on a CPU)
SPEED_CHUNKS = {"minilm": 96, "static": 5000}


class Clock:
    """CPU and wall seconds since it was made (``cpu`` and ``wall`` read them)."""

    def __init__(self) -> None:
        self.c0, self.w0 = time.process_time(), time.perf_counter()

    @property
    def cpu(self) -> float:
        """CPU seconds (user + system, every thread) of this process since the clock started."""
        return time.process_time() - self.c0

    @property
    def wall(self) -> float:
        """Wall seconds since the clock started."""
        return time.perf_counter() - self.w0


def machine() -> dict[str, Any]:
    """The machine a measurement ran on: CPU model, cores, threads, load, versions, and one line."""
    import torch

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = os.cpu_count() or 1
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []
    threads = torch.get_num_threads()
    description = f"{model}, {cores} cores, {platform.system()}, {threads} torch thread{'s' * (threads != 1)}"
    return {
        "description": description,
        "cpu": model,
        "cores": cores,
        "torch_threads": threads,
        "loadavg_start": load,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
    }


# ------------------------------------------------------------------------------ chapter 4
def chapter4_subset() -> list[Any]:
    """Chapter 4's documents: the first ``PER_STRUCTURE`` clean and messy ones, by id."""
    from chunklab.datasets.corpora.docs import load_docs

    docs = load_docs().documents
    clean = [d for d in docs if d.structure == "clean"][:PER_STRUCTURE]
    return clean + [d for d in docs if d.structure == "messy"][:PER_STRUCTURE]


def semantic_probe(timed: bool = True) -> dict[str, Any]:
    """Chapter 4: cut the subset's document with the fewest sentences semantically, cache off.

    ``timed=False`` gives the same record without embedding anything: which document, how
    many sentence windows, how many recursive chunks (what the test compares).
    """
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.chunkers.recursive import chunk_recursive
    from chunklab.chunkers.semantic import analyze_semantic, split_sentences

    subset = chapter4_subset()
    probe = min(subset, key=lambda d: len(split_sentences(d.text)))
    size = get_strategy("recursive").params["size"]
    rec = chunk_recursive(probe.text, size, doc_id=probe.doc_id)
    out: dict[str, Any] = {
        "doc_id": probe.doc_id,
        "sentences": len(split_sentences(probe.text)),
        "recursive_size": size,
        "recursive_chunks": len(rec),
    }
    if not timed:
        return out
    from chunklab.embed import Encoder

    cold = Encoder(cache_dir=False, show_progress=False)
    cold.encode(["load the model before timing"])  # model loading is not part of the cost
    clock = Clock()
    analysis = analyze_semantic(probe.text, doc_id=probe.doc_id, encoder=cold)
    sem_cpu, sem_wall = clock.cpu, clock.wall
    clock = Clock()
    cold.encode([c.text for c in rec], show_progress=False)
    rec_cpu, rec_wall = clock.cpu, clock.wall
    if len(analysis.sentences) != out["sentences"]:
        raise RuntimeError("analyze_semantic and split_sentences disagree on the sentences")
    return {
        **out,
        "semantic_cpu_s": round(sem_cpu, 3),
        "semantic_wall_s": round(sem_wall, 3),
        "recursive_cpu_s": round(rec_cpu, 3),
        "recursive_wall_s": round(rec_wall, 3),
    }


# ------------------------------------------------------------------------------ chapter 5
def hierarchical_latency(timed: bool = True) -> dict[str, Any]:
    """Chapter 5: median leaf search, leaf search + auto-merge, and new-query embedding (ms)."""
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.datasets.corpora.docs import load_docs

    corpus = load_docs()
    hier = get_strategy("hierarchical")
    all_chunks = [c for d in corpus.documents for c in hier(d)]
    sample = [q.question for q in corpus.questions[:LATENCY_QUERIES]]
    out: dict[str, Any] = {
        "levels": list(hier.params["levels"]),
        "chunks": len(all_chunks),
        "queries": len(sample),
        "embedded_queries": min(EMBED_QUERIES, len(sample)),
    }
    if not timed:
        return out
    from chunklab.chunkers.hierarchical import HierarchicalRetriever
    from chunklab.embed import Encoder, get_encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    store = ChunkStore(in_memory=True, collection="book-timings-05", encoder=get_encoder())
    store.add(all_chunks, show_progress=False)
    retriever = HierarchicalRetriever(store)
    get_encoder().encode(sample, show_progress=False)  # as in the chapter: query vectors cached
    for query in sample[:3]:  # warm up
        retriever.retrieve(query, k=5)
    leaf: list[float] = []
    merge: list[float] = []
    for query in sample:
        clock = Clock()
        retriever.retrieve_leaves(query, k=5)
        leaf.append(1000 * clock.cpu)
        clock = Clock()
        retriever.retrieve(query, k=5)
        merge.append(1000 * clock.cpu)
    cold = Encoder(cache_dir=False, show_progress=False)
    cold.encode(["load the model before timing"])
    embed: list[float] = []
    for query in sample[: out["embedded_queries"]]:
        clock = Clock()
        cold.encode([query], show_progress=False)
        embed.append(1000 * clock.cpu)
    return {
        **out,
        "leaf_cpu_ms": round(statistics.median(leaf), 2),
        "merge_cpu_ms": round(statistics.median(merge), 2),
        "embed_cpu_ms": round(statistics.median(embed), 2),
    }


# ------------------------------------------------------------------------------ chapter 6
def cost_strategies(names: tuple[str, ...] = COST_STRATEGIES) -> dict[str, Any]:
    """Chapter 6's configurations by name, built as the chapter builds them.

    The defaults come from the registry; "structural (headings), 1000" is chapter 3's Markdown
    chunker at an equal 1,000-character budget and "leaf → parent" chapter 5's hierarchical
    leaves with their parents returned. ``ValueError`` for a name not in :data:`COST_STRATEGIES`.
    """
    import dataclasses

    from chunklab.chunkers.catalog import get_strategy
    from chunklab.chunkers.hierarchical import retrieve_parents
    from chunklab.chunkers.structural import chunk_markdown

    unknown = [n for n in names if n not in COST_STRATEGIES]
    if unknown:
        raise ValueError(f"names must be among {list(COST_STRATEGIES)}, got {unknown!r}")
    built: dict[str, Any] = {}
    for name in names:
        if name == "structural (headings), 1000":
            built[name] = lambda d: chunk_markdown(d.text, 1000, doc_id=d.doc_id)
        elif name == "leaf → parent":
            built[name] = dataclasses.replace(get_strategy("hierarchical"), postprocess=retrieve_parents)
        else:
            built[name] = get_strategy(name)
    return built


def strategy_costs(timed: bool = True, names: tuple[str, ...] = COST_STRATEGIES) -> dict[str, Any]:
    """Chapter 6: each configuration's chunks, ingest seconds from an empty cache, query latency.

    ``timed=False`` counts the chunks of the configurations that embed nothing to cut (the
    semantic chunker's chunks need the model, so it is left out of the untimed record).
    ``names`` measures only those configurations (:func:`main` keeps the stored others). Each
    one ingests from its own empty embedding cache, so a configuration that indexes the same
    texts as another (leaf → parent and hierarchical embed the same leaves) pays for them too.
    """
    from chunklab.datasets.corpora.docs import load_docs

    corpus = load_docs()
    if not timed:
        from chunklab.embed import get_encoder
        from chunklab.evaluate import Benchmark

        bench = Benchmark(corpus, cost_strategies(tuple(n for n in names if n != "semantic")), k=5)
        chunks = {  # as Benchmark.costs counts them (every chunk, parents too); the model never loads
            s.name: len({c.id for c in bench.chunk_corpus(s, get_encoder())[0]}) for s in bench.strategies
        }
        return {"strategies": list(COST_STRATEGIES), "questions": len(corpus.questions), "chunks": chunks}
    import shutil

    import numpy as np

    from chunklab.embed import Encoder
    from chunklab.evaluate import Benchmark

    cache = Path(tempfile.mkdtemp(prefix="chunklab-book-timings-"))
    try:
        queries = Encoder(cache_dir=cache / "queries", show_progress=False)
        bench = Benchmark(corpus, cost_strategies(names), k=5, encoder=queries)
        query_vecs = queries.encode([q.question for q in corpus.questions], show_progress=False)
        per: dict[str, dict[str, Any]] = {}
        for i, strategy in enumerate(bench.strategies):  # the steps of Benchmark.run, clocked
            encoder = Encoder(cache_dir=cache / f"strategy-{i}", show_progress=False)  # empty
            encoder.encode(["load the model before timing"])
            store = bench.open_store(strategy, i, cache / "stores", encoder)
            clock = Clock()
            indexed = bench.index(strategy, store, encoder)
            ingest_cpu, ingest_wall = clock.cpu, clock.wall
            latencies: list[float] = []
            by_id = {c.id: c for c in indexed.chunks}
            for vec in query_vecs:  # Benchmark.retrieve's loop, on the CPU clock
                clock = Clock()
                hits = indexed.store.search_vectors(vec[None, :], k=bench.k)[0]
                if strategy.postprocess is not None:
                    strategy.postprocess(hits, by_id)
                latencies.append(1000 * clock.cpu)
            per[strategy.name] = {
                "chunks": len({c.id for c in indexed.chunks}),
                "ingest_cpu_s": round(ingest_cpu, 2),
                "ingest_wall_s": round(ingest_wall, 2),
                "query_p50_cpu_ms": round(float(np.percentile(latencies, 50)), 2),
                "query_p95_cpu_ms": round(float(np.percentile(latencies, 95)), 2),
                "measured": dt.date.today().isoformat(),
                "loadavg": round(os.getloadavg()[0], 2),
                "cache": "its own, empty at the start of its ingest",
            }
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    out: dict[str, Any] = {
        "strategies": list(COST_STRATEGIES),
        "questions": len(corpus.questions),
        "chunks": {name: row["chunks"] for name, row in per.items() if name != "semantic"},
        "cache": "empty at the start of each ingest: every text embedded once, as on a first ingest",
        "per_strategy": per,
    }
    if "semantic" in per:
        out["semantic_chunks"] = per["semantic"]["chunks"]
    return out


def merge_costs(stored: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    """The stored costs section with the configurations of ``measured`` replaced or added.

    Rows measured on another machine (CPU model or core count) are not mixed with the stored
    ones: ``ValueError`` asks for every configuration to be measured again.
    """
    keys = ("cpu", "cores", "torch_threads")
    if {k: stored["machine"].get(k) for k in keys} != {k: measured["machine"].get(k) for k in keys}:
        raise ValueError(
            f"the stored costs were measured on {stored['machine'].get('description')!r}, these on "
            f"{measured['machine'].get('description')!r}: measure every configuration (no --strategies)"
        )
    per = {**stored.get("per_strategy", {}), **measured["per_strategy"]}
    merged = {
        **stored,
        **{k: v for k, v in measured.items() if k not in ("per_strategy", "chunks", "machine")},
    }
    merged["per_strategy"] = {n: per[n] for n in COST_STRATEGIES if n in per}
    merged["chunks"] = {n: row["chunks"] for n, row in merged["per_strategy"].items() if n != "semantic"}
    if "semantic" in per:
        merged["semantic_chunks"] = per["semantic"]["chunks"]
    merged["cache"] = (
        measured["cache"] + "; the rows without a 'cache' of their own were measured in one earlier run "
        "that shared one cache, empty at its start"
    )
    merged["measured"] = max(stored["measured"], measured["measured"])
    return merged


# ------------------------------------------------------------------------------ chapter 7
def chapter7_texts() -> list[str]:
    """What chapter 7 indexes: the kit's documents chunked by the registry's structural strategy."""
    from chunklab.chunk import embedding_text
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.datasets.corpora.docs import load_docs

    strategy = get_strategy("structural")
    return [embedding_text(c) for d in load_docs().documents for c in strategy.index_chunks(strategy(d))]


def embedding_speed(timed: bool = True) -> dict[str, Any]:
    """Chapter 7: chunks per CPU second of MiniLM and static (caches off) and of BM25 (plain, contextual)."""
    texts = chapter7_texts()
    out: dict[str, Any] = {"chunks": len(texts), "timed_chunks": dict(SPEED_CHUNKS)}
    if not timed:
        return out
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.datasets.corpora.docs import load_docs
    from chunklab.embed import Encoder
    from chunklab.retrieval.lexical import BM25Index

    speed: dict[str, float] = {}
    for model, n in SPEED_CHUNKS.items():
        encoder = Encoder(model, cache_dir=None if model == "static" else False, show_progress=False)
        encoder.encode(texts[:4])  # load (static: distil once per machine) before timing
        sample = (texts * (n // len(texts) + 1))[:n]
        clock = Clock()
        encoder.encode(sample)
        speed["MiniLM" if model == "minilm" else "static"] = n / clock.cpu
    strategy = get_strategy("structural")
    chunks = [c for d in load_docs().documents for c in strategy.index_chunks(strategy(d))]
    for name, context in (("BM25", False), ("contextual BM25", True)):
        clock = Clock()
        BM25Index(chunks, context=context)
        speed[name] = len(chunks) / clock.cpu
    return {**out, "chunks_per_cpu_s": {k: round(v, 1) for k, v in speed.items()}}


MEASURE: dict[str, Callable[..., dict[str, Any]]] = {
    "probe": semantic_probe,
    "latency": hierarchical_latency,
    "costs": strategy_costs,
    "speed": embedding_speed,
}


def load(path: Path = RESULTS) -> dict[str, Any]:
    """The stored timings (the file the chapters read)."""
    return dict(json.loads(Path(path).read_text(encoding="utf-8")))


def main(argv: list[str] | None = None) -> int:
    """Command line: measure the sections asked for and merge them into the results file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--strategies",
        nargs="+",
        choices=COST_STRATEGIES,
        help="costs: measure only these configurations, keep the stored others",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    torch.set_num_threads(1)
    stored = load(args.out) if args.out.exists() else {}
    stored.setdefault("sections", {})
    for name in args.only:
        partial = name == "costs" and args.strategies
        measure = MEASURE[name]
        values = measure(names=tuple(args.strategies)) if partial else measure()
        section = {"measured": dt.date.today().isoformat(), "machine": machine(), **values}
        section["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        if partial and "costs" in stored["sections"]:
            section = merge_costs(stored["sections"]["costs"], section)
        stored["sections"][name] = section
        print(name, json.dumps({k: v for k, v in section.items() if k != "machine"}), flush=True)
    stored["benchmark"] = "benchmarks/book_timings.py"
    stored["note"] = (
        "CPU seconds of the measuring process (user + system) on one torch thread; wall seconds "
        "and the load average beside them. Each section carries the date and machine it was measured on."
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
