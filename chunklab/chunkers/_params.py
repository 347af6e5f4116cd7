"""Strategy parameters: one typed dataclass per strategy, validated once, and how the catalog reads them.

Each strategy of :mod:`chunklab.chunkers.catalog` takes its parameters as one frozen
dataclass (Chonkie's ``RecursiveRules`` style): the fields and their defaults are the
strategy's parameters, ``__post_init__`` validates them once (a ValueError names the
parameter and the value), and the repr is what results print. ``SIZE`` names the field
that holds the chunk-size budget, measured in ``unit`` (so ``max_chars`` counts tokens
when ``unit="tokens"``): the one place that says which parameter ``--size`` sets.
The helpers below read command-line values, percentage overlaps and level sizes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from chunklab._validate import (
    check_bool,
    check_choice,
    check_non_negative_int,
    check_overlap,
    check_positive_int,
)
from chunklab.generate import DEFAULT_GENERATOR
from chunklab.units import check_unit

__all__ = [
    "METHODS",
    "FixedParams",
    "HierarchicalParams",
    "LLMBoundariesParams",
    "MarkdownHierarchyParams",
    "ParagraphsParams",
    "PropositionsParams",
    "RecursiveParams",
    "SemanticParams",
    "SentencesParams",
    "StrategyParams",
    "StructuralParams",
    "check_method",
    "check_semantic_params",
]


@dataclass(frozen=True)
class StrategyParams:
    """Base of the strategies' parameter dataclasses."""

    #: the field holding the chunk-size budget (in ``unit``); None when there is no single one
    SIZE: ClassVar[str | None] = None
    #: the fields that must be ints >= 0 (counts such as ``min_chars`` or sentences of overlap)
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        """Check what strategies share: the size budget (a positive int), the unit, the counts."""
        if self.SIZE is not None:
            check_positive_int(getattr(self, self.SIZE), self.SIZE)
        unit = getattr(self, "unit", None)
        if unit is not None:
            check_unit(unit)
        for name in self.NON_NEGATIVE:
            check_non_negative_int(getattr(self, name), name)

    def as_dict(self) -> dict[str, Any]:
        """The parameters by name, in field order (what stores and results record)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @property
    def budget(self) -> int | None:
        """The chunk-size budget, measured in ``unit`` (None without a single size)."""
        return getattr(self, self.SIZE) if self.SIZE is not None else None


@dataclass(frozen=True)
class FixedParams(StrategyParams):
    """Fixed windows of ``size`` (in ``unit``), each overlapping the previous by ``overlap``."""

    SIZE: ClassVar[str | None] = "size"
    size: int = 1000
    overlap: int = 0
    unit: str = "chars"

    def __post_init__(self) -> None:
        object.__setattr__(self, "overlap", resolve_overlap(self.overlap, self.size))  # "10%" of size
        super().__post_init__()
        check_overlap(self.overlap, self.size)


@dataclass(frozen=True)
class RecursiveParams(FixedParams):
    """The separator hierarchy's windows: ``size`` and ``overlap`` in ``unit``, as for fixed windows."""


@dataclass(frozen=True)
class StructuralParams(StrategyParams):
    """Headings / AST / DOM units packed up to ``max_chars``, merged below ``min_chars`` (in ``unit``)."""

    SIZE: ClassVar[str | None] = "max_chars"
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ("min_chars",)
    max_chars: int = 1500
    min_chars: int = 200
    keep_boilerplate: bool = False
    unit: str = "chars"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_bool(self.keep_boilerplate, "keep_boilerplate")


@dataclass(frozen=True)
class SemanticParams(StrategyParams):
    """Embedding breakpoints by ``method``; chunks between ``min_chars`` and ``max_chars`` (in ``unit``)."""

    SIZE: ClassVar[str | None] = "max_chars"
    method: str = "percentile"
    percentile: float = 95
    buffer_size: int = 1
    min_chars: int = 100
    max_chars: int = 2000
    unit: str = "chars"

    def __post_init__(self) -> None:
        check_semantic_params(
            self.method,
            None,
            self.percentile,
            self.buffer_size,
            self.min_chars,
            self.max_chars,
            None,
            "centered",
            self.unit,
        )


@dataclass(frozen=True)
class HierarchicalParams(StrategyParams):
    """Nested ``levels`` (largest first, in ``unit``); merge when ``merge_ratio`` of a parent came back."""

    levels: tuple[int, ...] = (2048, 512, 128)
    unit: str = "tokens"
    merge_ratio: float = 0.5

    def __post_init__(self) -> None:
        from chunklab.chunkers.hierarchical import check_levels

        levels = parse_levels(self.levels)
        check_levels(levels)
        object.__setattr__(self, "levels", levels)
        super().__post_init__()


@dataclass(frozen=True)
class MarkdownHierarchyParams(StrategyParams):
    """Markdown sections as parents of ``max_chars`` paragraphs (in ``unit``); other kinds: token levels."""

    SIZE: ClassVar[str | None] = "max_chars"
    max_chars: int = 1000
    merge_ratio: float = 0.5
    unit: str = "chars"


@dataclass(frozen=True)
class ParagraphsParams(StrategyParams):
    """Whole paragraphs packed up to ``max_chars`` (in ``unit``), ``overlap_paragraphs`` repeated."""

    SIZE: ClassVar[str | None] = "max_chars"
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ("overlap_paragraphs",)
    max_chars: int = 1000
    overlap_paragraphs: int = 1
    unit: str = "chars"


