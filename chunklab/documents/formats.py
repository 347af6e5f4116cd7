"""The one table of document formats: each format's file name extensions and how its bytes are read.

:func:`chunklab.documents.load_document` reads a file by its format's entry here; the structural
chunker of each format is in the other table,
:data:`chunklab.chunkers.structural.dispatch.STRUCTURAL`. Adding a format is a line here (and a
loader module for a laid-out format, or a chunker entry for a new structure).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from chunklab.documents.layout import Extracted

__all__ = ["EXTENSIONS", "FORMATS", "LAID_OUT", "DocumentFormat", "Loader"]

Loader = Callable[[bytes, str], Extracted]


def _lazy(module: str, function: str) -> Loader:
    """A loader imported when first called (a PDF library is loaded only to read a PDF)."""

    def load(raw: bytes, name: str) -> Extracted:
        loader: Loader = getattr(importlib.import_module(module), function)
        return loader(raw, name)

    load.__qualname__ = f"{module}.{function}"
    return load


@dataclass(frozen=True)
class DocumentFormat:
    """One document format: the file name extensions that have it and how its bytes are read.

    ``loader`` None: the bytes are decoded as text (:func:`chunklab.decoding.decode_bytes`, by
    the format's encoding rules). Else the format is *laid out*: ``loader(raw, name)`` gives its
    canonical text and the element map of pages, paragraphs or cells. ``signature`` marks its
    files by their first bytes when the extension is missing.
    """

    name: str
    extensions: tuple[str, ...]
    loader: Loader | None = None
    signature: bytes | None = None

    @property
    def laid_out(self) -> bool:
        """Read by a layout-aware loader into text plus elements, not decoded as text."""
        return self.loader is not None


_OCR = _lazy("chunklab.documents.image", "extract_image")  # images: their text read by OCR

#: the one format table: format -> its extensions and its loader
FORMATS: dict[str, DocumentFormat] = {
    f.name: f
    for f in (
        DocumentFormat("python", (".py", ".pyi", ".pyw")),
        DocumentFormat("markdown", (".md", ".markdown", ".mdown", ".mkd")),
        DocumentFormat("html", (".html", ".htm", ".xhtml")),
        DocumentFormat("rst", (".rst", ".rest")),
        DocumentFormat("text", (".txt", ".text")),
        DocumentFormat("pdf", (".pdf",), _lazy("chunklab.documents.pdf", "extract_pdf"), b"%PDF-"),
        DocumentFormat("docx", (".docx",), _lazy("chunklab.documents.docx", "extract_docx")),
        DocumentFormat("ipynb", (".ipynb",), _lazy("chunklab.documents.notebook", "extract_notebook")),
        DocumentFormat("png", (".png",), _OCR, b"\x89PNG\r\n"),
        DocumentFormat("jpeg", (".jpg", ".jpeg"), _OCR, b"\xff\xd8\xff"),
        DocumentFormat("tiff", (".tif", ".tiff"), _OCR, b"II*\x00"),
        # source code chunked by tree-sitter grammars (chunklab.chunkers.structural.code)
        DocumentFormat("javascript", (".js", ".mjs", ".cjs", ".jsx")),
        DocumentFormat("typescript", (".ts", ".mts", ".cts")),
        DocumentFormat("tsx", (".tsx",)),
        DocumentFormat("go", (".go",)),
        DocumentFormat("rust", (".rs",)),
        DocumentFormat("java", (".java",)),
        DocumentFormat("c", (".c", ".h")),
        DocumentFormat(
            "cpp", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tcc", ".inl")
        ),
        DocumentFormat("csharp", (".cs",)),
        DocumentFormat("ruby", (".rb", ".rake", ".gemspec")),
        DocumentFormat("php", (".php",)),
        DocumentFormat("bash", (".sh", ".bash")),
    )
}
#: document format -> the file name extensions that have it (read from :data:`FORMATS`)
EXTENSIONS: dict[str, tuple[str, ...]] = {name: f.extensions for name, f in FORMATS.items()}
#: formats read by a layout-aware loader into text plus an element map (not decoded as text)
LAID_OUT = tuple(name for name, f in FORMATS.items() if f.laid_out)
