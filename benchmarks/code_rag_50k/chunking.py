"""The chunking part: every file, both strategies, in worker processes; per-file numbers, never chunks.

Also the helpers the index shares: the one parallel map, chunks without their objects, and
the two per-chunk measures (compiles on its own, over MiniLM's window).
"""

from __future__ import annotations

import functools
import os
import textwrap
import time
import warnings
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from chunklab.chunk import Chunk
from chunklab.chunkers.catalog import Strategy, get_strategy
from chunklab.datasets.corpora.code import CodeCorpus, CodeFile
from chunklab.documents import Document
from chunklab.enrich.context import add_context
from chunklab.units import get_tokenizer

from .config import PERCENTILES, Config
from .resources import Memory

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one thread per worker process

Item = TypeVar("Item")
Context = TypeVar("Context")
#: a chunk without its object: ``(start, end, text, fallback reason or None, contextual header)``
Light = tuple[int, int, str, str | None, str]


def parallel_map(
    func: Callable[[Item, Context], Any], items: Sequence[Item], context: Context, workers: int, desc: str
) -> Iterator[Any]:
    """``func(item, context)`` for every item, in input order, in ``workers`` processes, with a progress bar.

    ``context`` reaches each worker once, when it starts (forked: not even pickled). Every
    parallel map of the benchmark goes through here, on the kit's one worker pool
    (:func:`chunklab.ingest.pool.map_ordered`); a dead worker stops the benchmark.
    """
    from chunklab.ingest.pool import map_ordered

    def call(item: Item) -> Any:
        return func(item, context)

    yield from map_ordered(call, items, workers, on_death=_worker_died, progress=desc, unit="file")


def _worker_died(item: Any, reason: str) -> Any:
    raise RuntimeError(f"{reason} (item {item!r}); the benchmark stops rather than report partial numbers")


@dataclass(frozen=True)
class ChunkJob:
    """What a chunking worker needs: the settings and the corpus it reads files from."""

    config: Config
    corpus: CodeCorpus


def chunking(corpus: CodeCorpus, config: Config, memory: Memory) -> dict[str, Any]:
    """Chunk every file with both strategies in ``config.workers`` processes; aggregate per-file numbers."""
    names = config.strategy_names
    sizes: dict[str, list[np.ndarray]] = {s: [] for s in names}
    totals: dict[str, Counter[str]] = {s: Counter() for s in names}
    reasons: dict[str, Counter[str]] = {s: Counter() for s in names}
    examples: dict[str, list[str]] = {s: [] for s in names}
    start = time.perf_counter()
    job = ChunkJob(config, corpus)
    for per_file in parallel_map(measure_file, range(len(corpus)), job, config.workers, "chunk"):
        for name, m in per_file.items():
            sizes[name].append(m.pop("sizes"))
            reason = m.pop("reason")
            doc_id = m.pop("doc_id")
            if reason:
                reasons[name][reason.split(":")[0]] += 1
                if len(examples[name]) < 10:
                    examples[name].append(f"{doc_id}: {reason[:160]}")
            totals[name].update(m)
    wall = time.perf_counter() - start
    out: dict[str, Any] = {"wall_s": round(wall, 1), "peak_rss_mb": memory.peak(), "strategies": {}}
    for name in names:
        t, all_sizes = totals[name], np.concatenate(sizes[name]) if sizes[name] else np.zeros(0)
        n = int(t["chunks"])
        out["strategies"][name] = {
            "chunks": n,
            "fallback_files": int(t["fallback"]),
            "fallback_rate": t["fallback"] / max(1, len(corpus)),
            "fallback_reasons": dict(reasons[name].most_common()),
            "fallback_examples": examples[name],
            "size_percentiles": dict(
                zip(map(str, PERCENTILES), np.percentile(all_sizes, PERCENTILES).round(1).tolist())
            )
            if n
            else {},
            "size_max": int(all_sizes.max()) if n else 0,
            "compile_share": t["compiles"] / max(1, n),
            "over_window_share": t["over_window"] / max(1, n),
            "chunk_cpu_s": round(t["chunk_ns"] / 1e9, 1),
            "measure_cpu_s": round(t["measure_ns"] / 1e9, 1),
        }
    return out


