"""chunklab.book.labels: one dictionary of figure/table words in both languages, numbers per language."""

from __future__ import annotations

import re
import string

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.book import labels as L
from chunklab.book.labels import (
    NBSP,
    fmt_estimate,
    fmt_int,
    fmt_interval,
    fmt_number,
    fmt_percent,
    fmt_signed,
    frame,
    label,
    language,
    localize,
    parse_number,
    text,
)

#: Spanish texts that are rightly the same as the English: names, identifiers, metric names.
SAME_IN_BOTH = {
    "unit_tokens",  # "tokens": the Spanish term is "token"
    "corpus",  # "corpus" is Spanish too (pl. corpus)
    "structure_questions_column",  # "{structure}, {questions}"
    "corpus_strategy_tick",  # only placeholders: "{corpus}: {strategy}"
    "diff_verdict",  # "{diff}, {verdict}"
    "no",  # "no" is Spanish too
    "n",  # a count's symbol
    "load_p50_ms",  # "p50 (ms)": a percentile's symbol and a unit
    "load_p95_ms",
    "load_p99_ms",
}
#: proper names and identifiers allowed to stay English inside a Spanish label
IDENTIFIER_WORDS = re.compile(r"MiniLM|BM25|LangChain|chunklab|recall@\d+|MRR|nDCG|stdlib|IC")

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)
digits = st.integers(min_value=0, max_value=4)
langs = st.sampled_from(L.LANGUAGES)


@pytest.fixture(autouse=True)
def _default_language(monkeypatch):
    monkeypatch.delenv(L.ENV_VAR, raising=False)


# --- the dictionary -----------------------------------------------------------------------


def test_every_label_has_both_languages_and_the_same_placeholders():
    fmt = string.Formatter()
    for key, entry in L.labels().items():
        assert set(entry) == set(L.LANGUAGES), key
        assert all(entry[lang].strip() for lang in L.LANGUAGES), key
        fields = [{f for _, f, _, _ in fmt.parse(entry[lang]) if f} for lang in L.LANGUAGES]
        assert fields[0] == fields[1], f"{key}: placeholders differ between languages: {fields}"


#: metric names ("recall@5", "MRR", "nDCG@k") stay as in the formulas and the code
METRIC_NAME = re.compile(r"[A-Za-z]+@[k\d]|MRR")


def test_no_spanish_label_is_left_in_english_unless_allowed():
    same = {k for k, e in L.labels().items() if e["en"] == e["es"] and not METRIC_NAME.fullmatch(e["en"])}
    assert same <= SAME_IN_BOTH, f"Spanish text identical to the English one: {sorted(same - SAME_IN_BOTH)}"


def test_spanish_labels_do_not_keep_common_english_words():
    english = re.compile(r"\b(the|of|and|with|chunks?|size|share|number|per|over|mean|shown)\b")
    for key, entry in L.labels().items():
        es = IDENTIFIER_WORDS.sub("", entry["es"])
        es = re.sub(r"«[^»]*»|\{[^}]*\}", "", es)  # quotes of the English source, placeholders
        assert not english.search(es), f"{key}: English word in the Spanish label {entry['es']!r}"


def test_english_texts_are_unique_so_tables_can_be_shown_by_them():
    texts = [e["en"] for e in L.labels().values()]
    assert len(texts) == len(set(texts))


def test_label_looks_up_the_build_language(monkeypatch):
    assert label("chunks") == "chunks"
    monkeypatch.setenv(L.ENV_VAR, "es")
    assert language() == "es"
    assert label("chunks") == "fragmentos"
    assert label("chunks", "en") == "chunks"
    assert label("viz_limit", limit=256) == "límite 256"


def test_unknown_language_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(L.ENV_VAR, "fr")
    with pytest.raises(ValueError, match="CHUNKLAB_LANG must be one of en, es; got 'fr'"):
        language()
    with pytest.raises(ValueError, match="lang must be one of"):
        label("chunks", "de")


