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
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from chunklab.protocols import DocumentLike

__all__ = [
    "Dataset",
    "GoldQuestion",
    "QuestionSet",
    "QuoteNotFoundError",
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

    Each quote must occur exactly once in ``text``, as :func:`locate_quote` matches it (line
    breaks, runs of whitespace and end-of-line hyphenation as a reader types them). Every problem
    is appended to ``problems`` as ``"{where}: ..."`` (naming ``doc_name``, and for a quote not
    found the nearest miss seen), and then ``None`` is returned.
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
        except QuoteNotFoundError as exc:
            problems.append(f"{where}: answer quote {preview(quote)} {exc} in {doc_name}; {exc.near}")
        except ValueError as exc:
            problems.append(f"{where}: answer quote {preview(quote)} {exc} in {doc_name}")
    return (list(quotes), spans) if len(spans) == len(quotes) else None


class QuoteNotFoundError(ValueError):
    """A quote :func:`locate_quote` did not find; ``near`` says the nearest miss it saw."""

    def __init__(self, near: str) -> None:
        super().__init__("not found")
        self.near = near


def locate_quote(text: str, quote: str) -> tuple[int, int]:
    """The ``(start, end)`` offsets of ``quote`` in ``text``, matched as people type quotes.

    The rule: a quote that occurs verbatim exactly once is that span. Else it is matched with the typing
    tolerated: any run of whitespace in the quote matches any run of whitespace in the text (a line
    break where the reader typed a space, two spaces for one); two letters typed together also match a
    word hyphenated at a line end ("hyphen-" at the end of a line and "ation" on the next, or a soft
    hyphen), and a word the text writes with a hyphen between two letters ("well-structured": a reader
    who saw "well-" end a line cannot tell it from hyphenation); a hyphen typed between two letters
    matches one followed by a line break, or none at all (an extraction that joined a line-broken
    "camera-" "ready" into "cameraready"); a footnote mark the text carries right after a word (one or
    two digits, or one of * ∗ † ‡ § ¶, before a space, punctuation or the end: "introduced1 .") may be
    left out of the quote, and so may Markdown's marks at a word's edge (```nbsphinx```, ``*emphasis*``:
    a quote typed from a rendered notebook) unless the quote has a backtick or an asterisk of its own;
    straight and curly quotation marks and apostrophes match each other; a TeX logo typed as people
    write it ("LaTeX", "BibTeX") matches its letters in either case (a text layer has "LATEX"); spaces
    around the quote are ignored. The span is
    always the text's own characters: ``text[start:end]`` is the source as written (with its line breaks
    and hyphen), never the quote. ValueError unless the quote occurs exactly once;
    :class:`QuoteNotFoundError` when it does not occur, with the nearest miss (the longest start of the
    quote found, where, and what the text has after it).
    """
    count = text.count(quote)
    if count == 1:
        start = text.index(quote)
        return start, start + len(quote)
    if count > 1:
        raise ValueError(f"found {count} times (ambiguous: quote more of it)")
    found = [m.span() for m in _typed(quote.strip()).finditer(text)]
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(f"found {len(found)} times (ambiguous: quote more of it)")
    raise QuoteNotFoundError(_nearest_miss(text, quote))


#: characters a reader may type for one another: straight and curly quotation marks, apostrophes
_TYPED_ALIKE = {c: group for group in ("'\u2018\u2019\u02bc", '"\u201c\u201d') for c in group}
#: what may lie between two letters or digits typed together: a soft hyphen, or a hyphen ending a line
_LINE_END_HYPHEN = r"(?:\u00ad\s*|[-\u2010][ \t]*\r?\n\s*)?"
#: between two letters also a hyphen the text keeps inside the word ("well-structured" typed "wellstructured")
_WORD_HYPHEN = r"(?:\u00ad\s*|[-\u2010](?:[ \t]*\r?\n\s*)?)?"
#: a footnote mark the text may carry right after a word that the quote leaves out
_FOOTNOTE_MARK = r"(?:[0-9\u00b9\u00b2\u00b3\u2070-\u2079]{1,2}|[*\u2217\u2020\u2021\u00a7\u00b6])?"
#: a TeX logo typed as people write it ("LaTeX", "BibTeX"): a text layer spells the lowered E and the
#: raised A as capitals ("LATEX"), so its letters match in either case
_TEX_LOGO = re.compile(r"(?<![A-Za-z])[A-Za-z]*TeX(?![a-z])")
#: Markdown's inline-code and emphasis marks around a word, which the rendered page does not show
_INLINE_MARK = r"(?:`{1,2}|\*{1,2})?"


def _typed(quote: str) -> re.Pattern[str]:
    """The pattern that finds ``quote`` as typed in a text (the rule of :func:`locate_quote`)."""
    parts: list[str] = []
    logo = {i for m in _TEX_LOGO.finditer(quote) for i in range(m.start(), m.end())}
    for i, ch in enumerate(quote):
        after_letter = i > 0 and quote[i - 1].isalpha()
        if i and quote[i - 1].isalnum() != ch.isalnum() and "`" not in quote and "*" not in quote:
            parts.append(_INLINE_MARK)  # a word's edge: `code` or *emphasis* as a rendered page shows it
        if after_letter and not ch.isalnum():
            parts.append(_FOOTNOTE_MARK)
        if ch.isspace():
            if not quote[i - 1].isspace():
                parts.append(r"\s+")
            continue
        if after_letter and ch.isalpha():
            parts.append(_WORD_HYPHEN)
        elif i and quote[i - 1].isalnum() and ch.isalnum():
            parts.append(_LINE_END_HYPHEN)
        if ch in _TYPED_ALIKE:
            parts.append(f"[{re.escape(_TYPED_ALIKE[ch])}]")
        elif i in logo and ch.isalpha():
            parts.append(f"[{ch.lower()}{ch.upper()}]")
        elif ch in "-\u2010":
            between_letters = 0 < i < len(quote) - 1 and quote[i - 1].isalnum() and quote[i + 1].isalnum()
            parts.append(r"(?:[-\u2010](?:[ \t]*\r?\n\s*)?)" + ("?" if between_letters else ""))
        else:
            parts.append(re.escape(ch))
    return re.compile("".join(parts))


def _nearest_miss(text: str, quote: str) -> str:
    """What the text has that comes closest to ``quote``: the longest start of it found, and where."""
    words = quote.split()
    lo, hi, where = 0, len(words), None  # the first ``lo`` words are found (at ``where``)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        m = _typed(" ".join(words[:mid])).search(text)
        if m is None:
            hi = mid - 1
        else:
            lo, where = mid, m
    if where is None:
        return f"not even its first word {preview(words[0], 30)} is in the text"
    line = text.count("\n", 0, where.start()) + 1
    has = preview(text[where.end() : where.end() + 40], 40)
    wants = preview(" ".join(words[lo:]), 40)
    return (
        f"nearest miss: its first {lo} of {len(words)} words are at offset {where.start()} (line {line}), "
        f"then the text has {has} where the quote has {wants}"
    )


def preview(text: str, limit: int = 70) -> str:
    """``text`` with its whitespace collapsed, cut to ``limit`` characters, as a repr for messages."""
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
