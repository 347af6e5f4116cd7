"""Words shown in figures and tables, and numbers shown in prose, in the build's language.

The book is published in English and Spanish from the same chapter sources. Prose is
translated through gettext catalogs, but what a chapter *computes* (axis titles, legend
entries, table headers, numbers glued into sentences) is made by code, so the code asks this
module for it: :func:`label` looks a key up in the one dictionary of labels
(``chunklab/data/labels.toml``, English and Spanish side by side) and the ``fmt_*`` functions
write numbers the way the language writes them ("0.64" / "0,64", "55,478" / "55 478",
"38.1%" / "38,1 %", "[0.62, 0.71]" / "[0,62; 0,71]").

The language is the build's: the environment variable ``CHUNKLAB_LANG`` (``en`` when unset;
``make book-es`` sets ``es``), read by :func:`language`. Every function also takes
``lang=`` to ask for one language explicitly.
"""

from __future__ import annotations

import difflib
import math
import numbers
import os
import re
import tomllib
from collections.abc import Callable, Hashable, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.ticker import Formatter

__all__ = [
    "ENV_VAR",
    "display_name",
    "LANGUAGES",
    "NBSP",
    "fmt_difference",
    "fmt_estimate",
    "fmt_int",
    "fmt_interval",
    "fmt_number",
    "fmt_percent",
    "fmt_ratio",
    "fmt_signed",
    "fmt_verdict",
    "frame",
    "label",
    "labels",
    "language",
    "localize",
    "localize_axes",
    "parse_number",
    "text",
]

#: the environment variable that carries the build's language
ENV_VAR = "CHUNKLAB_LANG"
#: the languages the book is published in; the first is the default
LANGUAGES: tuple[str, ...] = ("en", "es")
#: no-break space: Spanish thousands groups and the space before "%" never wrap
NBSP = "\u00a0"


def language() -> str:
    """The build's language: ``CHUNKLAB_LANG`` (``"en"`` when unset or empty), validated."""
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if not value:
        return LANGUAGES[0]
    return _check_lang(value, ENV_VAR)


def label(key: str, lang: str | None = None, **fields: object) -> str:
    """The label ``key`` in ``lang`` (default: :func:`language`); ``fields`` fill its ``{placeholders}``.

    An unknown key raises ``KeyError`` naming the key and the closest known keys.
    """
    table = labels()
    if key not in table:
        close = difflib.get_close_matches(str(key), table, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise KeyError(f"no label {key!r} in chunklab/data/labels.toml{hint}")
    words = table[key][_lang(lang)]
    return words.format(**fields) if fields else words


def text(english: str, lang: str | None = None) -> str:
    """The label whose English text is ``english``, in ``lang``: how a table header built in English is shown.

    ``KeyError`` names the text and the closest English labels when none matches.
    """
    by_english = _by_english()
    if english not in by_english:
        close = difflib.get_close_matches(str(english), by_english, n=3, cutoff=0.6)
        hint = f"; close: {', '.join(map(repr, close))}" if close else ""
        raise KeyError(f"no label with English text {english!r} in chunklab/data/labels.toml{hint}")
    return label(by_english[english], lang)


def display_name(name: str, lang: str | None = None) -> str:
    """How a name is shown: the label whose English text is ``name`` if there is one, else ``name`` itself.

    For names that are partly proper names or identifiers ("MiniLM", "BM25", a file name),
    which stay as they are, next to names that are words ("static", "leaves only").
    """
    key = _by_english().get(name) if isinstance(name, str) else None
    return label(key, lang) if key is not None else name


@cache
def labels() -> dict[str, dict[str, str]]:
    """The whole dictionary: key -> {"en": ..., "es": ...} (read once from the package data)."""
    raw = resources.files("chunklab").joinpath("data/labels.toml").read_text(encoding="utf-8")
    table = tomllib.loads(raw)
    for key, entry in table.items():
        missing = [lang for lang in LANGUAGES if not isinstance(entry.get(lang), str)]
        if missing:
            raise ValueError(f"label {key!r} in labels.toml has no text for {', '.join(missing)}")
    return table


@cache
def _by_english() -> dict[str, str]:
    out: dict[str, str] = {}
    for key, entry in labels().items():
        if entry["en"] in out:
            raise ValueError(
                f"labels {out[entry['en']]!r} and {key!r} share the English text {entry['en']!r}"
            )
        out[entry["en"]] = key
    return out


def _check_lang(lang: object, name: str = "lang") -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"{name} must be one of {', '.join(LANGUAGES)}; got {lang!r}")
    return lang


def _lang(lang: str | None) -> str:
    return language() if lang is None else _check_lang(lang)


# --- numbers in prose ---------------------------------------------------------------------