@dataclass(frozen=True)
class SentencesParams(StrategyParams):
    """Whole sentences packed up to ``size`` (in ``unit``), ``overlap_sentences`` repeated."""

    SIZE: ClassVar[str | None] = "size"
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ("overlap_sentences",)
    size: int = 1000
    overlap_sentences: int = 1
    unit: str = "chars"


@dataclass(frozen=True)
class LLMBoundariesParams(StrategyParams):
    """Paragraphs up to ``max_chars`` (in ``unit``), cut where ``model`` sees a ``window``'s topic shift."""

    SIZE: ClassVar[str | None] = "max_chars"
    max_chars: int = 1000
    window: int = 8
    model: str = DEFAULT_GENERATOR
    unit: str = "chars"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int(self.window, "window")
        check_generator_model(self.model)


@dataclass(frozen=True)
class PropositionsParams(StrategyParams):
    """The source spans of the propositions ``model`` writes for each paragraph (up to ``max_chars``)."""

    SIZE: ClassVar[str | None] = "max_chars"
    max_chars: int = 1000
    model: str = DEFAULT_GENERATOR
    unit: str = "chars"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_generator_model(self.model)


def check_generator_model(model: object) -> str:
    """``model`` if it names a local generative model or a recording (``replay:PATH``), else a ValueError."""
    from chunklab.generate import MODELS, REPLAY_PREFIX

    if isinstance(model, str) and (model in MODELS or model.startswith(REPLAY_PREFIX)):
        return model
    raise ValueError(f"model must be one of {', '.join(MODELS)} or {REPLAY_PREFIX}PATH; got {model!r}")


def parse_param_value(value: str) -> bool | int | float | str | None:
    """``"400"`` -> 400, ``"0.5"`` -> 0.5, ``"true"`` -> True, ``"10%"`` and others stay strings."""
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def resolve_overlap(overlap: object, size: object) -> object:
    """``overlap`` as given, or a percentage of ``size`` (``"10%"``) as an int."""
    if isinstance(overlap, str) and overlap.strip().endswith("%"):
        try:
            share = float(overlap.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"overlap {overlap!r} is not a number or a percentage") from None
        if not 0 <= share < 1:
            raise ValueError(f"overlap {overlap!r} must be a percentage in [0, 100)")
        if not isinstance(size, int):
            raise ValueError(f"a percentage overlap needs an integer size, got {size!r}")
        return int(round(size * share))
    return overlap


def show_param(value: object) -> str:
    """A parameter value as a label shows it (level sizes as ``2048/512/128``)."""
    if isinstance(value, tuple):
        return "/".join(map(str, value))
    return str(value)


def parse_levels(levels: str | int | Sequence[int]) -> tuple[int, ...]:
    """Level sizes, largest first: a sequence of ints, or ``"2048/512/128"`` (``"2048,512,128"`` accepted)."""
    if isinstance(levels, str):  # from the command line
        try:
            levels = [int(x) for x in levels.replace("/", " ").replace(",", " ").split()]
        except ValueError:
            raise ValueError(f"levels must be sizes like 2048/512/128, got {levels!r}") from None
    elif isinstance(levels, int):
        levels = [levels]
    out = tuple(check_positive_int(v, "levels") for v in levels)
    if not out:
        raise ValueError("levels must name at least one size, like 2048/512/128")
    return out


#: breakpoint rules; the aliases on the right map to the names on the left
METHODS = ("threshold", "percentile", "standard_deviation", "interquartile", "gradient")
_ALIASES = {
    "fixed": "threshold",
    "std": "standard_deviation",
    "stddev": "standard_deviation",
    "iqr": "interquartile",
}


def check_semantic_params(
    method: str,
    threshold: float | None,
    percentile: float,
    buffer_size: int,
    min_chars: int,
    max_chars: int,
    amount: float | None,
    window: str,
    unit: str,
) -> str:
    """Validate the semantic chunker's parameters (a ValueError names the bad one); the method's name."""
    method = check_method(method, threshold)
    check_non_negative_int(buffer_size, "buffer_size")
    if isinstance(percentile, bool) or not isinstance(percentile, (int, float)) or not 0 <= percentile <= 100:
        raise ValueError(f"percentile must be a number in [0, 100], got {percentile!r}")
    check_non_negative_int(min_chars, "min_chars")
    check_positive_int(max_chars, "max_chars")
    if min_chars > max_chars:
        raise ValueError(f"min_chars ({min_chars}) must not exceed max_chars ({max_chars})")
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, (int, float))):
        raise ValueError(f"amount must be a number, got {amount!r}")
    check_choice(window, ("centered", "split"), "window")
    check_unit(unit)
    return method


def check_method(method: str, threshold: float | None) -> str:
    """The semantic rule ``method`` names (aliases resolved), checked against ``threshold``."""
    if not isinstance(method, str):
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    method = _ALIASES.get(method, method)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if threshold is not None:
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not math.isfinite(threshold)
        ):
            raise ValueError(f"threshold must be a finite number (a cosine distance), got {threshold!r}")
        if method not in ("threshold", "percentile"):
            raise ValueError(
                f"threshold={threshold} is a fixed cut-off; it cannot be combined with method={method!r}"
            )
        return "threshold"
    if method == "threshold":
        raise ValueError("method='threshold' needs threshold=<cosine distance>, e.g. threshold=0.3")
    return method
