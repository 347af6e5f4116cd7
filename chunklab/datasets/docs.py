"""The kit's own document corpus: Markdown documents, HTML renderings and gold-quote questions.

The corpus lives in ``chunklab/data`` (see ``chunklab/data/docs/FORMAT.md``). Questions carry
their gold answers as exact quotes; :func:`load_docs` locates every quote in its document and
stores it as a character span, and refuses to load (one ``ValueError`` listing every problem)
when a quote is missing or occurs more than once, a question file names no document, an id is
repeated, or a field is malformed.

``from chunklab.datasets import docs`` gives a callable: the function :func:`docs` (or, once the
submodule has been imported, this module, which is callable with the same signature).
"""

from __future__ import annotations

import json
import random
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "Dataset",
    "Document",
    "Question",
    "docs",
    "html_documents",
    "load_docs",
    "locate_quote",
]

KINDS = ("fact", "table", "exception", "multi", "procedure")
SPLITS = ("dev", "heldout")
STRUCTURES = ("clean", "messy")
_SLUG = re.compile(r"[a-z0-9][a-z0-9-]*")
_STRUCTURE_COMMENT = re.compile(r"<!--\s*structure:\s*(\w+)\s*-->")
_SKIP = {"FORMAT.md", "README.md"}
_QUESTION_FIELDS = {"id", "question", "answer", "kind", "split", "needs_context", "note"}


@dataclass(frozen=True)
class Document:
    """One document of the corpus: its full text exactly as stored, and what it is."""

    doc_id: str
    title: str
    text: str = field(repr=False)
    path: str
    format: Literal["markdown", "html"]
    structure: Literal["clean", "messy"]

    @property
    def n_words(self) -> int:
        """Whitespace-separated words in the text (markup and code included)."""
        return len(self.text.split())


@dataclass(frozen=True)
class Question:
    """A question with its gold answer: quotes and their character spans in the Markdown text.

    ``doc_id`` names the Markdown document; ``document.text[s:e] == answers[i]`` for the i-th
    span ``(s, e)`` of ``gold_spans``.
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


@dataclass
class Dataset:
    """Documents plus questions about them."""

    name: str
    documents: list[Document]
    questions: list[Question]
    _by_id: dict[str, Document] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id = {d.doc_id: d for d in self.documents}

    def doc(self, doc_id: str) -> Document:
        """The document with this id; ``KeyError`` naming the id if there is none."""
        try:
            return self._by_id[doc_id]
        except KeyError:
            raise KeyError(f"no document {doc_id!r} in dataset {self.name!r}") from None

    def split(self, name: str) -> Dataset:
        """The same documents with only the questions of split ``name`` ('dev' or 'heldout')."""
        if name not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {name!r}")
        return Dataset(
            f"{self.name}:{name}", list(self.documents), [q for q in self.questions if q.split == name]
        )

    def sample(self, n: int, seed: int = 0) -> Dataset:
        """``n`` questions drawn without replacement (deterministic for a seed); all documents kept.

        The documents stay whole so a retrieval run on the sample still searches the full corpus.
        """
        from chunklab._validate import check_non_negative_int

        check_non_negative_int(n, "n")
        if n > len(self.questions):
            raise ValueError(f"cannot sample {n} questions from {len(self.questions)} in {self.name!r}")
        picked = random.Random(seed).sample(range(len(self.questions)), n)
        return Dataset(
            f"{self.name}:sample{n}", list(self.documents), [self.questions[i] for i in sorted(picked)]
        )

    def __len__(self) -> int:
        return len(self.questions)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, documents={len(self.documents)}, questions={len(self.questions)})"
        )

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)


def load_docs(
    split: str | None = None,
    include_html: bool = False,
    root: str | Path | Traversable | None = None,
) -> Dataset:
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
    if split is not None:
        questions = [q for q in questions if q.split == split]
    if include_html:
        documents = documents + html
    name = "docs" if split is None else f"docs:{split}"
    return Dataset(name, documents, questions)


def docs(split: str | None = None) -> Dataset:
    """The kit's document corpus and its questions (same as ``load_docs(split)``)."""
    return load_docs(split=split)


def html_documents(root: str | Path | Traversable | None = None) -> list[Document]:
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


