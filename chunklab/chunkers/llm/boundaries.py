"""LLM boundaries (LumberChunker, Duarte et al. 2024): the model names where the topic shifts.

The text is cut into paragraphs (over-long ones into sentences, then pieces:
:func:`chunklab.chunkers.recursive.paragraph_units`), each within ``max_size``. From the first
unit not yet chunked, a window of up to ``window`` units (at most :data:`WINDOW_CHARS`
characters, so prompts stay short) is shown to the model, numbered, and it is asked for the
number of the first unit that starts a new topic. Its answer is read by
:func:`chunklab.chunkers.llm.parse.parse_boundary_answer`; the chunk is the units before that
one, packed within ``max_size`` (a longer choice is cut by size and counted in ``size_cuts``).
An answer naming no usable unit (empty, out of range, nonsense) falls back to packing units up to
``max_size``; the fallback is counted and the chunk says why. The next window starts after the chunk.
"""

from __future__ import annotations

from chunklab._validate import check_doc_id, check_positive_int, check_text
from chunklab.chunk import Chunk
from chunklab.chunkers.llm.parse import parse_boundary_answer
from chunklab.chunkers.llm.stats import LLMStats, resolve_generator
from chunklab.chunkers.recursive import paragraph_units
from chunklab.generate import DEFAULT_GENERATOR
from chunklab.protocols import GeneratorLike
from chunklab.units import UnitIndex, check_unit, over_budget, unit_params

__all__ = ["WINDOW_CHARS", "boundary_prompt", "chunk_llm_boundaries", "fitting_units"]

#: a window never shows the model more than this many characters (one unit at least)
WINDOW_CHARS = 2400
#: tokens the model may write for a boundary answer (a number, or a short quote)
ANSWER_TOKENS = 16


def chunk_llm_boundaries(
    text: str,
    max_size: int = 1000,
    doc_id: str = "doc",
    *,
    window: int = 8,
    unit: str = "chars",
    model: str = DEFAULT_GENERATOR,
    generator: GeneratorLike | None = None,
    stats: LLMStats | None = None,
) -> list[Chunk]:
    """Chunks of whole paragraphs cut where the model says the topic shifts, each within ``max_size``.

    ``generator`` answers the prompts (default: the shared generator of ``model``, the packaged
    SmolLM2; tests pass a replay of recorded answers). ``stats`` (an :class:`LLMStats`) gets
    this document's counts added. Metadata: ``strategy``, ``params``, ``index``, ``units``,
    ``cut`` (``model``, ``size``: the model's chunk cut to fit, ``fallback``, ``single``: one
    unit left or in the window), ``answer`` (how the answer was read), and the document's
    ``prompts``/``fallbacks``; ``oversize`` where a piece re-tokenizes longer on its own.
    """
    text = check_text(text)
    max_size = check_positive_int(max_size, "max_size")
    window = check_positive_int(window, "window")
    doc_id = check_doc_id(doc_id)
    gen = resolve_generator(generator, model)
    params = {"max_chars": max_size, "window": window, "model": gen.name, **unit_params(check_unit(unit))}
    index = UnitIndex(text, unit)
    units = paragraph_units(text, max_size, index)
    doc = LLMStats()
    spans: list[tuple[int, int, str, str]] = []  # first unit, units taken, cut, how the answer was read
    first = 0
    while first < len(units):
        shown = _window(text, units, first, window)
        fits = fitting_units(units, first, max_size, index)
        if shown == 1:
            taken, cut, how = 1, "single", ""
        else:
            pieces = [text[s:e] for s, e in units[first : first + shown]]
            answer = gen.generate([boundary_prompt(pieces)], max_new_tokens=ANSWER_TOKENS, stop=("\n\n",))[0]
            read = parse_boundary_answer(answer, pieces)
            doc.prompts += 1
            doc.answers[read.how] += 1
            if read.unit is None:
                doc.fallbacks += 1
                taken, cut, how = fits, "fallback", read.how
            elif read.unit - 1 > fits:
                doc.size_cuts += 1
                taken, cut, how = fits, "size", read.how
            else:
                taken, cut, how = read.unit - 1, "model", read.how
        spans.append((first, taken, cut, how))
        first += taken
    if stats is not None:
        stats.add(doc)
    chunks = []
    for i, (first, taken, cut, how) in enumerate(spans):
        start, end = units[first][0], units[first + taken - 1][1]
        meta: dict[str, object] = {
            "strategy": "llm-boundaries",
            "params": params,
            "index": i,
            "units": taken,
            "cut": cut,
            "prompts": doc.prompts,
            "fallbacks": doc.fallbacks,
        }
        if how:
            meta["answer"] = how
        if over_budget(text[start:end], max_size, unit):
            meta["oversize"] = True
        chunks.append(Chunk(text[start:end], start, end, doc_id, meta))
    return chunks


def boundary_prompt(units: list[str]) -> str:
    """The question about one window: its units numbered from 1, and what to answer."""
    listed = "\n\n".join(f"Paragraph {i}: {unit}" for i, unit in enumerate(units, 1))
    return (
        f"{listed}\n\n"
        f"Which paragraph, from 2 to {len(units)}, is the first one about a different topic than "
        "paragraph 1? Answer with the paragraph number only."
    )


def _window(text: str, units: list[tuple[int, int]], first: int, window: int) -> int:
    """How many units from ``first`` the model sees: up to ``window``, within WINDOW_CHARS (one at least)."""
    shown = 1
    while (
        first + shown < len(units)
        and shown < window
        and units[first + shown][1] - units[first][0] <= WINDOW_CHARS
    ):
        shown += 1
    return shown


def fitting_units(units: list[tuple[int, int]], first: int, max_size: int, index: UnitIndex) -> int:
    """How many units from ``first`` fit in ``max_size`` together (one at least)."""
    taken = 1
    while first + taken < len(units) and index.count(units[first][0], units[first + taken][1]) <= max_size:
        taken += 1
    return taken
