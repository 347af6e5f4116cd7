"""What the LLM strategies count: the model's answers, how each was read, what had to fall back.

One :class:`LLMStats` per strategy object accumulates over every document it chunks (a
catalog strategy's ``strategy.chunker.stats``), so a benchmark reports the share of model
answers that needed the fallback or could not be aligned. Each chunk also carries its own
document's counts in metadata.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from chunklab.generate import resolve_generator

__all__ = ["LLMStats", "resolve_generator"]


@dataclass
class LLMStats:
    """Counters of one LLM strategy (all documents so far).

    ``prompts``: questions asked of the model. For boundaries, ``answers`` counts how each
    answer was read (``number``, ``quote``, ``empty``, ``out_of_range``, ``nonsense``),
    ``fallbacks`` the answers that named no usable unit (cut by size instead) and
    ``size_cuts`` the model's chunks that were over budget and cut shorter. For propositions,
    ``propositions`` those the model wrote, ``aligned`` how they were aligned (``exact``,
    ``overlap``) and ``unaligned`` those dropped because no source span matched.
    """

    prompts: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    fallbacks: int = 0
    size_cuts: int = 0
    propositions: int = 0
    aligned: Counter[str] = field(default_factory=Counter)
    unaligned: int = 0

    @property
    def fallback_share(self) -> float:
        """The share of boundary answers that needed the fallback (0.0 without answers)."""
        read = sum(self.answers.values())
        return self.fallbacks / read if read else 0.0

    @property
    def unaligned_share(self) -> float:
        """The share of propositions that could not be aligned to the source (0.0 without any)."""
        return self.unaligned / self.propositions if self.propositions else 0.0

    def add(self, other: LLMStats) -> None:
        """Add ``other``'s counts to these."""
        self.prompts += other.prompts
        self.answers.update(other.answers)
        self.fallbacks += other.fallbacks
        self.size_cuts += other.size_cuts
        self.propositions += other.propositions
        self.aligned.update(other.aligned)
        self.unaligned += other.unaligned

    def as_dict(self) -> dict[str, object]:
        """The counts as plain JSON-ready values."""
        return {
            "prompts": self.prompts,
            "answers": dict(sorted(self.answers.items())),
            "fallbacks": self.fallbacks,
            "size_cuts": self.size_cuts,
            "propositions": self.propositions,
            "aligned": dict(sorted(self.aligned.items())),
            "unaligned": self.unaligned,
        }
