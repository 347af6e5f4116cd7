"""Real documents nobody here made, read the way a practitioner's run reads them (issue 36).

Every file of the ``real-docs`` corpus (``chunklab corpus fetch real-docs``: TeX Live and Debian
documentation PDFs, PyDocX and mammoth Word fixtures, nbsphinx notebooks, pinned by sha256) goes
through the kit's one load-and-chunk stage (:func:`chunklab.ingest.stages.load` and
:func:`~chunklab.ingest.stages.chunk`, what ``chunklab chunk`` and ``chunklab index`` run, with
``chunk``'s default strategy). Recorded per file: ``ok`` or its one-line error, pages, pages read
by OCR, pages without a text layer, chunks, lone UTF-16 surrogates in the chunks (must be 0), and
for a Word file how much of its text is there: each paragraph of the document, its text boxes, its
footnotes and endnotes (read from the package's XML here, independently of the loader; the
fallback copy Word keeps of a text box counted once) looked for in the loaded text.

Then each of the 52 typed quotes (``chunklab/data/corpora/real-docs-questions.jsonl``: typed from the
rendered pages as a reader types them, a space where a line broke, hyphenated words joined, straight
quotes) is located by :func:`chunklab.datasets.model.locate_quote`, the kit's one quote matcher:
``exact`` (the quote occurs verbatim), ``tolerant`` (found by the typing rules) or ``not found``
(with the near miss the kit reports) or ``ambiguous``.

    python -m benchmarks.real_documents          # writes benchmarks/results/real_documents.json and .md
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from benchmarks.code_poly_retrieval import measured_block
from chunklab.chunkers.catalog import strategy_from_options
from chunklab.datasets.corpora.pdfdocs import load_manifest, manifest_path
from chunklab.datasets.model import QuoteNotFoundError, locate_quote
from chunklab.datasets.questions.pdf import read_question_rows
from chunklab.ingest import stages
from chunklab.ingest.plan import resolve_sources
from chunklab.ingest.report import problem_of

NAME = "real-docs"
QUESTIONS = manifest_path(NAME).with_name(f"{NAME}-questions.jsonl")
RESULTS = Path(__file__).resolve().parent / "results"
#: the strategy ``chunklab chunk`` uses when none is named
STRATEGY = "structural"
_KIND = {".pdf": "pdf", ".docx": "word", ".ipynb": "notebook"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def run(limit: int | None = None) -> dict[str, Any]:
    """Load and chunk every file, locate every quote; the results as a JSON-ready dict."""
    load_start = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    config = stages.ChunkConfig(strategy_from_options(STRATEGY).spec)
    items, _ = resolve_sources(NAME)
    items = items[:limit] if limit is not None else items
    files: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    for item in items:
        assert item.member is not None
        path = item.member.relpath
        row: dict[str, Any] = {"path": path, "kind": _KIND.get(Path(path).suffix, "other")}
        try:
            doc = stages.load(item)
            chunks = stages.chunk(doc, config)
        except Exception as exc:  # the run goes on: one line for this file, as the summary prints it
            pile, reason, detail = problem_of(exc)
            row.update(status=pile, error=f"{reason}: {detail}".splitlines()[0][:200])
            files.append(row)
            continue
        meta = doc.metadata
        texts[path] = doc.text
        row.update(
            status="ok",
            chars=len(doc.text),
            chunks=len(chunks),
            lone_surrogates=sum(len(_SURROGATE.findall(c.text)) for c in chunks),
            lone_surrogates_replaced=int(meta.get("lone_surrogates") or 0),
            surrogate_pairs_combined=int(meta.get("surrogate_pairs") or 0),
        )
        if row["kind"] == "pdf":
            row.update(
                pages=int(meta.get("pages") or 0),
                ocr_pages=list(meta.get("ocr_pages") or []),
                pages_without_text=list(meta.get("pages_without_text") or []),
                lines_removed=len(meta.get("removed") or []),
            )
        if row["kind"] == "word":
            row["word_text"] = word_completeness(Path(item.member.path), doc.text)
        files.append(row)
    quotes = [locate(row, texts) for row in read_question_rows(QUESTIONS)]
    return {
        "corpus": NAME,
        "manifest": manifest_path(NAME).name,
        "strategy": STRATEGY,
        "files": files,
        "quotes": quotes,
        "summary": summarize(files, quotes),
        "wall_s": round(time.perf_counter() - t0, 1),
        "measured": {**measured_block(load_start), "command": "python -m benchmarks.real_documents"},
    }


def locate(row: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    """One typed quote's result: exact, tolerant, ambiguous, not found (with the near miss), no file."""
    out: dict[str, Any] = {"id": row["id"], "path": row["path"], "quote": row["answer"]}
    text = texts.get(row["path"])
    quote = row["answer"] if isinstance(row["answer"], str) else row["answer"][0]
    if text is None:
        return {**out, "result": "file not loaded"}
    try:
        start, end = locate_quote(text, quote)
    except QuoteNotFoundError as exc:
        return {**out, "result": "not found", "near_miss": exc.near}
    except ValueError as exc:
        return {**out, "result": "ambiguous", "detail": str(exc)}
    exact = text.count(quote) == 1
    return {**out, "result": "exact" if exact else "tolerant", "span": [start, end]}


