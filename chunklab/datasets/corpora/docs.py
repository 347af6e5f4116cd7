"""The kit's own document corpus: Markdown documents, HTML renderings and gold-quote questions.

The corpus lives in ``chunklab/data`` (see ``chunklab/data/docs/FORMAT.md``). Questions carry
their gold answers as exact quotes; :func:`load_docs` locates every quote in its document and
stores it as a character span, and refuses to load (one ``ValueError`` listing every problem)
when a quote is missing or occurs more than once, a question file names no document, an id is
repeated, or a field is malformed.

The documents are :class:`chunklab.documents.Document` objects (:class:`KitDocument` adds the
structure); the set is a :class:`chunklab.datasets.model.QuestionSet`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from chunklab.datasets.model import QuestionSet, locate_answers
from chunklab.documents import Document

__all__ = ["Dataset", "KitDocument", "Question", "html_documents", "load_docs"]

KINDS = ("fact", "table", "exception", "multi", "procedure")
SPLITS = ("dev", "heldout")
STRUCTURES = ("clean", "messy")
_SLUG = re.compile(r"[a-z0-9][a-z0-9-]*")
_STRUCTURE_COMMENT = re.compile(r"<!--\s*structure:\s*(\w+)\s*-->")
_SKIP = {"FORMAT.md", "README.md"}
_QUESTION_FIELDS = {"id", "question", "answer", "kind", "split", "needs_context", "note"}


@dataclass(frozen=True)
class KitDocument(Document):
    """A document of the kit's corpus: a :class:`~chunklab.documents.Document` and its structure.

    ``structure`` is ``clean`` (a heading per topic) or ``messy`` (few headings, long sections).
    """

    structure: str = "clean"

    @property
    def n_words(self) -> int:
        """Whitespace-separated words in the text (markup and code included)."""
        return len(self.text.split())


@dataclass(frozen=True)
class Question:
    """A question with its gold answer: quotes and their character spans in the Markdown
    text.

    ``doc_id`` names the Markdown document; ``document.text[s:e] == answers[i]`` for the
    i-th span ``(s, e)`` of ``gold_spans``.
    """

    id: str
    question: str
    doc_id: str
    gold_spans: list[tuple[int, int]]
    answers: list[str]
    kind: str
    split: str
    needs_context: bool
    note: str = ""
    relevant_docs: tuple[str, ...] = ()  # gold is spans, not whole documents


#: the name the chapters build a question set by (``Dataset(name, documents, questions)``)
Dataset = QuestionSet


def load_docs(
    split: str | None = None,
    include_html: bool = False,
    root: str | Path | Traversable | None = None,
) -> QuestionSet[KitDocument, Question]:
    """Load the kit's documents and questions, locating every gold quote to character offsets.

    ``split`` keeps only 'dev' or 'heldout' questions (all documents are always kept);
    ``include_html`` adds the HTML renderings (doc ids ``<slug>.html``) to the documents;
    ``root`` points at another data folder laid out like ``chunklab/data`` (``docs/``,
    ``docs/html/``, ``questions/``), for tests and for your own corpus.
    Raises ``ValueError`` listing every problem found.
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be None or one of {SPLITS}, got {split!r}")
    base = _root(root)
    problems: list[str] = []
    documents = _read_markdown(base, problems)
    by_id = {d.doc_id: d for d in documents}
    questions = _read_questions(base, by_id, problems)
    html = _read_html(base, by_id, problems)
    if problems:
        raise ValueError(
            f"the docs corpus at {base} has {len(problems)} problem(s):\n- " + "\n- ".join(problems)
        )
    if include_html:
        documents = documents + html
    dataset = QuestionSet("docs", documents, questions, split_names=SPLITS)
    return dataset.split(split) if split is not None else dataset


def html_documents(root: str | Path | Traversable | None = None) -> list[KitDocument]:
    """The HTML renderings, as documents with ids ``<slug>.html`` and ``format='html'``."""
    return [d for d in load_docs(include_html=True, root=root).documents if d.format == "html"]


# ---------------------------------------------------------------------------- helpers


def _root(root: str | Path | Traversable | None) -> Traversable:
    if root is None:
        return resources.files("chunklab") / "data"
    if isinstance(root, str | Path):
        path = Path(root)
        if not path.is_dir():
            raise ValueError(f"root {str(path)!r} is not a directory")
        return path
    return root


def _children(folder: Traversable, suffix: str) -> list[Traversable]:
    if not folder.is_dir():
        return []
    return sorted(
        (p for p in folder.iterdir() if p.is_file() and p.name.endswith(suffix)), key=lambda p: p.name
    )


def _of_documents(
    folder: Traversable, name: str, suffix: str, by_id: dict[str, KitDocument], problems: list[str], role: str
) -> Iterator[tuple[Traversable, str, KitDocument, str]]:
    """``(path, where, document, text)`` for each ``suffix`` file of ``folder`` named after a document.

    ``where`` is the file as problems name it (``name/file``, ``name`` the folder's corpus path).
    A file named after no document (``role`` says what it is to one: ``"to ask about"``) or
    that does not decode is a problem and left out.
    """
    for path in _children(folder, suffix):
        slug = path.name[: -len(suffix)]
        where = f"{name}/{path.name}"
        document = by_id.get(slug)
        if document is None:
            problems.append(f"{where}: no document docs/{slug}.md {role}")
            continue
        text = _read_text(path, problems)
        if text is not None:
            yield path, where, document, text


