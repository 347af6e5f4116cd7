"""Structural chunking: code by its syntax tree (Python via ``ast``, a dozen other languages via
tree-sitter grammar wheels), HTML by its elements, Markdown and rst by their headings.

``chunk_document`` picks the chunker from the document kind (``chunklab.documents.detect_format``);
``FallbackStats`` counts how often a chunker had to fall back to plain recursive splitting, and why.
"""

from chunklab.chunkers.structural.code import CODE_LANGUAGES, chunk_code
from chunklab.chunkers.structural.dispatch import FallbackStats, chunk_document, chunk_text
from chunklab.chunkers.structural.html import chunk_html
from chunklab.chunkers.structural.markdown import chunk_markdown
from chunklab.chunkers.structural.python import chunk_python
from chunklab.chunkers.structural.rst import chunk_rst

__all__ = [
    "CODE_LANGUAGES",
    "FallbackStats",
    "chunk_code",
    "chunk_document",
    "chunk_html",
    "chunk_markdown",
    "chunk_python",
    "chunk_rst",
    "chunk_text",
]
