"""Display settings shared by the book's chapters (not part of the package, never computes).

Every chapter's hidden setup cell calls :func:`setup`, so that all computed tables print
numbers the same way (thousands separators, two decimals), and every plot colours a strategy
with :func:`strategy_color`: the package's one colour per strategy family
(``chunklab.book.viz.STRATEGY_COLORS``, Okabe-Ito, colour-blind safe), plus shades for the few
variants the chapters compare side by side.
"""

from __future__ import annotations

from typing import Any

#: the book's own variants of a family (chunklab.book.viz.STRATEGY_COLORS gives the families)
VARIANT_COLORS: dict[str, str] = {
    "recursive (size-matched)": "#2c7da0",  # a darker recursive blue: the fair flat comparison
    "leaves only": "#9ecae1",  # hierarchical blues, light to dark: leaves, parents, auto-merge
    "leaf → parent": "#0072b2",
    "auto-merge": "#08306b",
}


def strategy_color(name: str) -> str:
    """The colour of a strategy label: a variant of this book, else its family's (chunklab.book.viz)."""
    from chunklab.book.viz import strategy_color as family_color

    return VARIANT_COLORS.get(str(name).strip(), None) or family_color(str(name))


def _frame_html(df: Any) -> str:
    """A DataFrame as HTML with thousands separators and two decimals, every cell and header escaped.

    A table a chapter presents through :func:`chunklab.book.labels.frame` in Spanish writes its
    numbers the Spanish way ("0,64", "55 478"); any other frame is program output and keeps
    Python's way.
    """
    if df.attrs.get("chunklab_lang", "en") != "en":
        styler = df.style.format(_spanish_cell, escape="html")
        styler = styler.format_index(_spanish_cell, axis=0, escape="html")
    else:
        styler = df.style.format(thousands=",", precision=2, na_rep="", escape="html")
        styler = styler.format_index(thousands=",", precision=2, na_rep="", axis=0, escape="html")
    styler = styler.format_index(escape="html", axis=1)  # a header is text, never markup
    return styler.set_table_attributes('class="dataframe"').to_html()


def _spanish_cell(value: Any) -> str:
    """One table cell as the Spanish edition writes it: integers grouped from 5 digits, 2 decimals."""
    import numbers

    import pandas as pd

    from chunklab.book.labels import fmt_int, fmt_number

    if isinstance(value, str):
        return value
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return ""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return fmt_int(value, "es")
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return fmt_number(value, 2, "es")
    return str(value)


def setup() -> None:
    """Register the book's table format with IPython (call once in a chapter's setup cell)."""
    import pandas as pd
    from IPython import get_ipython

    pd.set_option("display.precision", 2)
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, _frame_html)
