"""Structural chunking: Python by its syntax tree, HTML by its elements, Markdown by its headings.

``chunk_document`` picks the chunker from the file type; ``FallbackStats`` counts how often
a chunker had to fall back to plain recursive splitting, and why.
"""

from chunklab.structural.dispatch import FallbackStats, chunk_document, chunk_text, detect_kind
from chunklab.structural.html import chunk_html
from chunklab.structural.markdown import chunk_markdown
from chunklab.structural.python import chunk_python

__all__ = [
    "FallbackStats",
    "chunk_document",
    "chunk_html",
    "chunk_markdown",
    "chunk_python",
    "chunk_text",
    "detect_kind",
]
