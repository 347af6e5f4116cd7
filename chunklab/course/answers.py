"""Reading what a graded kernel answered, and the verdict texts made from it.

Every answer comes from the learner's kernel: a user expression may be missing, of any type or
huge; these helpers return None (or a capped text) rather than trust its shape.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from chunklab.course.graded import ANSI
from chunklab.course.hidden import summarize
from chunklab.words import counted

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from chunklab.course.hidden import HiddenCheck
    from chunklab.course.kernel import Execution
    from chunklab.course.results import CheckpointResult

# one-notebook helpers of :mod:`chunklab.course.grader`, private to the course package
__all__ = [
    "_call",
    "_capped",
    "_error_text",
    "_hidden_problem",
    "_hidden_verdicts",
    "_interrupted",
    "_json_value",
    "_value",
    "_weight",
]
_DETAIL_CHARS = 4000  # what is kept of one diff or error text


def _capped(text: str, limit: int = _DETAIL_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def _interrupted(where: str, limit: float) -> str:
    return f"timed out: {where} ran past the {limit:g} s time limit per cell (interrupted; grading went on)"


def _call(func: Callable[..., object], kwargs: Mapping[str, object], summary: str) -> object:
    try:
        # through JSON, as the kernel's answer comes: tuples become lists, keys strings
        return json.loads(json.dumps(summarize(func(**kwargs), summary)))
    except Exception as exc:  # the reference refusing an input is itself the expected verdict
        return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}


def _hidden_problem(got: object, expected: object) -> str:
    if isinstance(got, dict) and isinstance(got.get("refused"), str):
        return f"refused: {got['refused']}"
    if isinstance(got, dict) and "error" in got:
        if isinstance(expected, dict) and "error" in expected:
            mine, theirs = got["error"].split(":")[0], expected["error"].split(":")[0]
            return f"raised {mine} where the reference raises {theirs}"
        return f"raised {got['error']}"
    if isinstance(expected, dict) and "error" in expected:
        return "returned a result where the reference refuses the input"
    if isinstance(got, list) and isinstance(expected, list) and len(got) != len(expected):
        return f"returned {counted(len(got), 'chunk')}, not the reference's number"
    return "returned a different result"


def _value(ex: Execution, key: str) -> object:
    """The value of user expression ``key`` (a Python literal), or None; any other shape is None too."""
    entry = ex.user_expressions.get(key)
    if not isinstance(entry, dict) or entry.get("status") != "ok":
        return None
    data = entry.get("data")
    text = data.get("text/plain") if isinstance(data, dict) else None
    if not isinstance(text, str):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _json_value(ex: Execution, key: str) -> object:
    """User expression ``key`` holding a JSON string, decoded (None when it is anything else)."""
    text = _value(ex, key)
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _weight(cell: NotebookNode) -> float:
    weight = (cell.get("metadata", {}).get("chunklab") or {}).get("weight", 1)
    return float(weight) if isinstance(weight, int | float) and weight > 0 else 1.0


def _error_text(ename: object, evalue: object) -> str:
    """``Name: message`` of a learner's exception: stripped of colour codes, capped (escaped when shown)."""
    ename, evalue = str(ename)[:200], ANSI.sub("", str(evalue)[:2000]).strip()
    return _capped(f"{ename}: {evalue}" if evalue else ename, 600)


def _hidden_verdicts(
    ex: Execution,
    nonce: str,
    cases: Sequence[tuple[str, object]],
    expected: Sequence[object],
    check: HiddenCheck,
    cp: CheckpointResult,
) -> None:
    """Append to ``cp`` one :class:`~chunklab.course.results.HiddenResult` per kind of input, from the
    kernel's answer ``ex`` to a hidden check (anything but one result per input, under ``nonce``, fails)."""
    from chunklab.course.hidden import same
    from chunklab.course.results import HiddenResult

    answer = _json_value(ex, "h")
    got, failure = None, ""
    if isinstance(answer, dict) and answer.get("nonce") == nonce:
        results, shortcuts = answer.get("results"), answer.get("shortcuts") or []
        if isinstance(results, list) and len(results) == len(cases):
            got = results
        if isinstance(shortcuts, list) and shortcuts:
            got, failure = None, _capped("; ".join(str(m) for m in shortcuts[:5]), 600)
        elif answer.get("problem"):
            failure = _capped(f"the kernel could not build the inputs ({answer['problem']})", 600)
        elif got is None:
            failure = "the kernel's answer was not one result per input"
    else:
        entry = ex.user_expressions.get("h")
        if isinstance(entry, dict) and entry.get("status") == "error" and isinstance(entry.get("ename"), str):
            failure = (
                f"the check failed in the kernel: {_error_text(entry['ename'], entry.get('evalue', ''))}"
            )
    kinds: dict[str, list[str]] = {}
    for i, (kind, _) in enumerate(cases):
        problems = kinds.setdefault(kind, [])
        if got is None:
            problems.append(failure or "no result came back")
        elif not same(got[i], expected[i], check.tolerance):
            problems.append(_hidden_problem(got[i], expected[i]))
    for kind, problems in kinds.items():
        cp.hidden.append(
            HiddenResult(f"{check.function} on {kind}", not problems, "; ".join(sorted(set(problems))))
        )
