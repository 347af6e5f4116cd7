"""The 50,000-file code-RAG scenario, measured: chunking and retrieval over the pinned wheel corpus.

    python benchmarks/code_rag_50k.py                 # code-50k (run `chunklab corpus fetch code-50k` first)
    python benchmarks/code_rag_50k.py --quick         # a few hundred installed files, seconds
    python benchmarks/code_rag_50k.py --skip-retrieval --workers 2

**Chunking** (every file, both strategies, ``--workers`` processes, streamed: a worker
returns per-file numbers, never chunks): structural (the catalog's defaults) and recursive
800/80. Reported per strategy: chunks, fallback rate with every reason, size percentiles,
share of chunks that compile on their own (``compile(textwrap.dedent(text))``, the
capstone's test), chunks over MiniLM's 256-token window ([CLS] and [SEP] counted), CPU
seconds spent chunking vs measuring, wall time, peak resident memory.

**Retrieval**: CodeSearchNet-style questions (:func:`chunklab.datasets.code_questions`:
the first docstring sentence asks, the function's span answers, docstrings stripped from the
indexed copy) drawn from the whole corpus; every chunk of every file indexed with BM25
(:class:`chunklab.retrieval.lexical.BM25Index`) and the static embedding (``Encoder("static")``),
reciprocal-rank fusion of the two on top (:func:`chunklab.retrieval.hybrid.reciprocal_rank_fusion`), and MiniLM on a stratified sample of files
(over every chunk too with ``--minilm-full``, the default when a CUDA GPU is present). The parent keeps no chunk
text: workers return offsets, compile flags, static vectors and BM25 token counts (:func:`bm25_from_counts`). P@5,
R@5, MRR, character recall and the share of retrieved chunks that do not compile, structural
vs recursive with paired 95 % bootstrap intervals (:mod:`chunklab.evaluate.bootstrap`).

Results: ``benchmarks/results/code_rag_50k[-quick].json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import platform
import resource
import sys
import textwrap
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from chunklab.retrieval.vectors import exact_topk

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one thread per worker process

STRATEGIES = {"structural": {}, "recursive 800/80": {"size": 800, "overlap": 80}}
WINDOW = 256  # all-MiniLM-L6-v2's max_seq_length, special tokens included
PERCENTILES = (5, 25, 50, 75, 90, 95, 99)
K = 5
RESULTS = Path(__file__).resolve().parent / "results"

_CORPUS: Any = None  # set in the parent before the pool forks; workers read files from it
_OVERRIDES: dict[str, str] = {}  # doc_id -> text to index instead of the file (docstrings stripped)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the chunking and retrieval parts, write JSON + Markdown."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", default="code-50k", help="code_corpus name (default code-50k)")
    p.add_argument("--quick", action="store_true", help="the installed-files corpus, a few hundred files")
    p.add_argument("--files", type=int, default=None, help="use a seeded sample of this many files")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument(
        "--question-files",
        type=int,
        default=800,
        help="files questions are drawn from (default 800; 700 gave 1,008 questions on code-50k)",
    )
    p.add_argument(
        "--dense-files", type=int, default=500, help="stratified sample for MiniLM (default 500; 0 = skip)"
    )
    p.add_argument(
        "--minilm-full",
        choices=("auto", "yes", "no"),
        default="auto",
        help="MiniLM over every chunk too (auto: when a CUDA GPU is present; on 2 CPU cores it takes hours)",
    )
    p.add_argument(
        "--static-index",
        choices=("auto", "exact", "ivf"),
        default="auto",
        help="how the static tier is searched (auto: faiss IVF from 100,000 chunks, else the exact scan)",
    )
    p.add_argument("--skip-chunking", action="store_true")
    p.add_argument("--skip-retrieval", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument(
        "--note", default="", help="a line stored with the results (e.g. which commit's chunklab ran)"
    )
    args = p.parse_args(argv)
    stem = "code_rag_50k" + ("-quick" if args.quick else "")
    previous = args.out / f"{stem}.json"
    old = json.loads(previous.read_text(encoding="utf-8")) if previous.is_file() else {}

    def save(result: dict[str, Any]) -> None:
        """Write what is measured so far; a part skipped this time keeps its last measurement."""
        for part in ("chunking", "retrieval"):
            if part not in result and part in old and old.get("files") == result["files"]:
                result[part] = old[part]
        write_results(result, args.out, stem)

    result = run(args, save)
    print(render_markdown(result))
    return 0


def run(args: argparse.Namespace, save: Any = None) -> dict[str, Any]:
    """Both parts of the benchmark, as one JSON-ready dict (``save(result)`` after each part)."""
    global _TREE
    if _TREE is None:
        _TREE = _TreeRss()
    save = save or (lambda result: None)
    from chunklab.datasets.code import code_corpus

    if args.quick:
        corpus = code_corpus().sample(args.files or 300, seed=0)
        args.question_files = min(args.question_files, 40)
        args.dense_files = min(args.dense_files, 60)
    else:
        corpus = code_corpus(args.corpus)
        if args.files:
            corpus = corpus.sample(args.files, seed=0)
    result: dict[str, Any] = {
        "corpus": "installed (quick)" if args.quick else args.corpus,
        "files": len(corpus),
        "projects": len(corpus.projects()),
        "source_mb": round(corpus.total_bytes / 1e6, 1),
        "machine": machine(),
        "workers": args.workers,
        "code": {
            "chunklab": str(Path(sys.modules["chunklab"].__file__).parent),
            "note": getattr(args, "note", ""),
        },
    }
    if not args.skip_chunking:
        result["chunking"] = chunking(corpus, args.workers)
        save({**result, "machine_after": machine()})
    if not args.skip_retrieval:
        result["retrieval"] = retrieval(
            corpus, args, lambda rt: save({**result, "retrieval": rt, "machine_after": machine()})
        )
    result["machine_after"] = machine()
    save(result)
    return result


def machine() -> dict[str, Any]:
    """Cores, load average and Python: the numbers mean little without them (the machine is shared)."""
    return {
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


# --------------------------------------------------------------------------- chunking


def chunking(corpus: Any, workers: int) -> dict[str, Any]:
    """Chunk every file with both strategies in ``workers`` processes; aggregate the per-file numbers."""
    global _CORPUS
    _CORPUS = corpus
    sizes: dict[str, list[np.ndarray]] = {s: [] for s in STRATEGIES}
    totals = {s: Counter() for s in STRATEGIES}
    reasons: dict[str, Counter[str]] = {s: Counter() for s in STRATEGIES}
    examples: dict[str, list[str]] = {s: [] for s in STRATEGIES}
    start = time.perf_counter()
    for per_file in _map(_measure_file, range(len(corpus)), workers, "chunk"):
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
    out: dict[str, Any] = {"wall_s": round(wall, 1), "peak_rss_mb": peak_rss_mb(), "strategies": {}}
    for name in STRATEGIES:
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


def _measure_file(i: int) -> dict[str, dict[str, Any]]:
    f = _CORPUS[i]
    text = f.read_text()
    out = {}
    for name, chunks, chunk_ns in chunk_light(f, text):
        t0 = time.process_time_ns()
        compiles = [compiles_alone(c[2]) for c in chunks]
        over = over_window(text, [(c[0], c[1]) for c in chunks])
        measure_ns = time.process_time_ns() - t0
        fallback = chunks[0][3] if chunks else None
        out[name] = {
            "doc_id": f"{f.root}:{f.relpath}",
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


def chunk_light(f: Any, text: str, strategies: dict[str, dict[str, Any]] | None = None):
    """``(strategy, [(start, end, text, fallback_reason)], cpu_ns)`` for each strategy: chunks without their objects."""
    from chunklab.documents import Document

    doc = Document(f"{f.root}:{f.relpath}", text, kind="python")
    for name, params in (strategies or STRATEGIES).items():
        strategy = _strategy(name.split()[0], tuple(sorted(params.items())))
        t0 = time.process_time_ns()
        chunks = strategy(doc)
        ns = time.process_time_ns() - t0
        light = [
            (
                c.start,
                c.end,
                c.text,
                c.metadata.get("fallback_reason") if c.metadata.get("fallback") else None,
            )
            for c in chunks
        ]
        yield name, light, ns


_STRATEGY_CACHE: dict[Any, Any] = {}


def _strategy(kind: str, params: tuple) -> Any:
    key = (kind, params)
    if key not in _STRATEGY_CACHE:
        from chunklab.chunkers.catalog import get_strategy

        _STRATEGY_CACHE[key] = get_strategy(kind, **dict(params))
    return _STRATEGY_CACHE[key]


def compiles_alone(text: str) -> bool:
    """Whether a chunk is valid Python on its own, after removing common indentation."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(textwrap.dedent(text), "<chunk>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False


