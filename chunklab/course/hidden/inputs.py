"""Fresh inputs for the hidden checks (:mod:`chunklab.course.hidden`), drawn from a seeded RNG.

The capstones' (08-code-rag, 09-chroma-checkpoint) are in :mod:`chunklab.course.hidden.inputs_rag`. Each
``*_inputs(rng)`` returns ``(kind, kwargs)`` pairs: the kind names the input in
feedback, the kwargs are JSON (they travel to the kernel that way; see
:data:`chunklab.course.hidden.CONVERTERS` for arguments rebuilt as arrays, documents or a
store on arrival). Same seed, same inputs.
"""

from __future__ import annotations

import random
from typing import Any

__all__ = [
    "TOPICS",
    "breakpoint_inputs",
    "curve_inputs",
    "merge_inputs",
    "pack_inputs",
    "percentile_inputs",
    "python_inputs",
    "python_module",
    "random_text",
    "rrf_inputs",
    "span_inputs",
    "token_window_inputs",
]

Cases = list[tuple[str, dict[str, Any]]]

_WORDS = (
    "the",
    "chunk",
    "offsets",
    "retrieval",
    "tokenizer",
    "isn't",
    "3.14",
    "naïve",
    "e-mail",
    "RAG,",
    "model.",
    "windows",
    "overlap",
    "(sic)",
    "boundary",
    "Zürich",
    "x",
    "unbelievably",
    "2026-12-01",
    "—",
)


def random_text(rng: random.Random, n_words: int) -> str:
    """``n_words`` words of a mixed vocabulary (punctuation, accents, digits) with varied whitespace."""
    words = [rng.choice(_WORDS) for _ in range(n_words)]
    return "".join(w + rng.choice([" ", " ", " ", "\n", "  ", "\n\n"]) for w in words).strip()


def token_window_inputs(rng: random.Random) -> Cases:
    """Texts, window sizes and overlaps for ``token_windows`` (01): empty, short, with and without overlap."""
    cases = [("empty text", {"text": "", "size": 4, "overlap": 1})]
    short = rng.randint(3, 6)
    cases.append(
        ("text shorter than one window", {"text": random_text(rng, short), "size": 40, "overlap": 5})
    )
    for kind, overlap_of in (
        ("no overlap", lambda s: 0),
        ("overlap", lambda s: rng.randint(1, s - 1)),
        ("overlap of size - 1", lambda s: s - 1),
    ):
        for _ in range(2):
            size = rng.randint(2, 24)
            cases.append(
                (
                    kind,
                    {
                        "text": random_text(rng, rng.randint(20, 160)),
                        "size": size,
                        "overlap": overlap_of(size),
                    },
                )
            )
    return cases


def python_module(
    rng: random.Random, units: tuple[int, int] = (3, 9), body: tuple[int, int] = (1, 30)
) -> str:
    """A module of ``units`` top-level defs, classes, decorated functions and constants, bodies of ``body``
    lines."""
    parts = [f'"""Module {rng.randint(0, 999)}."""\nimport os\n']
    for i in range(rng.randint(*units)):
        kind = rng.choice(["def", "def", "class", "const", "decorated"])
        lines = "".join(f"    v{j} = {rng.randint(0, 99)} * {j}\n" for j in range(rng.randint(*body)))
        if kind == "def":
            parts.append(f"def f{i}(x):\n{lines}    return x\n")
        elif kind == "decorated":
            parts.append(f"@staticmethod\ndef g{i}(x):\n{lines}    return x\n")
        elif kind == "class":
            parts.append(
                f"class C{i}:\n    def m(self):\n{lines.replace('    ', '        ')}        return self\n"
            )
        else:
            parts.append(f"LIMIT_{i} = {rng.randint(0, 9)}\n")
    return "\n\n".join(parts)


def python_inputs(rng: random.Random) -> Cases:
    """Generated Python modules and size limits for ``chunk_python_source`` (03), broken and oversize too."""
    cases = []
    for _ in range(3):
        cases.append(
            (
                "a generated module",
                {
                    "source": python_module(rng),
                    "max_chars": rng.randint(150, 500),
                    "min_chars": rng.randint(20, 120),
                },
            )
        )
    broken = python_module(rng).replace("(x):", "(x:", 1)
    cases.append(
        (
            "source with a syntax error",
            {"source": broken, "max_chars": rng.randint(150, 400), "min_chars": 50},
        )
    )
    cases.append(
        (
            "a long module (like the standard library's)",
            {"source": python_module(rng, (30, 60)), "max_chars": 1500, "min_chars": 200},
        )
    )
    cases.append(
        (
            "a module with one unit over the limit",
            {"source": python_module(rng), "max_chars": 120, "min_chars": 0},
        )
    )
    for _ in range(2):
        cases.append(
            (
                "small units beside nearly full chunks",
                {
                    "source": python_module(rng, (8, 16), (1, 4)),
                    "max_chars": rng.randint(70, 130),
                    "min_chars": rng.randint(40, 69),
                },
            )
        )
    return cases


