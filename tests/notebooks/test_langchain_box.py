"""The "Already on LangChain?" box of chapters/your-documents.md: its two lines run as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "chapters" / "your-documents.md"


def box_code() -> str:
    """The Python block inside the box."""
    text = PAGE.read_text(encoding="utf-8")
    box = text[text.index("{admonition} Already on LangChain") :]
    match = re.search(r"```python\n(.*?)```", box, re.DOTALL)
    assert match, "the box holds no Python block"
    return match.group(1)


def test_the_box_is_two_lines_that_split_langchain_documents_with_exact_offsets():
    documents = pytest.importorskip("langchain_core.documents")
    code = box_code()
    assert len(code.strip().splitlines()) == 2, code
    text = "# Returns\n\nSend the parcel back within 30 days.\n\n## Refunds\n\nRefunds take five days.\n" * 30
    docs = [documents.Document(page_content=text, metadata={"source": "returns.md"})]
    scope: dict = {"docs": docs}
    exec(compile(code, str(PAGE), "exec"), scope)  # noqa: S102 - the book's own listing
    chunks = scope["chunks"]
    assert len(chunks) > 1
    for c in chunks:
        start = c.metadata["start_index"]
        assert text[start : start + len(c.page_content)] == c.page_content
        assert c.metadata["source"] == "returns.md" and c.metadata["strategy"] == "structural"