def over_window(text: str, spans: list[tuple[int, int]]) -> int:
    """How many ``text[s:e]`` are longer than MiniLM's window, tokenizing ``text`` once.

    A span's count is the number of the file's tokens lying inside it; a cut through a word
    can change the count at each edge, so spans within a few tokens of the window are
    tokenized on their own. A span of <= 254 characters is never over (a token covers >= 1).
    """
    from bisect import bisect_left, bisect_right

    from chunklab.units import get_tokenizer

    long = [(s, e) for s, e in spans if e - s > WINDOW - 2]
    if not long:
        return 0
    tok = get_tokenizer()
    starts, ends = _token_edges(text)
    over = 0
    for s, e in long:
        n = bisect_right(ends, e) - bisect_left(starts, s) + 2  # + [CLS] and [SEP]
        if abs(n - WINDOW) <= 8:
            n = len(tok.encode(text[s:e], add_special_tokens=True).ids)
        over += n > WINDOW
    return over


@functools.lru_cache(maxsize=1)
def _token_edges(text: str) -> tuple[list[int], list[int]]:
    """Start and end offsets of the MiniLM tokens of ``text`` (kept for the file's other strategy)."""
    from chunklab.units import get_tokenizer

    offsets = get_tokenizer().encode(text, add_special_tokens=False).offsets
    return [a for a, _ in offsets], [b for _, b in offsets]


