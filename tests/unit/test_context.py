"""Contextual headers: the title and section path go in front of what is embedded, never into text."""

from __future__ import annotations

import pytest

from chunklab.chunk import Chunk, embedding_text
from chunklab.chunkers.recursive import chunk_recursive
from chunklab.enrich.context import add_context, context_string, heading_path_at, markdown_headings

MD = """Preface line.

# Payments

Setext Section
--------------

Refunds take five days.

```python
# not a heading
x = 1
```

### Deep

Deep text.

# Shipping
Ship it.
"""


def test_add_context_puts_title_and_section_path_in_front_of_the_embedded_text():
    chunk = Chunk(
        "Refunds take five days.", 10, 33, "pay", {"strategy": "s", "headings": ["Payments", "Refunds"]}
    )
    [out] = add_context([chunk], title="Payments runbook")
    assert out.metadata["context"] == "Payments runbook > Payments > Refunds"
    assert embedding_text(out) == "Payments runbook > Payments > Refunds\n\nRefunds take five days."
    assert (out.text, out.start, out.end, out.doc_id, out.id) == (
        chunk.text,
        chunk.start,
        chunk.end,
        "pay",
        chunk.id,
    )
    assert "context" not in chunk.metadata  # the input is not mutated


def test_a_path_starting_with_the_title_does_not_repeat_it():
    assert context_string("Payments", ["Payments", "Refunds"]) == "Payments > Refunds"
    assert context_string(None, []) == ""


def test_title_from_mapping_function_metadata_or_doc_id():
    a = Chunk("x", 0, 1, "a", {"headings": "Intro"})
    b = Chunk("y", 0, 1, "b", {"title": "Bee guide"})
    plain = Chunk("z", 0, 1, "doc", {})
    assert [c.metadata.get("context") for c in add_context([a, b], title={"a": "Alpha"})] == [
        "Alpha > Intro",
        None,
    ]
    assert add_context([a], title=lambda c: c.doc_id.upper())[0].metadata["context"] == "A > Intro"
    assert [c.metadata.get("context") for c in add_context([a, b, plain])] == ["a > Intro", "Bee guide", None]


def test_chunks_without_headings_get_the_section_in_force_from_the_markdown_source():
    chunks = chunk_recursive(MD, 40)
    out = add_context(chunks, title="Runbook", source=MD)

    def context_of(snippet: str) -> str | None:
        [hit] = [c for c in out if snippet in c.text]
        return hit.metadata.get("context")

    assert context_of("Refunds take five days.") == "Runbook > Payments > Setext Section"
    assert context_of("Deep text.") == "Runbook > Payments > Setext Section > Deep"
    assert context_of("Ship it.") == "Runbook > Shipping"
    assert context_of("Preface line.") == "Runbook"


def test_markdown_headings_skip_fenced_code_and_read_setext():
    heads = [(level, title) for _off, level, title in markdown_headings(MD)]
    assert heads == [(1, "Payments"), (2, "Setext Section"), (3, "Deep"), (1, "Shipping")]
    assert heading_path_at(markdown_headings(MD), MD.index("Ship it.")) == ["Shipping"]


def test_bad_arguments_are_value_errors():
    chunk = Chunk("x", 0, 1, "a", {})
    with pytest.raises(ValueError, match="single Chunk"):
        add_context(chunk)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected Chunk"):
        add_context(["text"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="title"):
        add_context([chunk], title=3)  # type: ignore[arg-type]
