"""What a graded kernel sends, checked field by field: it is the learner's code talking.

:func:`notebook_output` turns an iopub message's content into a notebook output dict, or
raises :class:`MalformedMessage` (an output whose text is not text, a data bundle that is not
a dict); the other helpers read headers and sizes without trusting their shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Required, TypedDict

__all__ = ["MalformedMessage", "NotebookOutput", "notebook_output"]


class MalformedMessage(ValueError):
    """The kernel sent a message that is not what the Jupyter protocol allows."""


class NotebookOutput(TypedDict, total=False):
    """One output of a code cell as nbformat 4 stores it; which keys it has depends on ``output_type``.

    ``stream``: ``name`` and ``text``; ``error``: ``ename``, ``evalue``, ``traceback``;
    ``display_data`` and ``execute_result``: ``data`` (MIME type -> text) and ``metadata``
    (``execute_result`` also ``execution_count``).
    """

    output_type: Required[str]
    name: str
    text: str
    ename: str
    evalue: str
    traceback: list[str]
    data: dict[str, str]
    metadata: dict[str, object]
    execution_count: int | None


def notebook_output(kind: str, content: Mapping[str, object]) -> NotebookOutput:
    """The notebook output dict of an iopub message, every field checked (:class:`MalformedMessage`)."""
    if kind == "stream":
        name = content.get("name")
        if not isinstance(name, str) or name not in ("stdout", "stderr"):
            raise MalformedMessage(f"a stream named {str(name)[:40]!r}")
        return {"output_type": "stream", "name": name, "text": _text(content.get("text", ""), "stream text")}
    if kind == "error":
        trace = content.get("traceback") or []
        if not isinstance(trace, list):
            raise MalformedMessage("an error whose traceback is not a list")
        return {
            "output_type": "error",
            "ename": _text(content.get("ename", ""), "ename")[:200],
            "evalue": _text(content.get("evalue", ""), "evalue")[:2000],
            "traceback": [_text(t, "traceback line") for t in trace],
        }
    data = content.get("data")
    if not isinstance(data, dict):
        raise MalformedMessage(f"a {kind} whose data is not a dict")
    clean: dict[str, str] = {}
    for mime, value in data.items():
        if not isinstance(mime, str):
            raise MalformedMessage(f"a {kind} with a non-text MIME type")
        if mime.endswith("json") and not isinstance(value, str):
            continue  # JSON payloads are never compared
        clean[mime] = _text(value, f"{kind} {mime[:40]}")
    out: NotebookOutput = {"output_type": kind, "data": clean, "metadata": {}}
    if kind == "execute_result":
        out["execution_count"] = None
    return out


def _dropped(what: str) -> NotebookOutput:
    """The note that stands in for output the grader did not keep."""
    return {"output_type": "stream", "name": "stderr", "text": f"[{what} dropped by the grader]\n"}


def _text(value: object, what: str) -> str:
    """A protocol text field: a str, or a list of str (joined); anything else is malformed."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise MalformedMessage(f"{what} is a {type(value).__name__}, not text")


def _content(msg: object) -> dict[str, object]:
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, dict):
        raise MalformedMessage(
            f"a {str(msg.get('msg_type') if isinstance(msg, dict) else msg)[:40]} message "
            "without a content dict"
        )
    return content


def _parent_id(msg: object) -> object:
    parent = msg.get("parent_header") if isinstance(msg, dict) else None
    return parent.get("msg_id") if isinstance(parent, dict) else None


#: what one kept output costs beyond its text (its dict and fields): an empty message is not free
OUTPUT_OVERHEAD = 64


def _output_size(output: NotebookOutput) -> int:
    """What keeping ``output`` costs toward the output caps: every key and value, and the output itself."""
    if output["output_type"] == "stream":
        return OUTPUT_OVERHEAD + len(output["text"])
    if output["output_type"] == "error":
        return (
            OUTPUT_OVERHEAD
            + len(output["ename"])
            + len(output["evalue"])
            + sum(map(len, output["traceback"]))
        )
    return OUTPUT_OVERHEAD + sum(len(k) + len(v) for k, v in output["data"].items())
