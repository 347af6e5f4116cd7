"""One scope's index: every chunk of every file, plain and contextual BM25, static vectors.

Workers return, per file, the chunks' offsets, whether each compiles, their static vectors and
two sets of BM25 token counts (the kit's ``"auto"`` tokenizer): the chunk's text alone (plain
BM25, the scenario's first measure) and its contextual header + text ("contextual BM25", as
:class:`chunklab.retrieval.lexical.BM25Index` indexes :func:`chunklab.chunk.embedding_text`;
the header is :func:`.chunking.contextual_headers`: file path > qualified name). The parent
keeps no chunk text (only for MiniLM, on a sample). BM25 is
:class:`chunklab.retrieval.bm25_counts.CountsBM25`: bm25s's Lucene weights with the kit's ``k1``/``b``,
built from those counts without lists of token lists. The static vectors embed the text alone.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from chunklab.datasets.corpora.code import CodeCorpus
from chunklab.embed import Encoder, get_encoder
from chunklab.retrieval.bm25_counts import CountsBM25
from chunklab.retrieval.lexical import tokenize
from chunklab.retrieval.vectors import VectorIndex

from .chunking import chunk_light, compiles_alone, doc_id, parallel_map
from .config import Config
from .resources import Memory

STATIC_DIM = 256


@dataclass
class CodeIndex:
    """Every chunk of a scope by position: where it lies, whether it compiles, its BM25 and vectors."""

    bm25: CountsBM25
    bm25_ctx: CountsBM25  # contextual header + text
    doc_ids: dict[int, str]  # corpus index -> document id
    file: np.ndarray  # per chunk: its file's corpus index
    start: np.ndarray
    end: np.ndarray
    compiles: np.ndarray
    static: (
        np.ndarray
    )  # float32: a query scans it without converting (float16 halves memory, triples latency)
    static_ann: VectorIndex
    timings: dict[str, Any]
    minilm: np.ndarray | None = None
    minilm_encoder: Encoder | None = None

    @property
    def n(self) -> int:
        """How many chunks are indexed."""
        return len(self.start)

    def span(self, i: int) -> tuple[str, int, int]:
        """Chunk ``i`` as ``(doc_id, start, end)``."""
        return self.doc_ids[int(self.file[i])], int(self.start[i]), int(self.end[i])


@dataclass(frozen=True)
class IndexJob:
    """What an indexing worker needs: settings, corpus, strategy, the texts to index instead of files."""

    config: Config
    corpus: CodeCorpus
    strategy: str
    overrides: Mapping[str, str]  # doc_id -> text to index instead of the file (docstrings stripped)
    keep_text: bool  # return the chunk texts too (MiniLM encodes them in the parent)


def build_index(
    corpus: CodeCorpus,
    indices: list[int],
    name: str,
    config: Config,
    overrides: Mapping[str, str],
    memory: Memory,
    minilm: bool,
) -> CodeIndex:
    """Chunk ``indices`` with strategy ``name`` in workers; one streamed BM25 and static index over
    every chunk."""
    Encoder(model="static").encode(["warm up"])  # distil/load once before forking
    t0, cpu0 = time.perf_counter(), time.process_time()
    cols = {k: _Grow(np.int32) for k in ("file", "start", "end", *_BM25_COLS, *_ctx(_BM25_COLS))}
    tf, tf_ctx, ok = _Grow(np.uint16), _Grow(np.uint16), _Grow(bool)
    vectors = _Grow(np.float32, STATIC_DIM)
    vocab: dict[str, int] = {}
    texts: list[str] = []
    worker_cpu = 0.0
    job = IndexJob(config, corpus, name, overrides, minilm)
    for i, (piece, cpu) in zip(
        indices, parallel_map(index_file, indices, job, config.workers, f"index {name}")
    ):
        n = len(piece["start"])
        cols["file"].add(np.full(n, i, np.int32))
        for k in ("start", "end", "nuniq", "length", *_ctx(("nuniq", "length"))):
            cols[k].add(piece[k])
        ok.add(piece["ok"])
        vectors.add(piece["vectors"])
        for suffix in ("", "_ctx"):
            tokens = piece["tokens" + suffix].split("\n") if piece["tokens" + suffix] else []
            cols["term" + suffix].add(
                np.fromiter((vocab.setdefault(t, len(vocab)) for t in tokens), np.int32, len(tokens))
            )
        tf.add(piece["tf"])
        tf_ctx.add(piece["tf_ctx"])
        texts += piece.get("texts", [])
        worker_cpu += cpu
    chunk_wall = time.perf_counter() - t0
    arrays = {k: g.done() for k, g in cols.items()}
    t1 = time.perf_counter()
    bm25 = CountsBM25(arrays.pop("term"), tf.done(), arrays.pop("nuniq"), arrays.pop("length"), vocab)
    bm25_s = time.perf_counter() - t1
    bm25_ctx = CountsBM25(
        arrays.pop("term_ctx"), tf_ctx.done(), arrays.pop("nuniq_ctx"), arrays.pop("length_ctx"), vocab
    )
    static = vectors.done()
    t2 = time.perf_counter()
    ann = VectorIndex(static, method=config.static_index, seed=0)  # IVF at full scale, exact on a sample
    ann_s = time.perf_counter() - t2
    timings = {
        "chunk_and_static_wall_s": round(chunk_wall, 1),
        "worker_cpu_s": round(worker_cpu, 1),
        "main_cpu_s": round(time.process_time() - cpu0, 1),
        "bm25_build_s": round(bm25_s, 1),
        "static_index": {
            "method": ann.method,
            "nlist": ann.nlist,
            "nprobe": ann.nprobe,
            "build_s": round(ann_s, 1),
        },
        "index_build_wall_s": round(time.perf_counter() - t0, 1),
        "vocabulary": len(vocab),
        "bm25_postings": bm25.postings,
        "bm25_ctx_postings": bm25_ctx.postings,
        "peak_rss_mb": memory.peak(),
    }
    index = CodeIndex(
        bm25=bm25,
        bm25_ctx=bm25_ctx,
        doc_ids={i: doc_id(corpus[i]) for i in indices},
        file=arrays["file"],
        start=arrays["start"],
        end=arrays["end"],
        compiles=ok.done(),
        static=static,
        static_ann=ann,
        timings=timings,
    )
    if minilm:
        t3 = time.perf_counter()
        enc = Encoder(model="minilm", cache_dir=False, show_progress=False)
        index.minilm = enc.encode(texts).astype(np.float16)
        index.minilm_encoder = enc
        timings["minilm_encode_s"] = round(time.perf_counter() - t3, 1)
    return index


def index_file(i: int, job: IndexJob) -> tuple[dict[str, Any], float]:
    """File ``i``'s chunks for the index (worker side): offsets, compiles, static vectors, BM25 counts."""
    t0 = time.process_time()
    f = job.corpus[i]
    text = job.overrides.get(doc_id(f))
    if text is None:
        text = f.read_text()
    ((_, light, _),) = chunk_light(f, text, job.config, [job.strategy], headers=True)
    texts = [c[2] for c in light]
    counts = [Counter(tokenize(t)) for t in texts]
    # embedding_text(chunk) is header + "\n\n" + text and no token spans the blank line between them
    counts_ctx = [c + Counter(tokenize(light[j][4])) for j, c in enumerate(counts)]
    static = get_encoder("static")  # one per worker process
    piece = {
        "start": np.fromiter((c[0] for c in light), np.int32, len(light)),
        "end": np.fromiter((c[1] for c in light), np.int32, len(light)),
        "ok": np.fromiter((compiles_alone(t) for t in texts), bool, len(texts)),
        "vectors": static.encode(texts).astype(np.float32)
        if texts
        else np.zeros((0, STATIC_DIM), np.float32),
        **_counts_piece(counts, ""),
        **_counts_piece(counts_ctx, "_ctx"),
    }
    if job.keep_text:
        piece["texts"] = texts
    return piece, time.process_time() - t0


