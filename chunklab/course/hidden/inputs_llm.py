"""Fresh inputs for exercise 10-llm's hidden checks, drawn from recorded answers of the real model.

:data:`RECORDING` holds what SmolLM2-135M-Instruct (the kit's packaged model) answered to the
kit's own prompts about paragraphs of the docs corpus (``scripts/record_llm_exercise.py`` wrote
it once): boundary answers about windows of numbered paragraphs, and propositions answers about
single passages. The hidden inputs are those answers, picked by a seeded RNG, and variants of
them a model gives too (the window shorter, so a number falls out of range; prose around the
answer; a quote of a paragraph with its case and spaces changed; several numbers), so nothing
runs the model and a function written for the notebook's visible answers alone fails them.
Each ``*_inputs(rng)`` returns ``(kind, kwargs)`` pairs, as :mod:`chunklab.course.hidden.inputs`.
"""

from __future__ import annotations

import functools
import json
import random
import re
from pathlib import Path
from typing import Any

from chunklab.chunkers.llm.parse import parse_propositions

__all__ = ["RECORDING", "alignment_inputs", "boundary_inputs", "load_recording"]

#: the recorded answers the exercise and its hidden checks read
RECORDING = Path(__file__).resolve().parents[2] / "data" / "recorded" / "smollm2-135m-exercise.json"

Cases = list[tuple[str, dict[str, Any]]]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NAMES_ONE = re.compile(r"^\W*1(?!\d)|(?i:paragraph)\s*1(?!\d)")


@functools.cache
def _recording() -> str:
    return RECORDING.read_text(encoding="utf-8")


def load_recording() -> dict[str, Any]:
    """The recording: ``{"model", "boundaries": [{"doc", "units", "answer"}], "propositions":
    [{"doc", "passage", "answer"}]}`` (a fresh copy each call)."""
    data: dict[str, Any] = json.loads(_recording())
    return data


def _respace(rng: random.Random, text: str) -> str:
    """``text`` with its case changed and some single spaces doubled or made line breaks."""
    text = rng.choice([str.lower, str.upper, str.capitalize, lambda s: s])(text)
    return "".join(rng.choice([" ", " ", "  ", "\n"]) if ch == " " else ch for ch in text)


def boundary_inputs(rng: random.Random) -> Cases:
    """Recorded boundary answers and their windows, as recorded and varied (see the module's docstring)."""
    windows = load_recording()["boundaries"]
    picked = rng.sample(windows, 8)
    cases: Cases = [("a recorded answer", {"answer": w["answer"], "units": w["units"]}) for w in picked[:4]]
    for w in picked[4:6]:
        keep = rng.randint(2, max(2, len(w["units"]) - 1))
        cases.append(
            ("a recorded answer about a shorter window", {"answer": w["answer"], "units": w["units"][:keep]})
        )
    w = picked[6]
    before = rng.choice(["Sure! ", "I think ", "Answer: ", "Based on the text, "])
    cases.append(
        (
            "a recorded answer with prose around it",
            {"answer": f"{before}{w['answer']} Thanks.", "units": w["units"]},
        )
    )
    w = picked[7]
    n = len(w["units"])
    cases.append(
        (
            "several numbers",
            {"answer": f"Paragraph {rng.randint(n + 1, 40)} or {rng.randint(2, n)}", "units": w["units"]},
        )
    )
    for w in rng.sample(windows, 3):
        which = rng.randrange(len(w["units"]))  # 0: paragraph 1, which cannot start a chunk
        sentences = [s for s in _SENTENCE_END.split(w["units"][which]) if len(s) >= 20]
        quote = _respace(rng, rng.choice(sentences or [w["units"][which]]))
        cases.append(("a quote of a paragraph", {"answer": f'"{quote}"', "units": w["units"]}))
    ones = [w for w in windows if _NAMES_ONE.search(w["answer"])]
    if ones:  # "1. 2.", "Paragraph 1: ...": the model names the paragraph that cannot start a chunk
        w = rng.choice(ones)
        cases.append(("an answer naming paragraph 1", {"answer": w["answer"], "units": w["units"]}))
    w = rng.choice(windows)
    cases.append(("no answer", {"answer": rng.choice(["", "  \n", "..."]), "units": w["units"]}))
    cases.append(
        ("a number out of range", {"answer": str(len(w["units"]) + rng.randint(1, 9)), "units": w["units"]})
    )
    return cases


def alignment_inputs(rng: random.Random) -> Cases:
    """Recorded propositions and their passages: as written, respaced, and against another passage."""
    passages = load_recording()["propositions"]
    cases: Cases = []
    for p in rng.sample(passages, 5):
        props = parse_propositions(p["answer"]) or [p["answer"]]
        for prop in rng.sample(props, min(2, len(props))):
            cases.append(("a recorded proposition", {"proposition": prop, "source": p["passage"]}))
        sentences = [x for x in _SENTENCE_END.split(p["answer"].strip()) if x.strip()]
        if len(sentences) > 1:  # the model wrote several statements on one line
            statement = rng.choice(sentences)
            cases.append(
                ("a statement of a recorded answer", {"proposition": statement, "source": p["passage"]})
            )
        cases.append(
            (
                "a recorded proposition respaced",
                {"proposition": _respace(rng, rng.choice(props)), "source": p["passage"]},
            )
        )
    p, q = rng.sample(passages, 2)
    props = parse_propositions(q["answer"]) or [q["answer"]]
    cases.append(
        ("a proposition of another passage", {"proposition": rng.choice(props), "source": p["passage"]})
    )
    both = f"{p['passage']}\n\n{q['passage']}"
    sentence = rng.choice([s for s in _SENTENCE_END.split(q["passage"]) if s.strip()] or [q["passage"]])
    cases.append(
        ("a sentence of the second of two passages", {"proposition": _respace(rng, sentence), "source": both})
    )
    words = p["passage"].split()
    first = rng.randrange(max(1, len(words) - 6))
    phrase = " ".join(words[first : first + rng.randint(3, 6)])
    cases.append(
        (
            "a phrase of the passage with spaces around it",
            {"proposition": f"  {phrase}\n", "source": p["passage"]},
        )
    )
    own = rng.choice([x for x in _SENTENCE_END.split(p["passage"]) if x.strip()] or [p["passage"]])
    cases.append(
        ("a sentence of the passage in capitals", {"proposition": own.upper(), "source": p["passage"]})
    )
    cases.append(
        ("no proposition", {"proposition": rng.choice(["", "  ", "-", "1."]), "source": p["passage"]})
    )
    return cases
