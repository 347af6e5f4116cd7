"""Answers from retrieved chunks, and how they are scored: token F1, support and citations.

A strategy is judged by the answers its chunks lead to, not only by recall. For each question
the local model (:func:`chunklab.generate.get_generator`, cached on disk) reads the top ``k``
retrieved chunks, numbered ``[1]..[k]`` (:func:`answer_prompt`), and answers citing the
passages it used. :func:`score_answer` gives four numbers per question (:data:`ANSWER_METRICS`):

- ``answer_f1``: SQuAD-style token F1 of the answer (citations removed) against the gold quotes
  (:func:`token_f1`): does the answer hold the gold answer's words? It cannot tell a right
  paraphrase with other words from a wrong answer.
- ``supported``: the share of the answer's sentences whose tokens lie, for at least
  :data:`SUPPORT_MIN` of them, in the retrieved passages (:func:`supported_share`). A lexical
  check: a sentence stitched from passage words but saying something false still counts as
  supported, and a faithful paraphrase may not. It says "written from the passages", not "true".
- ``cites_gold``: 1 when some passage the answer cites overlaps a gold span by a character or more.
- ``citation_precision``: the share of cited passages that overlap a gold span (0 when none is cited).

A citation is any ``[n]`` naming a passage shown. A small model often starts its answer by echoing
a passage's label and copying that passage (``"[1] When someone leaves, ..."``): that counts as
citing passage 1, which is what it copied, so the citation scores say which passage the answer came
from, not that the model chose it for a reason.

Intervals are the kit's paired bootstrap over questions (:mod:`chunklab.evaluate.bootstrap`):
:func:`answer_summary` and :func:`answer_differences`.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from chunklab._validate import check_positive_int, check_share
from chunklab.chunk import Chunk
from chunklab.datasets.model import GoldQuestion
from chunklab.evaluate.bootstrap import (
    N_RESAMPLES,
    bootstrap_means,
    confidence_interval,
    is_established,
    resample_counts,
)
from chunklab.generate import DEFAULT_GENERATOR, resolve_generator
from chunklab.protocols import GeneratorLike
from chunklab.text import split_sentences

__all__ = [
    "ANSWER_METRICS",
    "ANSWER_TOKENS",
    "PASSAGE_CHARS",
    "SUPPORT_MIN",
    "Answer",
    "answer_differences",
    "answer_prompt",
    "answer_summary",
    "answer_tokens",
    "citation_scores",
    "generate_answers",
    "parse_citations",
    "score_answer",
    "strip_citations",
    "supported_share",
    "token_f1",
]

#: the per-question answer scores, in the order tables show them
ANSWER_METRICS = ("answer_f1", "supported", "cites_gold", "citation_precision")
#: tokens the model may write for one answer
ANSWER_TOKENS = 64
#: each retrieved chunk is shown to the model up to this many characters
PASSAGE_CHARS = 800
#: a sentence is supported when at least this share of its tokens occur in the passages
SUPPORT_MIN = 0.5

_CITATION = re.compile(r"\[\s*(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\s*\]")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "“”‘’«»–—…•|"})


@dataclass(frozen=True)
class Answer:
    """A model's answer to one question: its ``text``, the passage numbers it ``cites`` (1-based,
    valid ones only, in order, each once) and the ``passages`` (chunks) it was shown."""

    question_id: str
    text: str
    cites: tuple[int, ...]
    passages: tuple[Chunk, ...]

    @property
    def cited(self) -> list[Chunk]:
        """The chunks the answer cites."""
        return [self.passages[i - 1] for i in self.cites]


def answer_prompt(question: str, passages: Sequence[str]) -> str:
    """The request for one answer: the passages numbered ``[1]..``, the question, how to cite."""
    shown = "\n\n".join(
        f"[{i}] {p if len(p) <= PASSAGE_CHARS else p[:PASSAGE_CHARS] + ' [...]'}"
        for i, p in enumerate(passages, 1)
    )
    return (
        f"Passages:\n{shown}\n\nQuestion: {question}\n"
        "Answer the question in one or two sentences using only the passages above. "
        "End the answer with the numbers of the passages you used in square brackets, like [1]."
    )


def generate_answers(
    questions: Sequence[GoldQuestion],
    retrieved: Sequence[Sequence[Chunk]],
    *,
    k: int = 3,
    model: str = DEFAULT_GENERATOR,
    generator: GeneratorLike | None = None,
    max_new_tokens: int = ANSWER_TOKENS,
) -> list[Answer]:
    """The model's answer to each question from its top ``k`` retrieved chunks (``retrieved[i]`` for
    ``questions[i]``, best first). ``generator`` answers (default: the shared generator of ``model``)."""
    k = check_positive_int(k, "k")
    if len(questions) != len(retrieved):
        raise ValueError(f"retrieved must hold one list per question: {len(retrieved)} for {len(questions)}")
    gen = resolve_generator(generator, model)
    shown = [tuple(found[:k]) for found in retrieved]
    prompts = [
        answer_prompt(q.question, [c.text for c in top]) for q, top in zip(questions, shown, strict=True)
    ]
    outputs = gen.generate(prompts, max_new_tokens=max_new_tokens, stop=("\n\n",)) if prompts else []
    return [
        Answer(q.id, out.strip(), parse_citations(out, len(top)), top)
        for q, top, out in zip(questions, shown, outputs, strict=True)
    ]


def parse_citations(answer: object, n_passages: int) -> tuple[int, ...]:
    """The numbers cited in ``answer`` as ``[2]`` or ``[1, 3]``, within ``1..n_passages``, each once."""
    text = unicodedata.normalize("NFKC", answer if isinstance(answer, str) else "")
    out: list[int] = []
    for m in _CITATION.finditer(text):
        for part in re.split(r"[,;]", m.group(1)):
            n = int(part)
            if 1 <= n <= n_passages and n not in out:
                out.append(n)
    return tuple(out)


def strip_citations(text: str) -> str:
    """``text`` without its ``[n]`` citation markers."""
    return _CITATION.sub(" ", text)


def answer_tokens(text: object) -> list[str]:
    """SQuAD's answer normalization: NFKC, lower case, punctuation and English articles removed, split."""
    norm = unicodedata.normalize("NFKC", text if isinstance(text, str) else "").casefold()
    return _ARTICLES.sub(" ", norm.translate(_PUNCT)).split()


