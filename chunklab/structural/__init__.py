"""Structural chunking: Python by its syntax tree, HTML by its elements, Markdown by its headings.

``chunk_document`` picks the chunker from the file type; ``FallbackStats`` counts how often
a chunker had to fall back to plain recursive splitting, and why.
"""

from chunklab.structural.markdown import chunk_markdown
from chunklab.structural.python import chunk_python

__all__ = ["chunk_markdown", "chunk_python"]
