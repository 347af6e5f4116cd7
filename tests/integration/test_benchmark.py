"""The benchmark runner and the strategy registry, on a tiny corpus with the real model and Chroma."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("CHUNKLAB_TORCH_THREADS", "1")

from chunklab.chunk import Chunk  # noqa: E402
from chunklab.chunkers.catalog import (  # noqa: E402
    Strategy,
    available_strategies,
    get_strategy,
    parse_strategies,
    sweep_strategies,
)
from chunklab.datasets.corpora.docs import KitDocument, Question  # noqa: E402
from chunklab.datasets.model import QuestionSet  # noqa: E402

TEXTS = {
    "bees": (
        "# Beekeeping\n\nHoney bees live in colonies ruled by a single queen. "
        "A strong hive holds about fifty thousand workers in midsummer.\n\n"
        "Beekeepers inspect the brood frames every nine days during swarm season."
    ),
    "trains": (
        "# Railways\n\nThe night train leaves the central station at 22:40 and reaches the coast "
        "by dawn. Sleeper cabins must be booked two weeks ahead.\n\n"
        "Freight locomotives pull up to sixty wagons on the northern line."
    ),
    "bread": (
        "# Baking\n\nSourdough needs a lively starter fed twice a day. "
        "Bake the loaf at 250 degrees for twenty minutes with steam, then lower the oven.\n\n"
        "Rye flour absorbs more water than wheat flour."
    ),
}
QUESTIONS = [
    ("q1", "How many worker bees are in a hive in summer?", "bees", "about fifty thousand workers"),
    ("q2", "When does the overnight rail service depart?", "trains", "leaves the central station at 22:40"),
    ("q3", "At what temperature should the sourdough be baked?", "bread", "Bake the loaf at 250 degrees"),
    ("q4", "How often should beehives be checked in swarm season?", "bees", "every nine days"),
]


def tiny_dataset() -> QuestionSet:
    docs = [KitDocument(k, t, f"{k}.md", "markdown", k.title()) for k, t in TEXTS.items()]
    questions = []
    for qid, text, doc_id, quote in QUESTIONS:
        start = TEXTS[doc_id].index(quote)
        questions.append(
            Question(qid, text, doc_id, [(start, start + len(quote))], [quote], "fact", "dev", False)
        )
    return QuestionSet("tiny", docs, questions)


def whole_document(document) -> list[Chunk]:
    """One chunk per document: a strategy whose scores can be computed by hand."""
    return [Chunk(document.text, 0, len(document.text), document.doc_id, {"strategy": "whole"})]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    from chunklab.embed import Encoder

    return Encoder(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def result(encoder):
    from chunklab.evaluate import Benchmark

    strategies = {
        "whole": whole_document,
        "small": get_strategy("fixed", size=60, overlap=10),
        "whole_again": whole_document,
    }
    return Benchmark(tiny_dataset(), strategies, k=1, encoder=encoder, n_resamples=500).run(progress=False)


# ----------------------------------------------------------------- runner


def test_per_question_has_one_row_per_strategy_and_question(result):
    pq = result.per_question
    assert len(pq) == 3 * len(QUESTIONS)
    assert set(pq["strategy"]) == {"whole", "small", "whole_again"}
    assert set(pq["question_id"]) == {q[0] for q in QUESTIONS}


def test_whole_document_scores_match_hand_computation(result):
    # With distinct topics the right document is retrieved, so every gold span is covered,
    # and char precision is the quote's length over the document's length (k = 1).
    pq = result.per_question.set_index(["strategy", "question_id"])
    for qid, _, doc_id, quote in QUESTIONS:
        row = pq.loc[("whole", qid)]
        assert row["hit"] == 1.0 and row["recall"] == 1.0 and row["mrr"] == 1.0
        assert row["char_recall"] == 1.0
        assert row["char_precision"] == pytest.approx(len(quote) / len(TEXTS[doc_id]))
        assert row["iou"] == pytest.approx(len(quote) / len(TEXTS[doc_id]))
        assert row["precision_omega"] == pytest.approx(len(quote) / len(TEXTS[doc_id]))
        assert row["text_recall"] == 1.0


def test_summary_means_lie_inside_their_bootstrap_intervals(result):
    s = result.summary
    assert list(s.index) == ["whole", "small", "whole_again"]
    for metric in ("recall", "mrr", "ndcg", "char_recall", "char_precision", "iou"):
        for name in s.index:
            assert s.loc[name, metric + "_lo"] <= s.loc[name, metric] + 1e-12
            assert s.loc[name, metric] <= s.loc[name, metric + "_hi"] + 1e-12
    means = result.per_question.groupby("strategy")["char_precision"].mean()
    assert s.loc["whole", "char_precision"] == pytest.approx(means["whole"])


def test_cost_columns_count_what_was_indexed(result):
    data = tiny_dataset()
    small = get_strategy("fixed", size=60, overlap=10)
    n_small = sum(len(small(d)) for d in data.documents)
    s = result.summary
    assert s.loc["whole", "chunks"] == 3 and s.loc["small", "chunks"] == n_small
    assert s.loc["small", "vector_bytes"] == 4 * n_small * 384
    assert s.loc["whole", "chars_embedded"] >= sum(len(t) for t in TEXTS.values())
    assert s.loc["small", "tokens_embedded"] > 0
    assert s.loc["small", "truncated_chunks"] == 0 and s.loc["whole", "truncated_chunks"] == 0
    assert s.loc["small", "index_bytes"] > 0
    assert 0 <= s.loc["small", "query_p50_ms"] <= s.loc["small", "query_p95_ms"]


def test_pairwise_shares_add_up_for_every_metric(result):
    pw = result.pairwise
    assert set(pw["metric"]) >= {"recall", "iou"}
    assert ((pw["a"] == "whole") & (pw["b"] == "small")).sum() == pw["metric"].nunique()
    assert ((pw["a_wins"] + pw["b_wins"] + pw["ties"]).round(9) == 1).all()


def test_pairwise_identical_strategies_always_tie(result):
    same = result.pairwise.query("a == 'whole' and b == 'whole_again'")
    assert len(same) == result.pairwise["metric"].nunique()
    assert (same["ties"] == 1.0).all()


def test_pairwise_win_share_follows_a_uniform_per_question_advantage(result):
    # On every question, small chunks' char precision is compared with whole documents':
    # if small is at least as precise on all of them, whole can never win a resample.
    pq = result.per_question.pivot(index="question_id", columns="strategy", values="char_precision")
    row = result.pairwise.query("metric == 'char_precision' and a == 'whole' and b == 'small'").iloc[0]
    if (pq["small"] >= pq["whole"]).all():
        assert row["a_wins"] == 0.0
    if (pq["small"] > pq["whole"]).all():
        assert row["b_wins"] == 1.0


def test_warm_run_embeds_nothing_new_and_reused_store_dir_does_not_accumulate(encoder, tmp_path):
    from chunklab.evaluate import Benchmark

    strategies = {"whole": whole_document}
    first = Benchmark(tiny_dataset(), strategies, k=2, encoder=encoder, store_dir=tmp_path, n_resamples=50)
    r1 = first.run(progress=False)
    calls = encoder.model_calls
    r2 = Benchmark(tiny_dataset(), strategies, k=2, encoder=encoder, store_dir=tmp_path, n_resamples=50).run(
        progress=False
    )
    assert encoder.model_calls == calls
    assert r2.summary.loc["whole", "vectors"] == r1.summary.loc["whole", "vectors"] == 3
    assert r1.per_question["recall"].tolist() == r2.per_question["recall"].tolist()


def test_table_and_json_hold_intervals(result):
    table = result.table(digits=2)
    assert table.loc["whole", "recall"].startswith("1.00 [")
    data = result.to_json()
    assert data["k"] == 1 and len(data["per_question"]) == 12
    assert {"recall_lo", "recall_hi", "chunks"} <= set(data["summary"][0])


def test_bad_datasets_are_value_errors(encoder):
    from chunklab.evaluate import Benchmark

    data = tiny_dataset()
    bad_doc = QuestionSet(
        "bad", data.documents, [Question("x", "q?", "nope", [(0, 3)], ["abc"], "fact", "dev", False)]
    )
    with pytest.raises(ValueError, match="unknown document"):
        Benchmark(bad_doc, ["fixed"], encoder=encoder)
    bad_span = QuestionSet(
        "bad", data.documents, [Question("x", "q?", "bees", [(0, 10**6)], ["abc"], "fact", "dev", False)]
    )
    with pytest.raises(ValueError, match="outside"):
        Benchmark(bad_span, ["fixed"], encoder=encoder)
    with pytest.raises(ValueError, match="no questions"):
        Benchmark(QuestionSet("empty", data.documents, []), ["fixed"], encoder=encoder)
    with pytest.raises(ValueError, match="k must be"):
        Benchmark(data, ["fixed"], k=0, encoder=encoder)
    with pytest.raises(ValueError, match="unknown strategy"):
        Benchmark(data, ["nope"], encoder=encoder)


def test_bad_convention_and_min_gold_overlap_are_value_errors(encoder):
    from chunklab.evaluate import Benchmark

    with pytest.raises(ValueError, match="convention must be one of 'union', 'chroma'"):
        Benchmark(tiny_dataset(), ["fixed"], encoder=encoder, convention="summed")
    with pytest.raises(ValueError, match="min_gold_overlap must be a number in"):
        Benchmark(tiny_dataset(), ["fixed"], encoder=encoder, min_gold_overlap=0)


def test_compare_is_the_mean_paired_difference_with_its_interval(result):
    pq = result.per_question.pivot(index="question_id", columns="strategy", values="char_precision")
    got = result.compare("small", "whole", metric="char_precision")
    diffs = pq["small"] - pq["whole"]
    assert got["diff"] == pytest.approx(diffs.mean())
    assert got["sd"] == pytest.approx(diffs.std(ddof=1))
    assert got["n"] == len(QUESTIONS)
    assert got["lo"] <= got["diff"] <= got["hi"]
    assert got["a_ahead"] + got["b_ahead"] + got["ties"] == pytest.approx(1.0)
    # the same resamples as the pairwise table, so the shares agree
    row = result.pairwise.query("metric == 'char_precision' and a == 'whole' and b == 'small'").iloc[0]
    assert got["a_ahead"] == pytest.approx(row["b_wins"]) and got["b_ahead"] == pytest.approx(row["a_wins"])
    assert got["established"] == (got["lo"] > 0 or got["hi"] < 0)
    same = result.compare("whole", "whole_again")
    assert same["diff"] == 0.0 and same["ties"] == 1.0 and same["established"] is False


def test_subset_recomputes_the_summary_on_the_chosen_questions(result):
    sub = result.subset(["q1", "q4"])
    pq = result.per_question.set_index(["strategy", "question_id"])
    expected = (pq.loc[("small", "q1"), "iou"] + pq.loc[("small", "q4"), "iou"]) / 2
    assert sub.summary.loc["small", "iou"] == pytest.approx(expected)
    assert set(sub.per_question["question_id"]) == {"q1", "q4"}
    assert sub.summary.loc["small", "chunks"] == result.summary.loc["small", "chunks"]
    assert len(sub.retrieved["small"]) == 2
    with pytest.raises(ValueError, match="unknown question id"):
        result.subset(["q1", "nope"])
    with pytest.raises(ValueError, match="metric must be one of"):
        result.compare("small", "whole", metric="speed")


def test_required_questions_is_the_normal_approximation():
    from chunklab.evaluate import required_questions

    # (1.95996 + 0.84162)^2 = 7.8489; * (0.3 / 0.1)^2 = 70.64 -> 71
    assert required_questions(0.3, 0.1) == 71
    # sd = delta: 7.8489 -> 8; halving delta quadruples it: 31.4 -> 32
    assert required_questions(0.2, 0.2) == 8 and required_questions(0.2, -0.1) == 32
    with pytest.raises(ValueError, match="delta"):
        required_questions(0.2, 0)


# ----------------------------------------------------------------- strategy registry


def test_registry_holds_the_course_strategies():
    assert available_strategies()[:5] == ["fixed", "recursive", "structural", "semantic", "hierarchical"]


def test_get_strategy_overrides_defaults_and_names_the_change():
    s = get_strategy("recursive", size=400, overlap="10%")
    assert isinstance(s, Strategy)
    assert s.params["size"] == 400 and s.params["overlap"] == 40
    assert s.name == "recursive[overlap=40,size=400]"
    assert get_strategy("recursive").name == "recursive"
    doc = tiny_dataset().documents[0]
    chunks = s(doc)
    assert chunks and all(doc.text[c.start : c.end] == c.text for c in chunks)
    assert all(c.doc_id == "bees" for c in chunks)


def test_get_strategy_rejects_unknown_names_and_parameters():
    with pytest.raises(ValueError, match="unknown strategy"):
        get_strategy("magic")
    with pytest.raises(ValueError, match="no parameter"):
        get_strategy("fixed", window=3)
    with pytest.raises(ValueError, match="percentage"):
        get_strategy("fixed", overlap="150%")


def test_sweep_builds_every_combination_once():
    sweep = sweep_strategies("recursive", size=[200, 400], overlap=[0, "10%", 20])
    assert [s.name for s in sweep] == [
        "recursive[overlap=0,size=200]",
        "recursive[overlap=20,size=200]",  # 10% of 200 equals the explicit 20: kept once
        "recursive[overlap=0,size=400]",
        "recursive[overlap=40,size=400]",
        "recursive[overlap=20,size=400]",
    ]


def test_parse_strategies_reads_names_and_parameters():
    got = parse_strategies("fixed, recursive:size=300;overlap=10%")
    assert [s.family for s in got] == ["fixed", "recursive"]
    assert got[1].params["overlap"] == 30
    with pytest.raises(ValueError, match="key=value"):
        parse_strategies("fixed:size")
    with pytest.raises(ValueError, match="twice"):
        parse_strategies("fixed,fixed")


def test_strategy_rejects_a_non_document():
    with pytest.raises(ValueError, match="doc_id"):
        get_strategy("fixed")("just a string")


def test_hierarchical_strategy_indexes_leaves_and_auto_merges_siblings():
    s = get_strategy("hierarchical", levels=(40, 10), unit="words")
    doc = KitDocument("long", " ".join(f"word{i}." for i in range(120)), "long.md", "markdown", "Long")
    chunks = s(doc)
    leaves = s.index_chunks(chunks)
    assert leaves and all(not c.metadata.get("child_ids") for c in leaves)
    assert len(leaves) < len(chunks)
    by_id = {c.id: c for c in chunks}
    parent = next(c for c in chunks if c.metadata.get("child_ids"))
    kids = [by_id[i] for i in parent.metadata["child_ids"]]
    merged = s.postprocess([(k, 0.9) for k in kids], by_id)
    assert [c.id for c, _ in merged] == [parent.id]
    # one child of several is not enough to merge (ratio 0.5)
    assert [c.id for c, _ in s.postprocess([(kids[0], 0.9)], by_id)] == [kids[0].id]


def test_semantic_strategy_uses_the_given_encoder(encoder):
    s = get_strategy("semantic", min_chars=20)
    doc = tiny_dataset().documents[0]
    before = encoder.model_calls + encoder.cache_hits
    chunks = s(doc, encoder=encoder)
    assert chunks and all(doc.text[c.start : c.end] == c.text for c in chunks)
    assert encoder.model_calls + encoder.cache_hits > before


# ----------------------------------------------------------------- CLI helpers and plots


def test_parse_sweep_reads_lists_and_percentages():
    from chunklab.chunkers.catalog import parse_param_value
    from chunklab.commands.evaluate import parse_sweep

    assert parse_sweep(["size=200,400", "overlap=0,10%"], parse_param_value) == {
        "size": [200, 400],
        "overlap": [0, "10%"],
    }
    with pytest.raises(ValueError, match="size=200"):
        parse_sweep(["size"], parse_param_value)
    with pytest.raises(ValueError, match="twice"):
        parse_sweep(["size=1", "size=2"], parse_param_value)


def test_write_outputs_writes_tables_json_and_figures(result, tmp_path):
    import json

    import pandas as pd

    from chunklab.commands.evaluate import write_outputs

    written = write_outputs(result, tmp_path)
    assert {"results.csv", "per_question.csv", "pairwise.csv", "results.json", "metrics.png"} <= set(written)
    summary = pd.read_csv(tmp_path / "results.csv", index_col=0)
    assert list(summary.index) == ["whole", "small", "whole_again"]
    assert json.loads((tmp_path / "results.json").read_text())["n_resamples"] == 500
    assert (tmp_path / "metrics.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_benchmark_and_sweep_plot(encoder, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from chunklab.evaluate import Benchmark
    from chunklab.evaluate.plots import plot_sweep

    sweep = sweep_strategies("recursive", size=[60, 120], overlap=[0, "10%"])
    res = Benchmark(tiny_dataset(), sweep, k=2, encoder=encoder, n_resamples=100).run(progress=False)
    assert len(res.summary) == 4
    assert res.params["recursive[overlap=6,size=60]"]["sweep"] == {"size": 60, "overlap": "10%"}
    # bigger chunks: fewer of them
    assert (
        res.summary.loc["recursive[overlap=0,size=120]", "chunks"]
        < res.summary.loc["recursive[overlap=0,size=60]", "chunks"]
    )
    fig = plot_sweep(res, metrics=("recall", "iou"))
    axes = fig.axes
    assert len(axes) == 2 and axes[0].get_xlabel() == "chunk size (chars)"
    assert {line.get_label() for line in axes[0].get_lines()} == {"overlap = 0", "overlap = 10%"}
    with pytest.raises(ValueError, match="no parameter"):
        plot_sweep(res, x="window")


def test_texts_longer_than_the_model_window_are_counted_as_truncated(encoder):
    from chunklab.evaluate import Benchmark

    text = "# Long\n\n" + " ".join(f"Sentence number {i} talks about rivers." for i in range(80))
    quote = "Sentence number 42 talks about rivers."
    start = text.index(quote)
    data = QuestionSet(
        "long",
        [KitDocument("long", text, "long.md", "markdown", "Long")],
        [
            Question(
                "q",
                "Which sentence is forty-two?",
                "long",
                [(start, start + len(quote))],
                [quote],
                "fact",
                "dev",
                False,
            )
        ],
    )
    res = Benchmark(
        data,
        {"whole": whole_document, "small": get_strategy("recursive", size=200)},
        k=1,
        encoder=encoder,
        n_resamples=20,
    ).run(progress=False)
    assert res.summary.loc["whole", "truncated_chunks"] == 1
    assert res.summary.loc["small", "truncated_chunks"] == 0


def test_a_plot_drawn_on_a_subfigure_returns_the_root_figure_that_can_be_saved(tmp_path):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import pandas as pd

    from chunklab.evaluate.plots import plot_cost_quality

    fig = plt.figure()
    ax = fig.subfigures(1, 2)[0].subplots()
    summary = pd.DataFrame({"retrieved_chars": [10.0], "recall": [0.5]}, index=["fixed"])
    got = plot_cost_quality(summary, ax=ax)
    got.savefig(tmp_path / "cost.png")
    plt.close(fig)
    assert got is fig and (tmp_path / "cost.png").stat().st_size > 0