def _paragraphs(rng: random.Random) -> tuple[str, list[list[int]]]:
    paras = [random_text(rng, rng.randint(1, 40)).replace("\n", " ") for _ in range(rng.randint(1, 14))]
    text, units = "", []
    for p in paras:
        text += rng.choice(["", "\n", "  "]) if not text else rng.choice(["\n\n", "\n\n\n", "\n \n"])
        units.append([len(text), len(text) + len(p)])
        text += p
    return text, units


def pack_inputs(rng: random.Random) -> Cases:
    """Paragraph texts with their unit spans for ``pack`` (02), with zero to two units of overlap."""
    cases = []
    for kind, overlap in (("no overlap", 0), ("one unit of overlap", 1), ("two units of overlap", 2)):
        for _ in range(2):
            text, units = _paragraphs(rng)
            longest = max(e - s for s, e in units)
            cases.append(
                (
                    kind,
                    {
                        "text": text,
                        "units": units,
                        "overlap_units": overlap,
                        "max_chars": rng.randint(longest, longest * 4),
                    },
                )
            )
    return cases


def _spans(rng: random.Random, n: int) -> list[list[Any]]:
    out = []
    for _ in range(n):
        start = rng.randint(0, 400)
        out.append([rng.choice("dde"), start, start + rng.randint(0, 120)])
    return out


def span_inputs(rng: random.Random) -> Cases:
    """Retrieved and gold spans for ``span_metrics`` (06): none, one, overlapping, two documents."""
    cases = [("nothing retrieved", {"retrieved": [], "gold": _spans(rng, 1)})]
    for kind, n in (
        ("one retrieved span", 1),
        ("overlapping retrieved spans", 6),
        ("many spans, two documents", 15),
    ):
        for _ in range(2):
            cases.append((kind, {"retrieved": _spans(rng, n), "gold": _spans(rng, rng.randint(1, 3))}))
    return cases


def _ids(rng: random.Random, n: int) -> list[str]:
    pool = [f"{rng.getrandbits(48):012x}" for _ in range(max(n, 1) * 2)]
    return rng.sample(pool, n)


def rrf_inputs(rng: random.Random) -> Cases:
    """Rankings of random ids for ``rrf`` (07-retrieval): one, sharing ids, k = 0, empty ones."""
    shared = _ids(rng, 12)
    cases = [("one ranking", {"rankings": [_ids(rng, rng.randint(1, 8))], "k": rng.randint(1, 90)})]
    for _ in range(2):
        a, b = rng.sample(shared, rng.randint(3, 10)), rng.sample(shared, rng.randint(3, 10))
        cases.append(("two rankings sharing ids", {"rankings": [a, b], "k": rng.randint(1, 90)}))
    a, b = rng.sample(shared, 6), rng.sample(shared, 6)
    cases.append(("k = 0", {"rankings": [a, b], "k": 0}))
    cases.append(
        (
            "three rankings of different lengths",
            {"rankings": [rng.sample(shared, n) for n in (2, 7, 12)], "k": rng.randint(1, 90)},
        )
    )
    cases.append(("an empty ranking among others", {"rankings": [[], rng.sample(shared, 5)], "k": 60}))
    return cases


def _tree(rng: random.Random) -> tuple[dict[str, list[str]], list[str]]:
    """A random document tree (root > sections > paragraphs) as parent -> children, and its leaves."""
    children: dict[str, list[str]] = {"doc": []}
    leaves: list[str] = []
    for s in range(rng.randint(1, 4)):
        section = f"s{s}"
        children["doc"].append(section)
        kids = [f"{section}/p{p}" for p in range(rng.randint(1, 5))]
        children[section] = kids
        leaves.extend(kids)
    return children, leaves


def merge_inputs(rng: random.Random) -> Cases:
    """Random document trees and retrieved ids for ``auto_merge_ids`` (05)."""
    cases = []
    for kind, ratio in (("ratio 0.5", 0.5), ("a low ratio", 0.25), ("a high ratio", 0.75)):
        for _ in range(2):
            children, leaves = _tree(rng)
            retrieved = rng.sample(leaves, rng.randint(1, len(leaves)))
            cases.append((kind, {"retrieved": retrieved, "children": children, "ratio": ratio}))
    children, leaves = _tree(rng)
    repeats = [rng.choice(leaves) for _ in range(rng.randint(2, 8))]
    cases.append(("repeated ids", {"retrieved": repeats, "children": children, "ratio": 0.5}))
    for _ in range(2):
        children, _ = _tree(rng)
        sections = children["doc"]
        children["doc"] = [*sections, "s-extra"]  # at least two sections, each of at least two paragraphs
        children["s-extra"] = ["s-extra/p0", "s-extra/p1"]
        for section in sections:
            children[section] = (
                children[section] + [f"{section}/p-extra"]
                if len(children[section]) < 2
                else children[section]
            )
        section = rng.choice(children["doc"])
        mixed = [rng.choice(children[section]), section, *rng.sample(children["s-extra"], 1)]
        rng.shuffle(mixed)
        cases.append(
            ("ids retrieved with an ancestor", {"retrieved": mixed, "children": children, "ratio": 0.9})
        )
    return cases


