"""The enrich step, not a chunker: what is added to chunks after chunking and before embedding.

Contextual headers: each chunk is embedded with its document title and section path in front.
:func:`add_context` returns copies of the chunks whose ``metadata["context"]`` holds
``"{title} > {section path}"``; :func:`chunklab.chunk.embedding_text` (the one place that
decides what is embedded) then embeds ``"{context}\\n\\n{text}"``. ``text`` and offsets are
never touched, so what is shown and cited stays the exact source slice. The headings of a
Markdown ``source`` come from :func:`chunklab.text.markdown_headings` (the one scanner).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from chunklab.chunk import Chunk
from chunklab.text import heading_path_at, markdown_headings

__all__ = ["add_context", "context_string", "heading_path_at", "markdown_headings"]

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
    raise ValueError(
        f"title must be a str, a mapping doc_id -> title, or a function; got {type(title).__name__}"
    )


def _section_path(value: object) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)]
