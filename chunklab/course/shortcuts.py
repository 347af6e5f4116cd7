"""The library functions each exercise asks the learner to write, which graded code may not call.

One table, keyed by course notebook: ``functions`` are the learner's functions the exercise
asks for, ``library`` chunklab's own implementations of them (``module:attribute``). While a
notebook is graded, :mod:`chunklab.course.guard` makes a call to one of those from inside
the learner's functions (and from anything the hidden checks call) fail with a message naming
both: "rrf calls chunklab.retrieval.hybrid.reciprocal_rank_fusion, which this exercise asks you to write".
Checkpoint cells may still call them at top level (some compare the learner's result with
chunklab's). When a library module moves, its names change here only.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SHORTCUTS", "Shortcut", "shortcuts_for"]


@dataclass(frozen=True)
class Shortcut:
    """What one exercise asks for (``functions``) and the library code that must not stand in for it."""

    functions: tuple[str, ...]
    library: tuple[str, ...]  # "module:attribute"

    def payload(self) -> dict[str, list]:
        """The form sent to the kernel's guard (plain lists, a Python literal)."""
        return {"functions": list(self.functions), "library": [name.split(":", 1) for name in self.library]}


#: per course notebook (solution file stem)
SHORTCUTS: dict[str, Shortcut] = {
    "01-fixed": Shortcut(
        ("token_windows",), ("chunklab.chunkers.fixed:chunk_fixed", "chunklab.chunkers.fixed:sliding_window")
    ),
    "02-recursive": Shortcut(("pack",), ("chunklab.chunkers.recursive:pack_paragraphs",)),
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
        (
            "chunklab.evaluate.metrics:span_metrics",
            "chunklab.evaluate.metrics:precision_omega",
            "chunklab.evaluate.bootstrap:bootstrap_means",
            "chunklab.evaluate.bootstrap:confidence_interval",
        ),
    ),
    "07-retrieval": Shortcut(
        ("rrf", "hybrid_search"),
        (
            "chunklab.retrieval.hybrid:reciprocal_rank_fusion",
            "chunklab.retrieval.hybrid:reciprocal_rank_fusion_ids",
            "chunklab.retrieval.hybrid:weighted_fusion",
            "chunklab.retrieval.hybrid:weighted_fusion_ids",
        ),
    ),
    "08-code-rag": Shortcut(("char_recall",), ("chunklab.evaluate.metrics:span_metrics",)),
}


def shortcuts_for(notebook: str) -> Shortcut:
    """The table's entry for a course notebook (by solution stem); none declared: an empty one."""
    return SHORTCUTS.get(notebook, Shortcut((), ()))