def fmt_number(x: float, digits: int = 2, lang: str | None = None, *, signed: bool = False) -> str:
    """``x`` with ``digits`` decimals: "0.64" / "0,64"; thousands "55,478" / "55 478" (no-break space).

    English groups thousands from 4 digits ("1,000", as Python's ``,`` does); Spanish only
    from 5 ("1000", "55 478"), as the RAE and ISO 80000 write it. ``signed`` writes "+" too.
    """
    lang = _lang(lang)
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError(f"x must be a real number, got {x!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be a non-negative integer, got {digits!r}")
    if not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x!r}")
    plain = f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
    if plain[0] == "-" and float(plain) == 0:  # a negative that rounds to zero: no "-0.0000"
        plain = ("+" if signed else "") + plain[1:]
    sign = plain[0] if plain[0] in "+-" else ""
    whole, _, decimals = plain[len(sign) :].partition(".")
    group, mark, min_len = (",", ".", 4) if lang == "en" else (NBSP, ",", 5)
    if len(whole) >= min_len:
        head = len(whole) % 3 or 3
        whole = group.join([whole[:head]] + [whole[i : i + 3] for i in range(head, len(whole), 3)])
    return sign + whole + (mark + decimals if decimals else "")


def fmt_int(n: int, lang: str | None = None) -> str:
    """An integer count: "55,478" / "55 478", "1,000" / "1000"."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ValueError(f"n must be an integer, got {n!r}")
    return fmt_number(int(n), 0, lang)


def fmt_signed(x: float, digits: int = 2, lang: str | None = None) -> str:
    """A difference, always signed: "+0.05" / "+0,05", "-0.12" / "-0,12"."""
    return fmt_number(x, digits, lang, signed=True)


def fmt_percent(share: float, digits: int = 1, lang: str | None = None, *, signed: bool = False) -> str:
    """A share (0.381) as a percentage: "38.1%" / "38,1 %" (a no-break space before "%" in Spanish)."""
    lang = _lang(lang)
    if isinstance(share, bool) or not isinstance(share, numbers.Real):
        raise ValueError(f"share must be a real number, got {share!r}")
    number = fmt_number(share * 100, digits, lang, signed=signed)
    return number + ("%" if lang == "en" else NBSP + "%")


def fmt_interval(
    lo: float, hi: float, digits: int = 2, lang: str | None = None, *, signed: bool = False
) -> str:
    """A confidence interval: "[0.62, 0.71]" / "[0,62; 0,71]" (the comma is Spanish's decimal mark)."""
    lang = _lang(lang)
    sep = ", " if lang == "en" else "; "
    return (
        f"[{fmt_number(lo, digits, lang, signed=signed)}{sep}{fmt_number(hi, digits, lang, signed=signed)}]"
    )


def fmt_estimate(
    value: float, lo: float, hi: float, digits: int = 2, lang: str | None = None, *, signed: bool = False
) -> str:
    """An estimate and its interval: "+0.05 [+0.01, +0.09]" / "+0,05 [+0,01; +0,09]" with ``signed=True``."""
    return (
        f"{fmt_number(value, digits, lang, signed=signed)} "
        f"{fmt_interval(lo, hi, digits, lang, signed=signed)}"
    )


def fmt_difference(comparison: Mapping[str, float], digits: int = 2, lang: str | None = None) -> str:
    """A paired difference and its interval at the precision where the rule shows: "+0.040 [-0.004, +0.080]".

    The decimals are :func:`chunklab.evaluate.verdict.visible_digits` (at least ``digits``);
    :func:`fmt_verdict` writes the same with the verdict's word in front.
    """
    from chunklab.evaluate.verdict import verdict

    v = verdict(comparison, digits)
    return fmt_estimate(v.diff, v.lo, v.hi, v.digits, lang, signed=True)


def fmt_verdict(comparison: Mapping[str, float], digits: int = 2, lang: str | None = None) -> str:
    """A comparison's verdict: "established: +0.05 [+0.01, +0.09]" / "establecida: +0,05 [+0,01; +0,09]".

    The rule and the precision are :mod:`chunklab.evaluate.verdict`'s (an interval end that
    excludes zero never prints as 0); the words are the labels ``established`` and
    ``not_established``.
    """
    from chunklab.evaluate.verdict import describe, verdict

    lang = _lang(lang)

    def estimate(value: float, lo: float, hi: float, d: int) -> str:
        return fmt_estimate(value, lo, hi, d, lang, signed=True)

    return describe(
        verdict(comparison, digits),
        established=label("established", lang),
        not_established=label("not_established", lang),
        estimate=estimate,
    )


def fmt_ratio(x: float, digits: int = 0, lang: str | None = None) -> str:
    """How many times: "12×", "1.5×" / "1,5×"."""
    return fmt_number(x, digits, lang) + "×"


def parse_number(s: str, lang: str | None = None) -> float:
    """Read back a number written by :func:`fmt_number` (or :func:`fmt_percent`, as the percentage) in
    ``lang``."""
    lang = _lang(lang)
    if not isinstance(s, str):
        raise ValueError(f"s must be a str, got {type(s).__name__}")
    body = s.strip().removesuffix("%").strip(" " + NBSP)
    if lang == "en":
        pattern, plain = _EN_NUMBER, body.replace(",", "")
    else:
        pattern, plain = _ES_NUMBER, body.replace(NBSP, "").replace(",", ".")
    if not pattern.fullmatch(body):
        raise ValueError(f"s is not a number written in {lang!r}: {s!r}")
    return float(plain)


_EN_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_ES_NUMBER = re.compile(rf"[+-]?(?:\d{{1,3}}(?:{NBSP}\d{{3}})+|\d+)(?:,\d+)?")


# --- computed text written in English by code elsewhere -----------------------------------

#: a cell that holds only numbers and their marks ("0.62 [0.55, 0.70]", "38%", "±0.05", "1,024")
_NUMERIC_CELL = re.compile(r"[\s\d.,;:+\-−±%×\[\]()]*\d[\s\d.,;:+\-−±%×\[\]()]*")
_EN_TOKEN = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\d.,])\d+(?:\.\d+)?")