def summarize(files: list[dict[str, Any]], quotes: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over files and quotes, the numbers the book's pages read."""
    by_kind = Counter(f["kind"] for f in files)
    ok = [f for f in files if f["status"] == "ok"]
    words = [f["word_text"] for f in ok if "word_text" in f]
    results = Counter(q["result"] for q in quotes)
    return {
        "files": len(files),
        "files_by_kind": dict(sorted(by_kind.items())),
        "ok": len(ok),
        "not_ok": [f"{f['path']}: {f['error']}" for f in files if f["status"] != "ok"],
        "pdf_pages": sum(f.get("pages", 0) for f in ok),
        "ocr_pages": sum(len(f.get("ocr_pages", [])) for f in ok),
        "chunks": sum(f["chunks"] for f in ok),
        "lone_surrogates_in_chunks": sum(f["lone_surrogates"] for f in ok),
        "surrogate_pairs_combined": sum(f["surrogate_pairs_combined"] for f in ok),
        "word_paragraphs": sum(w["paragraphs"] for w in words),
        "word_paragraphs_found": sum(w["found"] for w in words),
        "word_files_complete": sum(w["found"] == w["paragraphs"] for w in words),
        "word_files": len(words),
        "quotes": len(quotes),
        "quotes_exact": results["exact"],
        "quotes_tolerant": results["tolerant"],
        "quotes_not_found": len(quotes) - results["exact"] - results["tolerant"],
        "quotes_by_result": dict(sorted(results.items())),
    }


# -- Word text, read independently of the loader -------------------------------------------
_PARTS = ("word/document.xml", "word/footnotes.xml", "word/endnotes.xml")


def word_completeness(path: Path, loaded: str) -> dict[str, Any]:
    """How many of the Word file's paragraphs (body, tables, text boxes, notes) the loaded text holds.

    Paragraphs come from the package's XML by element name (any namespace, so Strict OOXML too);
    a ``mc:Fallback`` subtree (Word's second copy of a text box) is skipped. A paragraph counts as
    found when its text, whitespace collapsed, occurs in the loaded text, whitespace collapsed.
    """
    paragraphs: list[str] = []
    with zipfile.ZipFile(path) as zf:
        for part in _PARTS:
            if part in zf.namelist():
                paragraphs += _paragraphs(ElementTree.fromstring(zf.read(part)))
    flat = " ".join(loaded.split())
    missing = [p for p in paragraphs if p not in flat]
    return {"paragraphs": len(paragraphs), "found": len(paragraphs) - len(missing), "missing": missing}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _paragraphs(root: ElementTree.Element) -> list[str]:
    """The non-empty text of every ``w:p`` under ``root`` (a nested paragraph is its own entry)."""
    out: list[str] = []

    def text_of(el: ElementTree.Element) -> str:
        parts = []
        for child in el:
            name = _local(child.tag)
            if name in ("p", "Fallback", "txbxContent", "delText"):
                continue
            parts.append((child.text or "") if name == "t" else text_of(child))
        return "".join(parts)

    def walk(el: ElementTree.Element) -> None:
        for child in el:
            name = _local(child.tag)
            if name == "Fallback":
                continue
            if name == "p":
                text = " ".join(text_of(child).split())
                if text:
                    out.append(text)
            walk(child)

    walk(root)
    return out


# -- report --------------------------------------------------------------------------------
def markdown(result: dict[str, Any]) -> str:
    """The results as a Markdown report: the summary, the files, the quotes not found exactly."""
    s, m = result["summary"], result["measured"]
    lines = [
        f"# Real documents ({result['corpus']}), measured {m['date']}",
        "",
        f"{s['files']} files ({', '.join(f'{n} {k}' for k, n in s['files_by_kind'].items())}), "
        f"{s['ok']} read; {s['pdf_pages']} PDF pages ({s['ocr_pages']} by OCR), {s['chunks']} chunks "
        f"({result['strategy']}), {s['lone_surrogates_in_chunks']} lone surrogates in chunks "
        f"({s['surrogate_pairs_combined']} surrogate pairs combined). Word text: "
        f"{s['word_paragraphs_found']} of {s['word_paragraphs']} paragraphs found. Typed quotes: "
        f"{s['quotes_exact']} exact, {s['quotes_tolerant']} tolerant, "
        f"{s['quotes_not_found']} of {s['quotes']} not found.",
        "",
        f"Machine: {m['machine']['cpu']}, {m['machine']['cores']} cores; load {m['loadavg_start']} → "
        f"{m['loadavg_end']}; commit {m['chunklab_commit']}.",
        "",
        "| file | status | pages | OCR | chunks | lone surrogates | Word paragraphs |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for f in result["files"]:
        word = f.get("word_text")
        found = f"{word['found']}/{word['paragraphs']}" if word else ""
        lines.append(
            f"| {f['path']} | {f['status'] if f['status'] == 'ok' else f['error']} | {f.get('pages', '')} | "
            f"{len(f.get('ocr_pages', [])) or ''} | {f.get('chunks', '')} | {f.get('lone_surrogates', '')} | "
            f"{found} |"
        )
    lines += ["", "| quote | result | near miss |", "|---|---|---|"]
    for q in result["quotes"]:
        if q["result"] != "exact":
            near = q.get("near_miss") or q.get("detail") or ""
            lines.append(f"| {q['id']} | {q['result']} | {near.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure, print the summary, write the JSON and Markdown results."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--out", type=Path, default=RESULTS / "real_documents.json")
    p.add_argument("--limit", type=int, default=None, help="the first N files only (a quick look)")
    args = p.parse_args(argv)
    load_manifest(manifest_path(NAME))  # a malformed manifest fails before anything is read
    result = run(args.limit)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(json.dumps(result["summary"], indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
