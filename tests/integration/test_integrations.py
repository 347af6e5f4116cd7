"""The LangChain and LlamaIndex adapters, run inside each framework's own pipeline, offline.

Every catalog strategy goes through each adapter and must give exactly the kit's own chunks
(text, offsets, ids); then LangChain's in-memory vector store and LlamaIndex's ingestion
pipeline + vector index are built with the adapters' embeddings and must retrieve the passage
a question is about.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_text_splitters")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document as LCDocument  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402
from llama_index.core import VectorStoreIndex  # noqa: E402
from llama_index.core.ingestion import IngestionPipeline  # noqa: E402
from llama_index.core.node_parser import get_leaf_nodes  # noqa: E402
from llama_index.core.schema import Document as LIDocument  # noqa: E402
from llama_index.core.schema import NodeRelationship  # noqa: E402

from chunklab.chunkers.catalog import available_strategies, get_strategy  # noqa: E402
from chunklab.documents import Document  # noqa: E402
from chunklab.embed import Encoder  # noqa: E402
from chunklab.generate import RECORDING, REPLAY_PREFIX  # noqa: E402
from chunklab.integrations.langchain import ChunklabEmbeddings, ChunklabTextSplitter  # noqa: E402
from chunklab.integrations.llamaindex import ChunklabEmbedding, ChunklabNodeParser  # noqa: E402

# a repeated paragraph: a splitter that finds offsets by searching puts the second copy at the first
REPEATED = "Restart the scanner with `scanctl restart` and wait for the green light.\n\n"
MARKDOWN = (
    "# Scanner runbook\n\n"
    + REPEATED
    + "## Logs\n\nThe scanner writes its logs to /var/log/scanner, one file per day, kept for a week.\n\n"
    + "## Firmware\n\n"
    + REPEATED
    + "Firmware updates arrive on Tuesdays; never interrupt one, or the scanner must be re-flashed.\n\n"
    + "| code | meaning |\n| --- | --- |\n| E1 | lens dirty |\n| E2 | belt jammed |\n"
) * 3
PYTHON = '''"""Billing helpers."""


def invoice_total(lines):
    """Sum of the invoice lines, tax included."""
    return sum(line.amount * (1 + line.tax) for line in lines)


class Refund:
    """A refund of one invoice."""

    def approve(self, reviewer):
        """Mark the refund approved by ``reviewer``."""
        self.reviewer = reviewer
        return self
'''
SMALL = {
    "fixed": {"size": 120, "overlap": 20},
    "recursive": {"size": 120, "overlap": 20},
    "structural": {"max_chars": 200},
    "semantic": {},
    "hierarchical": {"levels": "120/40"},
    "markdown-hierarchy": {},
    "paragraphs": {},
    "sentences": {"size": 120},
    # the LLM strategies answer from the packaged recording of the model's outputs
    "llm-boundaries": {"max_chars": 200, "model": f"{REPLAY_PREFIX}{RECORDING}"},
    "propositions": {"max_chars": 200, "model": f"{REPLAY_PREFIX}{RECORDING}"},
}


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder("static")


def _params(name: str) -> dict:
    return {key: value for key, value in SMALL.get(name, {}).items() if key in get_strategy(name).params}


def _kit_chunks(name: str, text: str, doc_id: str, kind: str, encoder: Encoder):
    strategy = get_strategy(name, **_params(name))
    return strategy(Document(doc_id=doc_id, text=text, format=kind), encoder=encoder)


@pytest.mark.parametrize("name", available_strategies())
@pytest.mark.parametrize(
    ("text", "source", "kind"), [(MARKDOWN, "runbook.md", "markdown"), (PYTHON, "billing.py", "python")]
)
def test_langchain_splitter_gives_the_kits_chunks_with_exact_start_index(name, text, source, kind, encoder):
    splitter = ChunklabTextSplitter(name, leaves_only=False, encoder=encoder, **_params(name))
    docs = splitter.split_documents(
        [LCDocument(page_content=text, metadata={"source": source, "team": "ops"})]
    )
    expected = _kit_chunks(name, text, source, kind, encoder)
    assert [(d.page_content, d.metadata["start_index"], d.metadata["end_index"]) for d in docs] == [
        (c.text, c.start, c.end) for c in expected
    ]
    assert [d.id for d in docs] == [c.id for c in expected]
    for doc in docs:
        assert text[doc.metadata["start_index"] : doc.metadata["end_index"]] == doc.page_content
        assert doc.metadata["team"] == "ops" and doc.metadata["doc_id"] == source


def test_langchain_start_index_is_exact_for_repeated_passages():
    splitter = ChunklabTextSplitter("recursive", size=90, overlap=0)
    docs = splitter.create_documents([MARKDOWN], [{"source": "runbook.md"}])
    found = sorted(
        {
            d.metadata["start_index"] + d.page_content.index("Restart")
            for d in docs
            if "Restart" in d.page_content
        }
    )
    expected = [i for i in range(len(MARKDOWN)) if MARKDOWN.startswith("Restart the scanner", i)]
    assert found == expected and len(found) == 6


def test_langchain_in_memory_store_retrieves_with_chunklab_embeddings(encoder):
    splitter = ChunklabTextSplitter("structural", max_chars=300)
    docs = splitter.split_documents(
        [
            LCDocument(page_content=MARKDOWN, metadata={"source": "runbook.md"}),
            LCDocument(page_content=PYTHON, metadata={"source": "billing.py"}),
        ]
    )
    store = InMemoryVectorStore.from_documents(docs, ChunklabEmbeddings(encoder=encoder))
    hit = store.similarity_search("where are the scanner logs written?", k=1)[0]
    assert "/var/log/scanner" in hit.page_content
    assert MARKDOWN[hit.metadata["start_index"] : hit.metadata["end_index"]] == hit.page_content
    code_hit = store.similarity_search("approve a refund", k=1)[0]
    assert code_hit.metadata["doc_id"] == "billing.py" and "approve" in code_hit.page_content


@pytest.mark.parametrize("name", available_strategies())
def test_llamaindex_parser_gives_the_kits_chunks_with_exact_char_indices(name, encoder):
    parser = ChunklabNodeParser(name, encoder=encoder, **_params(name))
    document = LIDocument(text=MARKDOWN, metadata={"file_path": "runbook.md"}, id_="runbook")
    nodes = parser.get_nodes_from_documents([document])
    expected = _kit_chunks(name, MARKDOWN, "runbook", "markdown", encoder)
    assert [(n.text, n.start_char_idx, n.end_char_idx, n.node_id) for n in nodes] == [
        (c.text, c.start, c.end, c.id) for c in expected
    ]
    assert all(n.relationships[NodeRelationship.SOURCE].node_id == "runbook" for n in nodes)


def test_llamaindex_hierarchy_links_every_leaf_to_its_parent():
    parser = ChunklabNodeParser("hierarchical", levels="120/40")
    nodes = parser.get_nodes_from_documents([LIDocument(text=MARKDOWN, id_="runbook")])
    by_id = {n.node_id: n for n in nodes}
    leaves = get_leaf_nodes(nodes)
    assert leaves and len(leaves) < len(nodes)
    for leaf in leaves:
        parent = by_id[leaf.relationships[NodeRelationship.PARENT].node_id]
        assert parent.start_char_idx <= leaf.start_char_idx and leaf.end_char_idx <= parent.end_char_idx
        assert leaf.node_id in {c.node_id for c in parent.relationships[NodeRelationship.CHILD]}


def test_llamaindex_ingestion_pipeline_and_vector_index_retrieve(encoder):
    embed = ChunklabEmbedding(encoder=encoder)
    pipeline = IngestionPipeline(transformations=[ChunklabNodeParser("structural", max_chars=300), embed])
    nodes = pipeline.run(
        documents=[LIDocument(text=MARKDOWN, metadata={"file_path": "runbook.md"}, id_="runbook")]
    )
    assert nodes and all(n.embedding is not None and len(n.embedding) == encoder.dim for n in nodes)
    index = VectorStoreIndex(nodes, embed_model=embed)
    hit = index.as_retriever(similarity_top_k=1).retrieve("where are the scanner logs written?")[0].node
    assert "/var/log/scanner" in hit.text
    assert MARKDOWN[hit.start_char_idx : hit.end_char_idx] == hit.text


def test_adapters_refuse_unknown_strategies_and_params_beside_a_built_strategy():
    with pytest.raises(ValueError, match="unknown strategy"):
        ChunklabTextSplitter("no-such-strategy")
    with pytest.raises(ValueError, match="has no parameter"):
        ChunklabNodeParser("recursive", max_levels=3)
    with pytest.raises(ValueError, match="beside a built strategy"):
        ChunklabTextSplitter(get_strategy("recursive"), size=100)
