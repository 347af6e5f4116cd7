"""Fresh page data for the hidden check of ``remove_margins`` (03b-documents), drawn from a seeded RNG.

A document is a list of pages, each a list of ``[text, y]`` lines (``y`` from 0, the top of the
page, to 1, its bottom), as the exercise defines it: running headers and footers, page numbers
in every style the exercise names (named in four languages, bare from a random first number,
dashed, roman), margin words made of roman letters, lines that sit in a margin on one page
only, a chapter title that runs for fewer than half the pages (a running header once it is on
three pages close together), lines on pages spaced three apart (no run) or two apart (a run),
and content lines that repeat on every page but lie between the margins. Same seed, same documents. See
:mod:`chunklab.course.hidden.inputs` for the other notebooks' inputs.
"""

from __future__ import annotations

import random
from typing import Any

from chunklab.course.hidden.inputs import random_text

__all__ = ["margin_inputs", "page_document"]

Cases = list[tuple[str, dict[str, Any]]]
Page = list[list[Any]]

_TITLES = ("Pump P-40 service manual", "Field guide, volume 2", "ACME quarterly report", "Router setup v3.1")
_FOOTERS = ("Acme Pumps Ltd.", "Confidential: internal use", "Printed 2026-12-01")
_ONE_OFF = ("DRAFT", "Not for distribution", "2026", "Revised", "Appendix B")
#: margin words made of roman letters: no numerals ("Civil"), or numerals that do not advance ("mix")
_ROMAN_WORDS = ("Civil", "mix", "dim", "mild", "lid", "vivid", "MIX", "Mix", "xi", "DC")
#: how page ``i`` of ``n`` (1-based) is numbered, from the first number ``first``
_NUMBERS = {
    "'Page n of m' footers": lambda i, n, first: f"Page {i} of {n}",
    "bare page numbers from a random first number": lambda i, n, first: str(first + i - 1),
    "dashed page numbers": lambda i, n, first: f"- {first + i - 1} -",
    "'n/m' page numbers": lambda i, n, first: f"{i}/{n}",
    "'p. n' page numbers": lambda i, n, first: f"p. {i}",
    "roman page numbers": lambda i, n, first: _roman(i),
    "upper-case roman page numbers from a random first number": lambda i, n, first: _roman(
        first + i - 1
    ).upper(),
    "'Página n de m' footers": lambda i, n, first: f"Página {i} de {n}",
    "'Pág. n' page numbers": lambda i, n, first: f"Pág. {i}",
    "'Page n sur m' footers": lambda i, n, first: f"Page {i} sur {n}",
    "'Seite n von m' footers": lambda i, n, first: f"Seite {i} von {n}",
    "no page numbers": lambda i, n, first: "",
}


