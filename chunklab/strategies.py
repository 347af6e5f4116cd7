"""A registry of chunking strategies: a name -> a callable ``strategy(document) -> list[Chunk]``.

Every strategy of the course is here at its natural defaults (``get_strategy("semantic")``)
and can be re-parametrized for a sweep (``get_strategy("recursive", size=400, overlap="10%")``
or :func:`sweep_strategies`). A document is anything with ``text`` and ``doc_id`` (and
optionally ``format``, ``title``, ``path``), such as :class:`chunklab.datasets.docs.Document`.

The benchmark runner indexes ``strategy.index_chunks(chunks)`` and, when a strategy has a
``postprocess`` step (auto-merging for hierarchical chunking), applies it to the retrieved
chunks before scoring.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chunklab.chunk import Chunk

__all__ = [
    "DEFAULTS",
    "Strategy",
    "available_strategies",
    "get_strategy",
    "parse_param_value",
    "parse_strategies",
    "register_strategy",
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
        """Chunk one document (``encoder`` is passed on to chunkers that embed, else ignored)."""
        _check_document(document)
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
    parameters raise ``ValueError`` listing what is available.
    """
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
        merged["overlap"] = _resolve_overlap(merged["overlap"], merged["size"])
    changed = {k: v for k, v in params.items() if k in merged}
    label = name if not changed else f"{name}[{','.join(f'{k}={merged[k]}' for k in sorted(changed))}]"
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


def parse_param_value(value: str) -> Any:
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


def _resolve_overlap(overlap: Any, size: Any) -> Any:
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


def _check_document(document: Any) -> None:
    if not isinstance(getattr(document, "text", None), str) or not isinstance(
        getattr(document, "doc_id", None), str
    ):
        raise ValueError(
            f"a strategy chunks a document with str attributes 'text' and 'doc_id', got {type(document).__name__}"
        )


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` with only the keyword arguments its signature accepts."""
    sig = inspect.signature(fn)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return fn(*args, **kwargs)
    return fn(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})


def _fmt(document: Any) -> str:
    fmt = getattr(document, "format", None)
    if fmt:
        return str(fmt)
    path = str(getattr(document, "path", "") or getattr(document, "doc_id", ""))
    for suffix, name in ((".py", "python"), (".md", "markdown"), (".html", "html"), (".htm", "html")):
        if path.endswith(suffix):
            return name
    return "text"


# --------------------------------------------------------------------------- the course's strategies


@register_strategy("fixed", {"size": 1000, "overlap": 0, "unit": "chars"})
def _fixed(size: int, overlap: int, unit: str) -> Strategy:
    from chunklab.fixed import chunk_fixed

    def chunk(document: Any) -> list[Chunk]:
        return chunk_fixed(document.text, size, overlap, unit, document.doc_id)

    return Strategy("fixed", "fixed", {}, chunk, description="fixed windows")


@register_strategy("recursive", {"size": 1000, "overlap": 0, "unit": "chars"})
def _recursive(size: int, overlap: int, unit: str) -> Strategy:
    from chunklab.recursive import chunk_recursive

    def chunk(document: Any) -> list[Chunk]:
        return chunk_recursive(document.text, size, overlap, unit, doc_id=document.doc_id)

    return Strategy("recursive", "recursive", {}, chunk, description="separator hierarchy")


@register_strategy("structural", {"max_chars": 1500})
def _structural(max_chars: int) -> Strategy:
    def chunk(document: Any) -> list[Chunk]:
        from chunklab import structural

        fmt = _fmt(document)
        path = getattr(document, "path", None)
        path = str(path) if path is not None else None
        if fmt in ("markdown", "html", "python"):
            fn = {"markdown": "chunk_markdown", "html": "chunk_html", "python": "chunk_python"}[fmt]
            return getattr(structural, fn)(document.text, max_chars=max_chars, doc_id=document.doc_id, path=path)
        if hasattr(structural, "chunk_document"):
            return _call(structural.chunk_document, document.text, max_chars=max_chars,
                         doc_id=document.doc_id, path=path)
        from chunklab.recursive import chunk_recursive

        return chunk_recursive(document.text, max_chars, doc_id=document.doc_id, strategy="structural")

    return Strategy("structural", "structural", {}, chunk, description="headings / AST / DOM")


@register_strategy(
    "semantic", {"method": "percentile", "percentile": 95, "buffer_size": 1, "min_chars": 100, "max_chars": 2000}
)
def _semantic(**params: Any) -> Strategy:
    def chunk(document: Any, encoder: Any = None) -> list[Chunk]:
        from chunklab.semantic import chunk_semantic

        return chunk_semantic(document.text, doc_id=document.doc_id, encoder=encoder, **params)

    return Strategy("semantic", "semantic", {}, chunk, description="embedding breakpoints", needs_encoder=True)


@register_strategy("hierarchical", {"levels": (2048, 512, 128), "unit": "tokens", "merge_ratio": 0.5})
def _hierarchical(levels: Sequence[int], unit: str, merge_ratio: float) -> Strategy:
    from chunklab.hierarchical import auto_merge, chunk_hierarchical

    levels = _levels(levels)

    def chunk(document: Any) -> list[Chunk]:
        return chunk_hierarchical(document.text, levels=levels, unit=unit, doc_id=document.doc_id)

    def merge(hits: list[Hit], by_id: Mapping[str, Chunk]) -> list[Hit]:
        return auto_merge(hits, by_id, ratio=merge_ratio)

    return Strategy(
        "hierarchical", "hierarchical", {}, chunk, index_filter=_is_leaf, postprocess=merge,
        description="nested token levels; leaves searched, auto-merged into parents",
    )


@register_strategy("hierarchical_md", {"max_chars": 1000, "merge_ratio": 0.5})
def _hierarchical_md(max_chars: int, merge_ratio: float) -> Strategy:
    from chunklab.hierarchical import auto_merge, chunk_markdown_hierarchy

    def chunk(document: Any) -> list[Chunk]:
        if _fmt(document) != "markdown":
            return _hierarchical((2048, 512, 128), "tokens", merge_ratio).chunker(document)
        return chunk_markdown_hierarchy(
            document.text, max_chars=max_chars, doc_id=document.doc_id, title=getattr(document, "title", None)
        )

    def merge(hits: list[Hit], by_id: Mapping[str, Chunk]) -> list[Hit]:
        return auto_merge(hits, by_id, ratio=merge_ratio)

    return Strategy(
        "hierarchical_md", "hierarchical_md", {}, chunk, index_filter=_is_leaf, postprocess=merge,
        description="Markdown sections as parents, paragraphs as children; auto-merge",
    )


def _is_leaf(chunk: Chunk) -> bool:
    return not chunk.metadata.get("child_ids")


def _levels(levels: Any) -> tuple[int, ...]:
    if isinstance(levels, str):  # from the command line: "2048/512/128"
        try:
            return tuple(int(x) for x in levels.replace("/", " ").split())
        except ValueError:
            raise ValueError(f"levels must be sizes like 2048/512/128, got {levels!r}") from None
    if isinstance(levels, int):
        return (levels,)
    return tuple(levels)
