"""Issue 36, Found-6: TeX's separate accent glyphs composed, cmsy's angle brackets read as brackets."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from chunklab.documents import load_document
from chunklab.documents.characters import SPACING_ACCENTS, compose_accents
from tests.support import docgen

LETTERS = st.characters(categories=("Ll", "Lu"), max_codepoint=0x24F)


def test_tex_accent_then_letter_is_the_accented_letter():
    assert compose_accents("M\u00b4etro") == "Métro"
    assert compose_accents("co\u00a8ordinator") == "coördinator"
    assert compose_accents("na\u00a8\u0131ve, \u00b8ca va, Dvo\u02c7r\u00b4ak") == "naïve, ça va, Dvořák"


def test_an_accent_not_before_a_letter_or_without_a_composed_form_stays():
    for text in ("x\u00b4 y", "\u00b4q", "5\u00a8", "it's `code` ^x ~y", "plain text"):
        assert compose_accents(text) == text


@given(
    st.text(LETTERS, max_size=5),
    st.sampled_from(sorted(SPACING_ACCENTS)),
    LETTERS,
    st.text(LETTERS, max_size=5),
)
def test_composing_never_loses_a_letter_and_gives_nfc_when_it_composes(before, accent, letter, after):
    text = before + accent + letter + after
    out = compose_accents(text)
    base = {"\u0131": "i", "\u0237": "j"}.get(letter, letter)  # TeX accents the dotless i and j
    composed = unicodedata.normalize("NFC", base + SPACING_ACCENTS[accent])
    if len(composed) == 1:
        assert out == before + composed + after
    else:
        assert out == text


def test_pdf_text_composes_accents_and_maps_cmsy_brackets(tmp_path):
    path = docgen.pdf_runs(
        tmp_path / "tex.pdf",
        [
            ("DejaVuSans.ttf", "The hinge of M\u00b4etro and the pair "),
            ("cmsy10.ttf", "h"),
            ("DejaVuSans.ttf", "a, b"),
            ("cmsy10.ttf", "i"),
            ("DejaVuSans.ttf", " in a coordinate."),
        ],
    )
    text = load_document(path).text
    assert "The hinge of Métro and the pair" in text  # DejaVu's h and i stay letters
    assert "\u27e8" in text and "\u27e9" in text  # cmsy's h and i are the angle brackets
    assert "coordinate" in text and " h " not in text and " i " not in text
