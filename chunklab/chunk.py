"""The Chunk type every chunker returns, stable ids, the contract checker and offset helpers.

``LineIndex`` and ``trim_span`` live in :mod:`chunklab.text` (the one text scanner) and are
importable from here too, as the course notebooks do.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, NotRequired, TypedDict

from chunklab.text import LineIndex, trim_span

__all__ = [
    "Chunk",
    "ChunkRecord",
    "LineIndex",
    "check_chunks",
    "chunk_id",
    "embedding_text",
    "is_leaf",
    "make_chunk",
    "trim_span",
]


class ChunkRecord(TypedDict):
    """A chunk as one JSONL record: what :meth:`Chunk.to_dict` writes and :meth:`Chunk.from_dict` reads."""

    id: NotRequired[str]
    doc_id: NotRequired[str]
    start: int
    end: int
    text: str
    metadata: NotRequired[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a source document located by exact character offsets.

    For plain-text formats (text, Markdown, code) ``source[start:end] == text``.
    For HTML, ``source[start:end]`` is the element's markup and ``text`` its visible text.
    A chunk is built with its final metadata (use ``dataclasses.replace`` for a changed
    copy): its ``id`` (see :func:`chunk_id`) is computed once, on first use, and kept.
    """

    text: str
    start: int
    end: int
    doc_id: str = "doc"
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    _id: str | None = field(default=None, init=False, repr=False, compare=False, hash=False)

    @property
    def id(self) -> str:
        """A stable hash of doc_id, offsets, strategy, its parameters and level (:func:`chunk_id`).

        Hashed once, when first asked for: most chunks of a sweep are never indexed, and
        hashing every chunk at construction would make chunking itself several times slower.
        """
        cached = self._id
        if cached is None:
            meta = self.metadata
            cached = chunk_id(
                self.doc_id, self.start, self.end, meta.get("strategy"), meta.get("params"), meta.get("level")
            )
            object.__setattr__(self, "_id", cached)
        return cached

    @property
    def level(self) -> int | None:
        """Depth in a hierarchy (0 = largest), from ``metadata["level"]``; None outside one."""
        return self.metadata.get("level")

    @property
    def parent_id(self) -> str | None:
        """The id of the parent chunk (``metadata["parent_id"]``); None for roots and flat chunks."""
        return self.metadata.get("parent_id")

    @property
    def role(self) -> str | None:
        """What the chunk is (function, section, table, fallback...), if known.

        Read from ``metadata["kind"]``: stores, ``--where kind=table`` filters and the chapters
        use that key, so the stored key keeps its name.
        """
        return self.metadata.get("kind")

    def __len__(self) -> int:
        return len(self.text)

    @property
    def context(self) -> str:
        """What gets embedded: ``text`` with its title, section path and table header in front."""
        return embedding_text(self)

    def to_dict(self) -> ChunkRecord:
        """A JSON-ready dict (``id`` included) for JSONL output."""
        return {
            "id": self.id,
            "doc_id": self.doc_id,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: ChunkRecord) -> Chunk:
        """Rebuild a chunk written by :meth:`to_dict`."""
        return cls(
            text=data["text"],
            start=int(data["start"]),
            end=int(data["end"]),
            doc_id=data.get("doc_id", "doc"),
            metadata=dict(data.get("metadata") or {}),
        )


_KEY_ENCODER = json.JSONEncoder(sort_keys=True, default=str, ensure_ascii=False)


def chunk_id(
    doc_id: str, start: int, end: int, strategy: object = None, params: object = None, level: object = None
) -> str:
    """A stable id: a hash of doc_id, offsets, strategy, its parameters and hierarchy level.

    Re-chunking the same source with the same parameters gives the same ids, so
    re-indexing is an idempotent upsert.
    """
    key = _KEY_ENCODER.encode([doc_id, start, end, strategy, params, level])
    return hashlib.blake2b(key.encode("utf-8"), digest_size=12).hexdigest()


def is_leaf(chunk: Chunk) -> bool:
    """True for a chunk with no children (``metadata["child_ids"]`` empty): one to embed and search."""
    return not chunk.metadata.get("child_ids")


def make_chunk(source: str, start: int, end: int, doc_id: str, metadata: dict[str, object]) -> Chunk:
    """Build a plain-text chunk whose text is exactly ``source[start:end]``.

    The same chunk as ``Chunk(source[start:end], start, end, doc_id, metadata)`` in half the
    time: the slots are filled directly, not through the frozen dataclass's ``__init__``
    (worth it in a chunker's inner loop, which builds one chunk per few microseconds).
    """
    chunk = _new_chunk(Chunk)
    _set_text(chunk, source[start:end])
    _set_start(chunk, start)
    _set_end(chunk, end)
    _set_doc_id(chunk, doc_id)
    _set_metadata(chunk, metadata)
    _set_id(chunk, None)
    return chunk


