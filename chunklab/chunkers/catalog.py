"""A registry of chunking strategies: a name -> a callable ``strategy(document) -> list[Chunk]``.

Every strategy of the course is here at its natural defaults (``get_strategy("semantic")``)
and can be re-parametrized for a sweep (``get_strategy("recursive", size=400, overlap="10%")``
or :func:`sweep_strategies`). This is the only catalog: the commands, the benchmark and the
notebooks build chunkers here, by name (:func:`get_strategy`, or :func:`strategy_from_options`
for the command-line flags). A document is a :class:`chunklab.documents.Document` or anything
with ``text`` and ``doc_id`` (and optionally ``kind``/``format``, ``title``, ``path``).

The benchmark runner indexes ``strategy.index_chunks(chunks)`` and, when a strategy has a
``postprocess`` step (auto-merging for hierarchical chunking), applies it to the retrieved
chunks before scoring.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chunklab._validate import check_bool, check_non_negative_int, check_overlap, check_positive_int
from chunklab.chunk import Chunk, is_leaf
from chunklab.chunkers._params import parse_levels, parse_param_value, resolve_overlap, show_param
from chunklab.documents import document_kind
from chunklab.units import check_unit

__all__ = [
    "DEFAULTS",
    "Strategy",
    "available_strategies",
    "get_strategy",
    "parse_param_value",
    "parse_strategies",
    "register_strategy",
    "strategy_from_options",
    "sweep_strategies",
]

ChunkFn = Callable[[Any], list[Chunk]]
Hit = tuple[Chunk, float]
PostFn = Callable[[list[Hit], Mapping[str, Chunk]], list[Hit]]


@dataclass(frozen=True)
class Strategy:
    """A named, parametrized chunker, callable on a document.

    ``name`` is what tables show (``"recursive"`` or ``"recursive[size=400,overlap=40]"``);
    ``kind`` is the registry entry it came from; ``params`` the parameters it runs with.
    ``index_filter`` picks the chunks that get embedded (all by default) and ``postprocess``
    rewrites the retrieved ``(chunk, score)`` list given every chunk of the strategy by id
    (auto-merging children into their parent).
    """

    name: str
    kind: str
    params: dict[str, Any]
    chunker: ChunkFn = field(repr=False, compare=False)
    index_filter: Callable[[Chunk], bool] | None = field(default=None, repr=False, compare=False)
    postprocess: PostFn | None = field(default=None, repr=False, compare=False)
    description: str = ""
    #: the chunker takes ``encoder=`` (semantic chunking embeds sentences)
    needs_encoder: bool = False
    #: the raw sweep values this strategy was built from (``{"size": 400, "overlap": "10%"}``)
    sweep: dict[str, Any] = field(default_factory=dict, compare=False)

    def __call__(self, document: Any, encoder: Any = None) -> list[Chunk]:
        """Chunk one document (``encoder`` is passed on to chunkers that embed, else ignored).

        An HTML document given to a plain-text strategy is chunked by its visible text, and
        each chunk's span is mapped back onto the markup
        (:func:`chunklab.chunkers.structural.html.chunk_visible_text`).
        """
        _check_document(document)
        if self.kind != "structural" and document_kind(document) == "html":
            from chunklab.chunkers.structural.html import chunk_visible_text

            return chunk_visible_text(document, lambda visible: self._chunk(visible, encoder))
        return self._chunk(document, encoder)

    def _chunk(self, document: Any, encoder: Any) -> list[Chunk]:
        if self.needs_encoder:
            return self.chunker(document, encoder=encoder)
        return self.chunker(document)

    def index_chunks(self, chunks: Sequence[Chunk]) -> list[Chunk]:
        """The chunks that go into the index (leaves only for hierarchical chunking)."""
        if self.index_filter is None:
            return list(chunks)
        return [c for c in chunks if self.index_filter(c)]


Factory = Callable[..., Strategy]
_REGISTRY: dict[str, Factory] = {}
#: natural defaults of each registered strategy (shown by ``chunklab evaluate --help``)
DEFAULTS: dict[str, dict[str, Any]] = {}
#: other accepted spellings of a strategy name -> its registered name
ALIASES: dict[str, str] = {"hierarchical_md": "markdown-hierarchy"}


def register_strategy(name: str, defaults: Mapping[str, Any] | None = None) -> Callable[[Factory], Factory]:
    """Decorator: register ``factory(**params) -> Strategy`` under ``name`` with its defaults."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        raise ValueError(f"a strategy name is lowercase letters, digits, '-' or '_', got {name!r}")

    def wrap(factory: Factory) -> Factory:
        _REGISTRY[name] = factory
        DEFAULTS[name] = dict(defaults or {})
        return factory

    return wrap


