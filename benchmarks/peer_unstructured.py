"""unstructured's element method on PDFs, run in unstructured's own environment.

unstructured and its PDF dependencies do not fit the kit's environment (see
benchmarks/requirements-unstructured.txt), so ``benchmarks/pdf_elements.py`` runs this file with
that environment's interpreter: it reads a JSON list of PDF paths on stdin and writes one JSON
line per file: the texts of ``chunk_by_title`` over ``partition_pdf(strategy="fast")``, the
seconds that took (imports and model loading excluded: one warm-up file is run first), or the
error.

    .venv-unstructured/bin/python benchmarks/peer_unstructured.py 1000 < paths.json
"""

from __future__ import annotations

import json
import sys

from peer_records import print_records


def main() -> None:
    """Partition and chunk every path named on stdin; one JSON line per file on stdout."""
    size = int(sys.argv[1])
    paths = json.load(sys.stdin)
    try:  # unstructured downloads this model at first use when it is missing (no network here)
        import spacy

        spacy.load("en_core_web_sm")
    except Exception as exc:
        why = f"spaCy model en_core_web_sm not loadable offline: {type(exc).__name__}: {str(exc)[:300]}"
        print(json.dumps({"unavailable": why}), flush=True)
        return
    from unstructured.chunking.title import chunk_by_title
    from unstructured.partition.pdf import partition_pdf

    def chunks(path: str) -> list[str]:
        elements = partition_pdf(filename=path, strategy="fast")
        made = chunk_by_title(elements, max_characters=size, combine_text_under_n_chars=size // 5)
        return [c.text for c in made if c.text.strip()]

    print_records(paths, chunks)


if __name__ == "__main__":
    main()
