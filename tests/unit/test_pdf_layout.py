"""Layout from the page itself (issue 36, Deliver 2), on PDFs generated at test time (tests/support/docgen).

Columns are found below and between full-width blocks, running headers and footers are learned
from what repeats across pages (per chapter, with page numbers in them, outside a fixed band),
and font sizes and weights are checked against the glyphs' own boxes and the document's
distribution instead of being taken from the font's claims.
"""

from __future__ import annotations

import pytest

from chunklab.documents import load_document
from tests.support import docgen

PARA = (
    "Operators check the coolant level every morning before the first shift begins, and they "
    "write the reading in the log book kept beside the main control panel of the plant."
)


def _words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize("gutter", [4.0, 6.0, 10.0])
def test_columns_under_a_full_width_title_and_abstract_and_around_a_wide_caption_read_in_order(
    tmp_path, gutter
):
    """Old: a many-line full-width abstract hid the gutter (the page read as a table of interleaved
    lines), and a gutter narrower than 1.5 font sizes joined the two columns' lines into one."""
    abstract = f"Abstract. {PARA} {PARA} {PARA} {PARA}"
    caption = "Figure 1: A caption set across the whole page, under a figure that spans both columns."
    blocks = [
        abstract,
        ([f"Alpha {PARA}"], [f"Beta {PARA}"]),
        caption,
        ([f"Gamma {PARA}"], [f"Delta {PARA}"]),
    ]
    doc = load_document(
        docgen.pdf_column_blocks(tmp_path / "c.pdf", blocks, title="A wide title", gutter=gutter)
    )
    expected = " ".join(["A wide title", abstract, f"Alpha {PARA}", f"Beta {PARA}", caption])
    expected += f" Gamma {PARA} Delta {PARA}"
    assert _words(doc.text) == _words(expected)
    kinds = [(doc.text[e.start : e.end].split()[0], e.type) for e in doc.elements]
    assert kinds == [
        ("A", "heading"),
        ("Abstract.", "paragraph"),
        ("Alpha", "paragraph"),
        ("Beta", "paragraph"),
        ("Figure", "caption"),
        ("Gamma", "paragraph"),
        ("Delta", "paragraph"),
    ]
