"""Words hyphenated at a PDF line end (issue 36, Deliver 2): mended only where the document or the
hyphenation dictionary says the joined word is one word, every decision recorded with exact offsets."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.documents import load_document
from chunklab.documents.pdf.layout import Block, Hyphenation, Seg, block_text
from tests.support import docgen


def _seg(text: str, page: int = 1) -> Seg:
    return Seg(page, chars=list(text), sizes=[10.0] * len(text))


def _paragraph(*lines: str, elsewhere: tuple[str, ...] = ()) -> tuple[str, list]:
    """``lines`` as one paragraph block, read with a document that also holds ``elsewhere``."""
    segs = [_seg(line) for line in lines]
    return block_text(
        Block("paragraph", [[s] for s in segs]), Hyphenation(segs + [_seg(t) for t in elsewhere])
    )


def test_a_legal_break_of_a_dictionary_word_is_mended_and_recorded_at_its_offsets():
    text, decided = _paragraph("a worked exam-", "ple of hyphen-", "ation here")
    assert text == "a worked example of hyphenation here"
    assert [(text[d["start"] : d["end"]], d["text"], d["joined"], d["by"]) for d in decided] == [
        ("example", "example", True, "dictionary"),
        ("hyphenation", "hyphenation", True, "dictionary"),
    ]


def test_a_break_the_dictionary_does_not_allow_keeps_its_hyphen():
    """ "lookup", "email" and "x-ray" have no hyphenation point there: the hyphen is the word's."""
    text, decided = _paragraph("a fast look-", "up by e-", "mail of the x-", "ray")
    assert text == "a fast look-up by e-mail of the x-ray"
    assert [(d["text"], d["joined"], d["by"]) for d in decided] == [
        ("look-up", False, "dictionary"),
        ("e-mail", False, "dictionary"),
        ("x-ray", False, "dictionary"),
    ]


def test_the_document_overrules_the_dictionary_both_ways():
    """ "well-known" is a legal break of "wellknown" by the patterns, but the document writes it with
    its hyphen; "dataset" has no legal break there, but the document writes it whole."""
    text, decided = _paragraph(
        "a well-", "known data-", "set", elsewhere=("the well-known method", "one dataset only")
    )
    assert text == "a well-known dataset"
    assert [(d["text"], d["joined"], d["by"]) for d in decided] == [
        ("well-known", False, "document"),
        ("dataset", True, "document"),
    ]


def test_without_the_document_a_compound_the_patterns_allow_is_joined():
    """The limit of a pattern dictionary: it hyphenates any letters, so "wellknown" passes."""
    assert _paragraph("a well-", "known fact")[0] == "a wellknown fact"


def test_the_more_frequent_form_in_the_document_wins_and_a_tie_keeps_the_hyphen():
    assert _paragraph("the re-", "entry", elsewhere=("reentry", "reentry", "re-entry"))[0] == "the reentry"
    assert _paragraph("the re-", "entry", elsewhere=("reentry", "re-entry"))[0] == "the re-entry"


def test_a_word_with_a_digit_keeps_its_hyphen_and_a_capital_after_the_break_is_a_new_line():
    """No dictionary holds "2ndorder"; a hyphen after a digit ("utf8-") or before a capital is no break."""
    assert _paragraph("a 2nd-", "order term")[0] == "a 2nd-order term"
    assert _paragraph("is avail-", "able48 on")[0] == "is available48 on"  # a footnote mark after it
    assert _paragraph("in utf8-", "encoded form")[0] == "in utf8-\nencoded form"
    assert _paragraph("the end-", "Next line")[0] == "the end-\nNext line"


def test_a_pdf_records_each_decision_at_exact_offsets(tmp_path):
    """Old: every hyphen at a line end was taken for a broken word ("camera-" + "ready" became
    "cameraready" where the same page writes "camera-ready", "look-" + "up" "lookup"), and nothing
    said what was joined."""
    lines = [
        "The camera-ready copy is due on Monday, and each camera-",
        "ready copy is final; the experi-",
        "ment ran after a look-",
        "up of the data.",
    ]
    doc = load_document(docgen.pdf_lines(tmp_path / "h.pdf", lines))
    assert " ".join(doc.text.split()) == (
        "The camera-ready copy is due on Monday, and each camera-ready copy is final; "
        "the experiment ran after a look-up of the data."
    )
    found = doc.metadata["hyphenation"]
    assert [(h["text"], h["joined"], h["by"], h["page"]) for h in found] == [
        ("camera-ready", False, "document", 1),
        ("experiment", True, "dictionary", 1),
        ("look-up", False, "dictionary", 1),
    ]
    assert all(doc.text[h["start"] : h["end"]] == h["text"] for h in found)


_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9)
_line = st.lists(_word, min_size=1, max_size=4).map(" ".join)
_ending = st.sampled_from(["", "-"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_line, _ending), min_size=1, max_size=6),
    st.lists(_line, max_size=4),
    st.sampled_from(["paragraph", "table_row"]),
)
def test_mending_drops_only_the_recorded_hyphens_and_every_record_is_an_exact_slice(lines, elsewhere, kind):
    """Invariants: the text holds every character of the lines in order, less the hyphen of each
    word recorded as joined; each record's span is its text, a joined one without a hyphen at
    the break; the document's own spelling of a word always decides."""
    texts = [words + end for words, end in lines]
    segs = [_seg(t) for t in texts]
    hyphenation = Hyphenation(segs + [_seg(t) for t in elsewhere])
    text, decided = block_text(Block(kind, [[s] for s in segs]), hyphenation)
    assert re.sub(r"\s", "", text).count("-") == "".join(texts).count("-") - sum(d["joined"] for d in decided)
    assert re.sub(r"[\s-]", "", text) == re.sub(r"[\s-]", "", "".join(texts))
    assert len(decided) == sum(t.endswith("-") for t in texts[:-1])
    for d in decided:
        assert text[d["start"] : d["end"]] == d["text"]
        assert d["joined"] or "-" in d["text"]


@settings(max_examples=100, deadline=None)
@given(_word, _word, st.sampled_from(["whole", "hyphened", "neither"]))
def test_the_document_spelling_of_a_word_decides_over_the_dictionary(head, tail, written):
    """Written whole elsewhere: mended; written with the hyphen: kept; else the dictionary decides."""
    elsewhere = {"whole": (f"a {head}{tail} b",), "hyphened": (f"a {head}-{tail} b",), "neither": ()}[written]
    text, (d,) = _paragraph(f"x {head}-", f"{tail} y", elsewhere=elsewhere)
    assert d["by"] == ("dictionary" if written == "neither" else "document")
    if written != "neither":
        assert d["joined"] == (written == "whole")
        assert text == (f"x {head}{tail} y" if written == "whole" else f"x {head}-{tail} y")
