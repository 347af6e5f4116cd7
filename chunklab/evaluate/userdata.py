"""Your corpus, your questions: load a folder of documents and a question file for :class:`Benchmark`.

``load_user_dataset(corpus_dir, questions, format="auto")`` reads every document of
``corpus_dir`` through :func:`chunklab.documents.iter_documents` and one question file in
one of three formats (documented in ``chunklab/data/docs/FORMAT.md``):

* **quotes** — JSON (a list) or JSONL, one object per question: ``question``, ``doc`` (a path
  relative to the corpus folder), ``answer`` (an exact quote, or a list of them), optional
  ``id`` and ``split``. Each quote is located to character offsets; a quote that is absent
  or occurs more than once is an error naming the question.
* **spans** — CSV or JSONL with ``question``, ``corpus_id`` (a file of the corpus, with or
  without its extension) and ``references``: a JSON list of ``{"content", "start_index",
  "end_index"}`` character spans (the layout of Chroma's chunking_evaluation); a span whose
  text differs from ``content`` is an error naming the row.
* **beir** — a BEIR folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv``. Relevance is
  per document (score > 0), so span metrics are not reported.

Corpus files are read as ``chunklab index`` reads them: a file in another encoding is decoded
by the reported fallback (``metadata["decode_problem"]``), a binary file is skipped (and listed
in ``dataset.skipped``), and so is one its loader fails on (a broken PDF or Word file: one line
naming it; the run goes on). Every problem found is reported at once in one ``ValueError``;
with ``on_error="skip"`` the bad questions are left out instead (and listed in ``dataset.skipped``).
The result is a :class:`chunklab.datasets.model.QuestionSet` of
:class:`chunklab.documents.Document` and :class:`UserQuestion`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chunklab._validate import check_choice, is_int
from chunklab.datasets.model import QuestionSet, locate_answers, preview
from chunklab.documents import Document

__all__ = ["FORMATS", "UserQuestion", "detect_format", "load_user_dataset"]

FORMATS = ("auto", "quotes", "spans", "beir")
ON_ERROR = ("fail", "skip")
_MAX_LISTED = 20
#: how a problem in a corpus file begins (the error header counts them apart)
CORPUS_FILE = "corpus file"


@dataclass(frozen=True)
class UserQuestion:
    """A question with gold character spans in ``doc_id`` (quotes, spans) or relevant documents (beir)."""

    id: str
    question: str
    doc_id: str
    gold_spans: list[tuple[int, int]]
    answers: list[str] = field(default_factory=list)
    split: str = ""
    relevant_docs: tuple[str, ...] = ()


def load_user_dataset(
    corpus_dir: str | Path,
    questions: str | Path | None = None,
    format: str = "auto",
    on_error: str = "fail",
) -> QuestionSet[Document, UserQuestion]:
    """Load the documents under ``corpus_dir`` and the questions of ``questions`` (see the module doc).

    ``format="auto"`` detects it (:func:`detect_format`). ``on_error="fail"`` raises one
    ``ValueError`` listing every problem; ``"skip"`` leaves out unreadable files and bad
    questions and records each in ``skipped``. An empty corpus or no usable question is
    always an error.
    """
    fmt = check_choice(format, FORMATS, "format")
    check_choice(on_error, ON_ERROR, "on_error")
    root = Path(corpus_dir)
    if not root.is_dir():
        raise ValueError(f"--corpus {str(root)!r} is not a directory")
    qpath = Path(questions) if questions is not None else None
    if qpath is not None and not qpath.exists():
        raise ValueError(f"--questions {str(qpath)!r} does not exist")
    if fmt == "auto":
        fmt = detect_format(root, qpath)
    problems: list[str] = []
    not_documents: list[str] = []  # binary and other non-document files: skipped, as index does
    if fmt == "beir":
        documents, items = _beir(root, qpath, problems)
    else:
        if qpath is None:
            raise ValueError(f"the {fmt} format needs --questions FILE")
        documents = _read_corpus(root, not_documents)
        by_id = {d.doc_id: d for d in documents}
        rows = _read_rows(qpath)
        parse = _quote_question if fmt == "quotes" else _span_question
        items = [q for n, row in enumerate(rows, 1) if (q := parse(row, n, by_id, problems)) is not None]
    if not documents:
        raise ValueError(
            f"the corpus {str(root)!r} has no readable documents" + _listing(problems + not_documents)
        )
    seen: set[str] = set()
    for q in items:
        if q.id in seen:
            problems.append(f"question id {q.id!r} appears twice")
        seen.add(q.id)
    if problems and on_error == "fail":
        raise ValueError(
            f"{_problem_header(problems, root, qpath)} (use --on-error skip to leave them out)"
            + _listing(problems)
        )
    if len(seen) != len(items):  # skip mode: keep the first of each id
        items = list({q.id: q for q in reversed(items)}.values())[::-1]
    if not items:
        raise ValueError(f"no usable questions in {qpath or root}" + _listing(problems))
    return QuestionSet(f"{root.name}:{fmt}", documents, items, not_documents + problems, format=fmt)


def detect_format(corpus_dir: Path, questions: Path | None) -> str:
    """The format of ``questions``: ``beir``, ``spans`` or ``quotes``.

    ``beir`` for a BEIR folder or a qrels ``.tsv``; ``spans`` for CSV or rows with ``references``.
    """
    if questions is None or questions.is_dir() or questions.suffix.lower() == ".tsv":
        if (corpus_dir / "corpus.jsonl").is_file():
            return "beir"
        raise ValueError("cannot detect the question format: give --questions FILE (or --format)")
    if questions.suffix.lower() == ".csv":
        return "spans"
    rows = _read_rows(questions)
    first = rows[0] if rows else {}
    if isinstance(first, dict) and "references" in first:
        return "spans"
    if isinstance(first, dict) and "answer" in first:
        return "quotes"
    raise ValueError(
        f"cannot detect the format of {questions}: the first question has neither "
        "'answer' (quotes) nor 'references' (spans); pass --format"
    )


# ------------------------------------------------------------------------------ corpus and rows


def _read_corpus(root: Path, skipped: list[str]) -> list[Document]:
    """The documents under ``root``, read as ``chunklab index`` reads them (one loader, one policy).

    A file that needs a fallback encoding is decoded by it (``metadata["decode_problem"]``
    says so); a file that is not a document (binary, not regular) or that its loader cannot
    read (a broken PDF, a loader crash) goes to ``skipped`` as one line naming it, and the
    run goes on, as ``index`` goes on past it; a question about such a file is a problem.
    """
    from chunklab.documents import DocumentError, iter_documents

    errors: list[DocumentError] = []
    documents = list(iter_documents([str(root)], root=str(root), errors=errors))
    skipped.extend(f"{CORPUS_FILE} {e.path}: {e.detail}" for e in errors)
    return documents


def _problem_header(problems: list[str], root: Path, qpath: Path | None) -> str:
    """``"3 problem(s): 1 in the corpus files of c, 2 in q.csv"``: each count where it was found."""
    in_corpus = sum(p.startswith(CORPUS_FILE) for p in problems)
    places = [f"{in_corpus} in the corpus files of {root}"] if in_corpus else []
    if len(problems) > in_corpus:
        places.append(f"{len(problems) - in_corpus} in {qpath or root}")
    return f"{len(problems)} problem(s): {', '.join(places)}"


def _read_rows(path: Path) -> list[object]:
    """Rows of a CSV file, a JSON list or JSON lines, each with its 1-based number kept by position."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc})") from None
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        missing = {"question", "corpus_id", "references"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {sorted(missing)}; a spans CSV needs question, "
                "corpus_id, references"
            )
        return list(reader)
    stripped = text.lstrip()
    if not stripped:
        raise ValueError(f"{path} is empty")
    if stripped.startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: invalid JSON ({exc})") from None
        return list(rows)
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path} line {n}: invalid JSON ({exc})") from None
    return rows


