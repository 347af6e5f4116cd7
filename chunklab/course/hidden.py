"""Hidden checks: the learner's functions on fresh inputs, against the reference's results.

A checkpoint shows a few fixed inputs; a function written for those alone passes it. Each
:class:`HiddenCheck` below names a learner function, generates inputs at grading time from
a per-submission seed, and compares the learner's results (computed in the sandboxed
kernel) with the reference solution's (its own cells, executed in the grader's process).
Expected values are never sent to the kernel. :func:`summarize` turns a result into JSON in
both processes, the same way.
"""

from __future__ import annotations

import contextlib
import io
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HIDDEN", "HiddenCheck", "reference_function", "summarize"]


@dataclass(frozen=True)
class HiddenCheck:
    """Checks of ``function`` attached to checkpoint ``checkpoint``.

    ``inputs(rng)`` yields ``(kind, kwargs)`` pairs (the kind is what feedback names when
    one fails); ``reference_cells`` are the solution cells, in order, that define the
    reference ``function``; ``summary`` says how a result is compared (see :func:`summarize`).
    """

    checkpoint: str
    function: str
    reference_cells: tuple[str, ...]
    inputs: Callable[[random.Random], list[tuple[str, dict[str, Any]]]]
    summary: str = "chunks"


def summarize(value: Any, summary: str) -> Any:
    """A JSON-able summary of a function's result: ``chunks`` -> ``[start, end, kind, text]`` rows."""
    if summary == "chunks":
        return [[c.start, c.end, (c.metadata or {}).get("kind"), c.text] for c in value]
    if summary == "value":
        return value
    if summary == "rounded":
        return _rounded(value)
    raise ValueError(f"summary must be 'chunks', 'value' or 'rounded', got {summary!r}")