_BM25_COLS = ("nuniq", "length", "term")


def _ctx(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The contextual index's column names."""
    return tuple(k + "_ctx" for k in keys)


def _counts_piece(counts: list[Counter[str]], suffix: str) -> dict[str, Any]:
    """One BM25 index's share of a file: per chunk unique terms and length, the terms, their counts."""
    return {
        "nuniq" + suffix: np.fromiter((len(c) for c in counts), np.int32, len(counts)),
        "length" + suffix: np.fromiter((sum(c.values()) for c in counts), np.int32, len(counts)),
        "tokens" + suffix: "\n".join(t for c in counts for t in c),
        "tf" + suffix: np.fromiter((min(v, 65535) for c in counts for v in c.values()), np.uint16),
    }


class _Grow:
    """An append-only numpy array (amortised doubling), so per-file pieces are never all kept as lists."""

    def __init__(self, dtype: Any, width: int = 0) -> None:
        self.a = np.zeros((1024, width) if width else 1024, dtype=dtype)
        self.n = 0

    def add(self, values: np.ndarray) -> None:
        """Append ``values`` (rows, when the array has a width)."""
        need = self.n + len(values)
        if need > len(self.a):
            bigger = np.zeros((max(need, 2 * len(self.a)), *self.a.shape[1:]), dtype=self.a.dtype)
            bigger[: self.n] = self.a[: self.n]
            self.a = bigger
        self.a[self.n : need] = values
        self.n = need

    def done(self) -> np.ndarray:
        """The array, trimmed (a copy; this object is emptied)."""
        out, self.a = self.a[: self.n].copy(), np.zeros(0, self.a.dtype)
        return out
