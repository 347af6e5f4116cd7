"""Fresh inputs for the hidden checks of the retrieval capstones, 08-code-rag and 09-chroma-checkpoint.

As in :mod:`chunklab.course.hidden.inputs`: ``(kind, kwargs)`` pairs of JSON, drawn from a
seeded RNG; documents, chunks, files and stores are rebuilt on arrival
(:data:`chunklab.course.hidden.CONVERTERS`).
"""

from __future__ import annotations

import random
from typing import Any

from chunklab.course.hidden.inputs import TOPICS, Cases, python_module, random_text

__all__ = [
    "char_recall_inputs",
    "code_file_inputs",
    "corpus_inputs",
    "docstring_inputs",
    "filtered_search_inputs",
    "retrieve_inputs",
    "score_inputs",
]


# ------------------------------------------------------------------------- 09-chroma-checkpoint


def _markdown(rng: random.Random, title: str) -> str:
    """A Markdown document: a title, sections with prose, sometimes a table or a code block."""
    parts = [f"# {title}", random_text(rng, rng.randint(5, 30)).replace("\n", " ")]
    for s in range(rng.randint(1, 5)):
        topic = rng.choice(TOPICS)
        parts.append(f"{'#' * rng.choice([2, 2, 3])} Section {s}: {rng.choice(topic)}")
        for _ in range(rng.randint(1, 4)):
            parts.append(" ".join(rng.choice(topic) for _ in range(rng.randint(10, 90))).capitalize() + ".")
        if rng.random() < 0.3:
            rows = "\n".join(
                f"| {rng.choice(topic)} | {rng.randint(0, 999)} |" for _ in range(rng.randint(1, 6))
            )
            parts.append(f"| item | value |\n| --- | --- |\n{rows}")
        if rng.random() < 0.3:
            parts.append(f"```python\nlimit = {rng.randint(1, 99)}\nprint(limit * {rng.randint(2, 9)})\n```")
    return "\n\n".join(parts) + "\n"


def corpus_inputs(rng: random.Random) -> Cases:
    """Documents (sent as dicts, rebuilt as Documents) for ``chunk_corpus``."""

    def docs(n: int, long: bool = False) -> list[dict[str, Any]]:
        out = []
        for i in range(n):
            title = f"{rng.choice(rng.choice(TOPICS)).title()} notes {rng.randint(0, 999)}"
            text = _markdown(rng, title)
            if long:
                text += "\n\n".join(
                    _markdown(rng, f"Part {j}").replace("# Part", "## Part", 1) for j in range(6)
                )
            out.append(
                {
                    "doc_id": f"doc-{i}-{rng.randint(0, 9999)}",
                    "text": text,
                    "format": "markdown",
                    "title": title,
                }
            )
        return out

    return [
        ("no documents", {"documents": []}),
        ("one document", {"documents": docs(1)}),
        ("a few documents", {"documents": docs(rng.randint(2, 4))}),
        ("a long document (sections over the size limit)", {"documents": docs(1, long=True)}),
    ]


def _store_chunks(rng: random.Random) -> list[dict[str, Any]]:
    """Chunks with document, section and kind metadata, to fill a fresh in-memory store."""
    chunks = []
    for d in range(4):
        doc_id = f"doc-{d}-{rng.randint(0, 999)}"
        start = 0
        for s in range(rng.randint(2, 4)):
            section = f"Section {s}"
            for _ in range(rng.randint(1, 3)):
                kind = rng.choice(["section", "section", "table", "code"])
                topic = rng.choice(TOPICS)
                text = " ".join(rng.choice(topic) for _ in range(rng.randint(6, 40)))
                chunks.append(
                    {
                        "text": text,
                        "start": start,
                        "end": start + len(text),
                        "doc_id": doc_id,
                        "metadata": {"kind": kind, "headings": [f"Doc {d}", section], "title": f"Doc {d}"},
                    }
                )
                start += len(text) + 2
    return chunks