_new_chunk = object.__new__
# the slot setters of Chunk's fields, in order (a field added to Chunk fails this unpacking at import)
_set_text, _set_start, _set_end, _set_doc_id, _set_metadata, _set_id = (
    getattr(Chunk, f.name).__set__ for f in fields(Chunk)
)


def embedding_text(chunk: Chunk, *, title: bool = True, headings: bool = True) -> str:
    """The one place that decides what gets embedded for a chunk.

    ``"{title} > {section path}\\n\\n{table header}\\n{text}"``, each part only when the
    chunk's metadata carries it (``title``, ``headings``, ``table_header``) or an explicit
    ``context`` string that a chunker or :func:`chunklab.enrich.context.add_context` put there.
    ``text`` and offsets are never edited.
    """
    meta = chunk.metadata
    if meta.get("context"):
        prefix = str(meta["context"])
    else:
        parts: list[str] = []
        if title and meta.get("title"):
            parts.append(str(meta["title"]))
        if headings and meta.get("headings"):
            path = [str(h) for h in meta["headings"]]
            if parts and path and path[0] == parts[0]:
                path = path[1:]
            parts.extend(path)
        prefix = " > ".join(parts)
    body = chunk.text
    header = meta.get("table_header")
    if header and not body.lstrip().startswith(str(header).strip()):
        body = f"{header}\n{body}"
    return f"{prefix}\n\n{body}" if prefix else body


def check_chunks(
    chunks: Sequence[Chunk],
    source: str,
    *,
    max_size: int | None = None,
    length: Callable[[str], int] | None = None,
    overlap: int = 0,
    html: bool = False,
) -> list[str]:
    """Verify the Chunk contract and return every violation found (empty list: all good).

    Checks, for every chunk: offsets inside the source and ordered; for plain-text formats
    ``source[start:end] == text`` exactly (for HTML, ``text`` must be non-empty visible
    text); no chunk over ``max_size`` by ``length`` unless its metadata says ``oversize``;
    and for the whole list: every non-whitespace character of the source lies inside some
    chunk, and with ``overlap > 0`` consecutive chunks of the same level really share text.
    """
    problems: list[str] = []
    if not isinstance(source, str):
        return [f"source must be str, got {type(source).__name__}"]
    measure = length or len
    n = len(source)
    for i, c in enumerate(chunks):
        if not isinstance(c, Chunk):
            problems.append(f"chunk {i}: not a Chunk ({type(c).__name__})")
            continue
        if not (0 <= c.start <= c.end <= n):
            problems.append(f"chunk {i}: offsets [{c.start}, {c.end}) outside source of length {n}")
            continue
        if not html and source[c.start : c.end] != c.text:
            problems.append(
                f"chunk {i}: text differs from source[{c.start}:{c.end}] "
                f"({c.text[:30]!r} vs {source[c.start : c.start + 30]!r})"
            )
        if not c.text.strip():
            problems.append(f"chunk {i}: empty or whitespace-only text")
        if max_size is not None and not c.metadata.get("oversize"):
            size = measure(c.text)
            if size > max_size:
                problems.append(f"chunk {i}: size {size} > {max_size} and not marked oversize")
    lost = uncovered(chunks, source)
    if lost:
        first = lost[0]
        problems.append(
            f"{sum(e - s for s, e in lost)} non-whitespace characters lost in {len(lost)} spans, "
            f"first at {first[0]}: {source[first[0] : first[1]][:40]!r}"
        )
    if overlap > 0:
        by_level: dict[int | None, list[Chunk]] = {}
        for c in chunks:
            by_level.setdefault(c.level, []).append(c)
        for group in by_level.values():
            ordered = sorted(group, key=lambda c: (c.start, c.end))
            for a, b in zip(ordered, ordered[1:]):
                if b.start >= a.end and not b.metadata.get("no_overlap_reason"):
                    problems.append(f"no overlap between chunks at {a.start}-{a.end} and {b.start}-{b.end}")
    return problems


def uncovered(chunks: Iterable[Chunk], source: str) -> list[tuple[int, int]]:
    """Spans of ``source`` holding non-whitespace characters that no chunk covers."""
    spans = sorted((c.start, c.end) for c in chunks)
    gaps: list[tuple[int, int]] = []
    pos = 0
    for s, e in spans:
        if s > pos:
            gaps.append((pos, s))
        pos = max(pos, e)
    if pos < len(source):
        gaps.append((pos, len(source)))
    out = []
    for s, e in gaps:
        piece = source[s:e]
        if piece.strip():
            ls = len(piece) - len(piece.lstrip())
            rs = len(piece.rstrip())
            out.append((s + ls, s + rs))
    return out
