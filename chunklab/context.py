"""Contextual headers: embed each chunk with its document title and section path in front.

:func:`add_context` returns copies of the chunks whose ``metadata["context"]`` holds
``"{title} > {section path}"``; :func:`chunklab.chunk.embedding_text` (the one place that
decides what is embedded) then embeds ``"{context}\\n\\n{text}"``. ``text`` and offsets are
never touched, so what is shown and cited stays the exact source slice.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from chunklab.chunk import Chunk

__all__ = ["add_context", "context_string", "heading_path_at", "markdown_headings"]

_ATX = re.compile(r"^[ \t]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^[ \t]{0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")

TitleArg = str | Mapping[str, str] | Callable[[Chunk], str | None] | None


def add_context(
    chunks: Iterable[Chunk],
    title: TitleArg = None,
    section_key: str = "headings",
    *,
    source: str | None = None,
) -> list[Chunk]:
    """Copies of ``chunks`` with ``metadata["context"] = "{title} > {section path}"``.

    ``title`` is a string for every chunk, a mapping from ``doc_id`` to title, or a function
    of the chunk; when None, the chunk's ``metadata["title"]`` is used, else its ``doc_id``
    (unless that is the placeholder ``"doc"``). The section path is
    ``metadata[section_key]`` (a list of headings, or a string); a chunk that has none but
    whose Markdown ``source`` is given gets the headings in force at its start, so even
    fixed-size or recursive chunks of a Markdown file get their section. Chunks with
    neither title nor section come back unchanged.
    """
    if isinstance(chunks, Chunk):
        raise ValueError("add_context expects a list of Chunk, not a single Chunk")
    if not isinstance(section_key, str):
        raise ValueError(f"section_key must be a str, got {type(section_key).__name__}")
    if source is not None and not isinstance(source, str):
        raise ValueError(f"source must be the Markdown text (str), got {type(source).__name__}")
    heads = markdown_headings(source) if source is not None else None
    out: list[Chunk] = []
    for i, c in enumerate(chunks):
        if not isinstance(c, Chunk):
            raise ValueError(f"add_context: item {i} is {type(c).__name__}, expected Chunk")
        doc_title = _title_for(c, title)
        path = _section_path(c.metadata.get(section_key))
        if not path and heads is not None:
            path = heading_path_at(heads, c.start)
        ctx = context_string(doc_title, path)
        if not ctx:
            out.append(Chunk(c.text, c.start, c.end, c.doc_id, dict(c.metadata)))
            continue
        out.append(Chunk(c.text, c.start, c.end, c.doc_id, {**c.metadata, "context": ctx}))
    return out


def context_string(title: str | None, path: Iterable[str]) -> str:
    """``"title > h1 > h2"`` (a path that already starts with the title does not repeat it)."""
    parts = [str(p).strip() for p in path if str(p).strip()]
    if title and str(title).strip():
        t = str(title).strip()
        if not parts or parts[0] != t:
            parts.insert(0, t)
    return " > ".join(parts)


def _title_for(chunk: Chunk, title: TitleArg) -> str | None:
    if title is None:
        meta_title = chunk.metadata.get("title")
        if meta_title:
            return str(meta_title)
        return chunk.doc_id if chunk.doc_id and chunk.doc_id != "doc" else None
    if isinstance(title, str):
        return title
    if isinstance(title, Mapping):
        value = title.get(chunk.doc_id)
        return str(value) if value else None
    if callable(title):
        value = title(chunk)
        return str(value) if value else None
    raise ValueError(f"title must be a str, a mapping doc_id -> title, or a function; got {type(title).__name__}")


def _section_path(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)]


def markdown_headings(md: str) -> list[tuple[int, int, str]]:
    """``(offset, level, title)`` of every ATX (``#``) and setext heading outside fenced code."""
    if not isinstance(md, str):
        raise ValueError(f"md must be a str, got {type(md).__name__}")
    out: list[tuple[int, int, str]] = []
    fence: str | None = None
    pos = 0
    prev: tuple[int, str] | None = None  # (offset, text) of the previous paragraph line
    n = len(md)
    while pos < n:
        nl = md.find("\n", pos)
        end = n if nl == -1 else nl + 1
        line = md[pos:end].rstrip("\r\n")
        m = _FENCE.match(line)
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            prev = None
        elif m:
            fence = m.group(1)
            prev = None
        elif (h := _ATX.match(line)) is not None:
            out.append((pos, len(h.group(1)), (h.group(2) or "").strip()))
            prev = None
        elif prev is not None and _SETEXT.match(line) and prev[1].strip():
            out.append((prev[0], 1 if line.strip()[0] == "=" else 2, prev[1].strip()))
            prev = None
        else:
            prev = (pos, line) if line.strip() else None
        pos = end
    return out


def heading_path_at(headings: list[tuple[int, int, str]], offset: int) -> list[str]:
    """The section path (outermost first) in force at ``offset``, given :func:`markdown_headings`."""
    i = bisect.bisect_right([h[0] for h in headings], offset)
    stack: list[tuple[int, str]] = []
    for _off, level, title in headings[:i]:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    return [t for _lvl, t in stack if t]
