"""Reading a small model's answers: boundary numbers, propositions, and their alignment to the source.

Pure functions on nasty inputs (hypothesis): empty answers, numbers out of range, digits in other
scripts, quotes of repeated sentences, unicode. What they return is always usable: a unit in
``2..n`` or a reason, cleaned propositions, and spans that are slices of the source.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from chunklab.chunkers.llm.parse import (
    MIN_OVERLAP,
    align_proposition,
    parse_boundary_answer,
    parse_propositions,
)
from chunklab.text import split_sentences

UNITS = [
    "Cats are small carnivorous mammals.",
    "A cat sleeps for twelve to sixteen hours a day.",
    "The stock market fell sharply on Monday.",
    "Investors moved their money into government bonds.",
]
REASONS = {"number", "quote", "empty", "out_of_range", "nonsense"}


def test_a_number_in_any_usual_form_names_its_unit():
    for answer in ("3", "3.", " 3\n", "Paragraph 3", "paragraph 3: The stock market", "ID: 3", "#3", "(3)"):
        assert parse_boundary_answer(answer, UNITS) == (3, "number"), answer
    assert parse_boundary_answer("I think it is paragraph 4.", UNITS).unit == 4


def test_digits_of_other_scripts_count_as_numbers():
    assert parse_boundary_answer("３", UNITS).unit == 3  # full-width
    assert parse_boundary_answer("Paragraph ٣", UNITS).unit == 3  # Arabic-Indic


def test_unit_one_and_numbers_past_the_window_are_out_of_range():
    for answer in ("1", "Paragraph 1", "5", "0", "99999999999999999999", "1" + "0" * 5000):
        assert parse_boundary_answer(answer, UNITS) == (None, "out_of_range"), answer[:20]


def test_a_quoted_sentence_names_the_unit_that_holds_it():
    assert parse_boundary_answer('"The stock market fell sharply"', UNITS) == (3, "quote")
    assert parse_boundary_answer("investors   MOVED their money", UNITS) == (4, "quote")
    # a quote of unit 1 cannot start a new chunk
    assert parse_boundary_answer("Cats are small carnivorous mammals", UNITS) == (None, "out_of_range")


def test_a_quote_of_a_repeated_sentence_names_its_first_unit_after_the_first():
    units = ["Same sentence here again.", "Other text entirely.", "Same sentence here again.", "End."]
    assert parse_boundary_answer("Same sentence here again.", units) == (3, "quote")


def test_empty_and_nonsense_answers_say_so():
    assert parse_boundary_answer("", UNITS) == (None, "empty")
    assert parse_boundary_answer("  \n\t", UNITS) == (None, "empty")
    assert parse_boundary_answer("banana", UNITS) == (None, "nonsense")
    assert parse_boundary_answer("The topic changes.", UNITS) == (None, "nonsense")


@given(answer=st.text(max_size=200), units=st.lists(st.text(max_size=80), max_size=10))
@example(answer="Paragraph 2", units=[])
@example(answer="\u0663\u0663", units=["a"] * 40)
def test_any_answer_reads_as_a_usable_unit_or_a_reason(answer, units):
    read = parse_boundary_answer(answer, units)
    assert read.how in REASONS
    if read.unit is None:
        assert read.how != "number" and read.how != "quote" and read.fallback
    else:
        assert 2 <= read.unit <= len(units) and read.how in ("number", "quote")


@given(k=st.integers(2, 9), n=st.integers(2, 9), label=st.sampled_from(["", "Paragraph ", "ID ", "#"]))
def test_a_labelled_number_is_read_exactly_when_it_is_in_range(k, n, label):
    read = parse_boundary_answer(f"{label}{k}", [f"unit number {i} text" for i in range(n)])
    assert read.unit == (k if k <= n else None)


def test_propositions_lose_bullets_numbers_quotes_and_introductions():
    answer = (
        "Here are the statements:\n- The Eiffel Tower is in Paris.\n2. It was built in 1889.\n"
        '* "It is 330 metres tall."\n\n- The Eiffel Tower is in Paris.\n---\n'
    )
    assert parse_propositions(answer) == [
        "The Eiffel Tower is in Paris.",
        "It was built in 1889.",
        "It is 330 metres tall.",
    ]


def test_a_json_list_answer_is_read_as_its_strings():
    assert parse_propositions('["One fact.", "Two facts.", 3, "One fact."]') == ["One fact.", "Two facts."]
    assert parse_propositions("[not json") == ["[not json"]


@given(st.text(max_size=300))
@example("")
@example("\n\n:\n-\n1.\n")
def test_parsed_propositions_are_clean_and_distinct(answer):
    props = parse_propositions(answer)
    assert len(props) == len(set(props))
    for p in props:
        assert p == p.strip() and p and "\n" not in p


SOURCE = (
    "The Eiffel Tower stands in Paris. It was built in 1889 for the World's Fair. "
    "The tower is 330 metres tall. It was built in 1889 for the World's Fair."
)
SENTENCES = split_sentences(SOURCE)


def test_an_exact_proposition_aligns_to_its_first_occurrence():
    got = align_proposition("  It was built in 1889 for the World's Fair. ", SOURCE, SENTENCES)
    assert got is not None and got.how == "exact"
    assert SOURCE[got.start : got.end] == "It was built in 1889 for the World's Fair."
    assert got.start == SOURCE.index("It was built")


def test_a_reworded_proposition_aligns_to_the_sentence_sharing_most_of_its_words():
    got = align_proposition("The Eiffel Tower is 330 metres tall.", SOURCE, SENTENCES)
    assert got is not None and got.how == "overlap" and got.score >= MIN_OVERLAP
    assert SOURCE[got.start : got.end] == "The tower is 330 metres tall."


def test_a_proposition_about_nothing_in_the_source_does_not_align():
    assert align_proposition("Bananas are yellow fruit.", SOURCE, SENTENCES) is None
    assert align_proposition("", SOURCE, SENTENCES) is None
    assert align_proposition("...", SOURCE, SENTENCES) is None


def test_alignment_stays_inside_the_range_it_is_given():
    start = SOURCE.index("The tower")
    got = align_proposition("It was built in 1889 for the World's Fair.", SOURCE, SENTENCES, start)
    assert got is not None and got.start >= start  # the repeat after `start`, not the first occurrence


@given(
    source=st.text(alphabet=st.sampled_from("ab cé.\n👍İ"), max_size=120),
    proposition=st.text(alphabet=st.sampled_from("ab cé.\n👍İ"), max_size=30),
    lo=st.integers(0, 120),
    width=st.integers(0, 120),
)
def test_an_alignment_is_a_slice_of_the_source_range_or_none(source, proposition, lo, width):
    lo = min(lo, len(source))
    hi = min(len(source), lo + width)
    got = align_proposition(proposition, source, split_sentences(source), lo, hi)
    if got is not None:
        assert lo <= got.start < got.end <= hi
        if got.how == "exact":
            assert source[got.start : got.end] == proposition.strip()