def measure_file(i: int, job: ChunkJob) -> dict[str, dict[str, Any]]:
    """File ``i``'s numbers for each strategy (worker side): sizes, fallback, compiles, over the window."""
    f = job.corpus[i]
    text = f.read_text()
    out = {}
    for name, chunks, chunk_ns in chunk_light(f, text, job.config, job.config.strategy_names):
        t0 = time.process_time_ns()
        compiles = [compiles_alone(c[2]) for c in chunks]
        over = over_window(text, [(c[0], c[1]) for c in chunks], job.config.window)
        measure_ns = time.process_time_ns() - t0
        fallback = chunks[0][3] if chunks else None
        out[name] = {
            "doc_id": doc_id(f),
            "sizes": np.fromiter((len(c[2]) for c in chunks), dtype=np.int32),
            "reason": fallback,
            "chunks": len(chunks),
            "fallback": int(fallback is not None),
            "compiles": sum(compiles),
            "over_window": over,
            "chunk_ns": chunk_ns,
            "measure_ns": measure_ns,
        }
    return out


def doc_id(f: CodeFile) -> str:
    """A corpus file's document id, as the question sets name it."""
    return f.doc_id


def chunk_light(
    f: CodeFile, text: str, config: Config, strategies: Iterable[str], headers: bool = False
) -> Iterator[tuple[str, list[Light], int]]:
    """``(strategy, [(start, end, text, fallback_reason, header)], cpu_ns)`` per strategy: chunks
    without their objects; ``header`` is the contextual header (:func:`contextual_headers`) when
    ``headers``, else ``""`` (not timed: the chunker's CPU time is the chunking alone)."""
    doc = Document(doc_id(f), text, format="python")
    for name in strategies:
        strategy = _strategy(name.split()[0], tuple(sorted(config.params(name).items())))
        t0 = time.process_time_ns()
        chunks = strategy(doc)
        ns = time.process_time_ns() - t0
        heads = contextual_headers(chunks) if headers else [""] * len(chunks)
        light = [
            (
                c.start,
                c.end,
                c.text,
                c.metadata.get("fallback_reason") if c.metadata.get("fallback") else None,
                head,
            )
            for c, head in zip(chunks, heads)
        ]
        yield name, light, ns


def contextual_headers(chunks: list[Chunk]) -> list[str]:
    """Each chunk's contextual header, built by the kit's :func:`chunklab.enrich.context.add_context`.

    The title is the file's document id (its path in the corpus, ``add_context``'s default) and
    the section is the chunk's qualified name (``metadata["name"]``: ``Class.method``), none for
    module-level code: ``"pkg/mod.py > Class.method"``, the header chapter 3's polyglot run put
    in front of code chunks. :func:`chunklab.chunk.embedding_text` (what contextual BM25 indexes)
    is ``header + "\n\n" + text``, so its tokens are the header's plus the text's.
    """
    named = [
        c
        if c.metadata.get("name") != "<module>"
        else Chunk(c.text, c.start, c.end, c.doc_id, {k: v for k, v in c.metadata.items() if k != "name"})
        for c in chunks
    ]
    return [str(c.metadata.get("context", "")) for c in add_context(named, section_key="name")]


@functools.lru_cache(maxsize=8)
def _strategy(kind: str, params: tuple[tuple[str, int], ...]) -> Strategy:
    """The catalog's strategy, built once per process."""
    return get_strategy(kind, **dict(params))


def compiles_alone(text: str) -> bool:
    """Whether a chunk is valid Python on its own, after removing common indentation."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(textwrap.dedent(text), "<chunk>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False


def over_window(text: str, spans: list[tuple[int, int]], window: int) -> int:
    """How many ``text[s:e]`` are longer than MiniLM's ``window`` tokens, tokenizing ``text`` once.

    A span's count is the number of the file's tokens lying inside it; a cut through a word
    can change the count at each edge, so spans within a few tokens of the window are
    tokenized on their own. A span of <= window - 2 characters is never over (a token covers >= 1).
    """
    long = [(s, e) for s, e in spans if e - s > window - 2]
    if not long:
        return 0
    tok = get_tokenizer()
    starts, ends = _token_edges(text)
    over = 0
    for s, e in long:
        n = bisect_right(ends, e) - bisect_left(starts, s) + 2  # + [CLS] and [SEP]
        if abs(n - window) <= 8:
            n = len(tok.encode(text[s:e], add_special_tokens=True).ids)
        over += n > window
    return over


@functools.lru_cache(maxsize=1)
def _token_edges(text: str) -> tuple[list[int], list[int]]:
    """Start and end offsets of the MiniLM tokens of ``text`` (kept for the file's other strategy)."""
    offsets = get_tokenizer().encode(text, add_special_tokens=False).offsets
    return [a for a, _ in offsets], [b for _, b in offsets]
