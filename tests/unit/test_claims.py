"""The book's verdicts: a paired comparison's wording, and the claims registry checked against the numbers.

Every sentence of a chapter that says what wins, helps or pays is either computed from its
comparison (``chunklab.book.labels.fmt_verdict`` glued into the text) or registered in
``chunklab/data/claims.toml`` (``chunklab.book.claims``). The fast tests check the wording,
the rule's precision, the registry against the chapter sources, and that no summary
sentence with a verdict word stands without one of the two; when the book has been
built (``_build/jupyter_execute``), the registered claims are checked against the numbers the
executed chapters glued.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from chunklab.book import claims as C
from chunklab.book import labels as L
from chunklab.evaluate.bootstrap import is_established
from chunklab.evaluate.verdict import MAX_DIGITS, Verdict, describe, verdict, visible_digits

ROOT = Path(__file__).resolve().parents[2]
EXECUTED = ROOT / "_build" / "jupyter_execute"


def cmp(diff: float, lo: float, hi: float) -> dict[str, float]:
    return {"diff": diff, "lo": lo, "hi": hi}


# --- the verdict --------------------------------------------------------------------------


def test_verdict_words_the_comparison_in_english_and_spanish():
    c = cmp(0.05, 0.012, 0.09)
    assert str(verdict(c)) == "established: +0.05 [+0.01, +0.09]"
    assert L.fmt_verdict(c, lang="en") == "established: +0.05 [+0.01, +0.09]"
    assert L.fmt_verdict(c, lang="es") == "establecida: +0,05 [+0,01; +0,09]"
    t = cmp(0.02, -0.03, 0.07)
    assert L.fmt_verdict(t, lang="en") == "not established: +0.02 [-0.03, +0.07]"
    assert L.fmt_verdict(t, lang="es") == "no establecida: +0,02 [-0,03; +0,07]"


@pytest.mark.parametrize(
    ("lo", "hi", "established"),
    [
        (0.004, 0.09, True),
        (-0.004, 0.08, False),
        (-0.09, -0.0004, True),
        (0.0, 0.05, False),
        (-0.1, 0.1, False),
    ],
)
def test_the_printed_interval_shows_the_rule(lo, hi, established):
    """An end that excludes zero never prints as 0: the sign of each printed end gives the verdict."""
    v = verdict(cmp((lo + hi) / 2, lo, hi))
    assert v.established is established is is_established({"lo": lo, "hi": hi})
    ends = re.findall(r"[+-]\d+\.\d+", L.fmt_difference(cmp(v.diff, lo, hi), lang="en"))[1:]
    printed = [float(e) for e in ends]
    assert (printed[0] > 0 or printed[1] < 0) is established, (lo, hi, ends)


def test_visible_digits_adds_decimals_only_where_needed():
    assert visible_digits(0.01, 0.09) == 2
    assert visible_digits(-0.004, 0.08) == 3
    assert visible_digits(0.00004, 0.1) == MAX_DIGITS
    assert visible_digits(0.0, 0.0) == 2  # an exact zero prints as zero
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        visible_digits(0.1, 0.0)
    with pytest.raises(ValueError, match="digits"):
        visible_digits(0.0, 0.1, digits=-1)


def test_verdict_direction_and_missing_fields():
    assert verdict(cmp(0.05, 0.01, 0.09)).direction == 1
    assert verdict(cmp(-0.05, -0.09, -0.01)).direction == -1
    assert verdict(cmp(0.0, -0.01, 0.01)).direction == 0
    with pytest.raises(ValueError, match="no hi"):
        verdict({"diff": 0.1, "lo": 0.0})
    v = Verdict(0.1, 0.05, 0.15, True, 2)
    assert describe(v, established="E", not_established="N", estimate=lambda *a: "x") == "E: x"


# --- the registry -------------------------------------------------------------------------


def _source(page: str) -> str:
    return (ROOT / f"{page}.md").read_text(encoding="utf-8")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _label_texts(page: str) -> list[str]:
    """The English texts of the labels a page uses (``label("key"``): glued sentences the page shows."""
    used = set(re.findall(r"label\(\s*\"([a-z0-9_]+)\"", _source(page)))
    return [entry["en"] for key, entry in L.labels().items() if key in used]


def test_registry_loads_and_each_claim_is_a_sentence_of_its_page_that_records_its_quantity():
    registered = C.claims()
    assert registered, "the claims registry is empty"
    for claim in registered:
        text = _source(claim.page)
        shown = [_flat(text), *(_flat(t) for t in _label_texts(claim.page))]
        assert any(_flat(claim.says) in t for t in shown), f"{claim.describe()}: the page no longer says this"
        assert re.search(rf"claims\.record\(\s*\"{claim.page}\",\s*\"{claim.quantity}\"", text), (
            f"{claim.describe()}: the page never records {claim.quantity}"
        )


@pytest.mark.parametrize(
    ("asserts", "value", "expected"),
    [
        ("established_ahead", cmp(0.05, 0.01, 0.09), True),
        ("established_ahead", cmp(0.04, -0.004, 0.08), False),
        ("established_behind", cmp(-0.05, -0.09, -0.01), True),
        ("not_established", cmp(0.04, -0.004, 0.08), True),
        ("not_established", cmp(0.05, 0.01, 0.09), False),
        ("not_established_ahead", cmp(-0.05, -0.09, -0.01), True),
        ("not_established_ahead", cmp(0.05, 0.01, 0.09), False),
        ("greater_than", 0.3, True),
        ("greater_than", -0.1, False),
        ("less_than", 0.1, True),
        # the wording classes: magnitude, not only sign
        ("always", 1.0, True),
        ("always", 0.91, False),  # "always returns" on 91% of the questions
        ("exactly", 0.0, True),
        ("exactly", 2372 - 2315, False),  # "returned exactly what the leaves returned"
        ("identical", 0.0, True),
        ("identical", 0.09, False),  # merges on 9% of the questions
        ("about_as_much", 1.05, True),
        ("about_as_much", 0.95, True),
        ("about_as_much", 6841 / 8443, False),  # "about as much text as the parents"
        ("larger", cmp(0.12, 0.02, 0.22), True),
        ("larger", cmp(0.12, -0.02, 0.26), False),  # a larger mean without an established interaction
        ("keeps_whole", 0.93, True),
        ("keeps_whole", 0.72, False),  # 72% vs 62% is not "keeps whole where the other cuts"
    ],
)
def test_holds_checks_the_direction_a_claim_asserts(asserts, value, expected):
    claim = C.Claim("chapters/x", "q", asserts, "says", 0.0 if asserts != "less_than" else 0.25)
    assert C.holds(claim, value) is expected


def test_record_refuses_a_claim_its_number_does_not_support_and_an_unregistered_quantity():
    claim = C.claims()[0]
    bad = -1.0 if claim.asserts == "greater_than" else 1.0
    if claim.asserts in ("greater_than", "less_than"):
        with pytest.raises(C.ClaimError, match=re.escape(claim.quantity)):
            C.record(claim.page, claim.quantity, claim.than + bad)
    with pytest.raises(ValueError, match="register it"):
        C.record(claim.page, "no such quantity", 1.0)
    with pytest.raises(ValueError, match="needs a comparison"):
        C.holds(C.Claim("p", "q", "established_ahead", "s"), 0.5)


#: registered claims whose wording is known not to meet the word yet, with who rewrites them
AWAITING_REWRITE: dict[tuple[str, str], str] = {}

#: sentences whose "exactly"/"always" states a rule of the code or a definition, not a measured
#: amount: each is pinned by the tests named here instead of a claim
RULES_OF_THE_CODE = {
    "whose `text` is exactly `text[start:end]`": "tests/unit/test_chunk_contract.py (exact slices)",
    "the budget always wins over the overlap": (
        "tests/unit/test_recursive.py::test_packer_never_lets_overlap_push_a_chunk_past_the_limit"
    ),
    "That second kind is exactly what a structural chunker cannot see": (
        "a definition: structural chunkers read only markup (headings, defs), chapter 3"
    ),
}


#: pages whose every wording of WORDINGS (prose and the labels they glue) must be a registered claim
WORDING_PAGES = (
    "intro",
    "chapters/01-fixed",
    "chapters/02-recursive",
    "chapters/03-structural",
    "chapters/04-semantic",
    "chapters/05-hierarchical",
    "chapters/06-evaluation",
    "chapters/07-retrieval",
    "chapters/08-llm",
)


def _wording_params() -> list:
    params = []
    for claim in C.claims():
        reason = AWAITING_REWRITE.get((claim.page, claim.quantity))
        marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
        params.append(pytest.param(claim, id=f"{claim.page}:{claim.quantity}", marks=marks))
    return params


@pytest.mark.parametrize("claim", _wording_params())
def test_a_registered_sentence_asserts_what_its_words_promise(claim):
    """ "always" needs a share of 1, "exactly" a zero difference, "about as much" a ratio near 1, ..."""
    for pattern, allowed in C.wordings_in(claim.says).items():
        assert claim.asserts in allowed, (
            f"{claim.describe()}: its wording ({pattern}) needs one of {sorted(allowed)}, "
            f"so the number must meet the word, not only its sign"
        )


def test_wordings_are_found_in_sentences():
    assert set(C.wordings_in("Leaf → parent always returns the bigger unit")) == {
        r"\balways (?:returns?|buys|keeps|finds|gives|wins)\b"
    }
    assert C.wordings_in("the gain is larger on the questions that need context")
    assert C.wordings_in("which returns about as much text as the parents")
    assert C.wordings_in("they keep functions whole where a recursive splitter cuts them")
    assert not C.wordings_in("more chunks (a larger `k`) do the same")  # a method sentence, no claim
    assert not C.wordings_in("always show precision or the characters returned")  # advice, no claim


@pytest.mark.parametrize("page", WORDING_PAGES)
def test_every_wording_on_the_page_is_a_registered_claim(page):
    """A sentence or glued label of the page with a word of WORDINGS is covered by a claim of the page."""
    says = [_flat(c.says) for c in C.claims() if c.page == page]
    prose = re.sub(r"^```\{code-cell\}.*?^```\s*$", "", _source(page), flags=re.M | re.S)
    sentences = _sentences(prose) + [s for t in _label_texts(page) for s in _sentences(t)]
    bare = [
        s
        for s in sentences
        if C.wordings_in(s)
        and not any(x in s or s in x for x in says)
        and not any(rule in s for rule in RULES_OF_THE_CODE)
    ]
    assert not bare, f"{page}: wording without a registered claim: {bare}"


#: words of a sentence that says what wins, helps or what to choose
VERDICT_WORDS = re.compile(
    r"\b(wins?|beats?|better|worse|helps?|pays?|choose|recommend\w*|use it|outperform\w*|superior)\b", re.I
)


#: sentences about the method, not a result: what a strategy must beat, what a win share is
METHOD_PHRASES = ("the baseline to beat", "must beat", "win shares")


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^## {heading}[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    return m.group(1) if m else ""


def _sentences(block: str) -> list[str]:
    prose = re.sub(r"^(```|~~~).*?^\1\s*$", "", block, flags=re.M | re.S)  # no fenced blocks
    prose = re.sub(r"^\|.*$", "", prose, flags=re.M)  # no tables
    flat = _flat(prose)
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*`{(-])|^- | - ", flat) if s.strip()]


CHAPTER_FILES = sorted(
    p.relative_to(ROOT).with_suffix("").as_posix() for p in (ROOT / "chapters").glob("0*.md")
)


@pytest.mark.parametrize("page", CHAPTER_FILES)
def test_no_summary_sentence_asserts_a_verdict_without_its_number(page):
    """A summary bullet that says what wins or helps is computed (glue) or registered (claims.toml)."""
    says = [_flat(c.says) for c in C.claims() if c.page == page]
    unsupported = []
    for sentence in _sentences(_section(_source(page), "Summary")):
        if not VERDICT_WORDS.search(sentence) or any(m in sentence for m in METHOD_PHRASES):
            continue
        if "{glue:" in sentence or any(s in sentence for s in says):
            continue
        unsupported.append(sentence)
    assert not unsupported, f"{page}: verdict sentences without their computed number: {unsupported}"


# --- against the executed chapters --------------------------------------------------------


def _glued(page: str) -> dict[str, object]:
    """The values a chapter recorded, from its executed glue (``<page>.glue.json``, myst-nb's own file)."""
    glue_file = EXECUTED / f"{page}.glue.json"
    if not glue_file.is_file():
        pytest.skip("book not built (make book): no executed glue for this page")
    out: dict[str, object] = {}
    for name, output in json.loads(glue_file.read_text(encoding="utf-8")).items():
        if name.startswith(C.GLUE_PREFIX):
            text = output["data"]["text/plain"]
            out[name[len(C.GLUE_PREFIX) :]] = ast.literal_eval(
                "".join(text) if isinstance(text, list) else text
            )
    return out


@pytest.mark.parametrize("page", sorted({c.page for c in C.claims()}))
def test_registered_claims_hold_on_the_executed_chapter(page):
    glued = _glued(page)
    for claim in (c for c in C.claims() if c.page == page):
        assert claim.quantity in glued, f"{claim.describe()}: the executed chapter recorded no value"
        assert C.holds(claim, glued[claim.quantity]), f"{claim.describe()}: got {glued[claim.quantity]!r}"