def _query(rng: random.Random) -> str:
    return " ".join(rng.choice(rng.choice(TOPICS)) for _ in range(rng.randint(2, 6)))


def filtered_search_inputs(rng: random.Random) -> Cases:
    """Queries with zero to three metadata conditions over one fresh store (sent as chunks)."""
    chunks = _store_chunks(rng)
    cases: Cases = [("no conditions", {"store": chunks, "query": _query(rng), "k": rng.randint(1, 6)})]
    for kind, keys in (
        ("one condition", 1),
        ("one condition", 1),
        ("two conditions", 2),
        ("three conditions", 3),
    ):
        c = rng.choice(chunks)
        values = {
            "kind": c["metadata"]["kind"],
            "section": c["metadata"]["headings"][-1],
            "doc_id": c["doc_id"],
        }
        conditions = dict(rng.sample(sorted(values.items()), keys))
        cases.append((kind, {"store": chunks, "query": _query(rng), "k": rng.randint(1, 6), **conditions}))
    cases.append(
        (
            "a condition nothing matches",
            {"store": chunks, "query": _query(rng), "k": 3, "kind": "no-such-kind"},
        )
    )
    return cases


def retrieve_inputs(rng: random.Random) -> Cases:
    """Questions and k over one fresh store (sent as chunks)."""
    chunks = _store_chunks(rng)
    cases: Cases = [("the default k", {"store": chunks, "question": _query(rng)})]
    cases += [
        ("a random k", {"store": chunks, "question": _query(rng), "k": rng.randint(1, 12)}) for _ in range(3)
    ]
    return cases


# ------------------------------------------------------------------------- 08-code-rag


def code_file_inputs(rng: random.Random) -> Cases:
    """Generated Python files (sent as source, root and path; written to a file on arrival), size limits."""

    def file(source: str, root: str = "site-packages") -> dict[str, Any]:
        package = f"pkg{rng.randint(0, 999)}"
        relpath = rng.choice(
            [f"{package}/mod{rng.randint(0, 99)}.py", f"{package}/__init__.py", f"{package}.py"]
        )
        return {"source": source, "root": root, "relpath": "os/path.py" if root == "stdlib" else relpath}

    cases = []
    for _ in range(2):
        cases.append(
            (
                "a generated module",
                {
                    "f": file(python_module(rng)),
                    "max_chars": rng.randint(150, 600),
                    "min_chars": rng.randint(20, 120),
                },
            )
        )
    cases.append(("a standard-library file", {"f": file(python_module(rng), "stdlib")}))
    broken = python_module(rng).replace("(x):", "(x:", 1)
    cases.append(
        (
            "a file with a syntax error",
            {"f": file(broken), "max_chars": rng.randint(150, 400), "min_chars": 50},
        )
    )
    cases.append(("an empty file", {"f": file("")}))
    return cases


def char_recall_inputs(rng: random.Random) -> Cases:
    """Retrieved spans and one gold span: apart, overlapping, nested, repeated."""

    def spans(n: int, lo: int, hi: int) -> list[list[int]]:
        out = []
        for _ in range(n):
            s = rng.randint(lo, hi)
            out.append([s, s + rng.randint(1, 150)])
        return out

    cases: Cases = []
    for kind, n in (("nothing retrieved", 0), ("one span", 1), ("overlapping spans", 6), ("many spans", 20)):
        for _ in range(1 if n == 0 else 2):
            gs = rng.randint(0, 400)
            gold = [gs, gs + rng.randint(1, 250)]
            cases.append((kind, {"retrieved": spans(n, max(0, gs - 150), gold[1] + 50), "gold": gold}))
    gs = rng.randint(0, 400)
    gold = [gs, gs + rng.randint(20, 200)]
    cases.append(
        ("repeated and nested spans", {"retrieved": [gold, gold, [gold[0] + 5, gold[1] - 5]], "gold": gold})
    )
    return cases