def test_unknown_key_names_the_key_and_close_matches():
    with pytest.raises(KeyError, match=r"'chunkz'.*did you mean .*'chunks'"):
        label("chunkz")
    with pytest.raises(KeyError, match="'number of chunk'.*'number of chunks'"):
        text("number of chunk")


# --- numbers ------------------------------------------------------------------------------


def test_numbers_are_written_as_each_language_writes_them():
    assert fmt_number(0.64, 2, "es") == "0,64"
    assert fmt_number(0.64, 2, "en") == "0.64"
    assert fmt_int(55478, "es") == f"55{NBSP}478"
    assert fmt_int(55478, "en") == "55,478"
    assert fmt_int(1000, "es") == "1000"  # Spanish groups from five digits
    assert fmt_int(1000, "en") == "1,000"
    assert fmt_int(1067253, "es") == f"1{NBSP}067{NBSP}253"
    assert fmt_percent(0.381, 1, "es") == f"38,1{NBSP}%"
    assert fmt_percent(0.381, 1, "en") == "38.1%"
    assert fmt_interval(0.62, 0.71, 2, "es") == "[0,62; 0,71]"
    assert fmt_interval(0.62, 0.71, 2, "en") == "[0.62, 0.71]"
    assert fmt_signed(0.05, 2, "es") == "+0,05"
    assert fmt_signed(-0.05, 2, "en") == "-0.05"
    assert fmt_estimate(0.05, -0.01, 0.1, 2, "es", signed=True) == "+0,05 [-0,01; +0,10]"
    # a negative that rounds to zero prints no minus (Table 6.3 showed "-0.0000"); zero keeps "+"
    assert fmt_number(-1e-17, 4, "en") == "0.0000"
    assert fmt_signed(-3e-6, 4, "es") == "+0,0000"
    assert fmt_estimate(0.02, -1e-17, 0.05, 3, "en", signed=True) == "+0.020 [+0.000, +0.050]"


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="x must be a real number"):
        fmt_number("0.5")
    with pytest.raises(ValueError, match="digits must be a non-negative integer"):
        fmt_number(0.5, -1)
    with pytest.raises(ValueError, match="x must be finite"):
        fmt_number(float("nan"))
    with pytest.raises(ValueError, match="n must be an integer"):
        fmt_int(2.5)


@given(finite, digits, langs)
def test_numbers_read_back_to_the_rounded_value(x, d, lang):
    assert parse_number(fmt_number(x, d, lang), lang) == float(f"{x:.{d}f}")


@given(finite, digits)
def test_spanish_numbers_have_no_point_and_english_no_space(x, d):
    es, en = fmt_number(x, d, "es"), fmt_number(x, d, "en")
    assert "." not in es and " " not in es
    assert NBSP not in en and " " not in en
    assert es.count(",") == (1 if d else 0)


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_thousands_groups_are_three_digits_from_the_right(n):
    for lang, sep, min_len in (("en", ",", 4), ("es", NBSP, 5)):
        body = fmt_int(n, lang).lstrip("-")
        groups = body.split(sep)
        assert "".join(groups) == str(abs(n))
        if len(str(abs(n))) < min_len:
            assert len(groups) == 1
        else:
            assert 1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])


@given(finite, finite, digits)
def test_an_interval_has_two_numbers_and_a_separator_that_is_not_the_decimal_mark(lo, hi, d):
    es = fmt_interval(lo, hi, d, "es")
    inner = es[1:-1].split("; ")
    assert len(inner) == 2 and es.startswith("[") and es.endswith("]")
    assert [parse_number(p, "es") for p in inner] == [float(f"{lo:.{d}f}"), float(f"{hi:.{d}f}")]


@given(st.floats(min_value=-10, max_value=10, allow_nan=False), digits)
def test_localize_rewrites_english_numeric_strings_like_the_formatters(x, d):
    english = f"{x:.{d}f} [{x:+.{d}f}, {x * 2:.{d}f}]"
    got = localize(english, "es")
    assert "." not in got
    parts = re.fullmatch(r"(\S+) \[(\S+); (\S+)\]", got)
    assert parts, got
    values = [parse_number(p, "es") for p in parts.groups()]
    assert values == [float(f"{x:.{d}f}"), float(f"{x:+.{d}f}"), float(f"{x * 2:.{d}f}")]
    assert localize(english, "en") == english


