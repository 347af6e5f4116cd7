"""Docling on PDFs as far as it runs offline, in Docling's own environment.

``benchmarks/pdf_elements.py`` runs this file with that environment's interpreter (Docling
pulls its own torch). Two things, one JSON line each:

* the standard PDF pipeline (``DocumentConverter().convert``: docling-parse text, then the
  layout and table models) tried on the first PDF: ``{"standard": outcome}``, the exact error
  when its model weights cannot be loaded without the network;
* Docling's model-free ``NativePdfPipeline`` (docling-parse text cells, one ``TextItem`` per
  line, no headings, tables or reading order) chunked by ``HybridChunker`` with the kit's
  packaged MiniLM tokenizer (path on the command line, ``max_tokens``): one line per file
  with its chunk texts, seconds (imports and a warm-up file excluded) and error.

    .venv-docling/bin/python benchmarks/peer_docling.py MAX_TOKENS TOKENIZER_DIR < paths.json
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

from peer_records import print_records


def main() -> None:
    """Probe the standard pipeline, then chunk every path named on stdin natively."""
    max_tokens, tokenizer_dir = int(sys.argv[1]), sys.argv[2]
    paths = json.load(sys.stdin)
    try:
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.pipeline_options import NativePdfPipelineOptions
        from docling.document_converter import DocumentConverter, PdfFormatOption
        from docling.pipeline.native_pdf_pipeline import NativePdfPipeline
        from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
        from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer
        from transformers import AutoTokenizer
    except Exception as exc:
        print(json.dumps({"unavailable": f"not importable: {type(exc).__name__}: {str(exc)[:300]}"}))
        return
    try:
        DocumentConverter().convert(paths[0])
        standard = f"docling {version('docling')}: the standard PDF pipeline converted offline"
    except Exception as exc:
        standard = f"docling {version('docling')}: standard PDF pipeline failed offline: "
        standard += f"{type(exc).__name__}: {str(exc)[:300]}"
    print(json.dumps({"standard": standard}), flush=True)
    native = DocumentConverter(
        format_options={
            InputFormat.PDF: PdfFormatOption(
                pipeline_cls=NativePdfPipeline, pipeline_options=NativePdfPipelineOptions()
            )
        }
    )
    tokenizer = HuggingFaceTokenizer(
        tokenizer=AutoTokenizer.from_pretrained(tokenizer_dir), max_tokens=max_tokens
    )
    chunker = HybridChunker(tokenizer=tokenizer, merge_peers=True)

    def chunks(path: str) -> list[str]:
        document = native.convert(path).document
        return [c.text for c in chunker.chunk(document) if c.text.strip()]

    print_records(paths, chunks)


if __name__ == "__main__":
    main()
