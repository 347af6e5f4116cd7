"""A registry of chunking strategies: a name -> a callable ``strategy(document) -> list[Chunk]``.

Every strategy of the course is here at its natural defaults (``get_strategy("semantic")``)
and can be re-parametrized for a sweep (``get_strategy("recursive", size=400, overlap="10%")``
or :func:`sweep_strategies`). This is the only catalog: the commands, the benchmark and the
notebooks build chunkers here, by name (:func:`get_strategy`, or :func:`strategy_from_options`
for the command-line flags). A document is a :class:`chunklab.documents.Document` or anything
with ``text`` and ``doc_id`` (and optionally ``format``, ``title``, ``path``).

Each strategy's parameters are one typed dataclass (:mod:`chunklab.chunkers._params`),
validated once when the strategy is built; its factory (:mod:`chunklab.chunkers._factories`)
returns the parts the strategy runs (:class:`StrategyParts`: the chunk function, and for
hierarchical chunking a leaf filter and the auto-merge step). The benchmark runner indexes
``strategy.index_chunks(chunks)`` and, when a strategy has a ``postprocess`` step
(auto-merging for hierarchical chunking), applies it to the retrieved chunks before scoring.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from chunklab.chunk import Chunk
from chunklab.chunkers._factories import COURSE_STRATEGIES, ChunkFn, PostFn, StrategyParts
from chunklab.chunkers._params import StrategyParams, parse_param_value, show_param
from chunklab.documents import document_format, locate
from chunklab.protocols import DocumentLike, EncoderLike

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULTS",
    "Strategy",
    "StrategyParams",
    "StrategyParts",
    "StrategySpec",
    "available_strategies",
    "get_strategy",
    "parse_param_value",
    "parse_strategies",
    "register_strategy",
    "strategy_from_options",
    "sweep_strategies",
]

P = TypeVar("P", bound=StrategyParams)

#: characters per model token on the densest text measured (standard-library code: 600
#: structural characters put 0.2 % of chunks over MiniLM's 256 tokens, 1500 put 33 %)
CHARS_PER_TOKEN = 2.4


@dataclass(frozen=True)
class Strategy:
    """A named, parametrized chunker, callable on a document.

    ``name`` is what tables show (``"recursive"`` or ``"recursive[size=400,overlap=40]"``);
    ``family`` is the registry entry it came from; ``params`` the parameters it runs with (as
    recorded in stores and results) and ``settings`` the same as their typed dataclass.
    ``index_filter`` picks the chunks that get embedded (all by default) and ``postprocess``
    rewrites the retrieved ``(chunk, score)`` list given every chunk of the strategy by id
    (auto-merging children into their parent).
    """

    name: str
    family: str
    params: dict[str, Any]
    chunker: ChunkFn = field(repr=False, compare=False)
    index_filter: Callable[[Chunk], bool] | None = field(default=None, repr=False, compare=False)
    postprocess: PostFn | None = field(default=None, repr=False, compare=False)
    description: str = ""
    #: the chunker takes ``encoder=`` (semantic chunking embeds sentences)
    needs_encoder: bool = False
    #: the raw sweep values this strategy was built from (``{"size": 400, "overlap": "10%"}``)
    sweep: dict[str, Any] = field(default_factory=dict, compare=False)
    #: the validated parameters (None for a strategy made outside the catalog)
    settings: StrategyParams | None = field(default=None, repr=False, compare=False)
    #: the parameters set explicitly when it was built (those its name shows); the rest are defaults
    given: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __call__(self, document: DocumentLike, encoder: EncoderLike | None = None) -> list[Chunk]:
        """Chunk one document (``encoder`` is passed on to chunkers that embed, else ignored).

        An HTML document given to a plain-text strategy is chunked by its visible text, and
        each chunk's span is mapped back onto the markup (its format's ``visible_text`` in
        :data:`chunklab.chunkers.structural.dispatch.STRUCTURAL`). A laid-out document (PDF,
        Word, notebook) gives every chunk its ``page``/``page_end`` or ``cell`` from its elements.
        """
        _check_document(document)
        if self.family != "structural":  # a markup format is chunked by what a reader sees of it
            from chunklab.chunkers.structural.dispatch import STRUCTURAL

            visible_text = STRUCTURAL[document_format(document)].visible_text
            if visible_text is not None:
                return visible_text(document, lambda visible: self._chunk(visible, encoder))
        chunks = self._chunk(document, encoder)
        elements = getattr(document, "elements", ())
        if elements and self.family != "structural":  # a PDF's page or a notebook's cell, on every chunk
            chunks = [replace(c, metadata={**c.metadata, **locate(elements, c.start, c.end)}) for c in chunks]
        return chunks

    def _chunk(self, document: DocumentLike, encoder: EncoderLike | None) -> list[Chunk]:
        if self.needs_encoder:
            return self.chunker(document, encoder=encoder)
        return self.chunker(document)

    def index_chunks(self, chunks: Sequence[Chunk]) -> list[Chunk]:
        """The chunks that go into the index (leaves only for hierarchical chunking)."""
        if self.index_filter is None:
            return list(chunks)
        return [c for c in chunks if self.index_filter(c)]

    @property
    def unit(self) -> str:
        """The unit sizes are measured in (``"chars"`` unless the parameters say otherwise)."""
        return str(self.params.get("unit", "chars"))

    @property
    def size_param(self) -> str | None:
        """The parameter holding the chunk-size budget (``size`` or ``max_chars``; None: no single one)."""
        return self.settings.SIZE if self.settings is not None else None

    @property
    def budget(self) -> int | None:
        """The chunk-size budget, measured in :attr:`unit` (``max_chars`` counts tokens in tokens)."""
        return self.settings.budget if self.settings is not None else None

    def fit_to(self, encoder: object) -> Strategy:
        """This strategy with a character budget that fits ``encoder``'s window (``self`` if it does).

        The model-window rule of ``chunklab index``: a strategy measured in characters whose
        size was not set explicitly gets at most ``window * CHARS_PER_TOKEN`` characters
        (rounded down to 50), so its chunks fit the encoder's ``max_seq_length`` tokens. A size
        set explicitly, another unit, no single size parameter or an encoder without a window
        (the static model) leave the strategy as it is.
        """
        window = getattr(encoder, "max_seq_length", None)
        key = self.size_param
        if not window or key is None or key in self.given or self.unit != "chars":
            return self
        fit = int(window * CHARS_PER_TOKEN) // 50 * 50
        if self.params[key] <= fit:
            return self
        return _build(self.family, {**{k: self.params[k] for k in self.given}, key: fit}, sweep=self.sweep)

    @property
    def spec(self) -> StrategySpec:
        """This strategy's picklable form (its family and parameters); ``spec.build()`` is ``self``."""
        spec = StrategySpec(self.family, tuple(sorted(self.params.items())))
        _BUILT.setdefault(spec, self)
        return spec