def token_f1(prediction: str, reference: str) -> float:
    """Token F1 of ``prediction`` against ``reference`` after :func:`answer_tokens` (a bag of tokens).

    Symmetric, in ``[0, 1]``; 1.0 when both normalize to the same tokens (two empty texts
    included), 0.0 when exactly one is empty or they share no token.
    """
    pred, ref = answer_tokens(prediction), answer_tokens(reference)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def supported_share(answer: str, passages: Sequence[str], min_share: float = SUPPORT_MIN) -> float:
    """The share of ``answer``'s sentences (citations removed) with at least ``min_share`` of their
    tokens in ``passages`` (see the module's note on what this measures); 0.0 for an empty answer."""
    min_share = check_share(min_share, "min_share")
    text = strip_citations(answer)
    known = {t for p in passages for t in answer_tokens(p)}
    sentences = [answer_tokens(text[s:e]) for s, e in split_sentences(text)]
    sentences = [toks for toks in sentences if toks]
    if not sentences:
        return 0.0
    held = sum(sum(t in known for t in toks) / len(toks) >= min_share for toks in sentences)
    return held / len(sentences)


def citation_scores(answer: Answer, doc_id: str, gold_spans: Sequence[tuple[int, int]]) -> dict[str, float]:
    """``cites_gold`` and ``citation_precision`` of ``answer`` for gold spans in ``doc_id``."""
    cited = answer.cited
    good = [c for c in cited if c.doc_id == doc_id and any(c.start < e and s < c.end for s, e in gold_spans)]
    return {
        "cites_gold": float(bool(good)),
        "citation_precision": len(good) / len(cited) if cited else 0.0,
    }