def _read_text(path: Traversable, problems: list[str]) -> str | None:
    """The file decoded by :func:`chunklab.documents.decode_bytes` (strict: the corpus is valid text)."""
    from chunklab.documents import DocumentError, decode_bytes, detect_format

    try:
        return decode_bytes(path.read_bytes(), detect_format(path.name), name=path.name, strict=True).text
    except DocumentError as exc:
        problems.append(str(exc))
        return None


def _read_markdown(base: Traversable, problems: list[str]) -> list[KitDocument]:
    folder = base / "docs"
    if not folder.is_dir():
        problems.append(f"no docs/ folder under {base}")
        return []
    documents = []
    for path in _children(folder, ".md"):
        if path.name in _SKIP:
            continue
        slug = path.name[: -len(".md")]
        if not _SLUG.fullmatch(slug):
            problems.append(f"{path.name}: slug {slug!r} is not lowercase letters, digits and hyphens")
            continue
        text = _read_text(path, problems)
        if text is None:
            continue
        if "\r" in text:
            problems.append(f"{path.name}: has CR line endings; use LF")
            continue
        lines = text.split("\n", 2)
        if not lines[0].startswith("# ") or not lines[0][2:].strip():
            problems.append(f"{path.name}: line 1 must be the title as '# Title'")
            continue
        match = _STRUCTURE_COMMENT.fullmatch(lines[1].strip()) if len(lines) > 1 else None
        if match is None or match.group(1) not in STRUCTURES:
            problems.append(
                f"{path.name}: line 2 must be '<!-- structure: clean -->' or '<!-- structure: messy -->'"
            )
            continue
        title = lines[0][2:].strip()
        documents.append(KitDocument(slug, text, _display(path), "markdown", title, structure=match.group(1)))
    if not documents:
        problems.append(f"no Markdown documents in {folder}")
    return documents


def _read_questions(base: Traversable, by_id: dict[str, KitDocument], problems: list[str]) -> list[Question]:
    questions: list[Question] = []
    seen: dict[str, str] = {}
    for _path, where, document, text in _of_documents(
        base / "questions", "questions", ".json", by_id, problems, "to ask about"
    ):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: invalid JSON ({exc})")
            continue
        if not isinstance(items, list) or not items:
            problems.append(f"{where}: must be a non-empty JSON list of question objects")
            continue
        for n, item in enumerate(items, 1):
            qid = item.get("id") if isinstance(item, dict) else None
            if isinstance(qid, str) and qid in seen:
                problems.append(f"{where}: question id {qid!r} duplicated (also in {seen[qid]})")
                continue
            if isinstance(qid, str):
                seen[qid] = where
            question = _parse_question(item, document, f"{where} item {n}", problems)
            if question is not None:
                questions.append(question)
    return questions


def _parse_question(item: object, document: KitDocument, where: str, problems: list[str]) -> Question | None:
    if not isinstance(item, dict):
        problems.append(f"{where}: not a JSON object")
        return None
    qid = item.get("id")
    if isinstance(qid, str) and qid:
        where = f"{where} ({qid})"
    before = len(problems)
    unknown = set(item) - _QUESTION_FIELDS
    if unknown:
        problems.append(f"{where}: unknown field(s) {sorted(unknown)}")
    if not isinstance(qid, str) or not re.fullmatch(re.escape(document.doc_id) + r"-q\d+", qid):
        problems.append(f"{where}: id must be '{document.doc_id}-q<N>', got {qid!r}")
    text = item.get("question")
    if not isinstance(text, str) or not text.strip():
        problems.append(f"{where}: 'question' must be a non-empty string")
    kind = item.get("kind")
    if kind not in KINDS:
        problems.append(f"{where}: 'kind' must be one of {KINDS}, got {kind!r}")
    split = item.get("split")
    if split not in SPLITS:
        problems.append(f"{where}: 'split' must be one of {SPLITS}, got {split!r}")
    needs_context = item.get("needs_context")
    if not isinstance(needs_context, bool):
        problems.append(f"{where}: 'needs_context' must be true or false, got {needs_context!r}")
    note = item.get("note", "")
    if not isinstance(note, str):
        problems.append(f"{where}: 'note' must be a string")
    located = locate_answers(document.text, item.get("answer"), where, f"{document.doc_id}.md", problems)
    if located is None or len(problems) > before:
        return None
    answers, spans = located  # every field below was checked above
    return Question(
        str(qid),
        str(text).strip(),
        document.doc_id,
        spans,
        answers,
        str(kind),
        str(split),
        bool(needs_context),
        note,
    )


def _read_html(base: Traversable, by_id: dict[str, KitDocument], problems: list[str]) -> list[KitDocument]:
    documents = []
    for path, where, source, text in _of_documents(
        base / "docs" / "html", "docs/html", ".html", by_id, problems, "it renders"
    ):
        match = _STRUCTURE_COMMENT.search(text)
        structure = match.group(1) if match else source.structure
        if structure not in STRUCTURES:
            problems.append(f"{where}: structure comment names {structure!r}, not clean/messy")
            continue
        title = _html_title(text) or source.title
        documents.append(KitDocument(path.name, text, _display(path), "html", title, structure=structure))
    return documents


def _html_title(markup: str) -> str | None:
    match = re.search(r"<title[^>]*>(.*?)</title>", markup, re.S | re.I) or re.search(
        r"<h1[^>]*>(.*?)</h1>", markup, re.S | re.I
    )
    if match is None:
        return None
    title = re.sub(r"<[^>]+>", "", match.group(1))
    title = re.sub(r"&amp;", "&", title)
    return " ".join(title.split()) or None


def _display(path: Traversable) -> str:
    return str(path)