def test_localize_leaves_names_and_rewrites_percent():
    assert localize("fixed 1000 chars", "es") == "fixed 1000 chars"
    assert localize("38%", "es") == f"38{NBSP}%"
    assert localize("12,345.5", "es") == f"12{NBSP}345,5"
    assert localize("±0.05", "es") == "±0,05"


# --- tables -------------------------------------------------------------------------------


def _table():
    rows = [{"corpus": "kit documents (prose)", "chunks": 1200, "cuts mid-word": "38%"}]
    return pd.DataFrame(rows).set_index("corpus")


def test_frame_shows_headers_worded_cells_and_numbers_in_the_language():
    es = frame(_table(), "es")
    assert list(es.columns) == ["fragmentos", "cortes a mitad de palabra"]
    assert es.index.name == "corpus"
    assert list(es.index) == ["documentos del kit (prosa)"]
    assert es.iloc[0, 1] == f"38{NBSP}%"
    assert es.iloc[0, 0] == 1200
    assert frame(_table(), "en").equals(_table())


def test_frame_refuses_a_header_with_no_label_unless_kept():
    df = _table().rename(columns={"chunks": "chunkz"})
    with pytest.raises(KeyError, match="chunkz"):
        frame(df, "en")
    assert list(frame(df, "es", keep=("chunkz",)).columns) == ["chunkz", "cortes a mitad de palabra"]


def test_frame_translates_worded_columns_strictly_and_leaves_names():
    df = pd.DataFrame(
        [
            {"strategy": "fixed", "verdict": "established", "ahead in": "61.2%"},
            {"strategy": "MiniLM", "verdict": "tied", "ahead in": "identical"},
        ]
    ).set_index("strategy")
    es = frame(df, "es", words=("verdict", "ahead in"))
    assert list(es.index) == ["fijo", "MiniLM"]  # a proper name stays
    assert list(es["veredicto"]) == ["establecida", "empate"]
    assert list(es["por delante en"]) == [f"61,2{NBSP}%", "idénticas"]
    assert es.attrs["chunklab_lang"] == "es"
    with pytest.raises(KeyError, match="'maybe'"):
        frame(df.assign(verdict=["maybe", "tied"]), "es", words=("verdict",))
    with pytest.raises(ValueError, match="words names columns"):
        frame(df, "es", words=("nope",))


def test_display_name_translates_words_and_keeps_proper_names():
    assert L.display_name("contextual BM25", "es") == "BM25 contextual"
    assert L.display_name("RRF (MiniLM + BM25)", "es") == "RRF (MiniLM + BM25)"


def test_spanish_axes_get_decimal_comma_ticks_and_categorical_axes_still_work():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    L.localize_axes(ax, "es")
    ax.barh(["fijo", "recursivo"], [0.25, 0.5])
    ax.set_xlim(0, 1)
    fig.canvas.draw()
    xticks = [t.get_text() for t in ax.get_xticklabels()]
    assert "0,2" in xticks or "0,25" in xticks, xticks
    assert not any("." in t for t in xticks)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["fijo", "recursivo"]
    english = Figure().subplots()
    L.localize_axes(english, "en")
    english.set_xlim(0, 1)
    english.figure.canvas.draw()
    assert any("." in t.get_text() for t in english.get_xticklabels())


def test_the_books_table_display_writes_presented_numbers_in_the_language():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "chapters" / "booktools.py"
    spec = importlib.util.spec_from_file_location("booktools", path)
    booktools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(booktools)
    df = pd.DataFrame(
        {"chunks": [55478], "characters per token": [0.6412]}, index=pd.Index([1000], name="size")
    )
    es = booktools._frame_html(frame(df, "es"))
    assert f"55{NBSP}478" in es and "0,64" in es and ">1000<" in es
    en = booktools._frame_html(frame(df, "en"))
    assert "55,478" in en and "0.64" in en and "1,000" in en
    assert "55,478" in booktools._frame_html(df)  # a frame not presented through labels: program output
