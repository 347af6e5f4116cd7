"""The one dataset model: documents, questions with gold spans, splits, and the rows left out.

Every question set of the kit is a :class:`QuestionSet`: the docs corpus
(:func:`chunklab.datasets.corpora.docs.load_docs`), the code questions
(:func:`chunklab.datasets.questions.code.code_questions`) and your own files
(:func:`chunklab.evaluate.userdata.load_user_dataset`). :class:`chunklab.evaluate.Benchmark`
takes anything that satisfies the :class:`Dataset` protocol. Gold answers written as quotes
are located to character spans by :func:`locate_answers`, the one answer locator.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from chunklab.protocols import DocumentLike

__all__ = [
    "Dataset",
    "GoldQuestion",
    "QuestionSet",
    "locate_answers",
    "locate_quote",
    "preview",
]


class GoldQuestion(Protocol):
    """A question and its gold: character spans in ``doc_id``, or relevant documents (BEIR qrels)."""

    @property
    def id(self) -> str: ...

    @property
    def question(self) -> str: ...

    @property
    def doc_id(self) -> str: ...

    @property
    def gold_spans(self) -> Sequence[tuple[int, int]]: ...

    @property
    def answers(self) -> Sequence[str]: ...

    @property
    def split(self) -> str: ...

    @property
    def relevant_docs(self) -> Sequence[str]: ...


class Dataset(Protocol):
    """What a benchmark reads: documents, questions with gold spans, splits, and what was skipped."""

    @property
    def name(self) -> str: ...

    @property
    def documents(self) -> Sequence[DocumentLike]: ...

    @property
    def questions(self) -> Sequence[GoldQuestion]: ...

    @property
    def skipped(self) -> Sequence[str]: ...

    @property
    def splits(self) -> tuple[str, ...]: ...

    def doc(self, doc_id: str) -> DocumentLike: ...

    def split(self, name: str) -> Dataset: ...


D = TypeVar("D", bound=DocumentLike)
Q = TypeVar("Q", bound=GoldQuestion)


@dataclass(repr=False)
class QuestionSet(Generic[D, Q]):
    """Documents plus questions about them, the splits they may be cut into, and what was left out.

    ``split_names`` declares the splits (the kit's sets: ``dev`` and ``heldout``); when empty,
    the splits are those the questions name. ``skipped`` lists the rows and files left out,
    each with its reason; ``format`` names the question format read (``quotes``, ``spans``,
    ``beir``; empty for the kit's own sets).
    """

    name: str
    documents: list[D]
    questions: list[Q]
    skipped: list[str] = field(default_factory=list)
    split_names: tuple[str, ...] = ()
    format: str = ""
    _by_id: dict[str, D] = field(default_factory=dict, init=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id = {d.doc_id: d for d in self.documents}

    @property
    def splits(self) -> tuple[str, ...]:
        """The split names :meth:`split` accepts."""
        return self.split_names or tuple(sorted({q.split for q in self.questions if q.split}))

    def doc(self, doc_id: str) -> D:
        """The document with this id; ``KeyError`` naming the id if there is none."""
        try:
            return self._by_id[doc_id]
        except KeyError:
            raise KeyError(f"no document {doc_id!r} in dataset {self.name!r}") from None

    def split(self, name: str) -> QuestionSet[D, Q]:
        """The same documents with only the questions of split ``name``."""
        if name not in self.splits:
            have = list(self.splits) or "no splits"
            raise ValueError(f"split must be one of the splits of {self.name!r} ({have}), got {name!r}")
        return self._with(f"{self.name}:{name}", [q for q in self.questions if q.split == name])

    def sample(self, n: int, seed: int = 0) -> QuestionSet[D, Q]:
        """``n`` questions drawn without replacement (deterministic for a seed); all documents kept.

        The documents stay whole so a retrieval run on the sample still searches the full corpus.
        """
        from chunklab._validate import check_non_negative_int

        check_non_negative_int(n, "n")
        if n > len(self.questions):
            raise ValueError(f"cannot sample {n} questions from {len(self.questions)} in {self.name!r}")
        picked = random.Random(seed).sample(range(len(self.questions)), n)
        return self._with(f"{self.name}:sample{n}", [self.questions[i] for i in sorted(picked)])

    def _with(self, name: str, questions: list[Q]) -> QuestionSet[D, Q]:
        return QuestionSet(
            name, list(self.documents), questions, list(self.skipped), self.split_names, self.format
        )

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Q]:
        return iter(self.questions)

    def __repr__(self) -> str:
        skipped = f", skipped={len(self.skipped)}" if self.skipped else ""
        return (
            f"{type(self).__name__}(name={self.name!r}, documents={len(self.documents)}, "
            f"questions={len(self.questions)}{skipped})"
        )


def locate_answers(
    text: str, answer: object, where: str, doc_name: str, problems: list[str]
) -> tuple[list[str], list[tuple[int, int]]] | None:
    """The quotes of ``answer`` (a quote or a non-empty list of them) and their spans in ``text``.

    Each quote must occur exactly once in ``text``. Every problem is appended to ``problems``
    as ``"{where}: ..."`` (naming ``doc_name``), and then ``None`` is returned.
    """
    quotes = [answer] if isinstance(answer, str) else answer
    if (
        not isinstance(quotes, list)
        or not quotes
        or not all(isinstance(a, str) and a.strip() for a in quotes)
    ):
        problems.append(f"{where}: 'answer' must be a non-empty string or a non-empty list of them")
        return None
    spans = []
    for quote in quotes:
        try:
            spans.append(locate_quote(text, quote))
        except ValueError as exc:
            problems.append(f"{where}: answer quote {preview(quote)} {exc} in {doc_name}")
    return (list(quotes), spans) if len(spans) == len(quotes) else None


def locate_quote(text: str, quote: str) -> tuple[int, int]:
    """The ``(start, end)`` offsets of ``quote`` in ``text``; ValueError unless it occurs exactly once."""
    count = text.count(quote)
    if count != 1:
        raise ValueError("not found" if count == 0 else f"found {count} times (ambiguous: quote more of it)")
    start = text.index(quote)
    return start, start + len(quote)


def preview(text: str, limit: int = 70) -> str:
    """``text`` with its whitespace collapsed, cut to ``limit`` characters, as a repr for messages."""
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