# ------------------------------------------------------------------------- 04-semantic

TOPICS = (
    ("vans", "depot", "mileage", "tyres", "drivers", "fuel", "damage", "insurance"),
    ("invoice", "merchant", "refund", "currency", "ledger", "payment", "webhook", "tax"),
    ("tokenizer", "embedding", "vector", "cosine", "window", "chunk", "index", "query"),
    ("glacier", "valley", "snow", "summit", "trail", "weather", "ridge", "lake"),
)


def _sentences(rng: random.Random, n: int) -> tuple[str, list[list[int]]]:
    """``n`` sentences in runs on a few topics, joined by spaces, and their ``[start, end]`` spans."""
    text, spans = "", []
    topic = rng.choice(TOPICS)
    for _ in range(n):
        if rng.random() < 0.25:
            topic = rng.choice(TOPICS)
        words = [rng.choice(topic) for _ in range(rng.randint(3, 12))]
        sentence = " ".join(words).capitalize() + rng.choice([".", ".", "!", "?"])
        text += " " if text else ""
        spans.append([len(text), len(text) + len(sentence)])
        text += sentence
    return text, spans


def curve_inputs(rng: random.Random) -> Cases:
    """Texts for ``distance_curve``: one sentence, two, and runs of topics with buffers 0-3."""
    cases = []
    for kind, n in (("one sentence", 1), ("two sentences", 2)):
        text, spans = _sentences(rng, n)
        cases.append((kind, {"text": text, "sentences": spans, "buffer_size": rng.randint(0, 3)}))
    for buffer in (0, rng.randint(1, 3), rng.randint(4, 8)):
        text, spans = _sentences(rng, rng.randint(4, 10))
        kind = (
            "a buffer of 0"
            if buffer == 0
            else ("a buffer wider than the text" if buffer > 3 else "a random buffer")
        )
        cases.append((kind, {"text": text, "sentences": spans, "buffer_size": buffer}))
    return cases


def percentile_inputs(rng: random.Random) -> Cases:
    """Distance curves for ``percentile_breakpoints`` (sent as arrays): random, tied, tiny, extreme
    percentiles."""

    def curve(n: int) -> list[float]:
        return [round(rng.random(), 4) for _ in range(n)]

    cases: Cases = [("an empty curve", {"distances": [], "percentile": rng.uniform(1, 99)})]
    for _ in range(2):
        cases.append(("a random curve, default percentile", {"distances": curve(rng.randint(5, 40))}))
        cases.append(
            (
                "a random curve and percentile",
                {"distances": curve(rng.randint(2, 40)), "percentile": round(rng.uniform(0, 100), 2)},
            )
        )
    tied = [rng.choice([0.1, 0.2, 0.5]) for _ in range(rng.randint(6, 20))]
    cases.append(("a curve with ties", {"distances": tied, "percentile": 50}))
    cases.append(("a curve of one gap", {"distances": curve(1), "percentile": rng.uniform(0, 100)}))
    cases.append(
        ("the 0th and 100th percentiles", {"distances": curve(12), "percentile": rng.choice([0, 100])})
    )
    return cases


def breakpoint_inputs(rng: random.Random) -> Cases:
    """Sentences and breakpoints for ``chunks_from_breakpoints``."""
    cases: Cases = []
    text, spans = _sentences(rng, 1)
    cases.append(
        ("a single sentence", {"text": text, "sentences": spans, "breakpoints": [], "doc_id": "one"})
    )
    for kind in (
        "no breakpoints",
        "a breakpoint after every sentence",
        "random breakpoints",
        "random breakpoints",
    ):
        text, spans = _sentences(rng, rng.randint(3, 20))
        gaps = list(range(len(spans) - 1))
        cuts = (
            []
            if kind == "no breakpoints"
            else gaps
            if "every" in kind
            else sorted(rng.sample(gaps, rng.randint(1, len(gaps))))
        )
        cases.append(
            (
                kind,
                {"text": text, "sentences": spans, "breakpoints": cuts, "doc_id": f"d{rng.randint(0, 99)}"},
            )
        )
    return cases
