"""Chunk metadata as a flat, filterable record, and ``where`` filters with Chroma's semantics.

:func:`encode_metadata` turns a chunk's metadata into what Chroma stores (the whole dict as
JSON plus scalar copies that filters can see); :func:`decode_metadata` restores it.
:func:`matches` evaluates a ``where`` filter over such a record in Python with the
semantics Chroma applies in :meth:`chunklab.retrieval.chroma.store.ChunkStore.search` (``$ne``/``$nin`` match
records without the key, booleans never equal numbers, ints and floats compare by value),
so the lexical index filters exactly like the dense store.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from chunklab.chunk import Chunk
from chunklab.protocols import Hit

__all__ = [
    "META_KEY",
    "BatchRetriever",
    "check_queries",
    "check_query",
    "check_where",
    "chunk_fingerprint",
    "chunk_from_stored",
    "decode_metadata",
    "encode_metadata",
    "fingerprint",
    "json_default",
    "matches",
    "metadata_json",
]

META_KEY = "chunklab_meta"  # the whole metadata dict, JSON: restored exactly on the way out
_RESERVED = {"doc_id", "start", "end", META_KEY, "section", "headings_path"}
_INT64 = 2**63 - 1

#: metadata keys that hold lists or dicts: kept in the JSON copy only, so not filterable
_NOT_FILTERABLE = {
    "headings": "filter on 'section' (the last heading) or 'headings_path' (\"A > B\") instead",
    "params": "strategy parameters are not filterable; filter on 'strategy'",
    "child_ids": "use get_parent / ChunkStore.get instead",
}


def encode_metadata(chunk: Chunk) -> dict[str, str | int | float | bool]:
    """Chroma metadata for ``chunk``: the whole metadata as JSON plus queryable scalar copies.

    Scalar top-level keys (str, int, float, bool) are copied as they are so ``where``
    filters work on them; ``headings`` also gives ``section`` (the last heading) and
    ``headings_path`` (the path joined with " > "). Lists, dicts and None survive in the
    JSON copy, which is what :func:`decode_metadata` restores.
    """
    meta = chunk.metadata
    out: dict[str, str | int | float | bool] = {
        "doc_id": chunk.doc_id,
        "start": chunk.start,
        "end": chunk.end,
        META_KEY: json.dumps(meta, ensure_ascii=False, default=json_default),
    }
    for key, value in meta.items():
        if not isinstance(key, str) or key in _RESERVED or not key:
            continue
        if isinstance(value, bool) or isinstance(value, str):
            out[key] = value
        elif isinstance(value, int) and abs(value) <= _INT64:
            out[key] = value
        elif isinstance(value, float) and math.isfinite(value):
            out[key] = value
    headings = meta.get("headings")
    if isinstance(headings, (list, tuple)) and headings:
        out["section"] = str(headings[-1])
        out["headings_path"] = " > ".join(str(h) for h in headings)
    elif isinstance(headings, str) and headings:
        out["section"] = headings
        out["headings_path"] = headings
    return out


def decode_metadata(stored: Mapping[str, Any]) -> tuple[str, int, int, dict[str, Any]]:
    """``(doc_id, start, end, metadata)`` back from what :func:`encode_metadata` wrote."""
    raw = stored.get(META_KEY)
    if raw is not None:
        meta = json.loads(raw)
    else:  # written by something else: keep its scalar keys
        meta = {k: v for k, v in stored.items() if k not in _RESERVED}
    return str(stored.get("doc_id", "doc")), int(stored.get("start", 0)), int(stored.get("end", 0)), meta


def chunk_from_stored(document: str | None, stored: Mapping[str, Any] | None) -> Chunk:
    """The chunk back from its stored text and :func:`encode_metadata` record."""
    doc_id, start, end, meta = decode_metadata(stored or {})
    return Chunk(document or "", start, end, doc_id, meta)


def metadata_json(metadata: Mapping[str, object]) -> str:
    """A chunk's metadata as canonical JSON (sorted keys): how rows carry it and fingerprints hash it."""
    return json.dumps(metadata, ensure_ascii=False, sort_keys=True, default=json_default)