def page_document(rng: random.Random, n_pages: int, numbering: str, margin: float) -> list[Page]:
    """``n_pages`` pages of lines: a running header (sometimes holding the page number), a chapter
    title for a short run, page numbers styled by ``numbering``, a footer on most pages, one-off
    margin lines, and content, one line of which repeats on every page."""
    title = rng.choice(_TITLES)
    footer = rng.choice(_FOOTERS)
    numbered_header = rng.random() < 0.4
    first = rng.randint(1, 400)
    run_start, run_length = rng.randint(1, n_pages), rng.randint(1, max(1, (n_pages - 1) // 2))
    repeated_body = random_text(rng, rng.randint(3, 9)).replace("\n", " ")
    pages: list[Page] = []
    for i in range(1, n_pages + 1):
        lines: Page = []
        if rng.random() < 0.85:
            head = f"{title} - page {i}" if numbered_header else title
            lines.append([head, _header_y(rng, margin)])
        if run_start <= i < run_start + run_length:
            lines.append([f"{rng.randint(1, 9)} Chapter on page {run_start}", _header_y(rng, margin)])
        for _ in range(rng.randint(0, 5)):
            lines.append([random_text(rng, rng.randint(1, 12)).replace("\n", " "), _body_y(rng, margin)])
        lines.append([repeated_body, _body_y(rng, margin, edge=True)])
        if rng.random() < 0.7:
            lines.append([footer, _footer_y(rng, margin)])
        number = _NUMBERS[numbering](i, n_pages, first)
        if number:
            lines.append([number, _footer_y(rng, margin) if rng.random() < 0.8 else _header_y(rng, margin)])
        if rng.random() < 0.15:
            y = _header_y(rng, margin) if rng.random() < 0.5 else _footer_y(rng, margin)
            lines.append([rng.choice(_ONE_OFF), y])
        lines.sort(key=lambda line: line[1])
        pages.append(lines)
    return pages


def margin_inputs(rng: random.Random) -> Cases:
    """Documents for ``remove_margins``: none, single pages, every numbering style at random margins,
    and the traps (margin lines padded with white space, a line twice on one page, bare numbers that
    break their run, margin words of roman letters, a named page number on one page only, a number
    twice on one page, the default margin)."""
    cases: Cases = [("no pages", {"pages": []})]
    one = page_document(rng, 1, "bare page numbers from a random first number", 0.09)
    cases.append(("one page with a bare page number", {"pages": one}))
    for numbering in rng.sample(sorted(_NUMBERS), 3):  # a single page: every bare number is one
        margin = round(rng.uniform(0.04, 0.2), 3)
        single = page_document(rng, 1, numbering, margin)
        cases.append((f"a single page, {numbering}", {"pages": single, "margin": margin}))
    padded = page_document(rng, rng.randint(4, 10), rng.choice(sorted(_NUMBERS)), 0.09)
    cases.append(
        ("margin lines padded with white space, differently on each page", {"pages": _padded(rng, padded)})
    )
    for numbering in _NUMBERS:
        margin = round(rng.uniform(0.04, 0.2), 3)
        pages = page_document(rng, rng.randint(3, 12), numbering, margin)
        cases.append((numbering, {"pages": pages, "margin": margin}))
    n = rng.randint(5, 12)
    pages = [[[random_text(rng, 5).replace("\n", " "), 0.5]] for _ in range(n)]
    twice, on = rng.choice(_TITLES), rng.sample(range(n), max(2, (n + 1) // 2) - 1)
    for k in on:
        pages[k].insert(0, [twice, _header_y(rng, 0.09)])
    pages[on[0]].insert(0, [twice, _header_y(rng, 0.09)])
    cases.append(("a header on one page fewer than half, twice on one of them", {"pages": pages}))
    broken = page_document(rng, rng.randint(4, 8), "bare page numbers from a random first number", 0.09)
    page = rng.choice(broken)
    page.append([str(rng.randint(500, 900)), _footer_y(rng, 0.09)])
    cases.append(("bare page numbers and a number out of their run", {"pages": broken}))
    numbering = rng.choice(["no page numbers", "'Page n of m' footers"])
    words = page_document(rng, rng.randint(4, 10), numbering, 0.09)
    for page, word in zip(rng.sample(words, 3), rng.sample(_ROMAN_WORDS, 3), strict=True):
        _insert(page, word, _footer_y(rng, 0.09) if rng.random() < 0.5 else _header_y(rng, 0.09))
    cases.append(("margin words of roman letters, one page each", {"pages": words}))
    named = page_document(rng, rng.randint(3, 10), "no page numbers", 0.09)
    _insert(rng.choice(named), f"Página {rng.randint(1, 9)} de {rng.randint(10, 20)}", _footer_y(rng, 0.09))
    cases.append(("'Página n de m' on one page only", {"pages": named}))
    doubled = page_document(rng, rng.randint(3, 8), "no page numbers", 0.09)
    page, year = rng.choice(doubled), str(rng.randint(1990, 2030))
    for _ in range(2):
        _insert(page, year, _header_y(rng, 0.09))
    cases.append(("a bare number twice on one page", {"pages": doubled}))
    default = page_document(rng, rng.randint(2, 10), rng.choice(list(_NUMBERS)), 0.09)
    cases.append(("the default margin", {"pages": default}))
    n = rng.randint(9, 14)  # fewer than half the pages below: only the run rule can remove a line
    runs = [[[random_text(rng, 5).replace("\n", " "), 0.5]] for _ in range(n)]
    chapter, spaced = f"{rng.randint(1, 9)} {rng.choice(_TITLES)}", rng.choice(_FOOTERS)
    start = rng.randint(0, n - 5)
    for k in (start, start + 2, start + 4):  # each within two pages of the last: a run of three
        _insert(runs[k], chapter, _header_y(rng, 0.09))
    for k in range(rng.randint(0, 2), n, 3)[:4]:  # three pages apart: runs of one
        _insert(runs[k], spaced, _footer_y(rng, 0.09))
    cases.append(("a header on every other page of a run, a footer every third page", {"pages": runs}))
    return cases


def _padded(rng: random.Random, pages: list[Page], margin: float = 0.09) -> list[Page]:
    """``pages`` with white space added to their margin lines at random: before, after, and doubled
    inside (a key strips the ends and makes each run one space, so " Title" and "Title " share one)."""
    for page in pages:
        for line in page:
            if margin <= line[1] <= 1 - margin:
                continue
            text = line[0].replace(" ", rng.choice((" ", "  ", " \t")), 1)
            line[0] = rng.choice(("", " ", "  ", "\t")) + text + rng.choice(("", " ", "   "))
    return pages


def _insert(page: Page, text: str, y: float) -> None:
    """Add the line ``[text, y]`` to ``page``, keeping its lines in reading order."""
    page.append([text, y])
    page.sort(key=lambda line: line[1])


def _header_y(rng: random.Random, margin: float) -> float:
    """A height in the header band, often near its inner edge (where a fixed margin goes wrong)."""
    low = 0.7 * margin if rng.random() < 0.5 else 0.005
    return round(rng.uniform(low, 0.95 * margin), 4)


def _footer_y(rng: random.Random, margin: float) -> float:
    return round(1 - _header_y(rng, margin), 4)


def _body_y(rng: random.Random, margin: float, edge: bool = False) -> float:
    """A height between the bands; with ``edge``, just inside one of them (a line right below the header)."""
    if edge:
        y = margin + rng.uniform(0.003, 0.3 * margin)
        return round(y if rng.random() < 0.5 else 1 - y, 4)
    return round(rng.uniform(margin + 0.01, 1 - margin - 0.01), 4)


def _roman(number: int) -> str:
    """``number`` (1-3999) in lower-case roman numerals."""
    out = ""
    for value, letters in (
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ):
        while number >= value:
            out += letters
            number -= value
    return out
