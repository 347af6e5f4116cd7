"""The library functions each exercise asks the learner to write, which graded code may not call.

One table, keyed by course notebook: ``functions`` are the learner's functions the exercise
asks for, ``library`` chunklab's own implementations of them (``module:attribute``), ``absent``
those of them the grading sandbox does not hold at all. The grader builds the kernel's view
of the package without the ``absent`` ones (:mod:`chunklab.course.redact`: a stub that computes
nothing stands in for each), so there is nothing to import, exec or reach through a thread, a
fork or ``ctypes``. The others stay, because the notebook's own setup or checkpoint cells use
them (chunk_fixed builds 01's comparison, chunk_python 03's, span_metrics scores 06 and 08, the PDF
loader that 03b reads its files with calls the margin rule, ...); for those,
:mod:`chunklab.course.guard` is the line: a call from inside the learner's functions (and from
anything the hidden checks call) fails with a message naming both, "rrf calls
chunklab.retrieval.hybrid.reciprocal_rank_fusion, which this exercise asks you to write".
When a library module moves, its names change here only.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SHORTCUTS", "Shortcut", "shortcuts_for"]


@dataclass(frozen=True)
class Shortcut:
    """What one exercise asks for (``functions``) and the library code that must not stand in for it."""

    functions: tuple[str, ...]
    library: tuple[str, ...]  # "module:attribute"
    absent: tuple[str, ...] = ()  # entries of library not in the grading sandbox (stubs stand in)

    def __post_init__(self) -> None:
        extra = sorted(set(self.absent) - set(self.library))
        if extra:
            raise ValueError(f"absent must name library entries, got {', '.join(extra)}")

    def payload(self) -> dict[str, list]:
        """The form sent to the kernel's guard (plain lists, a Python literal)."""
        return {"functions": list(self.functions), "library": [name.split(":", 1) for name in self.library]}


#: every fusion chunklab has (HybridRetriever fuses through these, so it computes nothing either)
_FUSIONS = (
    "chunklab.retrieval.hybrid:reciprocal_rank_fusion",
    "chunklab.retrieval.hybrid:reciprocal_rank_fusion_ids",
    "chunklab.retrieval.hybrid:weighted_fusion",
    "chunklab.retrieval.hybrid:weighted_fusion_ids",
)

_PACK = "chunklab.chunkers.recursive:pack_paragraphs"
#: 06's interval and its precision twin (the notebook itself scores with span_metrics, which stays)
_BOOTSTRAP = (
    "chunklab.evaluate.metrics:precision_omega",
    "chunklab.evaluate.bootstrap:bootstrap_means",
    "chunklab.evaluate.bootstrap:confidence_interval",
)

#: the kit's readers of a model's answers (the LLM chunkers call them, so they compute nothing either)
_LLM_PARSE = (
    "chunklab.chunkers.llm.parse:parse_boundary_answer",
    "chunklab.chunkers.llm.parse:align_proposition",
    "chunklab.chunkers.llm.parse:_quoted_unit",
)

#: per course notebook (solution file stem)
SHORTCUTS: dict[str, Shortcut] = {
    "01-fixed": Shortcut(
        ("token_windows",),
        ("chunklab.chunkers.fixed:chunk_fixed", "chunklab.chunkers.fixed:sliding_window"),
        absent=("chunklab.chunkers.fixed:sliding_window",),
    ),
    "02-recursive": Shortcut(("pack",), (_PACK,), absent=(_PACK,)),
    "03-structural": Shortcut(
        ("split_unit", "pack_units", "chunk_python_source"), ("chunklab.chunkers.structural:chunk_python",)
    ),
    "03b-documents": Shortcut(
        ("remove_margins",),
        ("chunklab.documents.pdf:_remove_margins", "chunklab.documents.pdf:_page_numbers"),
    ),
    "04-semantic": Shortcut(
        ("distance_curve", "percentile_breakpoints", "chunks_from_breakpoints", "semantic_chunks"),
        (
            "chunklab.chunkers.semantic:chunk_semantic",
            "chunklab.chunkers.semantic:analyze_semantic",
            "chunklab.chunkers.semantic:breakpoint_threshold",
        ),
    ),
    "05-hierarchical": Shortcut(("auto_merge_ids",), ("chunklab.chunkers.hierarchical:auto_merge",)),
    "06-evaluation": Shortcut(
        ("merge_spans", "span_metrics", "paired_bootstrap"),
        ("chunklab.evaluate.metrics:span_metrics", *_BOOTSTRAP),
        absent=_BOOTSTRAP,
    ),
    "07-retrieval": Shortcut(("rrf", "hybrid_search"), _FUSIONS, absent=_FUSIONS),
    "08-code-rag": Shortcut(("char_recall",), ("chunklab.evaluate.metrics:span_metrics",)),
    "10-llm": Shortcut(("parse_boundary_answer", "align_proposition"), _LLM_PARSE, absent=_LLM_PARSE),
}


def shortcuts_for(notebook: str) -> Shortcut:
    """The table's entry for a course notebook (by solution stem); none declared: an empty one."""
    return SHORTCUTS.get(notebook, Shortcut((), ()))