def _fields(row: object, where: str, required: tuple[str, ...], problems: list[str]) -> dict[str, Any] | None:
    if not isinstance(row, dict):
        problems.append(f"{where}: not an object")
        return None
    missing = [f for f in required if row.get(f) in (None, "")]
    if missing:
        problems.append(f"{where}: missing field(s) {missing}")
        return None
    if not isinstance(row["question"], str) or not row["question"].strip():
        problems.append(f"{where}: 'question' must be a non-empty string")
        return None
    return row


# ------------------------------------------------------------------------------ quotes


def _quote_question(
    row: object, n: int, by_id: dict[str, Document], problems: list[str]
) -> UserQuestion | None:
    qid = str(row.get("id") or f"q{n}") if isinstance(row, dict) else f"q{n}"
    where = f"question {qid!r} (item {n})"
    row = _fields(row, where, ("question", "doc", "answer"), problems)
    if row is None:
        return None
    doc_id = Path(str(row["doc"])).as_posix().removeprefix("./")
    doc = by_id.get(doc_id)
    if doc is None:
        problems.append(f"{where}: doc {row['doc']!r} is not a readable file of the corpus")
        return None
    located = locate_answers(doc.text, row["answer"], where, doc_id, problems)
    if located is None:
        return None
    answers, spans = located
    return UserQuestion(
        qid, row["question"].strip(), doc_id, spans, list(answers), str(row.get("split") or "")
    )


# ------------------------------------------------------------------------------ spans


def _span_question(
    row: object, n: int, by_id: dict[str, Document], problems: list[str]
) -> UserQuestion | None:
    where = f"row {n}"
    row = _fields(row, where, ("question", "corpus_id", "references"), problems)
    if row is None:
        return None
    doc = _by_corpus_id(str(row["corpus_id"]), by_id, where, problems)
    if doc is None:
        return None
    refs = row["references"]
    if isinstance(refs, str):
        try:
            refs = json.loads(refs)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: 'references' is not valid JSON ({exc})")
            return None
    if not isinstance(refs, list) or not refs:
        problems.append(
            f"{where}: 'references' must be a non-empty list of {{content, start_index, end_index}}"
        )
        return None
    spans, answers = [], []
    for j, ref in enumerate(refs):
        span = _reference(ref, doc, f"{where} reference {j}", problems)
        if span is None:
            return None
        spans.append(span)
        answers.append(ref["content"])
    qid = str(row.get("id") or f"row{n}")
    return UserQuestion(qid, row["question"].strip(), doc.doc_id, spans, answers, str(row.get("split") or ""))


