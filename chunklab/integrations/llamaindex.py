"""LlamaIndex adapters: every catalog strategy as a ``NodeParser``, the local model as an embedding.

Two lines for a LlamaIndex user::

    parser = ChunklabNodeParser("hierarchical", levels="2048/512/128")
    nodes = parser.get_nodes_from_documents(SimpleDirectoryReader("docs/").load_data())

``start_char_idx``/``end_char_idx`` are the offsets the chunker computed (LlamaIndex's own
post-processing finds them again with ``str.find``, which misplaces repeated passages and
interleaved levels: this parser keeps its own), node ids are chunklab's stable chunk ids, and
the hierarchical strategies give PARENT/CHILD relationships, so ``get_leaf_nodes`` and
LlamaIndex's auto-merging retriever work on them. Only the chunk's text is embedded: chunklab's
metadata is excluded from the embedding and LLM views.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.node_parser import NodeParser
from llama_index.core.schema import BaseNode, Document, MetadataMode, NodeRelationship, TextNode
from llama_index.core.utils import get_tqdm_iterable

from chunklab.chunk import Chunk
from chunklab.chunkers.catalog import Strategy
from chunklab.embed import DEFAULT_MODEL
from chunklab.integrations._core import build_strategy, chunk_metadata, chunk_text
from chunklab.protocols import EncoderLike

__all__ = ["ChunklabEmbedding", "ChunklabNodeParser"]


class ChunklabNodeParser(NodeParser):
    """A chunklab strategy (``"recursive"``, ``"structural"``, ``"hierarchical"``, …) as a LlamaIndex parser.

    ``params`` are the strategy's own, validated by the catalog; ``format`` forces the document
    format, else it is detected from the node's ``file_path``/``source`` metadata.
    """

    format: str | None = None
    strategy_name: str = "recursive"
    _strategy: Strategy = PrivateAttr()
    _encoder: EncoderLike | None = PrivateAttr(default=None)

    def __init__(
        self,
        strategy: str | Strategy = "recursive",
        *,
        format: str | None = None,
        encoder: EncoderLike | None = None,
        **params: object,
    ) -> None:
        built = build_strategy(strategy, params)
        super().__init__()
        self.format = format
        self.strategy_name = built.name
        self._strategy = built
        self._encoder = encoder

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serializes this component under."""
        return "ChunklabNodeParser"

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: object
    ) -> list[BaseNode]:
        out: list[BaseNode] = []
        for node in get_tqdm_iterable(nodes, show_progress, "Chunking"):
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            doc_id = str(node.ref_doc_id or node.node_id)
            chunks = chunk_text(
                self._strategy,
                text,
                doc_id=doc_id,
                metadata=node.metadata,
                format=self.format,
                encoder=self._encoder,
            )
            out.extend(_nodes_for(chunks, node))
        return out

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]
    ) -> list[BaseNode]:
        """LlamaIndex's metadata and prev/next links, with the chunker's offsets kept (not searched for)."""
        spans = {n.node_id: (n.start_char_idx, n.end_char_idx) for n in nodes if isinstance(n, TextNode)}
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        for n in nodes:
            if isinstance(n, TextNode) and n.node_id in spans:
                n.start_char_idx, n.end_char_idx = spans[n.node_id]
        return nodes


def _nodes_for(chunks: list[Chunk], source: BaseNode) -> list[TextNode]:
    """One ``TextNode`` per chunk, with SOURCE and (for hierarchies) PARENT/CHILD relationships."""
    nodes: dict[str, TextNode] = {}
    for chunk in chunks:
        meta = chunk_metadata(chunk)
        node = TextNode(
            id_=chunk.id,
            text=chunk.text,
            start_char_idx=chunk.start,
            end_char_idx=chunk.end,
            metadata=meta,
            excluded_embed_metadata_keys=list(meta),
            excluded_llm_metadata_keys=list(meta),
        )
        node.relationships[NodeRelationship.SOURCE] = source.as_related_node_info()
        nodes[chunk.id] = node
    for chunk in chunks:
        parent = nodes.get(str(chunk.metadata.get("parent_id") or ""))
        if parent is None:
            continue
        child = nodes[chunk.id]
        child.relationships[NodeRelationship.PARENT] = parent.as_related_node_info()
        siblings = parent.relationships.get(NodeRelationship.CHILD) or []
        parent.relationships[NodeRelationship.CHILD] = [*siblings, child.as_related_node_info()]
    return list(nodes.values())


class ChunklabEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model over chunklab's local encoder (MiniLM or static), cached on disk."""

    _encoder: EncoderLike = PrivateAttr()

    def __init__(
        self, model: str = DEFAULT_MODEL, *, encoder: EncoderLike | None = None, **kwargs: Any
    ) -> None:
        super().__init__(model_name=f"chunklab-{model}", **kwargs)
        if encoder is None:
            from chunklab.embed import get_encoder

            encoder = get_encoder(model)
        self._encoder = encoder

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serializes this component under."""
        return "ChunklabEmbedding"

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [row.tolist() for row in self._encoder.encode(list(texts), show_progress=False)]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embedding(text)
