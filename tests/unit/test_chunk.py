"""The Chunk type, stable ids and the contract checker."""

from __future__ import annotations

import pytest

from chunklab.chunk import Chunk, LineIndex, check_chunks, embedding_text, trim_span


def test_id_is_stable_and_depends_on_offsets_doc_and_parameters():
    meta = {"strategy": "fixed", "params": {"size": 10}}
    a = Chunk("abc", 0, 3, "d1", dict(meta))
    b = Chunk("abc", 0, 3, "d1", dict(meta))
    assert a.id == b.id
    assert Chunk("abc", 1, 4, "d1", dict(meta)).id != a.id
    assert Chunk("abc", 0, 3, "d2", dict(meta)).id != a.id
    assert Chunk("abc", 0, 3, "d1", {"strategy": "fixed", "params": {"size": 11}}).id != a.id


def test_id_ignores_unrelated_metadata():
    a = Chunk("abc", 0, 3, "d", {"strategy": "s", "index": 1})
    b = Chunk("abc", 0, 3, "d", {"strategy": "s", "index": 7, "note": "x"})
    assert a.id == b.id


def test_round_trip_through_dict():
    c = Chunk("abc", 2, 5, "doc", {"strategy": "x", "headings": ["A", "B"]})
    assert Chunk.from_dict(c.to_dict()) == c
    assert Chunk.from_dict(c.to_dict()).metadata == c.metadata


def test_check_chunks_reports_every_violation():
    source = "hello world, this is text"
    chunks = [
        Chunk("hello", 0, 5, "d", {}),
        Chunk("WRONG", 6, 11, "d", {}),
        Chunk("this is text", 13, 25, "d", {}),
    ]
    problems = check_chunks(chunks, source, max_size=5)
    assert any("differs" in p for p in problems)
    assert any("size 12 > 5" in p for p in problems)
    assert any("lost" in p for p in problems)  # "world," is covered; "," at 11 is not


def test_check_chunks_accepts_a_valid_split_and_oversize_marker():
    source = "aaaa bbbb"
    chunks = [Chunk("aaaa", 0, 4, "d", {}), Chunk("bbbb", 5, 9, "d", {"oversize": True})]
    assert check_chunks(chunks, source, max_size=3) == ["chunk 0: size 4 > 3 and not marked oversize"]


def test_check_chunks_flags_missing_overlap_unless_explained():
    source = "aaaa bbbb"
    chunks = [Chunk("aaaa", 0, 4, "d", {}), Chunk("bbbb", 5, 9, "d", {})]
    assert any("no overlap" in p for p in check_chunks(chunks, source, overlap=2))
    chunks[1].metadata["no_overlap_reason"] = "explained"
    assert check_chunks(chunks, source, overlap=2) == []


def test_embedding_text_puts_title_path_and_table_header_in_front_without_touching_text():
    c = Chunk(
        "| 3 | c |",
        10,
        19,
        "d",
        {"title": "Guide", "headings": ["Guide", "Install"], "table_header": "| n | x |\n|---|---|"},
    )
    assert embedding_text(c) == "Guide > Install\n\n| n | x |\n|---|---|\n| 3 | c |"
    assert c.text == "| 3 | c |"


def test_line_index_maps_offsets_to_lines():
    src = "a\nbb\n\nccc"
    idx = LineIndex(src)
    assert [idx.line_of(i) for i in range(len(src))] == [1, 1, 2, 2, 2, 3, 4, 4, 4]
    assert idx.offset_of(4) == 6
    assert idx.offset_of(99) == len(src)


@pytest.mark.parametrize(
    ("text", "span", "expected"),
    [("  ab  ", (0, 6), (2, 4)), ("   ", (0, 3), (3, 3)), ("ab", (0, 2), (0, 2))],
)
def test_trim_span_removes_surrounding_whitespace(text, span, expected):
    assert trim_span(text, *span) == expected


def test_id_is_the_blake2b_of_the_documented_key_and_is_hashed_once(monkeypatch):
    import hashlib
    import json

    import chunklab.chunk as chunk_module

    meta = {"strategy": "recursive", "params": {"unit": "chars", "size": 5}, "level": 1, "index": 3}
    c = Chunk("héllo", 4, 9, "docs/ä.md", meta)
    key = json.dumps(
        ["docs/ä.md", 4, 9, "recursive", {"size": 5, "unit": "chars"}, 1], sort_keys=True, ensure_ascii=False
    )
    expected = hashlib.blake2b(key.encode("utf-8"), digest_size=12).hexdigest()
    calls = []
    real = chunk_module.chunk_id
    monkeypatch.setattr(chunk_module, "chunk_id", lambda *a: calls.append(a) or real(*a))
    assert c.id == expected and c.id == expected
    assert len(calls) == 1
    assert Chunk.from_dict(c.to_dict()).id == expected


def test_replace_gives_a_new_chunk_with_its_own_id_and_the_old_one_unchanged():
    import dataclasses

    c = Chunk("abc", 0, 3, "d", {"strategy": "s", "params": {"size": 3}})
    old_id = c.id
    d = dataclasses.replace(c, metadata={**c.metadata, "params": {"size": 4}, "child_ids": ["x"]})
    assert c.id == old_id and "child_ids" not in c.metadata
    assert d.id != old_id and d.text == c.text


def test_hierarchy_and_role_accessors_read_the_metadata_and_is_leaf_reads_child_ids():
    from chunklab.chunk import is_leaf

    parent = Chunk("ab", 0, 2, "d", {"level": 0, "parent_id": None, "child_ids": ["k"], "kind": "section"})
    kid = Chunk("a", 0, 1, "d", {"level": 1, "parent_id": parent.id})
    flat = Chunk("a", 0, 1, "d", {})
    assert (parent.level, parent.parent_id, parent.role) == (0, None, "section")
    assert (kid.level, kid.parent_id, kid.role) == (1, parent.id, None)
    assert (flat.level, flat.parent_id) == (None, None)
    assert [is_leaf(c) for c in (parent, kid, flat)] == [False, True, True]
    assert "level" not in parent.to_dict() and parent.to_dict()["metadata"]["level"] == 0
