"""What both adapters share: one text (with the framework's metadata) -> chunklab chunks."""

from __future__ import annotations

from collections.abc import Mapping

from chunklab.chunk import Chunk
from chunklab.chunkers.catalog import Strategy, get_strategy
from chunklab.documents import FORMATS, Document, detect_format
from chunklab.protocols import EncoderLike

#: metadata keys under which the frameworks' loaders keep a document's path
PATH_KEYS = ("source", "file_path", "path")


def build_strategy(strategy: str | Strategy, params: Mapping[str, object]) -> Strategy:
    """A catalog strategy by name and parameters, or an already built one (then ``params`` must be empty)."""
    if isinstance(strategy, Strategy):
        if params:
            raise ValueError(
                f"pass parameters to get_strategy, not beside a built strategy: {sorted(params)}"
            )
        return strategy
    return get_strategy(strategy, **params)


def chunk_text(
    strategy: Strategy,
    text: str,
    *,
    doc_id: str,
    metadata: Mapping[str, object] | None = None,
    format: str | None = None,
    encoder: EncoderLike | None = None,
) -> list[Chunk]:
    """Chunk ``text`` as a document of ``format`` (else detected from a path in ``metadata``, else text).

    Offsets are into ``text`` exactly as the framework holds it; nothing is stripped or searched.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    meta = dict(metadata or {})
    path = next((str(meta[key]) for key in PATH_KEYS if meta.get(key)), None)
    if format is None:
        format = detect_format(path, text[:2048]) if path else "text"
    elif format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    document = Document(doc_id=doc_id, text=text, path=path, format=format)
    if encoder is None and strategy.needs_encoder:  # semantic chunking: the kit's default model
        from chunklab.embed import get_encoder

        encoder = get_encoder()
    return strategy(document, encoder=encoder)


def chunk_metadata(chunk: Chunk) -> dict[str, object]:
    """The chunk's metadata with its span and stable id, as flat keys a framework stores."""
    return {
        **chunk.metadata,
        "doc_id": chunk.doc_id,
        "start_index": chunk.start,
        "end_index": chunk.end,
        "chunk_id": chunk.id,
    }