def score_answer(answer: Answer, question: GoldQuestion) -> dict[str, float]:
    """The :data:`ANSWER_METRICS` of one answer (the reference is the question's gold
    quotes, joined)."""
    if answer.question_id != question.id:
        given, asked = answer.question_id, question.id
        raise ValueError(f"answer is for question {given!r}, not {asked!r}")
    reference = " ".join(question.answers)
    return {
        "answer_f1": token_f1(strip_citations(answer.text), reference),
        "supported": supported_share(answer.text, [c.text for c in answer.passages]),
        **citation_scores(answer, question.doc_id, question.gold_spans),
    }


def answer_summary(
    per_question: pd.DataFrame,
    metrics: Sequence[str] = ANSWER_METRICS,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Per strategy, each metric's mean and paired-bootstrap 95% interval (``m``, ``m_lo``, ``m_hi``).

    ``per_question`` has columns ``strategy``, ``question_id`` and the ``metrics``; every
    strategy must score the same questions (they are resampled with one count matrix).
    """
    table, qids, names = _by_strategy(per_question, metrics)
    counts = resample_counts(len(qids), n_resamples, seed)
    rows = []
    for name in names:
        values = table.loc[name].reindex(qids)[list(metrics)].to_numpy(dtype=np.float64).T
        lo, hi = confidence_interval(bootstrap_means(values, counts))
        row: dict[str, object] = {"strategy": name, "questions": len(qids)}
        for j, m in enumerate(metrics):
            row.update({m: float(values[j].mean()), f"{m}_lo": float(lo[j]), f"{m}_hi": float(hi[j])})
        rows.append(row)
    return pd.DataFrame(rows).set_index("strategy")


def answer_differences(
    per_question: pd.DataFrame,
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str] = ANSWER_METRICS,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> list[dict[str, object]]:
    """For each ``(a, b)`` and metric: the mean paired difference ``a - b``, its 95% interval, and
    ``established`` (:func:`~chunklab.evaluate.bootstrap.is_established`: the interval excludes 0)."""
    table, qids, names = _by_strategy(per_question, metrics)
    counts = resample_counts(len(qids), n_resamples, seed)
    out = []
    for a, b in pairs:
        for name in (a, b):
            if name not in names:
                raise ValueError(f"pairs name strategy {name!r}, not among {names}")
        diff = (
            table.loc[a].reindex(qids)[list(metrics)] - table.loc[b].reindex(qids)[list(metrics)]
        ).to_numpy(dtype=np.float64)
        lo, hi = confidence_interval(bootstrap_means(diff.T, counts))
        for j, m in enumerate(metrics):
            cmp = {"lo": float(lo[j]), "hi": float(hi[j])}
            out.append(
                {
                    "metric": m,
                    "a": a,
                    "b": b,
                    "diff": float(diff[:, j].mean()),
                    **cmp,
                    "established": is_established(cmp),
                }
            )
    return out


def _by_strategy(
    per_question: pd.DataFrame, metrics: Sequence[str]
) -> tuple[pd.DataFrame, list[str], list[str]]:
    missing = [c for c in ("strategy", "question_id", *metrics) if c not in per_question.columns]
    if missing:
        raise ValueError(f"per_question lacks column(s) {missing}")
    if per_question.empty:
        raise ValueError("per_question has no rows")
    names = list(dict.fromkeys(per_question["strategy"]))
    qids = list(dict.fromkeys(per_question["question_id"]))
    table = per_question.set_index(["strategy", "question_id"])
    for name in names:
        if set(table.loc[name].index) != set(qids):
            raise ValueError(f"strategy {name!r} was not scored on the same questions as the others")
    return table, qids, names