def _map(fn: Any, items: Any, workers: int, desc: str):
    """``fn`` over ``items`` in order, in ``workers`` forked processes, with a progress bar."""
    from tqdm import tqdm

    items = list(items)
    bar = dict(total=len(items), desc=desc, unit="file", mininterval=10, disable=None)
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from tqdm(map(fn, items), **bar)
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield from tqdm(pool.imap(fn, items, chunksize=16), **bar)


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory: this process and its largest finished worker (kernel peaks, Linux reports KiB), and
    the whole process tree (main + live workers summed, sampled every 0.2 s) since the last call."""
    return {
        "main": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "largest_worker": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        "tree_sampled": _TREE.take(),
    }


class _TreeRss:
    """Samples the summed resident memory of this process and its children on a daemon thread."""

    def __init__(self, every_s: float = 0.2) -> None:
        import threading

        self.peak, self.every_s = 0, every_s
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        me = psutil.Process()
        while True:
            total = me.memory_info().rss
            for child in me.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.Error:  # a worker that just ended
                    pass
            with self._lock:
                self.peak = max(self.peak, total)
            time.sleep(self.every_s)

    def take(self) -> float:
        """Peak summed RSS in MB since the last call (then reset)."""
        with self._lock:
            peak, self.peak = self.peak, 0
        return round(peak / 2**20, 1)


_TREE: Any = None


# --------------------------------------------------------------------------- retrieval

RETRIEVERS_FULL = ("bm25", "static", "hybrid")
METRIC_NAMES = ("precision", "recall", "mrr", "char_recall", "not_compiling")
RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al.)
FUSE_DEPTH = 50  # how deep each list is read when fusing


def retrieval(corpus: Any, args: argparse.Namespace, save: Any = None) -> dict[str, Any]:
    """Questions from the whole corpus; full-scale BM25, static and hybrid; MiniLM on a stratified sample.

    ``save(partial)`` is called once the full-scale scope is measured (the sample comes after).
    """
    from chunklab.datasets.code_questions import code_questions

    global _STATIC_INDEX
    _STATIC_INDEX = getattr(args, "static_index", "auto")
    t0 = time.perf_counter()
    ds = code_questions(
        n_files=min(args.question_files, len(corpus)), seed=0, corpus=corpus, min_file_chars=500
    )
    _OVERRIDES.clear()
    _OVERRIDES.update({d.doc_id: d.text for d in ds.documents})
    questions = ds.questions
    out: dict[str, Any] = {
        "questions": len(questions),
        "question_files": len(ds.documents),
        "questions_s": round(time.perf_counter() - t0, 1),
        "k": K,
        "scopes": {},
    }
    everything = list(range(len(corpus)))
    t1, cpu1 = time.perf_counter(), time.process_time()
    full_retrievers = (
        (*RETRIEVERS_FULL, "minilm")
        if minilm_at_full_scale(getattr(args, "minilm_full", "no"))
        else RETRIEVERS_FULL
    )
    out["scopes"]["full"] = evaluate_scope(corpus, everything, questions, full_retrievers, args.workers)
    out["scopes"]["full"]["wall_s"] = round(time.perf_counter() - t1, 1)
    out["scopes"]["full"]["main_cpu_s"] = round(time.process_time() - cpu1, 1)
    out["scopes"]["full"]["peak_rss_mb"] = peak_rss_mb()
    if save:
        save(out)
    if args.dense_files:
        sample, asked = stratified_sample(corpus, questions, args.dense_files, seed=0)
        scope = evaluate_scope(corpus, sample, asked, (*RETRIEVERS_FULL, "minilm"), args.workers)
        scope["sampling"] = (
            f"{len(asked)} questions from {len({q.doc_id for q in asked})} files + stratified sample by project"
        )
        out["scopes"]["dense sample"] = scope
    return out


def minilm_at_full_scale(choice: str) -> bool:
    """Whether MiniLM also runs over every chunk: ``"yes"``, ``"no"``, or ``"auto"`` (a CUDA device is present)."""
    if choice in ("yes", "no"):
        return choice == "yes"
    from chunklab.embed.models import resolve_device

    return resolve_device("auto").startswith("cuda")


def stratified_sample(
    corpus: Any, questions: list[Any], n_files: int, seed: int = 0
) -> tuple[list[int], list[Any]]:
    """About ``n_files`` corpus indices drawn per project in proportion to its size, plus a third as question files.

    The questions kept are those of the question files drawn (seeded), so every kept
    question's gold file is indexed, among distractors from every project.
    """
    import random

    rng = random.Random(seed)
    by_doc: dict[str, list[Any]] = {}
    for q in questions:
        by_doc.setdefault(q.doc_id, []).append(q)
    qdocs = sorted(by_doc)
    picked_docs = set(rng.sample(qdocs, min(len(qdocs), max(1, n_files // 3))))
    by_project: dict[str, list[int]] = {}
    for i, f in enumerate(corpus):
        by_project.setdefault(f.project, []).append(i)
    budget = max(1, n_files - len(picked_docs))
    chosen: set[int] = set()
    for project in sorted(by_project):
        members = by_project[project]
        take = min(len(members), max(1, round(budget * len(members) / len(corpus))))
        chosen.update(rng.sample(members, take))
    chosen.update(i for i, f in enumerate(corpus) if f"{f.root}:{f.relpath}" in picked_docs)
    asked = [q for q in questions if q.doc_id in picked_docs]
    return sorted(chosen), asked


def evaluate_scope(
    corpus: Any, indices: list[int], questions: list[Any], retrievers: tuple[str, ...], workers: int
) -> dict[str, Any]:
    """Index ``indices`` with each strategy, ask every question with each retriever, compare strategies."""
    from chunklab.evaluate.bootstrap import bootstrap_means, confidence_interval, resample_counts

    scope: dict[str, Any] = {
        "files": len(indices),
        "questions": len(questions),
        "strategies": {},
        "paired": {},
    }
    per_q: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    counts = resample_counts(len(questions), 2000, seed=0) if questions else None
    for name in STRATEGIES:
        index = build_index(corpus, indices, name, workers, minilm="minilm" in retrievers)
        entry = {"chunks": index["n"], "timings": index["timings"], "retrievers": {}}
        rankings = rank_all(index, [q.question for q in questions], retrievers, entry["timings"])
        for r, ranked in rankings.items():
            scores = score(index, questions, ranked)
            per_q[(name, r)] = scores
            means = {m: round(float(v.mean()), 4) for m, v in scores.items()}
            if (
                counts is not None
            ):  # each mean's own 95 % bootstrap interval, same resamples as the paired ones
                lo, hi = confidence_interval(
                    bootstrap_means(np.vstack([scores[m] for m in METRIC_NAMES]), counts)
                )
                means["interval"] = {
                    m: [round(float(x), 4), round(float(y), 4)] for m, x, y in zip(METRIC_NAMES, lo, hi)
                }
            if r == "_static_exact":  # the exact scan of the same vectors: what IVF's approximation costs
                means["recall_minus_ivf"] = paired_difference(
                    scores["recall"] - per_q[(name, "static")]["recall"], counts
                )
                entry["static_exact"] = means
            else:
                entry["retrievers"][r] = means
        entry["timings"]["peak_rss_mb_after_queries"] = peak_rss_mb()
        scope["strategies"][name] = entry
        del index
    a, b = list(STRATEGIES)
    for r in retrievers:
        cmp = {}
        for m in METRIC_NAMES:
            cmp[m] = paired_difference(per_q[(a, r)][m] - per_q[(b, r)][m], counts)
        scope["paired"][r] = cmp
    return scope


def paired_difference(diff: np.ndarray, counts: Any) -> dict[str, float]:
    """Mean of per-question differences with its 95 % bootstrap interval (the resamples ``counts``)."""
    from chunklab.evaluate.bootstrap import bootstrap_means, confidence_interval

    lo, hi = confidence_interval(bootstrap_means(diff[None, :], counts))
    return {"diff": round(float(diff.mean()), 4), "lo": round(float(lo[0]), 4), "hi": round(float(hi[0]), 4)}


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


def build_index(corpus: Any, indices: list[int], name: str, workers: int, minilm: bool) -> dict[str, Any]:
    """Chunk ``indices`` with strategy ``name`` in workers; one streamed BM25 and static index over every chunk.

    Workers return, per file, the chunks' offsets, whether each compiles, their static
    vectors and their BM25 token counts (the kit's ``"auto"`` tokenizer, no contextual
    header: a code chunk has none); the parent keeps no chunk text (only for MiniLM,
    on a sample). The BM25 weights are bm25s's Lucene variant with the kit's ``k1``/``b``,
    built straight into bm25s's sparse matrix (:func:`bm25_from_counts`), so the search
    side is ``bm25s.BM25.get_scores_from_ids`` as in :class:`chunklab.retrieval.lexical.BM25Index`.
    """
    from chunklab.embed import Encoder
    from chunklab.retrieval.vectors import VectorIndex

    global _CORPUS, _INDEX_STRATEGY, _KEEP_TEXT
    _CORPUS, _INDEX_STRATEGY, _KEEP_TEXT = corpus, name, minilm
    Encoder(model="static").encode(["warm up"])  # distil/load once before forking
    t0, cpu0 = time.perf_counter(), time.process_time()
    cols = {k: _Grow(np.int32) for k in ("file", "start", "end", "nuniq", "length", "term")}
    tf, ok = _Grow(np.uint16), _Grow(bool)
    vectors = _Grow(
        np.float32, 256
    )  # float32: a query scans it without converting (float16 halves memory, triples latency)
    vocab: dict[str, int] = {}
    texts: list[str] = []
    worker_cpu = 0.0
    for i, (piece, cpu) in zip(indices, _map(_index_file, indices, workers, f"index {name}")):
        n = len(piece["start"])
        cols["file"].add(np.full(n, i, np.int32))
        for k in ("start", "end", "nuniq", "length"):
            cols[k].add(piece[k])
        ok.add(piece["ok"])
        vectors.add(piece["vectors"])
        tokens = piece["tokens"].split("\n") if piece["tokens"] else []
        cols["term"].add(
            np.fromiter((vocab.setdefault(t, len(vocab)) for t in tokens), np.int32, len(tokens))
        )
        tf.add(piece["tf"])
        texts += piece.get("texts", [])
        worker_cpu += cpu
    chunk_wall = time.perf_counter() - t0
    arrays = {k: g.done() for k, g in cols.items()}
    t1 = time.perf_counter()
    bm25 = bm25_from_counts(
        arrays.pop("term"), tf.done(), arrays.pop("nuniq"), arrays.pop("length"), len(vocab)
    )
    bm25.vocab_dict = vocab
    bm25_s = time.perf_counter() - t1
    doc_ids = {i: f"{corpus[i].root}:{corpus[i].relpath}" for i in indices}
    static = vectors.done()
    t2 = time.perf_counter()
    ann = VectorIndex(
        static, method=_STATIC_INDEX, seed=0
    )  # faiss IVF at full scale, the exact scan on a sample
    ann_s = time.perf_counter() - t2
    index = {
        "n": len(arrays["start"]),
        "bm25": bm25,
        "vocab": vocab,
        "doc_ids": doc_ids,
        **arrays,
        "compiles": ok.done(),
        "static": static,
        "static_ann": ann,
        "timings": {
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
            "bm25_postings": int(len(bm25.scores["data"])),
            "peak_rss_mb": peak_rss_mb(),
        },
    }
    if minilm:
        t2 = time.perf_counter()
        enc = Encoder(model="minilm", cache_dir=False, show_progress=False)
        index["minilm"] = enc.encode(texts).astype(np.float16)
        index["minilm_encoder"] = enc
        index["timings"]["minilm_encode_s"] = round(time.perf_counter() - t2, 1)
    return index


def bm25_from_counts(
    term: np.ndarray,
    tf: np.ndarray,
    nuniq: np.ndarray,
    length: np.ndarray,
    n_terms: int,
    k1: float = 1.5,
    b: float = 0.75,
) -> Any:
    """A ``bm25s.BM25`` (Lucene variant) from per-document term counts, without lists of token lists.

    Document ``d`` holds ``nuniq[d]`` distinct terms, listed in order in ``term`` (ids below
    ``n_terms``) with their counts in ``tf``; ``length[d]`` is its token count. The weights are
    bm25s's: ``idf(t) * tf / (tf + k1 * (1 - b + b * len / avg_len))`` with the Lucene idf
    ``log(1 + (N - df + 0.5) / (df + 0.5))``, stored term-major (CSC) as bm25s stores them.
    """
    import bm25s
    import scipy.sparse as sp
    from bm25s.scoring import _score_tfc_lucene

    n_docs = len(nuniq)
    bm25 = bm25s.BM25(k1=k1, b=b)
    df = np.bincount(term, minlength=n_terms).astype(np.float64)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
    del df
    avg = float(length.mean()) if n_docs else 1.0
    data = np.empty(len(term), dtype=np.float32)
    doc_of = np.repeat(np.arange(n_docs, dtype=np.int32), nuniq)
    step = 1 << 24
    for lo in range(0, len(term), step):  # in slices: no full-size float64 temporaries
        sl = slice(lo, lo + step)
        l_d = length[doc_of[sl]].astype(np.float32)
        data[sl] = idf[term[sl]] * _score_tfc_lucene(tf[sl].astype(np.float32), l_d, np.float32(avg), k1, b)
    del doc_of, tf
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(nuniq, out=indptr[1:])
    matrix = sp.csr_matrix((data, term, indptr), shape=(n_docs, n_terms)).tocsc()
    del data, term
    bm25.scores = {
        "data": matrix.data,
        "indices": matrix.indices.astype(np.int32, copy=False),
        "indptr": matrix.indptr,
        "num_docs": n_docs,
    }
    bm25.nonoccurrence_array = None
    return bm25


_INDEX_STRATEGY = ""
_KEEP_TEXT = False
_STATIC_INDEX = "auto"  # --static-index
_STATIC: Any = None


def _index_file(i: int) -> tuple[dict[str, Any], float]:
    """One file's chunks for the index: offsets, compiles, static vectors, BM25 counts (worker side)."""
    global _STATIC
    from chunklab.embed import Encoder
    from chunklab.retrieval.lexical import tokenize

    t0 = time.process_time()
    f = _CORPUS[i]
    text = _OVERRIDES.get(f"{f.root}:{f.relpath}")
    if text is None:
        text = f.read_text()
    ((_, light, _),) = chunk_light(f, text, {_INDEX_STRATEGY: STRATEGIES[_INDEX_STRATEGY]})
    texts = [c[2] for c in light]
    if _STATIC is None:
        _STATIC = Encoder(model="static")
    counts = [Counter(tokenize(t)) for t in texts]
    piece = {
        "start": np.fromiter((c[0] for c in light), np.int32, len(light)),
        "end": np.fromiter((c[1] for c in light), np.int32, len(light)),
        "ok": np.fromiter((compiles_alone(t) for t in texts), bool, len(texts)),
        "vectors": _STATIC.encode(texts).astype(np.float32) if texts else np.zeros((0, 256), np.float32),
        "nuniq": np.fromiter((len(c) for c in counts), np.int32, len(counts)),
        "length": np.fromiter((sum(c.values()) for c in counts), np.int32, len(counts)),
        "tokens": "\n".join(t for c in counts for t in c),
        "tf": np.fromiter((min(v, 65535) for c in counts for v in c.values()), np.uint16),
    }
    if _KEEP_TEXT:
        piece["texts"] = texts
    return piece, time.process_time() - t0


