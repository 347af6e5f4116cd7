"""LangChain adapters: every catalog strategy as a ``TextSplitter``, the local model as ``Embeddings``.

Two lines for a LangChain user::

    splitter = ChunklabTextSplitter("structural", max_chars=800)
    docs = splitter.split_documents(loader.load())        # start_index exact, metadata kept

Unlike LangChain's own splitters, ``start_index`` is the chunk's offset as the chunker computed
it (never found again by searching the text, which misplaces repeated passages), and every chunk
keeps chunklab's metadata: ``end_index``, ``chunk_id`` (stable: re-indexing upserts), the
headings path, the role (metadata "kind"), and for HTML the visible text with offsets into the markup.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence

from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import Embeddings
from langchain_text_splitters import TextSplitter

from chunklab.chunk import Chunk
from chunklab.chunkers.catalog import Strategy
from chunklab.embed import DEFAULT_MODEL
from chunklab.integrations._core import build_strategy, chunk_metadata, chunk_text
from chunklab.protocols import EncoderLike

__all__ = ["ChunklabEmbeddings", "ChunklabTextSplitter"]


class ChunklabTextSplitter(TextSplitter):
    """A chunklab strategy (``"recursive"``, ``"structural"``, ``"semantic"``, …) as a LangChain splitter.

    ``params`` are the strategy's own (``size``, ``overlap``, ``max_chars``, ``unit``, ``levels``…),
    validated by the catalog. ``format`` forces the document format (``"markdown"``, ``"python"``,
    ``"html"``…); by default it is detected from the ``source`` path in each document's metadata.
    ``leaves_only`` (default) returns only the chunks that get embedded (leaves for hierarchical).
    """

    def __init__(
        self,
        strategy: str | Strategy = "recursive",
        *,
        format: str | None = None,
        leaves_only: bool = True,
        encoder: EncoderLike | None = None,
        **params: object,
    ) -> None:
        built = build_strategy(strategy, params)
        size = int(built.params.get("size") or built.params.get("max_chars") or 4000)
        overlap = int(built.params.get("overlap") or 0)
        super().__init__(chunk_size=size, chunk_overlap=min(overlap, size), add_start_index=True)
        self.strategy = built
        self.format = format
        self.leaves_only = leaves_only
        self.encoder = encoder

    def split_text(self, text: str) -> list[str]:
        """The chunks' texts (what LangChain calls splits)."""
        return [chunk.text for chunk in self._chunks(text, doc_id="text", metadata={})]

    def create_documents(
        self, texts: list[str], metadatas: Sequence[Mapping[str, object]] | None = None
    ) -> list[LCDocument]:
        """One LangChain ``Document`` per chunk, the source's metadata plus chunklab's (exact offsets)."""
        metadatas_ = metadatas or [{} for _ in texts]
        if len(metadatas_) != len(texts):
            raise ValueError(f"got {len(texts)} texts but {len(metadatas_)} metadatas")
        documents = []
        for i, (text, metadata) in enumerate(zip(texts, metadatas_, strict=True)):
            doc_id = str(metadata.get("source") or metadata.get("doc_id") or i)
            for chunk in self._chunks(text, doc_id=doc_id, metadata=metadata):
                meta = {**copy.deepcopy(metadata), **chunk_metadata(chunk)}
                documents.append(LCDocument(page_content=chunk.text, metadata=meta, id=chunk.id))
        return documents

    def split_documents(self, documents: Iterable[LCDocument]) -> list[LCDocument]:
        """Split LangChain documents (their ``page_content``; metadata carried to every chunk)."""
        docs = list(documents)
        return self.create_documents([d.page_content for d in docs], [dict(d.metadata) for d in docs])

    def _chunks(self, text: str, *, doc_id: str, metadata: Mapping[str, object]) -> list[Chunk]:
        chunks = chunk_text(
            self.strategy, text, doc_id=doc_id, metadata=metadata, format=self.format, encoder=self.encoder
        )
        return self.strategy.index_chunks(chunks) if self.leaves_only else chunks


class ChunklabEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over chunklab's local encoder (MiniLM or the static model), cached on disk."""

    def __init__(self, model: str = DEFAULT_MODEL, *, encoder: EncoderLike | None = None) -> None:
        if encoder is None:
            from chunklab.embed import get_encoder

            encoder = get_encoder(model)
        self.encoder = encoder

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for ``texts``, in order."""
        return [row.tolist() for row in self.encoder.encode(list(texts), show_progress=False)]

    def embed_query(self, text: str) -> list[float]:
        """The unit vector of one query."""
        return self.embed_documents([text])[0]
