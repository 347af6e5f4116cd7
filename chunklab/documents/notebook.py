"""Jupyter notebooks (.ipynb) to one canonical text with a cell map, read with nbformat.

:func:`extract_notebook` gives each non-empty cell's source as one block (``markdown``,
``code`` or ``paragraph`` for raw cells) tagged with its 1-based cell number, id and type,
cells separated by a blank line. Outputs are left out unless ``outputs=True``: then each code
cell's text outputs (streams, ``text/plain`` results, error names) follow it as ``output``
blocks of the same cell. A file that is not a notebook raises
:class:`~chunklab.decoding.DocumentError`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from chunklab.decoding import DocumentError
from chunklab.documents.layout import Element, Extracted

__all__ = ["extract_notebook"]

_TITLE = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.M)
_TYPES = {"markdown": "markdown", "code": "code", "raw": "paragraph"}


def extract_notebook(raw: bytes, name: str = "<ipynb>", *, outputs: bool = False) -> Extracted:
    """The cells of a notebook as one text, each cell's span tagged with its number, id and type."""
    import nbformat

    try:
        nb = nbformat.reads(raw.decode("utf-8-sig"), as_version=4)
    except (UnicodeDecodeError, json.JSONDecodeError, nbformat.reader.NotJSONError, KeyError) as exc:
        raise DocumentError(name, "unreadable", f"not a readable notebook ({type(exc).__name__})") from None
    language = str(nb.metadata.get("kernelspec", {}).get("language") or "python")
    parts: list[str] = []
    elements: list[Element] = []
    title: str | None = None
    pos = 0
    for number, cell in enumerate(nb.cells, 1):
        pieces = [(_TYPES.get(cell.cell_type, "paragraph"), str(cell.source).strip("\n"))]
        if outputs and cell.cell_type == "code":
            pieces += [("output", text) for text in _output_texts(cell.get("outputs", []))]
        for kind, piece in pieces:
            if not piece.strip():
                continue
            if parts:
                parts.append("\n\n")
                pos += 2
            cell_id = str(cell.get("id") or "") or None
            elements.append(
                Element(pos, pos + len(piece), kind, cell=number, cell_id=cell_id, cell_type=cell.cell_type)
            )
            parts.append(piece)
            pos += len(piece)
            if title is None and kind == "markdown":
                m = _TITLE.search(piece)
                title = m.group(1) if m else None
    meta = {"cells": len(nb.cells), "language": language, "outputs": outputs}
    return Extracted("".join(parts), tuple(elements), title, meta)


def _output_texts(outs: list[Any]) -> list[str]:
    texts = []
    for out in outs:
        kind = out.get("output_type")
        if kind == "stream":
            texts.append(str(out.get("text", "")).rstrip("\n"))
        elif kind in ("execute_result", "display_data"):
            plain = out.get("data", {}).get("text/plain")
            if plain:
                texts.append(str(plain).rstrip("\n"))
        elif kind == "error":
            texts.append(f"{out.get('ename', 'Error')}: {out.get('evalue', '')}")
    return texts