def _rounded(value: Any) -> Any:
    """Floats rounded to 6 decimals, recursively (equivalent arithmetic may differ in the last bits)."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


_WORDS = ("the", "chunk", "offsets", "retrieval", "tokenizer", "isn't", "3.14", "naïve", "e-mail", "RAG,",
          "model.", "windows", "overlap", "(sic)", "boundary", "Zürich", "x", "unbelievably", "2026-12-01", "—")


def _text(rng: random.Random, n_words: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n_words)]
    return "".join(w + rng.choice([" ", " ", " ", "\n", "  ", "\n\n"]) for w in words).strip()


def _token_window_inputs(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    cases = [("empty text", {"text": "", "size": 4, "overlap": 1})]
    short = rng.randint(3, 6)
    cases.append(("text shorter than one window", {"text": _text(rng, short), "size": 40, "overlap": 5}))
    for kind, overlap_of in (("no overlap", lambda s: 0), ("overlap", lambda s: rng.randint(1, s - 1)),
                             ("overlap of size - 1", lambda s: s - 1)):
        for _ in range(2):
            size = rng.randint(2, 24)
            cases.append((kind, {"text": _text(rng, rng.randint(20, 160)), "size": size, "overlap": overlap_of(size)}))
    return cases


def _python_module(rng: random.Random, units: tuple[int, int] = (3, 9)) -> str:
    parts = [f'"""Module {rng.randint(0, 999)}."""\nimport os\n']
    for i in range(rng.randint(*units)):
        kind = rng.choice(["def", "def", "class", "const", "decorated"])
        body = "".join(f"    v{j} = {rng.randint(0, 99)} * {j}\n" for j in range(rng.randint(1, 30)))
        if kind == "def":
            parts.append(f"def f{i}(x):\n{body}    return x\n")
        elif kind == "decorated":
            parts.append(f"@staticmethod\ndef g{i}(x):\n{body}    return x\n")
        elif kind == "class":
            parts.append(f"class C{i}:\n    def m(self):\n{body.replace('    ', '        ')}        return self\n")
        else:
            parts.append(f"LIMIT_{i} = {rng.randint(0, 9)}\n")
    return "\n\n".join(parts)


def _python_inputs(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for _ in range(3):
        cases.append(("a generated module", {"source": _python_module(rng), "max_chars": rng.randint(150, 500),
                                             "min_chars": rng.randint(20, 120)}))
    broken = _python_module(rng).replace("(x):", "(x:", 1)
    cases.append(("source with a syntax error", {"source": broken, "max_chars": rng.randint(150, 400), "min_chars": 50}))
    cases.append(("a long module (like the standard library's)", {"source": _python_module(rng, (30, 60)),
                                                                   "max_chars": 1500, "min_chars": 200}))
    cases.append(("a module with one unit over the limit", {"source": _python_module(rng), "max_chars": 120, "min_chars": 0}))
    return cases


def _paragraphs(rng: random.Random) -> tuple[str, list[list[int]]]:
    paras = [_text(rng, rng.randint(1, 40)).replace("\n", " ") for _ in range(rng.randint(1, 14))]
    text, units = "", []
    for p in paras:
        text += rng.choice(["", "\n", "  "]) if not text else rng.choice(["\n\n", "\n\n\n", "\n \n"])
        units.append([len(text), len(text) + len(p)])
        text += p
    return text, units


def _pack_inputs(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for kind, overlap in (("no overlap", 0), ("one unit of overlap", 1), ("two units of overlap", 2)):
        for _ in range(2):
            text, units = _paragraphs(rng)
            longest = max(e - s for s, e in units)
            cases.append((kind, {"text": text, "units": units, "overlap_units": overlap,
                                 "max_chars": rng.randint(longest, longest * 4)}))
    return cases


def _spans(rng: random.Random, n: int) -> list[list[Any]]:
    out = []
    for _ in range(n):
        start = rng.randint(0, 400)
        out.append([rng.choice("dde"), start, start + rng.randint(0, 120)])
    return out


def _span_inputs(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    cases = [("nothing retrieved", {"retrieved": [], "gold": _spans(rng, 1)})]
    for kind, n in (("one retrieved span", 1), ("overlapping retrieved spans", 6), ("many spans, two documents", 15)):
        for _ in range(2):
            cases.append((kind, {"retrieved": _spans(rng, n), "gold": _spans(rng, rng.randint(1, 3))}))
    return cases


def _ids(rng: random.Random, n: int) -> list[str]:
    pool = [f"{rng.getrandbits(48):012x}" for _ in range(max(n, 1) * 2)]
    return rng.sample(pool, n)


def _rrf_inputs(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    shared = _ids(rng, 12)
    cases = [("one ranking", {"rankings": [_ids(rng, rng.randint(1, 8))], "k": rng.randint(1, 90)})]
    for _ in range(2):
        a, b = rng.sample(shared, rng.randint(3, 10)), rng.sample(shared, rng.randint(3, 10))
        cases.append(("two rankings sharing ids", {"rankings": [a, b], "k": rng.randint(1, 90)}))
    a, b = rng.sample(shared, 6), rng.sample(shared, 6)
    cases.append(("k = 0", {"rankings": [a, b], "k": 0}))
    cases.append(("three rankings of different lengths",
                  {"rankings": [rng.sample(shared, n) for n in (2, 7, 12)], "k": rng.randint(1, 90)}))
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


def _merge_inputs(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for kind, ratio in (("ratio 0.5", 0.5), ("a low ratio", 0.25), ("a high ratio", 0.75)):
        for _ in range(2):
            children, leaves = _tree(rng)
            retrieved = rng.sample(leaves, rng.randint(1, len(leaves)))
            cases.append((kind, {"retrieved": retrieved, "children": children, "ratio": ratio}))
    children, leaves = _tree(rng)
    repeats = [rng.choice(leaves) for _ in range(rng.randint(2, 8))]
    cases.append(("repeated ids", {"retrieved": repeats, "children": children, "ratio": 0.5}))
    return cases


#: hidden checks per course notebook (by solution file stem)
HIDDEN: dict[str, list[HiddenCheck]] = {
    "01-fixed": [HiddenCheck("cp-real", "token_windows", ("setup", "token-windows"), _token_window_inputs)],
    "02-recursive": [HiddenCheck("cp-runbook", "pack", ("setup", "pack"), _pack_inputs)],
    "03-structural": [
        HiddenCheck("cp-real", "chunk_code", ("setup", "split-unit", "pack-units", "chunk-code"), _python_inputs)
    ],
    "05-hierarchical": [HiddenCheck("cp-tree", "auto_merge_ids", ("merge",), _merge_inputs, "value")],
    "06-evaluation": [HiddenCheck("cp-spans", "span_metrics", ("setup", "spans"), _span_inputs, "rounded")],
    "07-retrieval": [HiddenCheck("cp-rrf", "rrf", ("rrf",), _rrf_inputs, "value")],
}

_REFERENCES: dict[tuple[str, str], Callable[..., Any]] = {}


def reference_function(reference: Path, check: HiddenCheck) -> Callable[..., Any]:
    """The reference ``check.function``: its solution cells executed here, in the grader's process."""
    from chunklab.course.notebooks import read_notebook

    key = (str(reference), check.function)
    if key not in _REFERENCES:
        cells = {c.get("id"): c for c in read_notebook(reference).cells}
        missing = [cid for cid in check.reference_cells if cid not in cells]
        if missing:
            raise ValueError(f"{reference.name}: hidden check of {check.function} needs cells {missing}")
        namespace: dict[str, Any] = {"__name__": f"reference_{reference.stem.replace('-', '_')}"}
        with contextlib.redirect_stdout(io.StringIO()):
            for cid in check.reference_cells:
                exec(compile(cells[cid].source, f"{reference.name}:{cid}", "exec"), namespace)  # noqa: S102
        _REFERENCES[key] = namespace[check.function]
    return _REFERENCES[key]
