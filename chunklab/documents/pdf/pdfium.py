"""PDFium's per-character text calls, prototyped on plain addresses for the extraction's hot loop.

:func:`chunklab.documents.pdf.extract_pdf` reads every character of a page with four or five
PDFium calls (its code, ink box, advance box, and once per text object its size and matrix).
``pypdfium2.raw`` types their arguments as pointers to structs; ctypes converts a plain int
address faster, which saves about 1 µs a character (a fifth of the extraction on text PDFs).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any, NamedTuple

__all__ = ["FastCalls", "address", "fast_calls"]


class FastCalls(NamedTuple):
    """The calls; each takes the text page's address and a character index first."""

    unicode: Callable[[int, int], int]
    char_box: Callable[..., int]
    loose_box: Callable[[int, int, int], int]
    font_size: Callable[[int, int], float]
    matrix: Callable[[int, int, int], int]
    text_object: Callable[[int, int], int | None]


@cache
def fast_calls(pr: ModuleType) -> FastCalls:
    """PDFium's per-character text calls taking addresses (ints) for the text page and the results.

    The same C functions as ``pypdfium2.raw``'s (their addresses), prototyped with ``c_void_p``
    arguments; ``text_object`` returns the object's address (``None`` for a character PDFium
    generated), the key of the per-object caches without a ``ctypes.cast`` a character.
    """
    ptr, i, ok = ctypes.c_void_p, ctypes.c_int, ctypes.c_int

    def proto(fn: Any, result: Any, *args: Any) -> Any:
        return ctypes.CFUNCTYPE(result, ptr, i, *args)(address(fn))

    return FastCalls(
        unicode=proto(pr.FPDFText_GetUnicode, ctypes.c_uint),
        char_box=proto(pr.FPDFText_GetCharBox, ok, ptr, ptr, ptr, ptr),
        loose_box=proto(pr.FPDFText_GetLooseCharBox, ok, ptr),
        font_size=proto(pr.FPDFText_GetFontSize, ctypes.c_double),
        matrix=proto(pr.FPDFText_GetMatrix, ok, ptr),
        text_object=proto(pr.FPDFText_GetTextObject, ptr),
    )


def address(pointer: Any) -> int:
    """The address a ctypes pointer (or function) holds, as an int; a null one is an error."""
    value = ctypes.cast(pointer, ctypes.c_void_p).value
    if value is None:
        raise ValueError("PDFium returned a null pointer")
    return value