def bm25_search(index: dict[str, Any], query: str, k: int) -> list[int]:
    """Top ``k`` chunk positions for ``query`` (the kit's tokenizer; ties by position; zero scores dropped)."""
    from chunklab.retrieval.lexical import tokenize

    vocab = index["vocab"]
    ids = [vocab[t] for t in dict.fromkeys(tokenize(query)) if t in vocab]
    if not ids or not index["n"]:
        return []
    scores = np.asarray(index["bm25"].get_scores_from_ids(ids), dtype=np.float32)
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    top = top[np.lexsort((top, -scores[top]))]
    return [int(i) for i in top if scores[i] > 0]


LATENCY_QUERIES = 200  # single-query latencies are timed on this many questions


def rank_all(
    index: dict[str, Any], queries: list[str], retrievers: tuple[str, ...], timings: dict[str, Any]
) -> dict[str, list[list[int]]]:
    """Top chunk positions per query for each retriever; per-query latency percentiles into ``timings``."""
    from chunklab.embed import Encoder

    out: dict[str, list[list[int]]] = {}
    if not queries:
        return {r: [] for r in retrievers}
    lat: list[float] = []
    bm25_ranked = []
    for q in queries:
        t = time.perf_counter()
        bm25_ranked.append(bm25_search(index, q, FUSE_DEPTH))
        lat.append(time.perf_counter() - t)
    timings["bm25_query_ms_p50_p95"] = [round(float(np.percentile(lat, p)) * 1000, 1) for p in (50, 95)]
    out["bm25"] = bm25_ranked
    static = Encoder(model="static")
    ann = index["static_ann"]
    t = time.perf_counter()
    qv = static.encode(queries)
    static_ranked = ann.ranked(qv, FUSE_DEPTH)
    timings["static_query_ms_mean_batched"] = round((time.perf_counter() - t) / len(queries) * 1000, 2)
    one = []
    for q in queries[:LATENCY_QUERIES]:  # one query at a time, as a user would ask: encode + search
        t = time.perf_counter()
        ann.ranked(static.encode([q]), FUSE_DEPTH)
        one.append(time.perf_counter() - t)
    timings["static_query_ms_p50_p95"] = [round(float(np.percentile(one, p)) * 1000, 1) for p in (50, 95)]
    if ann.method == "ivf":  # what the approximation costs against the exact scan, and what it buys
        tradeoff = ann_tradeoff(index, ann, qv, queries[:LATENCY_QUERIES], static)
        out["_static_exact"] = tradeoff.pop("exact_ranked")
        timings["static_index"].update(tradeoff)
    out["static"] = static_ranked
    if "hybrid" in retrievers:  # dense first, as HybridRetriever fuses
        t = time.perf_counter()
        out["hybrid"] = [fuse(index, dense, lexical) for dense, lexical in zip(static_ranked, bm25_ranked)]
        timings["fuse_ms_mean"] = round((time.perf_counter() - t) / len(queries) * 1000, 2)
        hybrid = [a + b for a, b in zip(lat[:LATENCY_QUERIES], one)]
        timings["hybrid_query_ms_p50_p95"] = [
            round(float(np.percentile(hybrid, p)) * 1000 + timings["fuse_ms_mean"], 1) for p in (50, 95)
        ]
    if "minilm" in retrievers:
        qm = index["minilm_encoder"].encode(queries)
        out["minilm"] = exact_topk(index["minilm"], qm, K)[1].tolist()
    return {r: [ranked[:K] for ranked in out[r]] for r in (*retrievers, "_static_exact") if r in out}


