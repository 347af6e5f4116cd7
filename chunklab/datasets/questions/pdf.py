"""Questions about the ``pdf-docs`` corpus, their gold answers exact quotes in the kit's extraction.

The questions live in ``chunklab/data/corpora/pdf-docs-questions.jsonl``, one JSON object a
line: ``id``, ``question``, ``path`` (a file of the manifest), ``answer`` (a quote, or a list
of quotes for a multi-paragraph answer), ``kind`` (``fact``, ``table`` or ``multi``) and
``split`` (``dev`` or ``heldout``, by document: a held-out file has no dev question). They were
**generated** from the kit's own extraction by ``benchmarks/pdf_questions_build.py`` (see its
docstring for exactly how), not written by people; each quote occurs exactly once in its
document's extracted text.

:func:`pdf_docs_questions` loads the fetched files with :func:`chunklab.documents.load_document`
and locates every quote again; a file the loader refuses (a scan: no text layer) and a quote
that is no longer found exactly once (the extraction changed) are left out and listed in
``skipped`` with the reason, never silently dropped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypedDict

from chunklab.datasets.corpora.docs import Question
from chunklab.datasets.corpora.pdfdocs import NAME, PdfManifest, load_manifest
from chunklab.datasets.corpora.pinned import CORPORA_DIR, corpus_dir
from chunklab.datasets.model import QuestionSet, locate_answers
from chunklab.documents import Document

__all__ = [
    "QUESTIONS",
    "SPLITS",
    "QuestionRow",
    "load_corpus_documents",
    "pdf_docs_questions",
    "read_question_rows",
]

QUESTIONS = CORPORA_DIR / f"{NAME}-questions.jsonl"
SPLITS = ("dev", "heldout")
_FIELDS = {"id", "question", "path", "answer", "kind", "split"}


class QuestionRow(TypedDict):
    """One row of the questions file: a question about the file ``path``, its quote(s), kind and split."""

    id: str
    question: str
    path: str
    answer: str | list[str]  # a quote, or several that must all be found
    kind: str
    split: str


def read_question_rows(path: str | os.PathLike[str] | None = None) -> list[QuestionRow]:
    """The raw question rows of the JSONL file (default: the committed one); ValueError on a bad row."""
    src = Path(path) if path is not None else QUESTIONS
    rows: list[QuestionRow] = []
    for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row: QuestionRow = json.loads(line)  # its shape is checked just below
        if not isinstance(row, dict) or set(row) != _FIELDS:
            raise ValueError(f"{src.name}:{n}: a row has exactly the fields {sorted(_FIELDS)}")
        if row["split"] not in SPLITS:
            raise ValueError(f"{src.name}:{n}: split must be one of {SPLITS}, got {row['split']!r}")
        rows.append(row)
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{src.name}: question ids repeat")
    return rows


def load_corpus_documents(
    directory: Path,
    manifest: PdfManifest,
    skipped: list[str] | None = None,
    *,
    paths: set[str] | None = None,
    cache: Path | None = None,
) -> list[Document]:
    """The files of the manifest (those in ``paths``, or all) read by ``load_document``.

    A file the loader refuses goes to ``skipped`` with its reason. With ``cache`` (a folder),
    each extraction is kept as a pickle keyed by the file's sha256 and the loaders' source,
    so a second run reads it back instead of extracting again.
    """
    import pickle

    from chunklab.decoding import DocumentError
    from chunklab.documents import load_document

    key = _loader_key()
    docs: list[Document] = []
    for f in manifest.files:
        if paths is not None and f.path not in paths:
            continue
        kept = cache / f"{f.sha256[:24]}-{key}.pickle" if cache is not None else None
        if kept is not None and kept.is_file():
            got = pickle.loads(kept.read_bytes())
        else:
            try:
                got = load_document(directory / f.path, root=directory)
            except DocumentError as exc:
                got = f"{f.path}: {exc}"
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_bytes(pickle.dumps(got))
        if isinstance(got, str):
            if skipped is not None:
                skipped.append(got)
        else:
            docs.append(got)
    return docs


def _loader_key() -> str:
    """A short hash of the document loaders' source files: a cached extraction is valid for it only."""
    import hashlib

    import chunklab.documents as package

    digest = hashlib.sha256()
    for src in sorted(Path(package.__file__).parent.rglob("*.py")):
        digest.update(src.read_bytes())
    return digest.hexdigest()[:12]


def pdf_docs_questions(
    split: str | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    manifest: PdfManifest | None = None,
    questions: str | os.PathLike[str] | None = None,
    documents: list[Document] | None = None,
) -> QuestionSet[Document, Question]:
    """The fetched corpus and its questions (of ``split``, or all), each quote located to a span.

    ``documents`` may pass the corpus already loaded (by :func:`load_corpus_documents`), so a
    benchmark reads every file once.
    """
    manifest = manifest or load_manifest()
    skipped: list[str] = []
    if documents is None:
        documents = load_corpus_documents(corpus_dir(NAME, cache_dir), manifest, skipped)
    by_id = {d.doc_id: d for d in documents}
    out: list[Question] = []
    for row in read_question_rows(questions):
        doc = by_id.get(row["path"])
        if doc is None:
            skipped.append(f"{row['id']}: its file {row['path']} was not loaded")
            continue
        found = locate_answers(doc.text, row["answer"], row["id"], row["path"], skipped)
        if found is None:
            continue
        answers, spans = found
        out.append(
            Question(row["id"], row["question"], doc.doc_id, spans, answers, row["kind"], row["split"], False)
        )
    qs: QuestionSet[Document, Question] = QuestionSet(
        NAME, documents, out, skipped, split_names=SPLITS, format="quotes"
    )
    return qs.split(split) if split is not None else qs