@dataclass(frozen=True)
class StrategySpec:
    """A catalog strategy by family (its registry name) and parameters: picklable, built once per process.

    What crosses a process boundary (a worker pool, Ray tasks) instead of the strategy, whose
    chunk function is a closure: :attr:`Strategy.spec` gives it, :meth:`build` gives the
    strategy back (the same object in the process that made the spec).
    """

    family: str
    params: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, strategy: StrategySpec | Strategy | str, **params: object) -> StrategySpec:
        """The spec of a :class:`Strategy`, a spec, or a catalog name (with ``params``)."""
        if isinstance(strategy, StrategySpec) and not params:
            return strategy
        if isinstance(strategy, str):
            strategy = get_strategy(strategy, **params)
        elif params:
            raise ValueError("strategy params are given with a strategy name, not with a Strategy object")
        if not isinstance(strategy, Strategy):
            raise ValueError(f"strategy must be a catalog name or a Strategy, got {type(strategy).__name__}")
        return strategy.spec

    def build(self) -> Strategy:
        """The strategy itself (built once per process, then cached)."""
        if self not in _BUILT:
            _BUILT[self] = get_strategy(self.family, **dict(self.params))
        return _BUILT[self]


#: the one strategy cache: each process builds a spec's strategy once
_BUILT: dict[StrategySpec, Strategy] = {}


@dataclass(frozen=True)
class _Entry:
    params: type[StrategyParams]
    factory: Callable[[Any], StrategyParts]
    description: str


_REGISTRY: dict[str, _Entry] = {}
#: natural defaults of each registered strategy (shown by ``chunklab evaluate --help``)
DEFAULTS: dict[str, dict[str, object]] = {}
#: other accepted spellings of a strategy name -> its registered name
ALIASES: dict[str, str] = {"hierarchical_md": "markdown-hierarchy"}