def fuse(index: dict[str, Any], dense: list[int], lexical: list[int]) -> list[int]:
    """Reciprocal-rank fusion (the kit's) of two position rankings, best ``K`` positions."""
    from chunklab.chunk import Chunk
    from chunklab.retrieval.hybrid import reciprocal_rank_fusion

    light = {
        i: Chunk(
            "", int(index["start"][i]), int(index["end"][i]), index["doc_ids"][int(index["file"][i])], {}
        )
        for i in dict.fromkeys(dense + lexical)
    }
    where = {id(c): i for i, c in light.items()}
    fused = reciprocal_rank_fusion(
        [[(light[i], 0.0) for i in dense], [(light[i], 0.0) for i in lexical]], k=K, rrf_k=RRF_K
    )
    return [where[id(c)] for c, _ in fused]


NPROBES = (1, 4, 16, 64, 256, 1024)  # the IVF sweep: cells scanned per query


def ann_tradeoff(
    index: dict[str, Any], ann: Any, qv: np.ndarray, latency_queries: list[str], encoder: Any
) -> dict[str, Any]:
    """The IVF index against the exact scan: top-5 agreement and single-query latency per ``nprobe``.

    Every question's exact top 5 comes from one batched exact scan of the same vectors
    (:func:`chunklab.retrieval.vectors.exact_topk`); latency is encode + search of one query, as in
    :func:`rank_all`, on the first :data:`LATENCY_QUERIES` questions.
    """
    from chunklab.retrieval.vectors import agreement

    t = time.perf_counter()
    exact = exact_topk(index["static"], qv, K)[1].tolist()
    out: dict[str, Any] = {
        "exact_batched_ms_mean": round((time.perf_counter() - t) / len(qv) * 1000, 2),
        "sweep": [],
    }
    one = []
    for q in latency_queries:  # the exact scan one query at a time: the latency IVF avoids
        t = time.perf_counter()
        exact_topk(index["static"], encoder.encode([q]), K)
        one.append(time.perf_counter() - t)
    out["exact_query_ms_p50_p95"] = [round(float(np.percentile(one, p)) * 1000, 1) for p in (50, 95)]
    for nprobe in sorted({*NPROBES, ann.nprobe}):
        if nprobe > ann.nlist:
            continue
        found = ann.ranked(qv, K, nprobe=nprobe)
        lat = []
        for q in latency_queries:
            t = time.perf_counter()
            ann.ranked(encoder.encode([q]), FUSE_DEPTH, nprobe=nprobe)
            lat.append(time.perf_counter() - t)
        out["sweep"].append(
            {
                "nprobe": nprobe,
                "agreement_at_5": round(agreement(found, exact, K), 4),
                "query_ms_p50_p95": [round(float(np.percentile(lat, p)) * 1000, 1) for p in (50, 95)],
            }
        )
    out["exact_ranked"] = exact
    return out


