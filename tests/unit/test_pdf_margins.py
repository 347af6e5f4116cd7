"""The PDF loader's page-number rules on PDFs generated at test time (tests/support/docgen.py).

Roman numerals are told by a canonical writer here, not by the loader's pattern: a margin word
made of roman letters ("Civil", "mild") is never a page number, and a numeral ("mix", 1009)
is one only when it advances with the pages. Every 'page n of m' form, in English, Spanish,
French or German, is a page number, on one page or on all.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.documents import load_document
from tests.support import docgen


def to_roman(number: int) -> str:
    """``number`` (1-3999) in lower-case roman numerals, written greedily."""
    out = ""
    for value, letters in zip(
        (1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1),
        ("m", "cm", "d", "cd", "c", "xc", "l", "xl", "x", "ix", "v", "iv", "i"),
        strict=True,
    ):
        while number >= value:
            out += letters
            number -= value
    return out


NUMERALS = {to_roman(n): n for n in range(1, 4000)}
ROMAN_WORDS = ("Civil", "mix", "dim", "mild", "lid", "vivid", "livid", "mimic", "civic", "Mix", "DIM")


def numeral_value(token: str) -> int | None:
    """The value of ``token`` if it is a roman numeral written in one case, else None."""
    return NUMERALS.get(token.lower()) if token.islower() or token.isupper() else None


def removed_lines(folder, pages: list[tuple[list[str], list[str]]]) -> set[tuple[int, str, str]]:
    """What the loader left out of the PDF written from ``pages``: (page, role, text)."""
    doc = load_document(docgen.pdf_margins(folder / "m.pdf", pages))
    assert all(f"Body text of page {k}," in doc.text for k in range(1, len(pages) + 1))
    return {(r["page"], r["role"], r["text"]) for r in doc.metadata["removed"]}


def _bands(page: tuple[list[str], list[str]]) -> list[tuple[str, str]]:
    return [("header", t) for t in page[0]] + [("footer", t) for t in page[1]]


def expected_removal(pages: list[tuple[list[str], list[str]]]) -> set[tuple[int, str, str]]:
    """The rules, for margin lines of one word without digits: a numeral whose value minus its
    page index another page's numeral shares (or on a single page) is a page number, else a line
    whose band and lower-cased text recur on at least half the pages (two at least) is removed."""
    need = max(2, (len(pages) + 1) // 2)
    offsets: dict[int, set[int]] = {}
    for i, page in enumerate(pages):
        for _, text in _bands(page):
            if (value := numeral_value(text)) is not None:
                offsets.setdefault(value - i, set()).add(i)
    keys: dict[tuple[str, str], set[int]] = {}
    for i, page in enumerate(pages):
        for band, text in _bands(page):
            keys.setdefault((band, text.lower()), set()).add(i)
    out = set()
    for i, page in enumerate(pages):
        for band, text in _bands(page):
            value = numeral_value(text)
            if value is not None and (len(pages) == 1 or len(offsets[value - i]) >= 2):
                out.add((i + 1, "page_number", text))
            elif len(keys[(band, text.lower())]) >= need:
                out.add((i + 1, band, text))
    return out


TOKEN = st.one_of(
    st.text(alphabet="ivxlcdmIVXLCDM", min_size=1, max_size=7),
    st.sampled_from(ROMAN_WORDS),
    st.integers(1, 3999).map(to_roman).flatmap(lambda r: st.sampled_from([r, r.upper()])),
)
MARGIN_LINES = st.lists(TOKEN, max_size=2, unique_by=str.lower)


@settings(max_examples=25, deadline=None)
@given(pages=st.lists(st.tuples(MARGIN_LINES, MARGIN_LINES), min_size=1, max_size=5))
def test_margin_words_of_roman_letters_are_removed_only_as_repeats_or_advancing_numerals(
    tmp_path_factory, pages
):
    assert removed_lines(tmp_path_factory.mktemp("r"), pages) == expected_removal(pages)


@settings(max_examples=20, deadline=None)
@given(
    first=st.integers(1, 3980),
    n=st.integers(1, 8),
    blank=st.integers(0, 3),
    upper=st.booleans(),
    shape=st.sampled_from(["{}", "- {} -", "({})", "[{}]", "{}."]),
    in_header=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_roman_numerals_that_advance_with_the_pages_are_page_numbers(
    tmp_path_factory, first, n, blank, upper, shape, in_header
):
    blank = min(blank, max(0, n - 2))  # two numbered pages at least, or a single page
    pages: list[tuple[list[str], list[str]]] = []
    numbers = set()
    for i in range(n):
        if i < blank:
            pages.append(([], []))
            continue
        numeral = to_roman(first + i)
        text = shape.format(numeral.upper() if upper else numeral)
        pages.append(([text], []) if in_header[i] else ([], [text]))
        numbers.add((i + 1, "page_number", text))
    assert removed_lines(tmp_path_factory.mktemp("a"), pages) == numbers


FORMS = (
    "Page {n} of {m}",
    "PAGE {n} OF {m}",
    "{n} of {m}",
    "{n}/{m}",
    "p. {n}",
    "Page {n}",
    "Página {n} de {m}",
    "Pág. {n} de {m}",
    "página {n}",
    "{n} de {m}",
    "Page {n} sur {m}",
    "{n} sur {m}",
    "Seite {n} von {m}",
    "Seite {n}",
    "{n} von {m}",
)


@settings(max_examples=20, deadline=None)
@given(
    pages=st.lists(
        st.tuples(st.sampled_from(FORMS), st.integers(1, 999), st.integers(1, 999), st.booleans()),
        min_size=1,
        max_size=5,
    )
)
def test_page_n_of_m_in_four_languages_is_a_page_number_on_any_page(tmp_path_factory, pages):
    lines = [form.format(n=n, m=m) for form, n, m, _ in pages]
    layout = [([t], []) if top else ([], [t]) for t, (*_, top) in zip(lines, pages, strict=True)]
    removed = removed_lines(tmp_path_factory.mktemp("n"), layout)
    assert removed == {(i, "page_number", t) for i, t in enumerate(lines, 1)}


def test_words_of_roman_letters_one_page_forms_and_a_number_twice_on_a_page_stay_apart(tmp_path):
    pages = [
        (["Civil"], ["1"]),
        (["2026", "mix", "2026"], ["2"]),
        (["dim"], ["Página 3 de 10", "3"]),
        (["mild"], ["4"]),
        (["lid"], ["5", "Seite 9 von 12"]),
    ]
    removed = removed_lines(tmp_path, pages)
    named = {(3, "page_number", "Página 3 de 10"), (5, "page_number", "Seite 9 von 12")}
    assert removed == {(k, "page_number", str(k)) for k in range(1, 6)} | named