def locate_quote(text: str, quote: str) -> tuple[int, int]:
    """The ``(start, end)`` offsets of ``quote`` in ``text``; ValueError unless it occurs exactly once."""
    count = text.count(quote)
    if count != 1:
        raise ValueError("not found" if count == 0 else f"found {count} times (ambiguous: quote more of it)")
    start = text.index(quote)
    return start, start + len(quote)


def _children(folder: Traversable, suffix: str) -> list[Traversable]:
    if not folder.is_dir():
        return []
    return sorted(
        (p for p in folder.iterdir() if p.is_file() and p.name.endswith(suffix)), key=lambda p: p.name
    )


def _read_text(path: Traversable, problems: list[str]) -> str | None:
    """The file decoded by :func:`chunklab.documents.decode_bytes` (strict: the corpus is valid text)."""
    from chunklab.documents import DocumentError, decode_bytes, detect_kind

    try:
        return decode_bytes(path.read_bytes(), detect_kind(path.name), name=path.name, strict=True).text
    except DocumentError as exc:
        problems.append(str(exc))
        return None


def _read_markdown(base: Traversable, problems: list[str]) -> list[Document]:
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
        documents.append(
            Document(slug, lines[0][2:].strip(), text, _display(path), "markdown", match.group(1))  # type: ignore[arg-type]
        )
    if not documents:
        problems.append(f"no Markdown documents in {folder}")
    return documents


def _read_questions(base: Traversable, by_id: dict[str, Document], problems: list[str]) -> list[Question]:
    questions: list[Question] = []
    seen: dict[str, str] = {}
    for path in _children(base / "questions", ".json"):
        slug = path.name[: -len(".json")]
        where = f"questions/{path.name}"
        document = by_id.get(slug)
        if document is None:
            problems.append(f"{where}: no document docs/{slug}.md to ask about")
            continue
        text = _read_text(path, problems)
        if text is None:
            continue
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


def _parse_question(item: Any, document: Document, where: str, problems: list[str]) -> Question | None:
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
    answer = item.get("answer")
    answers = [answer] if isinstance(answer, str) else answer
    if (
        not isinstance(answers, list)
        or not answers
        or not all(isinstance(a, str) and a.strip() for a in answers)
    ):
        problems.append(f"{where}: 'answer' must be a non-empty string or a non-empty list of them")
        return None
    spans = []
    for quote in answers:
        try:
            spans.append(locate_quote(document.text, quote))
        except ValueError as exc:
            problems.append(f"{where}: answer quote {_short(quote)} {exc} in {document.doc_id}.md")
    if len(problems) > before:
        return None
    return Question(
        qid, text.strip(), document.doc_id, spans, list(answers), kind, split, needs_context, note
    )


def _read_html(base: Traversable, by_id: dict[str, Document], problems: list[str]) -> list[Document]:
    documents = []
    for path in _children(base / "docs" / "html", ".html"):
        slug = path.name[: -len(".html")]
        source = by_id.get(slug)
        if source is None:
            problems.append(f"docs/html/{path.name}: no document docs/{slug}.md it renders")
            continue
        text = _read_text(path, problems)
        if text is None:
            continue
        match = _STRUCTURE_COMMENT.search(text)
        structure = match.group(1) if match else source.structure
        if structure not in STRUCTURES:
            problems.append(f"docs/html/{path.name}: structure comment names {structure!r}, not clean/messy")
            continue
        title = _html_title(text) or source.title
        documents.append(Document(path.name, title, text, _display(path), "html", structure))  # type: ignore[arg-type]
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


def _short(quote: str, limit: int = 70) -> str:
    quote = " ".join(quote.split())
    return repr(quote if len(quote) <= limit else quote[: limit - 3] + "...")


class _CallableModule(types.ModuleType):
    """Lets ``chunklab.datasets.docs`` be called like :func:`docs` once it is imported as a module.

    Importing the submodule binds the package attribute ``docs`` to this module, shadowing the
    lazily exported function of the same name; making the module callable keeps
    ``from chunklab.datasets import docs; docs()`` working either way.
    """

    def __call__(self, split: str | None = None) -> Dataset:
        return docs(split)


sys.modules[__name__].__class__ = _CallableModule