def score(index: dict[str, Any], questions: list[Any], ranked: list[list[int]]) -> dict[str, np.ndarray]:
    """Per-question P@5, R@5, MRR (span hits), character recall and share of top-5 chunks that do not compile."""
    from chunklab.evaluate.metrics import hits_by_span, rank_metrics, span_metrics

    cols = {m: np.zeros(len(questions)) for m in METRIC_NAMES}
    compiles, doc_ids = index["compiles"], index["doc_ids"]
    for j, (q, top) in enumerate(zip(questions, ranked)):
        gold = [(q.doc_id, s, e) for s, e in q.gold_spans]
        spans = [(doc_ids[int(index["file"][i])], int(index["start"][i]), int(index["end"][i])) for i in top]
        m = rank_metrics(hits_by_span(spans, gold, k=K), len(gold), K)
        cols["precision"][j], cols["recall"][j], cols["mrr"][j] = m["precision"], m["recall"], m["mrr"]
        cols["char_recall"][j] = span_metrics(spans, gold)["recall"]
        cols["not_compiling"][j] = float(np.mean(~compiles[top])) if top else 0.0
    return cols


def _cell(m: dict[str, Any], key: str, fmt: str) -> str:
    """A mean with its own 95 % interval when the result has one."""
    lo_hi = m.get("interval", {}).get(key)
    return f"{m[key]:{fmt}}" + (f" [{lo_hi[0]:{fmt}}, {lo_hi[1]:{fmt}}]" if lo_hi else "")


