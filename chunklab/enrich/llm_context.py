"""Contextual retrieval (Anthropic, 2024): a short model-written context per chunk, for embedding and BM25.

The enrich step's second kind of context, beside :func:`chunklab.enrich.context.add_context`'s
title and section path. For each chunk the local model (:func:`chunklab.generate.get_generator`,
cached on disk) reads an excerpt of the document and the chunk, and writes one or two sentences
that situate the chunk. :func:`add_llm_context` puts them in ``metadata["context"]`` (after the
title and section path, when ``with_title``), which :func:`chunklab.chunk.embedding_text` puts in
front of the text for the vector index and BM25. ``text`` and the offsets are never touched: what
is shown and cited stays the exact source slice.

The document excerpt rule (a 135M model on a CPU cannot read a whole document per chunk): the
whole document when it holds at most ``doc_chars`` characters; else its first ``doc_chars // 2``
characters (the title and opening that say what it is about) and the ``doc_chars // 2`` characters
just before the chunk, joined by ``"[...]"``. The chunk itself is shown up to :data:`CHUNK_CHARS`.
An answer that is empty after :func:`clean_context` falls back to the title context; the fallback
is counted (:class:`ContextStats`) and the chunk's ``metadata["context_from"]`` says ``"fallback"``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from chunklab._validate import check_bool, check_positive_int, check_text
from chunklab.chunk import Chunk
from chunklab.enrich.context import TitleArg, add_context
from chunklab.generate import DEFAULT_GENERATOR, resolve_generator
from chunklab.protocols import GeneratorLike

__all__ = [
    "CHUNK_CHARS",
    "CONTEXT_CHARS",
    "CONTEXT_TOKENS",
    "DOC_CHARS",
    "ContextStats",
    "add_llm_context",
    "clean_context",
    "document_excerpt",
    "situate_prompt",
]

#: characters of the document shown with each chunk (see the module's excerpt rule)
DOC_CHARS = 1600
#: characters of the chunk shown (a longer chunk is shown up to here)
CHUNK_CHARS = 1200
#: tokens the model may write for one context
CONTEXT_TOKENS = 48
#: a context is cut to at most this many characters (at a word boundary)
CONTEXT_CHARS = 300

_LABEL = re.compile(
    r"(?i)^\W*(?:context|succinct context|answer|here is (?:the|a) (?:succinct )?context)\s*:?\s*"
)
_TAGS = re.compile(r"</?\s*(?:chunk|document)\s*>", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"\w")
_QUOTES = "\"'“”‘’«»`"


@dataclass
class ContextStats:
    """Counters of contextual retrieval: ``prompts`` asked, ``fallbacks`` (answers empty after cleaning)."""

    prompts: int = 0
    fallbacks: int = 0

    @property
    def fallback_share(self) -> float:
        """The share of answers that could not be used (0.0 without prompts)."""
        return self.fallbacks / self.prompts if self.prompts else 0.0

    def as_dict(self) -> dict[str, object]:
        """The counts as JSON-ready values."""
        return {"prompts": self.prompts, "fallbacks": self.fallbacks, "fallback_share": self.fallback_share}


def add_llm_context(
    chunks: Iterable[Chunk],
    source: str,
    *,
    title: TitleArg = None,
    with_title: bool = True,
    markdown: bool = False,
    model: str = DEFAULT_GENERATOR,
    generator: GeneratorLike | None = None,
    doc_chars: int = DOC_CHARS,
    max_new_tokens: int = CONTEXT_TOKENS,
    stats: ContextStats | None = None,
) -> list[Chunk]:
    """Copies of ``chunks`` (all of one document, ``source``) with a model-written ``metadata["context"]``.

    ``metadata["context"]`` is ``"{title > section path}\\n{model context}"`` (only the model's
    when ``with_title`` is False or there is no title context); ``metadata["llm_context"]`` is
    the model's context alone and ``metadata["context_from"]`` is ``"llm"`` or ``"fallback"``.
    ``title`` and ``markdown`` (read the section path from ``source``'s headings) are as for
    :func:`~chunklab.enrich.context.add_context`. ``generator`` answers (default: the shared
    generator of ``model``); ``stats`` gets this call's counts added. Offsets and text are kept.
    """
    source = check_text(source, "source")
    with_title = check_bool(with_title, "with_title")
    doc_chars = check_positive_int(doc_chars, "doc_chars")
    max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
    titled = add_context(chunks, title, source=source if markdown else None)
    for c in titled:
        if c.end > len(source):
            raise ValueError(
                f"source must be the chunks' document: chunk {c.start}:{c.end} of {c.doc_id!r} "
                f"ends past its {len(source)} characters"
            )
    gen = resolve_generator(generator, model)
    prompts = [situate_prompt(document_excerpt(source, c.start, doc_chars), c.text) for c in titled]
    answers = gen.generate(prompts, max_new_tokens=max_new_tokens, stop=("\n\n",)) if prompts else []
    out = []
    local = ContextStats(prompts=len(prompts))
    for c, answer in zip(titled, answers, strict=True):
        written = clean_context(answer)
        head = str(c.metadata.get("context", "")) if with_title else ""
        if not written:
            local.fallbacks += 1
        context = "\n".join(part for part in (head, written) if part)
        meta = {k: v for k, v in c.metadata.items() if k != "context"}
        meta.update(
            llm_context=written, context_from="llm" if written else "fallback", context_model=gen.name
        )
        if context:
            meta["context"] = context
        out.append(Chunk(c.text, c.start, c.end, c.doc_id, meta))
    if stats is not None:
        stats.prompts += local.prompts
        stats.fallbacks += local.fallbacks
    return out


def situate_prompt(excerpt: str, chunk: str) -> str:
    """The request for one chunk's context (Anthropic's contextual-retrieval prompt, shortened)."""
    shown = chunk if len(chunk) <= CHUNK_CHARS else chunk[:CHUNK_CHARS] + " [...]"
    return (
        f"<document>\n{excerpt}\n</document>\n"
        f"Here is a chunk of that document:\n<chunk>\n{shown}\n</chunk>\n"
        "Write one short sentence that situates this chunk within the document, to improve search "
        "retrieval of the chunk. Answer only with that sentence."
    )


def document_excerpt(source: str, start: int, doc_chars: int = DOC_CHARS) -> str:
    """What of ``source`` the model reads for the chunk starting at ``start`` (the module's excerpt rule)."""
    doc_chars = check_positive_int(doc_chars, "doc_chars")
    if len(source) <= doc_chars:
        return source
    half = doc_chars // 2
    head = source[:half]
    before_from = max(half, start - (doc_chars - half))
    before = source[before_from:start]
    return f"{head}\n[...]\n{before}" if before_from > half else head + before


def clean_context(answer: object) -> str:
    """A model's context answer made usable: its first paragraph without a label, quotes or echoed
    ``<chunk>``/``<document>`` tags, on one line, within :data:`CONTEXT_CHARS` (cut at a word
    boundary); ``""`` when nothing with a letter or digit is left.
    """
    text = unicodedata.normalize("NFC", answer if isinstance(answer, str) else "").strip()
    text = text.split("\n\n", 1)[0]
    text = _LABEL.sub("", _TAGS.sub(" ", text))
    text = _SPACES.sub(" ", text).strip().strip(_QUOTES).strip()
    if len(text) > CONTEXT_CHARS:
        cut = text.rfind(" ", 0, CONTEXT_CHARS + 1)
        text = text[: cut if cut > 0 else CONTEXT_CHARS].rstrip()
    return text if _WORD.search(text) else ""
