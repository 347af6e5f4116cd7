"""Propositions (Dense X Retrieval, Chen et al. 2023): the model rewrites a passage as short statements.

Passages are runs of the text's paragraphs packed up to ``max_size`` (over-long paragraphs as
sentences, then pieces: :func:`chunklab.chunkers.recursive.paragraph_units`). The model rewrites each
into propositions, read by :func:`chunklab.chunkers.llm.parse.parse_propositions`; each is
aligned back to the span of the passage it came from by
:func:`chunklab.chunkers.llm.parse.align_proposition` (an exact substring, else the sentence
sharing most of its words). A chunk is a source span, never the model's text: its
``metadata["proposition"]`` holds what the model wrote (several propositions aligned to the same
span share one chunk, one per line). A proposition that aligns nowhere is counted and dropped,
and whatever part of a passage no proposition covers becomes a chunk of its own
(``kind="uncovered"``), so nothing of the source is lost and no offset is invented.
"""

from __future__ import annotations

from chunklab._validate import check_doc_id, check_positive_int, check_text
from chunklab.chunk import Chunk
from chunklab.chunkers.llm.boundaries import fitting_units
from chunklab.chunkers.llm.parse import align_proposition, parse_propositions
from chunklab.chunkers.llm.stats import LLMStats, resolve_generator
from chunklab.chunkers.recursive import paragraph_units
from chunklab.generate import DEFAULT_GENERATOR
from chunklab.protocols import GeneratorLike
from chunklab.text import NONSPACE, prose_sentences, trim_span
from chunklab.units import UnitIndex, check_unit, over_budget, unit_params

__all__ = ["chunk_propositions", "propositions_prompt"]

#: tokens the model may write for one passage's propositions
ANSWER_TOKENS = 160


def chunk_propositions(
    text: str,
    max_size: int = 1000,
    doc_id: str = "doc",
    *,
    unit: str = "chars",
    model: str = DEFAULT_GENERATOR,
    generator: GeneratorLike | None = None,
    stats: LLMStats | None = None,
) -> list[Chunk]:
    """Chunks at the source spans of the model's propositions (and the spans none covers), in order.

    ``generator``, ``model`` and ``stats`` are as for
    :func:`chunklab.chunkers.llm.boundaries.chunk_llm_boundaries`. Metadata: ``strategy``,
    ``params``, ``index``, ``kind`` (``proposition`` or ``uncovered``), ``passage`` (its
    number), ``proposition`` (the model's text, one line per proposition), ``aligned``
    (``exact`` or ``overlap``), and the document's ``propositions``/``unaligned`` counts.
    """
    text = check_text(text)
    max_size = check_positive_int(max_size, "max_size")
    doc_id = check_doc_id(doc_id)
    gen = resolve_generator(generator, model)
    params = {"max_chars": max_size, "model": gen.name, **unit_params(check_unit(unit))}
    index = UnitIndex(text, unit)
    doc = LLMStats()
    found: dict[tuple[int, int], dict[str, object]] = {}  # span -> its metadata so far
    for number, (ps, pe) in enumerate(_passages(paragraph_units(text, max_size, index), max_size, index)):
        answer = gen.generate([propositions_prompt(text[ps:pe])], max_new_tokens=ANSWER_TOKENS)[0]
        doc.prompts += 1
        sentences = prose_sentences(text, ps, pe)
        covered: list[tuple[int, int]] = []
        for prop in parse_propositions(answer):
            doc.propositions += 1
            where = align_proposition(prop, text, sentences, ps, pe)
            if where is None:
                doc.unaligned += 1
                continue
            doc.aligned[where.how] += 1
            span = (where.start, where.end)
            covered.append(span)
            if span in found:
                found[span]["proposition"] = f"{found[span]['proposition']}\n{prop}"
            else:
                found[span] = {
                    "kind": "proposition",
                    "passage": number,
                    "proposition": prop,
                    "aligned": where.how,
                }
        for span in _gaps(text, ps, pe, covered):
            found[span] = {"kind": "uncovered", "passage": number}
    if stats is not None:
        stats.add(doc)
    chunks = []
    for i, (start, end) in enumerate(sorted(found)):
        meta: dict[str, object] = {
            "strategy": "propositions",
            "params": params,
            "index": i,
            **found[(start, end)],
            "propositions": doc.propositions,
            "unaligned": doc.unaligned,
        }
        if over_budget(text[start:end], max_size, unit):
            meta["oversize"] = True
        chunks.append(Chunk(text[start:end], start, end, doc_id, meta))
    return chunks


def propositions_prompt(passage: str) -> str:
    """The request to rewrite one passage as propositions, one per line."""
    return (
        "Rewrite the passage below as a list of short, simple statements. Each statement says one fact "
        "in the passage's own words and makes sense on its own. Write one statement per line.\n\n"
        f"Passage: {passage}"
    )


def _passages(units: list[tuple[int, int]], max_size: int, index: UnitIndex) -> list[tuple[int, int]]:
    """Runs of consecutive units packed up to ``max_size`` (one unit at least), as spans."""
    out = []
    first = 0
    while first < len(units):
        taken = fitting_units(units, first, max_size, index)
        out.append((units[first][0], units[first + taken - 1][1]))
        first += taken
    return out


def _gaps(text: str, start: int, end: int, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The trimmed spans of ``text[start:end]`` holding non-whitespace that no ``covered`` span holds."""
    gaps = []
    pos = start
    for s, e in sorted(covered) + [(end, end)]:
        if s > pos and NONSPACE.search(text, pos, s):
            gaps.append(trim_span(text, pos, s))
        pos = max(pos, e)
    return gaps