def _by_corpus_id(
    corpus_id: str, by_id: dict[str, Document], where: str, problems: list[str]
) -> Document | None:
    if corpus_id in by_id:
        return by_id[corpus_id]
    stem_matches = [d for i, d in by_id.items() if Path(i).with_suffix("").as_posix() == corpus_id]
    if len(stem_matches) == 1:
        return stem_matches[0]
    if stem_matches:
        problems.append(
            f"{where}: corpus_id {corpus_id!r} matches several files "
            f"({', '.join(d.doc_id for d in stem_matches)}); add the extension"
        )
    else:
        problems.append(f"{where}: corpus_id {corpus_id!r} is not a readable file of the corpus")
    return None


def _reference(ref: object, doc: Document, where: str, problems: list[str]) -> tuple[int, int] | None:
    if not isinstance(ref, dict) or not {"content", "start_index", "end_index"} <= set(ref):
        problems.append(f"{where}: needs content, start_index and end_index")
        return None
    s, e = ref["start_index"], ref["end_index"]
    if not is_int(s) or not is_int(e):
        problems.append(f"{where}: start_index and end_index must be integers, got {s!r}, {e!r}")
        return None
    if not 0 <= s < e <= len(doc.text):
        problems.append(f"{where}: span ({s}, {e}) out of range for {doc.doc_id} (length {len(doc.text)})")
        return None
    if doc.text[s:e] != ref["content"]:
        problems.append(
            f"{where}: {doc.doc_id}[{s}:{e}] is {preview(doc.text[s:e])}, "
            f"not the content {preview(str(ref['content']))}"
        )
        return None
    return s, e


# ------------------------------------------------------------------------------ beir


def _beir(root: Path, qrels: Path | None, problems: list[str]) -> tuple[list[Document], list[UserQuestion]]:
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise ValueError(f"a BEIR folder needs {name}; not found in {root}")
    documents = []
    for n, row in _jsonl(root / "corpus.jsonl"):
        where = f"corpus.jsonl line {n}"
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("_id"), str | int)
            or not isinstance(row.get("text"), str)
        ):
            problems.append(f"{where}: needs '_id' and 'text'")
            continue
        title = row.get("title") if isinstance(row.get("title"), str) else ""
        text = f"{title}\n\n{row['text']}" if title else row["text"]
        documents.append(Document(str(row["_id"]), text, format="text", title=title or None))
    queries = {}
    for n, row in _jsonl(root / "queries.jsonl"):
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("_id"), str | int)
            or not isinstance(row.get("text"), str)
        ):
            problems.append(f"queries.jsonl line {n}: needs '_id' and 'text'")
            continue
        queries[str(row["_id"])] = row["text"]
    files = (
        [qrels] if qrels is not None and qrels.is_file() else sorted((qrels or root / "qrels").glob("*.tsv"))
    )
    if not files:
        raise ValueError(f"no qrels/*.tsv under {root}")
    doc_ids = {d.doc_id for d in documents}
    relevant: dict[tuple[str, str], list[str]] = {}
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            cells = line.split("\t")
            if n == 1 and cells[0].strip().lower() in ("query-id", "query_id", "qid"):
                continue  # the header row
            if not line.strip():
                continue
            if len(cells) != 3 or not cells[2].strip().lstrip("-").isdigit():
                problems.append(f"{path.name} line {n}: expected query-id<TAB>corpus-id<TAB>score")
                continue
            qid, did, score = cells[0].strip(), cells[1].strip(), int(cells[2])
            if qid not in queries:
                problems.append(f"{path.name} line {n}: query {qid!r} not in queries.jsonl")
            elif did not in doc_ids:
                problems.append(f"{path.name} line {n}: document {did!r} not in corpus.jsonl")
            elif score > 0:
                relevant.setdefault((path.stem, qid), []).append(did)
    questions = [
        UserQuestion(
            f"{qid}" if len(files) == 1 else f"{split}:{qid}",
            queries[qid],
            docs[0],
            [],
            split=split,
            relevant_docs=tuple(dict.fromkeys(docs)),
        )
        for (split, qid), docs in relevant.items()
    ]
    return documents, questions


def _jsonl(path: Path) -> Iterator[tuple[int, object]]:
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if line.strip():
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path.name} line {n}: invalid JSON ({exc})") from None


def _listing(problems: list[str]) -> str:
    if not problems:
        return ""
    shown = problems[:_MAX_LISTED]
    more = f"\n- ... and {len(problems) - _MAX_LISTED} more" if len(problems) > _MAX_LISTED else ""
    return ":\n- " + "\n- ".join(shown) + more