def register_strategy(
    name: str, params: type[P], description: str = ""
) -> Callable[[Callable[[P], StrategyParts]], Callable[[P], StrategyParts]]:
    """Decorator: register ``factory(params) -> StrategyParts`` under ``name``.

    ``params`` is the strategy's parameter dataclass: its fields and defaults are the
    parameters :func:`get_strategy` accepts.
    """
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        raise ValueError(f"a strategy name is lowercase letters, digits, '-' or '_', got {name!r}")

    def wrap(factory: Callable[[P], StrategyParts]) -> Callable[[P], StrategyParts]:
        _REGISTRY[name] = _Entry(params, factory, description)
        DEFAULTS[name] = params().as_dict()
        return factory

    return wrap


def available_strategies() -> list[str]:
    """Names of the registered strategies, in registration order."""
    return list(_REGISTRY)


def get_strategy(name: str, **params: object) -> Strategy:
    """The strategy ``name`` with its defaults overridden by ``params``.

    ``overlap`` may be given as a share of ``size`` (``"10%"``). Unknown names and unknown
    parameters raise ``ValueError`` listing what is available; an alias in :data:`ALIASES`
    gives the strategy under its registered name.
    """
    return _build(name, params, sweep={})


def _build(name: str, params: Mapping[str, object], sweep: dict[str, object]) -> Strategy:
    """Validate ``params`` once into the strategy's dataclass, run its factory, name the result."""
    name = _registered(name)
    entry = _REGISTRY[name]
    unknown = set(params) - set(DEFAULTS[name])
    if unknown:
        raise ValueError(
            f"strategy {name!r} has no parameter(s) {sorted(unknown)}; it takes {sorted(DEFAULTS[name])}"
        )
    settings = entry.params(**params)
    merged = settings.as_dict()
    label = name
    if params:
        label += f"[{','.join(f'{k}={show_param(merged[k])}' for k in sorted(params))}]"
    parts = entry.factory(settings)
    return Strategy(
        label,
        name,
        merged,
        parts.chunker,
        parts.index_filter,
        parts.postprocess,
        entry.description,
        parts.needs_encoder,
        sweep=sweep,
        settings=settings,
        given=tuple(sorted(params)),
    )


def _registered(name: str) -> str:
    name = ALIASES.get(name, name) if isinstance(name, str) else name
    if name not in _REGISTRY:
        raise ValueError(f"unknown strategy {name!r}; available: {', '.join(available_strategies())}")
    return name


#: command-line flags; ``size`` sets the strategy's size parameter (``size`` or ``max_chars``)
_FLAGS = ("size", "overlap", "unit", "levels", "min_chars", "keep_boilerplate")


def strategy_from_options(name: str, **options: object) -> Strategy:
    """The strategy ``name`` built from command-line flags (``size``, ``overlap``, ``unit``, ``levels``, ...).

    The flags are ``size``, ``overlap``, ``unit``, ``levels``, ``min_chars`` and
    ``keep_boilerplate``. A flag left at None keeps the strategy's default. ``size`` sets
    the strategy's size parameter (:attr:`Strategy.size_param`: ``size``, or ``max_chars``
    for the strategies measured that way); a flag the strategy has no parameter for is a
    ValueError naming it.
    """
    key = _registered(name)
    params: dict[str, object] = {}
    for flag, value in options.items():
        if flag not in _FLAGS:
            raise ValueError(f"unknown option {flag!r}; options are {sorted(_FLAGS)}")
        if value is None:
            continue
        target = _REGISTRY[key].params.SIZE if flag == "size" else flag
        if target is None or target not in DEFAULTS[key]:
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
        params: dict[str, object] = {}
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


def sweep_strategies(name: str = "recursive", **grid: Sequence[object]) -> list[Strategy]:
    """One strategy per combination of the parameter values in ``grid`` (sizes outermost).

    ``sweep_strategies("recursive", size=[200, 400, 800], overlap=[0, "10%"])`` gives six
    strategies named like ``recursive[overlap=40,size=400]``.
    """
    if not grid:
        raise ValueError("a sweep needs at least one parameter with a list of values")
    keys = sorted(grid, key=lambda k: (k != "size", k))
    combos: list[dict[str, object]] = [{}]
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
        s = _build(name, params, sweep=dict(params))
        if s.name not in seen:  # "10%" of a size can equal an explicit overlap
            seen.add(s.name)
            strategies.append(s)
    return strategies


def _check_document(document: object) -> None:
    if not isinstance(getattr(document, "text", None), str) or not isinstance(
        getattr(document, "doc_id", None), str
    ):
        raise ValueError(
            "a strategy chunks a document with str attributes 'text' and 'doc_id', "
            f"got {type(document).__name__}"
        )


for _name, _params, _description, _factory in COURSE_STRATEGIES:
    register_strategy(_name, _params, _description)(_factory)
