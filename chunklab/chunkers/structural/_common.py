"""Helpers shared by the structural chunkers: argument checks and the recursive fallback.

Bytes are decoded by :func:`chunklab.documents.decode_bytes`, the one decoder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TypedDict

from chunklab._validate import check_doc_id, check_positive_int
from chunklab.chunk import Chunk
from chunklab.chunkers.recursive import chunk_recursive
from chunklab.text import LineIndex
from chunklab.units import over_budget


def resolve_doc_id(doc_id: object, path: object) -> str:
    """``doc_id`` when given, else the path as a string, else ``"doc"``."""
    if doc_id is not None:
        return check_doc_id(doc_id)
    if path is not None:
        return str(path)
    return "doc"


def check_max_size(max_size: object, name: str = "max_size") -> int:
    """A positive int budget, else ValueError."""
    return check_positive_int(max_size, name)


class OversizeNote(TypedDict, total=False):
    """The metadata of a chunk over its budget: ``oversize`` True and why."""

    oversize: bool
    oversize_reason: str


def retokenized_oversize(text: str, max_size: int, unit: str) -> OversizeNote:
    """Oversize metadata for a chunk over budget only when measured on its own, else ``{}``.

    The structural chunkers measure candidate spans on one :class:`chunklab.units.UnitIndex`
    of the whole document (a bisection, not a re-encoding per candidate); a piece cut out of
    it can count more tokens on its own than it did in place, and then it says so. In
    characters the two measures agree, so nothing is checked.
    """
    if unit == "chars" or not over_budget(text, max_size, unit):
        return {}
    return {"oversize": True, "oversize_reason": "longer on its own than in the document (re-tokenized)"}


def check_source(source: object, name: str) -> str | bytes:
    """``source`` as str or bytes (a bytearray copied to bytes); else a ValueError naming ``name``."""
    if not isinstance(source, (str, bytes, bytearray)):
        raise ValueError(f"{name} must be a str (or bytes), got {type(source).__name__}")
    return bytes(source) if isinstance(source, bytearray) else source


def fallback_chunks(
    text: str,
    max_size: int,
    doc_id: str,
    params: Mapping[str, object],
    reason: str,
    extra: Mapping[str, object] | None = None,
    unit: str = "chars",
) -> list[Chunk]:
    """The recursive chunker, 10% overlap (in ``unit``), each chunk marked ``fallback``.

    ``reason`` says why the structure could not be used (``extra`` adds metadata).
    """
    overlap = max_size // 10
    chunks = chunk_recursive(
        text,
        max_size,
        overlap,
        unit,
        doc_id=doc_id,
        strategy="structural",
    )
    lines = LineIndex(text, universal=True)
    return [
        dataclasses.replace(
            c,
            metadata={
                **c.metadata,
                "params": params,
                "kind": "fallback",
                "fallback": True,
                "fallback_reason": reason,
                "fallback_overlap": overlap,
                "line_start": lines.line_of(c.start),
                "line_end": lines.line_of(max(c.start, c.end - 1)),
                **(extra or {}),
            },
        )
        for c in chunks
    ]
