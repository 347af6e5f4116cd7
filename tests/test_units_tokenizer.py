"""Any ``tokenizer.json`` as the length unit of every strategy of the catalog.

The tokenizers are trained here, in a temporary folder, with the ``tokenizers`` library: a BPE
whose pre-tokenizer splits at whitespace and punctuation (so a token never spans a space),
and a byte-level BPE (GPT-2 style: a token carries the space before a word). Neither is the
model's WordPiece, so a strategy that still measured characters or MiniLM tokens would break
the budgets below.
"""

from __future__ import annotations

import bisect
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import piece

from chunklab.chunk import check_chunks
from chunklab.chunkers.catalog import available_strategies, get_strategy
from chunklab.chunkers.semantic import chunk_semantic
from chunklab.chunkers.structural.html import html_text_map
from chunklab.documents import Document
from chunklab.units import UnitIndex, count_tokens, get_tokenizer, length_function, tokenizer_for

TRAINING_TEXT = [
    "Install the tool with pip, then run it once to write the settings file.",
    "def handler(request):\n    return request.json()\n",
    "| port | host |\n|------|------|\n| 8080 | localhost |",
    "<p>The <b>depot</b> opens at six &amp; closes at nine.</p>",
    "Section\n=======\n\nSome reStructuredText with a literal block::\n\n    code here\n",
] * 20


def _train(tmp: Path, kind: str) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if kind == "bpe":
        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(vocab_size=120, special_tokens=["[UNK]"])
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(TRAINING_TEXT, trainer)
    path = tmp / f"{kind}-tokenizer.json"
    tok.save(str(path))
    return f"tokenizer:{path}"


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("tokenizers")
    return {kind: _train(tmp, kind) for kind in ("bpe", "bytelevel")}


def test_the_trained_tokenizers_are_really_other_units(trained):
    text = "Install the settings handler, then restart the depot at nine."
    counts = {u: length_function(u)(text) for u in ("chars", "tokens", trained["bpe"], trained["bytelevel"])}
    assert len(set(counts.values())) == 4, counts  # four different measures of one sentence


# ---------------------------------------------------------------- every strategy, every unit, nasty input

#: blocks that give each format its structure: headings, fences, tables, definitions, markup
STRUCTURE = [
    "# Title\n\n",
    "## Part two\n",
    "```python\nx = 1\n\n\ny = 2\n```\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "def f(x):\n    return x\n\n",
    "class K:\n    def m(self):\n        pass\n",
    "@dec\ndef g():\n    '''doc'''\n",
    "<h2>Head</h2>",
    "<p>para &amp; more</p>",
    "<div class='x'>",
    "</div>",
    "<pre>a\n  b</pre>",
    "&#x1F600;",
    "Title\n=====\n\n",
    "Sub\n---\n",
    ".. note::\n\n   indented body\n",
    "A paragraph::\n\n    literal\n",
    "sentence one. ",
    "Sentence two! ",
    "a" * 90,
    "tokenization " * 12,
    "\n\n",
]
document_text = st.lists(st.one_of(st.sampled_from(STRUCTURE), piece), max_size=40).map("".join)
KINDS = ("text", "markdown", "python", "html", "rst")
STRATEGIES = available_strategies()
UNIT_NAMES = ("chars", "words", "tokens", "bpe", "bytelevel")


class HashEncoder:
    """A deterministic stand-in for the embedding model: semantic cuts depend only on the text."""

    def encode(self, texts):
        rows = []
        for t in texts:
            rng = np.random.default_rng(sum(map(ord, t)) % (2**32))
            rows.append(rng.normal(size=8))
        return np.array(rows)


def _unit(name: str, trained: dict[str, str]) -> str:
    return trained.get(name, name)