def available_strategies() -> list[str]:
    """Names of the registered strategies, in registration order."""
    return list(_REGISTRY)


def get_strategy(name: str, **params: Any) -> Strategy:
    """The strategy ``name`` with its defaults overridden by ``params``.

    ``overlap`` may be given as a share of ``size`` (``"10%"``). Unknown names and unknown
    parameters raise ``ValueError`` listing what is available; an alias in :data:`ALIASES`
    gives the strategy under its registered name.
    """
    name = ALIASES.get(name, name) if isinstance(name, str) else name
    if name not in _REGISTRY:
        raise ValueError(f"unknown strategy {name!r}; available: {', '.join(available_strategies())}")
    defaults = DEFAULTS[name]
    unknown = set(params) - set(defaults)
    if unknown:
        raise ValueError(
            f"strategy {name!r} has no parameter(s) {sorted(unknown)}; it takes {sorted(defaults)}"
        )
    merged = {**defaults, **params}
    if "overlap" in merged and "size" in merged:
        merged["overlap"] = resolve_overlap(merged["overlap"], merged["size"])
    if "levels" in merged:
        merged["levels"] = parse_levels(merged["levels"])
    changed = {k: v for k, v in params.items() if k in merged}
    label = (
        name
        if not changed
        else f"{name}[{','.join(f'{k}={show_param(merged[k])}' for k in sorted(changed))}]"
    )
    strategy = _REGISTRY[name](**merged)
    return Strategy(
        label,
        name,
        merged,
        strategy.chunker,
        strategy.index_filter,
        strategy.postprocess,
        strategy.description,
        strategy.needs_encoder,
    )


#: command-line flag -> the parameter names it sets, in order of preference
_FLAGS = {
    "size": ("size", "max_chars"),
    "overlap": ("overlap",),
    "unit": ("unit",),
    "levels": ("levels",),
    "min_chars": ("min_chars",),
    "keep_boilerplate": ("keep_boilerplate",),
}


def strategy_from_options(name: str, **options: Any) -> Strategy:
    """The strategy ``name`` built from command-line flags (``size``, ``overlap``, ``unit``, ``levels``, ``min_chars``, ``keep_boilerplate``).

    A flag left at None keeps the strategy's default. ``size`` sets ``size`` or, for the
    strategies measured by ``max_chars``, ``max_chars``; a flag the strategy has no parameter
    for is a ValueError naming it.
    """
    key = ALIASES.get(name, name)
    if key not in DEFAULTS:
        raise ValueError(f"unknown strategy {name!r}; available: {', '.join(available_strategies())}")
    params: dict[str, Any] = {}
    for flag, value in options.items():
        if flag not in _FLAGS:
            raise ValueError(f"unknown option {flag!r}; options are {sorted(_FLAGS)}")
        if value is None:
            continue
        target = next((p for p in _FLAGS[flag] if p in DEFAULTS[key]), None)
        if target is None:
            takes = ", ".join(sorted(DEFAULTS[key])) or "no parameters"
            raise ValueError(
                f"--{flag.replace('_', '-')} does not apply to strategy {key!r} (it takes {takes})"
            )
        params[target] = value
    return get_strategy(key, **params)