def localize(s: str, lang: str | None = None) -> str:
    """A purely numeric string written the English way ("0.62 [0.55, 0.70]", "38%"), rewritten for ``lang``.

    Strings with any letters are returned unchanged: they are names or program output.
    """
    lang = _lang(lang)
    if lang == "en" or not isinstance(s, str) or not _NUMERIC_CELL.fullmatch(s):
        return s

    def number(m: re.Match[str]) -> str:
        token = m.group(0)
        digits = len(token.partition(".")[2])
        return fmt_number(float(token.replace(",", "")), digits, lang)

    out = re.sub(r"\[([^\[\],]*), ([^\[\],]*)\]", r"[\1; \2]", s)
    out = _EN_TOKEN.sub(number, out)
    return re.sub(r"(?<=\d)%", NBSP + "%", out)


def frame(
    df: pd.DataFrame, lang: str | None = None, *, keep: tuple[str, ...] = (), words: tuple[str, ...] = ()
) -> pd.DataFrame:
    """A copy of DataFrame ``df`` shown in ``lang``: headers, index names and worded labels translated.

    Column headers and index names are English label texts (see :func:`text`); one that is
    not in the dictionary raises ``KeyError``, in English too, so a table cannot ship an
    untranslated header; ``keep`` lists headers that are identifiers and stay as they are.
    Index values are translated when they are a label's English text (strategy names, corpus
    names); other index values (ids, file names) stay. String cells of the columns named in
    ``words`` (English headers) must be labels' English texts (or empty) and are translated;
    any other string cell that holds only a number is rewritten by :func:`localize`, and
    cells with letters (identifiers, program output) stay as they are.
    ``attrs["chunklab_lang"]`` records the language for the book's table display
    (``chapters/booktools.py``), which writes the numeric cells in it.
    """
    import pandas as pd

    lang = _lang(lang)
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    missing = [w for w in words if w not in df.columns]
    if missing:
        raise ValueError(f"words names columns that df does not have: {missing}")

    def header(name: Hashable) -> Hashable:
        if not isinstance(name, str) or name in keep:
            return name
        return text(name, lang)

    def worded(v: object) -> object:
        if not isinstance(v, str) or not any(ch.isalpha() for ch in v):  # numbers, dashes, empty
            return localize(v, lang) if isinstance(v, str) else v
        return text(v, lang)

    out = df.copy()
    for column in out.columns:
        fn = worded if column in words else (lambda v: localize(v, lang) if isinstance(v, str) else v)
        out[column] = out[column].map(fn)
    out.columns = _relabel(out.columns, header)
    out.index = _relabel(out.index, lambda v: display_name(v, lang) if isinstance(v, str) else v)
    out.index.names = [header(n) for n in out.index.names]
    out.columns.names = [header(n) for n in out.columns.names]
    out.attrs["chunklab_lang"] = lang  # the book's table display writes its numbers in this language
    return out


def _relabel(index: pd.Index, fn: Callable[[Hashable], Hashable]) -> pd.Index:
    import pandas as pd

    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(fn(v) for v in t) for t in index], names=index.names)
    return pd.Index([fn(v) for v in index], name=index.name)


def localize_axes(axes: Axes | np.ndarray, lang: str | None = None) -> None:
    """Give matplotlib ``axes`` (one or an array) tick labels in ``lang``: "0,25" in Spanish.

    The formatter is installed as the axis default, so a categorical axis (bar names) or a
    log scale set later still replaces it; a formatter a chapter sets itself wins too.
    """
    import numpy as np

    if _lang(lang) == "en":
        return
    for ax in np.atleast_1d(np.asarray(axes, dtype=object)).ravel():
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(_decimal_comma_formatter())
            axis.isDefault_majfmt = True


def _decimal_comma_formatter() -> Formatter:
    from matplotlib.ticker import ScalarFormatter

    class DecimalComma(ScalarFormatter):
        """Matplotlib's default tick labels with a decimal comma and Spanish thousands."""

        def __call__(self, x: float, pos: int | None = None) -> str:
            return _swap_marks(super().__call__(x, pos))

        def get_offset(self) -> str:
            return _swap_marks(super().get_offset())

    return DecimalComma()


def _swap_marks(s: str) -> str:
    return s.replace(",", NBSP).replace(".", ",")
