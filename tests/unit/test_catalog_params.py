"""The catalog's strategies take one typed, validated parameter dataclass each (issue 23)."""

from __future__ import annotations

import dataclasses

import pytest

from chunklab.chunkers import _params
from chunklab.chunkers.catalog import (
    _REGISTRY,
    DEFAULTS,
    StrategyParts,
    available_strategies,
    get_strategy,
    register_strategy,
    strategy_from_options,
    sweep_strategies,
)
from chunklab.documents import Document


def test_defaults_are_the_fields_of_each_strategys_dataclass():
    for name in available_strategies():
        cls = _REGISTRY[name].params
        assert dataclasses.is_dataclass(cls) and issubclass(cls, _params.StrategyParams)
        assert DEFAULTS[name] == cls().as_dict()
        assert get_strategy(name).params == DEFAULTS[name]


def test_a_strategy_carries_its_validated_parameters_and_prints_them():
    s = get_strategy("recursive", size=400, overlap="10%")
    assert s.settings == _params.RecursiveParams(size=400, overlap=40)
    assert s.params == {"size": 400, "overlap": 40, "unit": "chars"}
    assert repr(s.settings) == "RecursiveParams(size=400, overlap=40, unit='chars')"
    assert s.name == "recursive[overlap=40,size=400]"


@pytest.mark.parametrize(
    ("name", "params", "named"),
    [
        ("fixed", {"size": 0}, "size"),
        ("fixed", {"size": 100, "overlap": 100}, "overlap"),
        ("structural", {"keep_boilerplate": "yes"}, "keep_boilerplate"),
        ("paragraphs", {"overlap_paragraphs": -1}, "overlap_paragraphs"),
        ("sentences", {"overlap_sentences": -1}, "overlap_sentences"),
        ("structural", {"min_chars": -1}, "min_chars"),
        ("hierarchical", {"levels": "128/512"}, "levels"),
        ("markdown-hierarchy", {"unit": "furlongs"}, "unit"),
        ("semantic", {"method": "tea-leaves"}, "method"),
        ("semantic", {"min_chars": 500, "max_chars": 100}, "min_chars"),
    ],
)
def test_impossible_parameters_are_refused_when_the_strategy_is_built(name, params, named):
    with pytest.raises(ValueError, match=named):
        get_strategy(name, **params)


def test_the_budget_is_the_size_parameter_measured_in_the_unit():
    for name in available_strategies():
        s = get_strategy(name)
        if s.size_param is None:
            assert s.budget is None and name == "hierarchical"
        else:
            assert s.size_param in ("size", "max_chars")
            assert s.budget == s.params[s.size_param]
    tokens = get_strategy("structural", max_chars=300, unit="tokens")
    assert (tokens.size_param, tokens.budget, tokens.unit) == ("max_chars", 300, "tokens")


def test_the_size_flag_sets_the_parameter_the_dataclass_names():
    for name in available_strategies():
        if _REGISTRY[name].params.SIZE is None:
            with pytest.raises(ValueError, match="--size does not apply"):
                strategy_from_options(name, size=321)
        else:
            assert strategy_from_options(name, size=321).budget == 321


def test_a_sweep_keeps_the_raw_values_each_strategy_came_from():
    sweep = sweep_strategies("fixed", size=[200, 400], overlap=["10%"])
    assert [(s.name, s.sweep) for s in sweep] == [
        ("fixed[overlap=20,size=200]", {"size": 200, "overlap": "10%"}),
        ("fixed[overlap=40,size=400]", {"size": 400, "overlap": "10%"}),
    ]
    assert get_strategy("fixed", size=200, overlap=20).sweep == {}


def test_a_new_strategy_registers_a_dataclass_and_a_factory():
    @dataclasses.dataclass(frozen=True)
    class ShoutParams(_params.StrategyParams):
        SIZE = "size"
        size: int = 3

        def __post_init__(self) -> None:
            if self.size < 1:
                raise ValueError(f"size must be > 0, got {self.size}")

    def shout(p: ShoutParams) -> StrategyParts:
        fixed = get_strategy("fixed", size=p.size)
        return StrategyParts(lambda document: fixed(document))

    register_strategy("test-shout", ShoutParams, "fixed, by another name")(shout)
    try:
        s = get_strategy("test-shout", size=4)
        assert (s.name, s.params, s.description, s.budget) == (
            "test-shout[size=4]",
            {"size": 4},
            "fixed, by another name",
            4,
        )
        assert [c.text for c in s(Document.from_text("abcdefgh", doc_id="x"))] == ["abcd", "efgh"]
        with pytest.raises(ValueError, match="size must be > 0"):
            get_strategy("test-shout", size=0)
    finally:
        _REGISTRY.pop("test-shout")
        DEFAULTS.pop("test-shout")


def test_a_strategys_spec_is_picklable_and_builds_the_same_strategy_back():
    import pickle

    from chunklab.chunkers.catalog import StrategySpec

    strategy = get_strategy("recursive", size=300, overlap=30)
    spec = strategy.spec
    assert spec == StrategySpec("recursive", tuple(sorted(strategy.params.items())))
    assert spec.build() is strategy  # the process that made the spec builds nothing again
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and again.build() is strategy
    assert StrategySpec.of("recursive", size=300, overlap=30) == spec
    with pytest.raises(ValueError, match="strategy must be a catalog name or a Strategy"):
        StrategySpec.of(3)  # type: ignore[arg-type]


def test_the_strategy_spec_lives_in_the_catalog_not_in_ingest():
    import chunklab.ingest.plan as plan
    from chunklab.chunkers.catalog import StrategySpec

    assert StrategySpec.__module__ == "chunklab.chunkers.catalog"
    assert "StrategySpec" not in plan.__all__


class _Windowed:
    """Just what fit_to reads from an encoder: its window in tokens."""

    def __init__(self, window: int | None) -> None:
        self.max_seq_length = window


def test_fit_to_gives_a_character_budget_that_fits_the_model_window():
    from chunklab.chunkers.catalog import CHARS_PER_TOKEN

    fitted = get_strategy("structural").fit_to(_Windowed(256))
    assert fitted.params["max_chars"] == int(256 * CHARS_PER_TOKEN) // 50 * 50 == 600
    assert fitted.name == "structural[max_chars=600]" and fitted.spec.build() == fitted
    kept = get_strategy("recursive", overlap=20).fit_to(_Windowed(256))
    assert kept.name == "recursive[overlap=20,size=600]"  # the other explicit flags stay


def test_fit_to_leaves_an_explicit_size_another_unit_or_a_windowless_model_alone():
    for strategy, encoder in [
        (get_strategy("structural", max_chars=1500), _Windowed(256)),  # --size given: kept
        (get_strategy("structural", unit="tokens"), _Windowed(256)),  # measured in tokens already
        (get_strategy("structural"), _Windowed(None)),  # the static model has no window
        (get_strategy("recursive", size=400), _Windowed(256)),  # fits already
        (get_strategy("hierarchical"), _Windowed(256)),  # no single size parameter
    ]:
        assert strategy.fit_to(encoder) is strategy