def parse_strategies(spec: str | Iterable[str]) -> list[Strategy]:
    """Strategies from a spec like ``"fixed,recursive:size=400;overlap=10%,semantic"``.

    Each comma-separated item is a name, optionally followed by ``:`` and ``key=value``
    pairs separated by ``;``. Values are parsed as int, float, bool or kept as strings.
    """
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    items = [s for s in items if s]
    if not items:
        raise ValueError("no strategies given")
    out: list[Strategy] = []
    for item in items:
        name, _, rest = item.partition(":")
        params: dict[str, Any] = {}
        for pair in filter(None, (p.strip() for p in rest.split(";"))):
            key, eq, value = pair.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"strategy parameter {pair!r} in {item!r} is not key=value")
            params[key.strip()] = parse_param_value(value.strip())
        out.append(get_strategy(name.strip(), **params))
    names = [s.name for s in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ValueError(f"strategy listed twice: {sorted(dupes)}")
    return out


def sweep_strategies(name: str = "recursive", **grid: Sequence[Any]) -> list[Strategy]:
    """One strategy per combination of the parameter values in ``grid`` (sizes outermost).

    ``sweep_strategies("recursive", size=[200, 400, 800], overlap=[0, "10%"])`` gives six
    strategies named like ``recursive[overlap=40,size=400]``.
    """
    if not grid:
        raise ValueError("a sweep needs at least one parameter with a list of values")
    keys = sorted(grid, key=lambda k: (k != "size", k))
    combos: list[dict[str, Any]] = [{}]
    for key in keys:
        values = grid[key]
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            values = [values]
        values = list(values)
        if not values:
            raise ValueError(f"sweep parameter {key!r} has no values")
        combos = [{**c, key: v} for c in combos for v in values]
    strategies: list[Strategy] = []
    seen: set[str] = set()
    for params in combos:
        s = dataclasses.replace(get_strategy(name, **params), sweep=dict(params))
        if s.name not in seen:  # "10%" of a size can equal an explicit overlap
            seen.add(s.name)
            strategies.append(s)
    return strategies


def _check_document(document: Any) -> None:
    if not isinstance(getattr(document, "text", None), str) or not isinstance(
        getattr(document, "doc_id", None), str
    ):
        raise ValueError(
            f"a strategy chunks a document with str attributes 'text' and 'doc_id', got {type(document).__name__}"
        )


# --------------------------------------------------------------------------- the course's strategies


@register_strategy("fixed", {"size": 1000, "overlap": 0, "unit": "chars"})
def _fixed(size: int, overlap: int, unit: str) -> Strategy:
    from chunklab.chunkers.fixed import chunk_fixed

    _check_size_overlap(size, overlap)

    def chunk(document: Any) -> list[Chunk]:
        return chunk_fixed(document.text, size, overlap, unit, document.doc_id)

    return Strategy("fixed", "fixed", {}, chunk, description="fixed windows")


@register_strategy("recursive", {"size": 1000, "overlap": 0, "unit": "chars"})
def _recursive(size: int, overlap: int, unit: str) -> Strategy:
    from chunklab.chunkers.recursive import chunk_recursive

    _check_size_overlap(size, overlap)

    def chunk(document: Any) -> list[Chunk]:
        return chunk_recursive(document.text, size, overlap, unit, doc_id=document.doc_id)

    return Strategy("recursive", "recursive", {}, chunk, description="separator hierarchy")


@register_strategy(
    "structural", {"max_chars": 1500, "min_chars": 200, "keep_boilerplate": False, "unit": "chars"}
)
def _structural(max_chars: int, min_chars: int, keep_boilerplate: bool, unit: str) -> Strategy:
    """``max_chars``/``min_chars`` are measured in ``unit`` (characters unless told)."""
    from chunklab.chunkers.structural import chunk_document

    check_positive_int(max_chars, "max_chars")
    check_non_negative_int(min_chars, "min_chars")
    check_bool(keep_boilerplate, "keep_boilerplate")
    check_unit(unit)

    def chunk(document: Any) -> list[Chunk]:
        return chunk_document(
            document, max_chars=max_chars, min_chars=min_chars, keep_boilerplate=keep_boilerplate, unit=unit
        )

    return Strategy("structural", "structural", {}, chunk, description="headings / AST / DOM")


@register_strategy(
    "semantic",
    {
        "method": "percentile",
        "percentile": 95,
        "buffer_size": 1,
        "min_chars": 100,
        "max_chars": 2000,
        "unit": "chars",
    },
)
def _semantic(**params: Any) -> Strategy:
    """``min_chars``/``max_chars`` are measured in ``unit`` (characters unless told)."""
    check_unit(params["unit"])

    def chunk(document: Any, encoder: Any = None) -> list[Chunk]:
        from chunklab.chunkers.semantic import chunk_semantic

        return chunk_semantic(document.text, doc_id=document.doc_id, encoder=encoder, **params)

    return Strategy(
        "semantic", "semantic", {}, chunk, description="embedding breakpoints", needs_encoder=True
    )


@register_strategy("hierarchical", {"levels": (2048, 512, 128), "unit": "tokens", "merge_ratio": 0.5})
def _hierarchical(levels: Sequence[int], unit: str, merge_ratio: float) -> Strategy:
    from chunklab.chunkers.hierarchical import auto_merge, chunk_hierarchical

    levels = parse_levels(levels)

    def chunk(document: Any) -> list[Chunk]:
        return chunk_hierarchical(document.text, levels=levels, unit=unit, doc_id=document.doc_id)

    def merge(hits: list[Hit], by_id: Mapping[str, Chunk]) -> list[Hit]:
        return auto_merge(hits, by_id, ratio=merge_ratio)

    return Strategy(
        "hierarchical",
        "hierarchical",
        {},
        chunk,
        index_filter=is_leaf,
        postprocess=merge,
        description="nested token levels; leaves searched, auto-merged into parents",
    )


@register_strategy("markdown-hierarchy", {"max_chars": 1000, "merge_ratio": 0.5, "unit": "chars"})
def _markdown_hierarchy(max_chars: int, merge_ratio: float, unit: str) -> Strategy:
    """Not Markdown: token levels 2048/512/128 (in MiniLM tokens, or in ``unit`` when that is not chars)."""
    from chunklab.chunkers.hierarchical import auto_merge, chunk_markdown_hierarchy

    check_positive_int(max_chars, "max_chars")
    check_unit(unit)
    other = _hierarchical((2048, 512, 128), "tokens" if unit == "chars" else unit, merge_ratio)

    def chunk(document: Any) -> list[Chunk]:
        if document_kind(document) != "markdown":
            return other.chunker(document)
        return chunk_markdown_hierarchy(
            document.text,
            max_chars=max_chars,
            doc_id=document.doc_id,
            title=getattr(document, "title", None),
            unit=unit,
        )

    def merge(hits: list[Hit], by_id: Mapping[str, Chunk]) -> list[Hit]:
        return auto_merge(hits, by_id, ratio=merge_ratio)

    return Strategy(
        "markdown-hierarchy",
        "markdown-hierarchy",
        {},
        chunk,
        index_filter=is_leaf,
        postprocess=merge,
        description="Markdown sections as parents, paragraphs as children; auto-merge",
    )


@register_strategy("paragraphs", {"max_chars": 1000, "overlap_paragraphs": 1, "unit": "chars"})
def _paragraphs(max_chars: int, overlap_paragraphs: int, unit: str) -> Strategy:
    from chunklab.chunkers.recursive import pack_paragraphs

    check_positive_int(max_chars, "max_chars")
    check_non_negative_int(overlap_paragraphs, "overlap_paragraphs")
    check_unit(unit)

    def chunk(document: Any) -> list[Chunk]:
        return pack_paragraphs(
            document.text, max_chars, overlap_paragraphs, doc_id=document.doc_id, unit=unit
        )

    return Strategy(
        "paragraphs", "paragraphs", {}, chunk, description="whole paragraphs, whole paragraphs as overlap"
    )


def _check_size_overlap(size: Any, overlap: Any) -> None:
    check_overlap(overlap, check_positive_int(size, "size"))
