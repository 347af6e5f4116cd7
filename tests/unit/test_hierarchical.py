"""Hierarchical chunks nest by level; auto-merging returns a parent when most of its children match."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings

from chunklab.chunk import Chunk, check_chunks
from chunklab.chunkers.hierarchical import (
    HierarchicalRetriever,
    auto_merge,
    chunk_hierarchical,
    chunk_markdown_hierarchy,
    leaves,
    retrieve_parents,
)
from chunklab.units import count_tokens
from tests.support.strategies import nasty_text

TEXT = "\n\n".join(
    f"Paragraph {i} talks about subject number {i}. " + "It has a few more words in it. " * (i % 4 + 1)
    for i in range(40)
)

MD = """# Runbook

Intro paragraph for the runbook.

## Restart the service

Stop the workers first.

```bash
systemctl stop worker

systemctl start worker
```

Check the logs afterwards.

## Rotate keys
Rotate the API keys every 90 days.
"""


def _by_level(chunks: list[Chunk]) -> dict[int, list[Chunk]]:
    out: dict[int, list[Chunk]] = {}
    for c in chunks:
        out.setdefault(c.metadata["level"], []).append(c)
    return out


def test_each_level_respects_its_size_and_covers_the_text():
    levels = (300, 80, 25)
    chunks = chunk_hierarchical(TEXT, levels=levels)
    by_level = _by_level(chunks)
    assert sorted(by_level) == [0, 1, 2]
    for level, size in enumerate(levels):
        assert check_chunks(by_level[level], TEXT, max_size=size, length=count_tokens) == []
    assert len(by_level[0]) < len(by_level[1]) < len(by_level[2])


def test_children_lie_inside_their_parent_and_parents_list_their_children():
    chunks = chunk_hierarchical(TEXT, levels=(120, 40), unit="words", doc_id="t")
    by_id = {c.id: c for c in chunks}
    assert len(by_id) == len(chunks)  # ids unique even where a child equals its parent's span
    for c in chunks:
        assert c.metadata["strategy"] == "hierarchical"
        pid = c.metadata["parent_id"]
        if c.metadata["level"] == 0:
            assert pid is None
        else:
            parent = by_id[pid]
            assert parent.metadata["level"] == c.metadata["level"] - 1
            assert parent.start <= c.start < c.end <= parent.end
            assert c.id in parent.metadata["child_ids"]
    for p in chunks:
        for cid in p.metadata.get("child_ids", []):
            assert by_id[cid].metadata["parent_id"] == p.id
    assert {c.id for c in leaves(chunks)} == {c.id for c in chunks if c.metadata["level"] == 1}


@settings(max_examples=100, deadline=None)
@given(nasty_text)
def test_hierarchy_never_loses_text_at_any_level(text):
    chunks = chunk_hierarchical(text, levels=(60, 20), unit="chars")
    for level_chunks in _by_level(chunks).values():
        assert check_chunks(level_chunks, text, max_size=None) == []
    assert bool(chunks) == bool(text.strip())


@pytest.mark.parametrize("levels", [(), (128, 512), (100, 100), ("big",), "512"])
def test_bad_levels_are_value_errors(levels):
    with pytest.raises(ValueError, match="levels"):
        chunk_hierarchical(TEXT, levels=levels)


def test_markdown_sections_are_parents_and_paragraphs_children():
    chunks = chunk_markdown_hierarchy(MD, max_chars=200, doc_id="rb", title="Ops")
    by_level = _by_level(chunks)
    sections = by_level[0]
    assert [s.metadata["headings"] for s in sections] == [
        ["Runbook"],
        ["Runbook", "Restart the service"],
        ["Runbook", "Rotate keys"],
    ]
    restart = sections[1]
    kids = [c for c in by_level[1] if c.metadata["parent_id"] == restart.id]
    assert [k.text.splitlines()[0] for k in kids] == [
        "## Restart the service",
        "```bash",
        "Check the logs afterwards.",
    ]
    assert kids[1].text.endswith("```")  # the fence with a blank line inside stays whole
    assert restart.metadata["child_ids"] == [k.id for k in kids]
    assert check_chunks(by_level[1], MD, max_size=200) == []
    assert check_chunks(sections, MD) == []
    assert all(c.metadata["title"] == "Ops" for c in chunks)


def _family(n_children: int, doc: str = "d", child_ids: bool = True) -> tuple[Chunk, list[Chunk]]:
    parent = Chunk(
        "P" * 10 * n_children, 0, 10 * n_children, doc, {"strategy": "t", "level": 0, "parent_id": None}
    )
    kids = [
        Chunk("c" * 10, 10 * i, 10 * i + 10, doc, {"strategy": "t", "level": 1, "parent_id": parent.id})
        for i in range(n_children)
    ]
    if child_ids:
        parent = dataclasses.replace(parent, metadata={**parent.metadata, "child_ids": [k.id for k in kids]})
    return parent, kids


def test_auto_merge_returns_the_parent_when_more_than_half_its_children_are_retrieved():
    parent, kids = _family(4)
    lookup = {c.id: c for c in [parent, *kids]}
    merged = auto_merge([(kids[0], 0.9), (kids[1], 0.8), (kids[3], 0.4)], lookup)
    assert merged == [(parent, pytest.approx(0.7))]


def test_auto_merge_keeps_the_children_at_exactly_the_ratio():
    parent, kids = _family(4)
    lookup = {c.id: c for c in [parent, *kids]}
    hits = [(kids[0], 0.9), (kids[2], 0.5)]
    assert auto_merge(hits, lookup, ratio=0.5) == hits
    assert auto_merge(hits, lookup, ratio=0.4) == [(parent, pytest.approx(0.7))]


def test_auto_merge_climbs_levels_and_drops_covered_chunks():
    root = Chunk("R" * 40, 0, 40, "d", {"strategy": "t", "level": 0, "parent_id": None})
    mids = [
        Chunk("M" * 20, 20 * i, 20 * i + 20, "d", {"strategy": "t", "level": 1, "parent_id": root.id})
        for i in range(2)
    ]
    root.metadata["child_ids"] = [m.id for m in mids]
    leaves_ = []
    for m in mids:
        kids = [
            Chunk(
                "l" * 10,
                m.start + 10 * j,
                m.start + 10 * j + 10,
                "d",
                {"strategy": "t", "level": 2, "parent_id": m.id},
            )
            for j in range(2)
        ]
        m.metadata["child_ids"] = [k.id for k in kids]
        leaves_.extend(kids)
    other_parent, other_kids = _family(3, doc="e")
    lookup = {c.id: c for c in [root, *mids, *leaves_, other_parent, *other_kids]}
    hits = [(leaves_[0], 0.8), (leaves_[1], 0.6), (leaves_[2], 0.5), (leaves_[3], 0.3), (other_kids[0], 0.95)]
    merged = auto_merge(hits, lookup)
    assert [c.id for c, _ in merged] == [other_kids[0].id, root.id]
    assert merged[1][1] == pytest.approx((0.7 + 0.4) / 2)


def test_auto_merge_counts_children_from_a_plain_chunk_dict_without_child_ids():
    parent, kids = _family(3, child_ids=False)
    lookup = {c.id: c for c in [parent, *kids]}
    assert auto_merge([(kids[0], 1.0), (kids[1], 0.5)], lookup)[0][0] == parent
    assert auto_merge([(kids[0], 1.0)], lookup)[0][0] == kids[0]


def test_retrieve_parents_swaps_leaves_for_parents_with_best_score():
    parent, kids = _family(5)
    lookup = {c.id: c for c in [parent, *kids]}
    orphan = Chunk("x", 99, 100, "z", {"strategy": "t"})
    out = retrieve_parents([(kids[0], 0.3), (kids[4], 0.6), (orphan, 0.5)], lookup)
    assert out == [(parent, 0.6), (orphan, 0.5)]


def test_auto_merge_rejects_bad_input():
    parent, kids = _family(2)
    with pytest.raises(ValueError, match="ratio"):
        auto_merge([], {}, ratio=1.5)
    with pytest.raises(ValueError, match="pairs"):
        auto_merge([kids[0]], {})  # type: ignore[list-item]


@pytest.mark.slow
def test_retriever_over_a_store_merges_retrieved_siblings(tmp_path):
    from chunklab.embed import Encoder
    from chunklab.retrieval.chroma.store import ChunkStore

    text = (
        "Cats purr when they are happy. Cats sleep for most of the day. Cats chase mice at night.\n\n"
        "Tax returns are due in April. Deductions lower taxable income. Keep every receipt."
    )
    chunks = chunk_hierarchical(text, levels=(400, 100, 35), unit="chars")
    store = ChunkStore(in_memory=True, encoder=Encoder(cache_dir=tmp_path))
    store.add(chunks)
    assert store.count() == len(leaves(chunks))
    retriever = HierarchicalRetriever(store, ratio=0.5)
    leaf_hits = retriever.retrieve_leaves("what do cats do all day", k=3)
    assert all(not c.metadata.get("child_ids") for c, _ in leaf_hits)
    merged = retriever.retrieve("what do cats do all day", k=3)
    cat_paragraph = next(c for c in chunks if c.metadata["level"] == 1 and c.text.startswith("Cats"))
    assert merged[0][0] == cat_paragraph
    assert merged[0][0].metadata["child_ids"] == cat_paragraph.metadata["child_ids"]
    assert retriever.retrieve_parents("tax deductions", k=1)[0][0].text.startswith("Tax")