def docstring_inputs(rng: random.Random) -> Cases:
    """Docstrings for ``docstring_question``: paragraphs, abbreviations, odd whitespace, none at all."""

    def sentence(n: int) -> str:
        words = [rng.choice(rng.choice(TOPICS)) for _ in range(n)]
        return " ".join(words).capitalize() + rng.choice([".", ".", "!", "?"])

    def glue(parts: list[str]) -> str:
        return "".join(p + rng.choice([" ", "  ", "\n    ", "\n"]) for p in parts).strip()

    cases: Cases = [("no docstring", {"docstring": None}), ("a blank docstring", {"docstring": "  \n  "})]
    for _ in range(2):
        cases.append(
            (
                "sentences in one paragraph",
                {"docstring": glue([sentence(rng.randint(2, 9)) for _ in range(3)])},
            )
        )
        first = glue([sentence(rng.randint(4, 9)) for _ in range(2)])
        cases.append(("several paragraphs", {"docstring": first + "\n\n" + glue([sentence(5), sentence(3)])}))
    cases.append(
        ("a sentence shorter than min_words", {"docstring": sentence(rng.randint(1, 3)) + " " + sentence(6)})
    )
    cases.append(
        (
            "abbreviations and version numbers",
            {
                "docstring": f"Use e.g. the {rng.choice(TOPICS[2])} of "
                f"v{rng.randint(1, 9)}.{rng.randint(0, 9)} "
                f"as in the API. {sentence(5)}"
            },
        )
    )
    cases.append(
        (
            "no final stop",
            {"docstring": " ".join(rng.choice(TOPICS[0]) for _ in range(7)), "min_words": rng.randint(1, 8)},
        )
    )
    cases.append(
        (
            "a sentence followed by a quote or digit",
            {"docstring": f'{sentence(5)} "{sentence(4)}" {rng.randint(2, 9)} {sentence(4)}'},
        )
    )
    return cases


def score_inputs(rng: random.Random) -> Cases:
    """Retrieved chunks (sent as dicts) and one gold span for ``score_question``: hits, misses, other
    documents."""

    def chunk(doc_id: str) -> dict[str, Any]:
        start = rng.randint(0, 700)
        text = rng.choice(["x = 1", "def f(:", "pass", "if x:", "return y", "class A:\n    pass"])
        return {"text": text, "start": start, "end": start + rng.randint(1, 250), "doc_id": doc_id}

    cases: Cases = [("nothing retrieved", {"retrieved": [], "doc_id": "d", "gold": [100, 200]})]
    for kind, n in (("a few chunks", 3), ("more chunks than k", 9)):
        for _ in range(2):
            gs = rng.randint(0, 500)
            top = [chunk(rng.choice("dde")) for _ in range(n)]
            cases.append(
                (
                    kind,
                    {
                        "retrieved": top,
                        "doc_id": "d",
                        "gold": [gs, gs + rng.randint(1, 300)],
                        "k": rng.randint(1, 6),
                    },
                )
            )
    gs = rng.randint(0, 300)
    hit = {"text": "x = 1", "start": gs, "end": gs + 50, "doc_id": "d"}
    cases.append(
        (
            "a hit below other chunks",
            {"retrieved": [chunk("e"), chunk("e"), hit], "doc_id": "d", "gold": [gs, gs + 50]},
        )
    )
    gs, ge = rng.randint(50, 300), rng.randint(400, 500)
    spans = sorted([gs - rng.randint(0, 40), gs + rng.randint(1, 100)]) + [
        gs + rng.randint(50, 150),
        ge + rng.randint(0, 30),
    ]
    overlapping = [
        {"text": "pass", "start": s, "end": s + rng.randint(60, 200), "doc_id": "d"} for s in spans
    ]
    cases.append(
        (
            "chunks overlapping each other on the gold span",
            {"retrieved": rng.sample(overlapping, len(overlapping)), "doc_id": "d", "gold": [gs, ge]},
        )
    )
    return cases
