"""What of Docling runs offline on a PDF, run in Docling's own environment.

``benchmarks/pdf_elements.py`` runs this file with that environment's interpreter (Docling
pulls its own torch) and records what it prints: one JSON object saying, for the PDF named
on the command line, whether ``DocumentConverter`` (the standard PDF pipeline: docling-parse
text, then layout and table models) converted it offline, and if so how many chunks
``HierarchicalChunker`` made of the result; else the exact error.

    .venv-docling/bin/python benchmarks/peer_docling.py FILE.pdf
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    """Try the conversion and the chunker on one PDF; print the outcome as JSON."""
    path = sys.argv[1]
    out: dict[str, object] = {}
    try:
        import docling
        from docling.document_converter import DocumentConverter
    except Exception as exc:
        print(json.dumps({"converter": f"not importable: {type(exc).__name__}: {str(exc)[:300]}"}))
        return
    from importlib.metadata import version

    out["version"] = version("docling")
    del docling
    try:
        result = DocumentConverter().convert(path)
    except Exception as exc:
        out["converter"] = f"failed offline: {type(exc).__name__}: {str(exc)[:400]}"
        print(json.dumps(out))
        return
    out["converter"] = f"converted ({len(result.document.export_to_markdown())} characters of Markdown)"
    try:
        from docling_core.transforms.chunker import HierarchicalChunker

        out["hierarchical_chunks"] = sum(1 for _ in HierarchicalChunker().chunk(result.document))
    except Exception as exc:
        out["chunker"] = f"failed: {type(exc).__name__}: {str(exc)[:300]}"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