def render_retrieval(rt: dict[str, Any]) -> list[str]:
    """Markdown for the retrieval part: one table per scope, then the paired differences."""
    lines = [
        f"## Retrieval ({rt['questions']} questions from {rt['question_files']} files, top {rt['k']})",
        "",
    ]
    for scope_name, scope in rt["scopes"].items():
        lines += [
            f"### {scope_name}: {scope['files']:,} files indexed, {scope['questions']} questions",
            "",
            "| strategy | retriever | chunks | P@5 | R@5 | MRR | char recall | retrieved not compiling |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, entry in scope["strategies"].items():
            for r, m in entry["retrievers"].items():
                lines.append(
                    f"| {name} | {r} | {entry['chunks']:,} | "
                    + " | ".join(_cell(m, k, ".1%" if k == "not_compiling" else ".3f") for k in METRIC_NAMES)
                    + " |"
                )
        lines += [
            "",
            "Structural minus recursive, paired 95 % bootstrap interval:",
            "",
            "| retriever | " + " | ".join(METRIC_NAMES) + " |",
            "|---" * (len(METRIC_NAMES) + 1) + "|",
        ]
        for r, cmp in scope["paired"].items():
            lines.append(
                f"| {r} | "
                + " | ".join(f"{c['diff']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}]" for c in cmp.values())
                + " |"
            )
        for name, entry in scope["strategies"].items():
            timings = dict(entry["timings"])
            ivf = timings.pop("static_index", None)
            lines.append(f"\nTimings ({name}): " + ", ".join(f"{k} {v}" for k, v in timings.items()))
            if ivf and ivf.get("sweep"):
                lines += [
                    f"\nStatic index ({name}): faiss IVF, {ivf['nlist']:,} cells, {ivf['nprobe']} scanned by default, "
                    f"built in {ivf['build_s']} s; exact scan of every vector: query p95 "
                    f"{ivf['exact_query_ms_p50_p95'][1]} ms, {ivf['exact_batched_ms_mean']} ms/query batched.",
                    "",
                    "| cells scanned | exact top-5 returned | query p50 (ms) | query p95 (ms) |",
                    "|---|---|---|---|",
                ]
                lines += [
                    f"| {row['nprobe']} | {row['agreement_at_5']:.1%} | {row['query_ms_p50_p95'][0]} | "
                    f"{row['query_ms_p50_p95'][1]} |"
                    for row in ivf["sweep"]
                ]
            exact = entry.get("static_exact")
            if exact:
                d = exact["recall_minus_ivf"]
                lines.append(
                    f"\nStatic retriever with the exact scan instead ({name}): R@5 {_cell(exact, 'recall', '.3f')}, "
                    f"MRR {_cell(exact, 'mrr', '.3f')}; exact minus IVF R@5 {d['diff']:+.3f} "
                    f"[{d['lo']:+.3f}, {d['hi']:+.3f}]"
                )
        lines.append("")
    return lines


# --------------------------------------------------------------------------- output


def write_results(result: dict[str, Any], out: Path, stem: str) -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.md`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    js, md = out / f"{stem}.json", out / f"{stem}.md"
    js.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    md.write_text(render_markdown(result), encoding="utf-8")
    return js, md


def render_markdown(result: dict[str, Any]) -> str:
    """The result as Markdown tables: chunking per strategy, then retrieval per retriever."""
    lines = [
        f"# Code RAG at scale: {result['corpus']}",
        "",
        f"{result['files']:,} files, {result['projects']} projects, {result['source_mb']} MB of source; "
        f"{result['workers']} workers; load average {result['machine']['loadavg']} before, "
        f"{result.get('machine_after', {}).get('loadavg')} after ({result['machine']['cpus']} CPUs).",
        "",
    ]
    ch = result.get("chunking")
    if ch:
        lines += [
            f"## Chunking (wall {ch['wall_s']} s, peak RSS {ch['peak_rss_mb']} MB)",
            "",
            "| strategy | chunks | fallback files | p50 | p90 | p99 | max | compile alone | over 256 tokens | chunk CPU s |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, s in ch["strategies"].items():
            q = s["size_percentiles"]
            lines.append(
                f"| {name} | {s['chunks']:,} | {s['fallback_files']} ({s['fallback_rate']:.2%}) | {q.get('50')} | "
                f"{q.get('90')} | {q.get('99')} | {s['size_max']} | {s['compile_share']:.1%} | "
                f"{s['over_window_share']:.1%} | {s['chunk_cpu_s']} |"
            )
        for name, s in ch["strategies"].items():
            if s["fallback_reasons"]:
                lines.append(
                    f"\nFallback reasons ({name}): "
                    + ", ".join(f"{k} ×{v}" for k, v in s["fallback_reasons"].items())
                )
        lines.append("")
    rt = result.get("retrieval")
    if rt:
        lines += render_retrieval(rt)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