def _build(name: str, unit: str, budget: int):
    """The catalog strategy ``name`` with every size set from ``budget``, measured in ``unit``."""
    params = {
        "fixed": {"size": budget, "overlap": budget // 4},
        "recursive": {"size": budget, "overlap": budget // 4},
        "structural": {"max_chars": budget, "min_chars": budget // 3},
        "semantic": {"max_chars": budget, "min_chars": budget // 3},
        "hierarchical": {"levels": (budget * 4, budget * 2, budget)},
        "markdown-hierarchy": {"max_chars": budget},
        "paragraphs": {"max_chars": budget, "overlap_paragraphs": 1},
        "sentences": {"size": budget, "overlap_sentences": 1},
    }[name]
    return get_strategy(name, unit=unit, **params)


def _budgets(strategy, chunk) -> int | None:
    """The budget ``chunk`` must keep: its level's size, or None where no size applies."""
    p = strategy.params
    if strategy.family == "hierarchical" or (
        strategy.family == "markdown-hierarchy" and "levels" in chunk.metadata["params"]
    ):
        return chunk.metadata["params"]["levels"][chunk.level]
    if strategy.family == "markdown-hierarchy":
        return p["max_chars"] if chunk.level == 1 else None  # a section is a parent whatever its size
    return p.get("size", p.get("max_chars"))


def _in_place(source: str, unit: str):
    """``(count, indivisible)`` by the whole source's own encoding (the test's own measure).

    ``count(s, e)``: units intersecting ``source[s:e]``; ``indivisible(s, e)``: every position
    strictly inside falls strictly inside some unit, so no cut could make the span smaller
    (one character that a byte-level tokenizer spells with several tokens, for instance).
    """
    if unit == "chars":
        return (lambda s, e: e - s), (lambda s, e: e - s <= 1)
    if unit == "words":
        spans = [m.span() for m in re.finditer(r"\S+", source)]
    else:
        spans = [
            o for o in tokenizer_for(unit).encode(source, add_special_tokens=False).offsets if o[1] > o[0]
        ]
    ends = [e for _s, e in spans]
    starts = [s for s, _e in spans]

    def count(s: int, e: int) -> int:
        return max(0, bisect.bisect_left(starts, e) - bisect.bisect_right(ends, s))

    inside = bytearray(len(source) + 1)  # 1 where a position lies strictly inside a unit
    for a, b in spans:
        inside[a + 1 : b] = b"\x01" * max(0, b - a - 1)

    def indivisible(s: int, e: int) -> bool:
        return all(inside[s + 1 : e])

    return count, indivisible


@pytest.mark.parametrize("unit_name", UNIT_NAMES)
@pytest.mark.parametrize("name", STRATEGIES)
@given(text=document_text, kind=st.sampled_from(KINDS), budget=st.integers(3, 60))
def test_every_strategy_keeps_its_budget_in_every_unit(trained, name, unit_name, text, kind, budget):
    unit = _unit(unit_name, trained)
    strategy = _build(name, unit, budget)
    doc = Document("doc", text, None, kind, None)
    chunks = strategy(doc, encoder=HashEncoder())
    html = kind == "html"
    # exact offsets (for HTML: visible text, spans on the markup) and nothing lost
    if html and not chunks:  # a page with no visible text has no chunks
        assert not html_text_map(text)[0].strip()
    else:
        assert check_chunks(chunks, text, html=html) == []
    assert [(c.id, c.text) for c in strategy(doc, encoder=HashEncoder())] == [(c.id, c.text) for c in chunks]
    measures: dict[str, tuple] = {}
    for c in chunks:
        # the unit the chunk was measured in: ours, except Markdown hierarchy on another format
        # in characters, which falls back to MiniLM token levels
        unit_c = c.metadata["params"].get("unit", "chars")
        fallback = (
            strategy.family == "markdown-hierarchy" and unit == "chars" and "levels" in c.metadata["params"]
        )
        assert unit_c == ("tokens" if fallback else unit)
        if unit_c not in measures:
            measures[unit_c] = (length_function(unit_c), *_in_place(text, unit_c))
        measure, in_place, indivisible = measures[unit_c]
        budget_c = _budgets(strategy, c)
        if budget_c is None:
            continue
        size = measure(c.text)
        if size > budget_c:
            assert c.metadata.get("oversize"), (c.metadata, size, budget_c)
        if html or not c.metadata.get("oversize"):
            continue
        # a chunk over budget is one line that cannot be cut (structural Python), an atom no cut
        # can shrink, or a piece that fits where it lies and re-tokenizes longer on its own
        one_line = "\n" not in c.text.strip() and strategy.family == "structural"
        fits = in_place(c.start, c.end) <= budget_c
        assert one_line or fits or indivisible(c.start, c.end), (c.metadata, c.text)


@given(
    text=document_text, kind=st.sampled_from(("text", "markdown", "python", "rst")), budget=st.integers(3, 40)
)
def test_with_a_whitespace_bpe_only_a_cut_inside_a_word_can_re_tokenize_longer(trained, text, kind, budget):
    """Its tokens never span whitespace or a word edge, so a piece cut at one counts what it did in place."""
    unit = trained["bpe"]
    words = [m.span() for m in re.finditer(r"\w+|[^\w\s]+", text)]  # the Whitespace pre-tokenizer's pieces

    def inside_a_word(pos: int) -> bool:
        return any(s < pos < e for s, e in words)

    for name in ("structural", "semantic", "paragraphs", "recursive"):
        for c in _build(name, unit, budget)(Document("doc", text, None, kind, None), encoder=HashEncoder()):
            single_line = str(c.metadata.get("oversize_reason", "")).startswith("a single line")
            if count_tokens(c.text, unit) > budget and not single_line:
                assert inside_a_word(c.start) or inside_a_word(c.end), (name, c.metadata, c.text)


def test_structural_packs_blocks_up_to_the_budget_in_tokens(trained):
    """Markdown blocks are merged while they fit in tokens: a char budget would cut far more often."""
    unit = trained["bpe"]
    paragraphs = [" ".join(["depot"] * 6) + "." for _ in range(6)]
    md = "# Depot\n\n" + "\n\n".join(paragraphs) + "\n"
    per = count_tokens(paragraphs[0], unit)
    head = count_tokens("# Depot", unit)
    assert per > head  # so two paragraphs fill the later chunks
    budget = head + 2 * per  # the heading and two paragraphs fit, a third does not
    chunks = get_strategy("structural", max_chars=budget, min_chars=0, unit=unit)(
        Document("d.md", md, None, "markdown")
    )
    assert [count_tokens(c.text, unit) for c in chunks] == [budget, 2 * per, 2 * per]
    assert all(md[c.start : c.end] == c.text for c in chunks)
    assert len(md) > 3 * budget  # in characters the same budget would give many more chunks


def test_python_functions_stay_whole_when_they_fit_in_tokens(trained):
    unit = trained["bytelevel"]
    src = "".join(f"def f{i}(request):\n    return request.json() + {i}\n\n\n" for i in range(4))
    sizes = {count_tokens(f"def f{i}(request):\n    return request.json() + {i}", unit) for i in range(4)}
    budget = max(sizes)
    chunks = get_strategy("structural", max_chars=budget, min_chars=0, unit=unit)(
        Document("a.py", src, None, "python")
    )
    assert [c.metadata["name"] for c in chunks] == ["f0", "f1", "f2", "f3"]
    assert len(chunks[0].text) > budget  # more characters than the budget: it really counts tokens


def test_semantic_sizes_are_tokens_of_the_tokenizer(trained):
    """No breakpoint below the threshold: only ``max_chars`` cuts, at sentence ends, counted in tokens."""
    unit = trained["bpe"]
    text = " ".join(
        f"The depot opens at {h} and the {w} bay an hour later."
        for h, w in zip(
            ("six", "seven", "eight", "nine", "ten", "noon"),
            ("north", "south", "east", "west", "main", "side"),
        )
    )
    per = max(
        count_tokens(f"The depot opens at {h} and the {w} bay an hour later.", unit)
        for h, w in (("seven", "north"), ("eight", "south"), ("noon", "side"))
    )
    budget = 2 * per + 2
    # a fixed cut-off no cosine distance reaches (the catalog's semantic has no threshold parameter)
    chunks = chunk_semantic(
        text, threshold=5.0, min_chars=0, max_chars=budget, encoder=HashEncoder(), unit=unit
    )
    assert all(count_tokens(c.text, unit) <= budget and c.text.endswith("later.") for c in chunks)
    assert max(len(c.text) for c in chunks) > budget  # a character budget could not hold these
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


# ---------------------------------------------------------------- loading and speed


def test_a_missing_or_invalid_tokenizer_file_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "nope" / "tokenizer.json"
    with pytest.raises(ValueError, match=re.escape(str(missing))):
        get_strategy("structural", unit=f"tokenizer:{missing}")
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"not": "a tokenizer"}', encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(bad)) + ".*not a valid tokenizer.json"):
        count_tokens("some text", f"tokenizer:{bad}")


def test_a_tokenizer_is_loaded_once_per_path(trained):
    path = trained["bpe"].removeprefix("tokenizer:")
    assert get_tokenizer(path) is get_tokenizer(path) is tokenizer_for(trained["bpe"])


def test_packing_encodes_the_document_once_not_every_candidate(trained, monkeypatch):
    """One encoding of the whole document measures every candidate; each chunk is encoded once more, to check
    it."""
    import chunklab.units as units

    unit = trained["bpe"]
    real = tokenizer_for(unit)
    calls: list[int] = []

    class Counting:
        def encode(self, text, add_special_tokens=False):
            calls.append(len(text))
            return real.encode(text, add_special_tokens=add_special_tokens)

    monkeypatch.setattr(units, "get_tokenizer", lambda path=None: Counting())
    md = "# Doc\n\n" + "\n\n".join("short paragraph here. " * (i % 4 + 1) for i in range(600))
    chunks = get_strategy("structural", max_chars=2000, unit=unit)(Document("d.md", md, None, "markdown"))
    assert 5 * len(chunks) < 600  # each chunk holds many of the 600 paragraphs, each one a candidate
    assert len(calls) <= len(chunks) + 1
    assert calls[0] == len(md)


def test_unit_index_slice_counts_what_the_whole_counts(trained):
    text = "alpha beta,gamma delta epsilon zeta"
    idx = UnitIndex(text, trained["bytelevel"])
    part = idx.slice(8, 27)
    for s in range(0, 19):
        for e in range(s + 1, 20):
            assert part.count(s, e) == idx.count(8 + s, 8 + e)


# ---------------------------------------------------------------- the command line


GUIDE = (
    "# Setup\n\n"
    "Install the tool with pip and run it once.\n\n"
    "Then open the settings page and pick a port.\n\n"
    "Restart the server after every change to the port.\n"
)
API = "def start(port):\n    return port + 1\n\n\ndef stop(port):\n    return port - 1\n"


@pytest.fixture()
def tiny(tmp_path) -> tuple[Path, Path, Path]:
    """A two-file corpus, two quoted questions, and a word-level tokenizer: a word or a punctuation run is a
    token."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "guide.md").write_text(GUIDE, encoding="utf-8")
    (corpus / "api.py").write_text(API, encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps(
            {"question": "How do I install it?", "doc": "guide.md", "answer": "Install the tool with pip"}
        )
        + "\n"
        + json.dumps({"question": "How do I stop?", "doc": "api.py", "answer": "return port - 1"})
        + "\n",
        encoding="utf-8",
    )
    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return corpus, questions, path


def test_evaluate_with_a_tokenizer_sizes_every_strategy_in_its_tokens(tiny, tmp_path, monkeypatch):
    from chunklab.cli import main

    monkeypatch.setenv("CHUNKLAB_CACHE", str(tmp_path / "cache"))
    corpus, questions, tokenizer = tiny
    # guide.md in words and punctuation: "# Setup" 2, then three paragraphs of 10 tokens (32 in all);
    # api.py: two functions of 9 tokens ("def", "start", "(", "port", "):", "return", "port", "+", "1").
    # A budget of 22 holds the heading and two paragraphs, and a whole function:
    expected = {
        "structural[max_chars=22,min_chars=0]": 2 + 2,  # [heading, p1, p2], [p3]; one chunk per function
        "paragraphs[max_chars=22,overlap_paragraphs=0]": 2 + 1,  # the same two; both functions (18)
        "recursive[size=22]": 2 + 1,  # cut at the blank line before p3; api.py whole (18)
        # guide: the section and its 3 paragraphs (the heading joins the first); api.py is not
        # Markdown: token levels 2048/512/128, one chunk at each
        "markdown-hierarchy[max_chars=22]": 1 + 3 + 3,
    }
    argv = [
        "evaluate",
        "--corpus",
        str(corpus),
        "--questions",
        str(questions),
        "--strategies",
        "structural:max_chars=22;min_chars=0,paragraphs:max_chars=22;overlap_paragraphs=0,recursive:size=22,"
        "markdown-hierarchy:max_chars=22",
        "--tokenizer",
        str(tokenizer),
        "--k",
        "2",
        "--resamples",
        "50",
        "--no-progress",
        "--out",
        str(tmp_path / "out"),
    ]
    assert main(argv) == 0
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    chunks = {row["strategy"]: row["chunks"] for row in data["summary"]}
    assert {k: chunks[k] for k in expected} == expected
    unit = f"tokenizer:{tokenizer.resolve()}"
    assert {data["strategies"][k]["unit"] for k in expected} == {unit}
    assert main([*argv[:-2], "--tokenizer", str(tmp_path / "missing.json")]) == 2


def test_evaluate_help_no_longer_says_some_strategies_measure_characters(capsys):
    from chunklab.cli import main

    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--tokenizer PATH" in out and "every strategy measures its sizes" in out
    assert "fixed, recursive, hierarchical)" not in out


def test_chunk_command_sizes_structural_chunks_in_tokenizer_tokens(tiny, tmp_path, capsys):
    from chunklab.cli import main

    corpus, _questions, tokenizer = tiny
    out = tmp_path / "chunks.jsonl"
    argv = [
        "chunk",
        str(corpus),
        "--strategy",
        "structural",
        "--size",
        "22",
        "--min-chars",
        "0",
        "--unit",
        f"tokenizer:{tokenizer}",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4
    assert all(row["metadata"]["params"]["unit"] == f"tokenizer:{tokenizer}" for row in rows)