def fingerprint(chunk_id: str, text: str, metadata: str) -> int:
    """A 64-bit hash of a chunk's id, text and canonical metadata JSON: equal means "stored as it is"."""
    data = "\0".join((chunk_id, text, metadata)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def chunk_fingerprint(chunk: Chunk) -> int:
    """The :func:`fingerprint` of a :class:`~chunklab.chunk.Chunk` (its id, text and metadata)."""
    return fingerprint(chunk.id, chunk.text, metadata_json(chunk.metadata))


class BatchRetriever:
    """Base of the retrievers that write :meth:`search_many`: :meth:`search` is that of one query."""

    def search_many(
        self, queries: Sequence[str], k: int = 5, where: Mapping[str, Any] | None = None
    ) -> list[list[Hit]]:
        """The ``k`` best ``(chunk, score)`` pairs for each query, best first (each retriever's own)."""
        raise NotImplementedError

    def search(self, query: str, k: int = 5, where: Mapping[str, Any] | None = None) -> list[Hit]:
        """The ``k`` best ``(chunk, score)`` pairs for ``query``, best first: :meth:`search_many` of one."""
        return self.search_many([check_query(query)], k=k, where=where)[0]


def check_query(query: object) -> str:
    """``query`` when it is a non-empty string, else a ValueError (every search takes one)."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query must be a non-empty string, got {query!r}")
    return query


def check_queries(queries: Iterable[str]) -> list[str]:
    """``queries`` as a list of strings (a single string is refused: pass ``[query]``)."""
    if isinstance(queries, str):
        raise ValueError("search_many expects a list of query strings, not a single string")
    return list(queries)


def check_where(where: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Validate a ``where`` filter as Chroma does, with chunklab's own hints; it as a dict (or None)."""
    if where is None:
        return None
    if not isinstance(where, Mapping):
        raise ValueError(f"where must be a dict (a Chroma metadata filter), got {type(where).__name__}")
    if not where:
        return None
    _check_where_keys(where)
    from chromadb.api.types import validate_where

    try:
        validate_where(dict(where))
    except ValueError as exc:
        raise ValueError(f"where filter {dict(where)!r} is invalid: {exc}") from exc
    return dict(where)


def matches(where: Mapping[str, Any] | None, record: Mapping[str, Any]) -> bool:
    """Whether the flat ``record`` (as :func:`encode_metadata` writes) passes ``where`` (validated first)."""
    if not where:
        return True
    for key, cond in where.items():
        if key == "$and":
            if not all(matches(part, record) for part in cond):
                return False
        elif key == "$or":
            if not any(matches(part, record) for part in cond):
                return False
        elif not _field_matches(record, key, cond):
            return False
    return True


def _field_matches(record: Mapping[str, Any], key: str, cond: Any) -> bool:
    ((op, operand),) = cond.items() if isinstance(cond, Mapping) else (("$eq", cond),)
    present = key in record
    value = record.get(key)
    if op == "$eq":
        return present and _equal(value, operand)
    if op == "$ne":
        return not (present and _equal(value, operand))
    if op == "$in":
        return present and any(_equal(value, o) for o in operand)
    if op == "$nin":
        return not (present and any(_equal(value, o) for o in operand))
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if not present or isinstance(value, (bool, str)):
            return False
        operand = _as_stored(value, operand)
        return {
            "$gt": value > operand,
            "$gte": value >= operand,
            "$lt": value < operand,
            "$lte": value <= operand,
        }[op]
    if op == "$contains":
        return present and isinstance(value, list) and any(_equal(v, operand) for v in value)
    if op == "$not_contains":
        return not (present and isinstance(value, list) and any(_equal(v, operand) for v in value))
    raise ValueError(f"where: unsupported operator {op!r} on {key!r}")


def _equal(value: object, operand: object) -> bool:
    """Chroma's equality: bools only equal bools, strings only strings, numbers compare by value."""
    if isinstance(value, bool) or isinstance(operand, bool):
        return isinstance(value, bool) and isinstance(operand, bool) and value == operand
    if isinstance(value, str) or isinstance(operand, str):
        return isinstance(value, str) and isinstance(operand, str) and value == operand
    return value == _as_stored(value, operand)


def _as_stored(value: object, operand: Any) -> Any:
    """Chroma compares an integer field with a float operand truncated toward zero (2.5 -> 2, -1.5 -> -1)."""
    if isinstance(value, int) and not isinstance(value, bool) and isinstance(operand, float):
        return int(operand)
    return operand


def _check_where_keys(where: Mapping[str, object]) -> None:
    for key, value in where.items():
        if key in ("$and", "$or") and isinstance(value, list):
            for part in value:
                if isinstance(part, Mapping):
                    _check_where_keys(part)
        elif key in _NOT_FILTERABLE:
            raise ValueError(
                f"where: {key!r} holds a list or dict, which Chroma cannot filter; {_NOT_FILTERABLE[key]}"
            )


def json_default(value: object) -> object:
    """JSON for the values a chunk's metadata or a strategy's parameters may hold (sets, numpy values)."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)
