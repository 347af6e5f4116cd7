"""Image files (PNG, JPEG, TIFF) read by OCR, laid out like PDF pages.

Each frame becomes a page of a PDF without text; :func:`chunklab.documents.pdf.extract_pdf` then
reads it with :class:`chunklab.documents.ocr.PageOcr` OCR'ing the frame's own pixels, so an image
page gets the same reading order, headings and margin rules as a digital page.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from chunklab.decoding import DocumentError
from chunklab.documents.layout import Extracted
from chunklab.documents.ocr import PageOcr, ocr_settings
from chunklab.documents.pdf import extract_pdf

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["extract_image"]


def extract_image(raw: bytes, name: str = "<image>") -> Extracted:
    """A PNG, JPEG or TIFF file read by OCR, one page per frame, into text and page/bbox elements.

    The frames become the pages of a PDF without text that :func:`~chunklab.documents.pdf.extract_pdf`
    reads with their own pixels OCR'd, so an image page is laid out like any PDF page.
    """
    import pypdfium2 as pdfium
    from PIL import Image as PILImage
    from PIL import ImageSequence, UnidentifiedImageError

    mode, engine = ocr_settings()
    if mode == "never":
        raise DocumentError(name, "no-text-layer", "an image: its text needs OCR, which is off (--ocr never)")
    try:
        opened = PILImage.open(io.BytesIO(raw))
        frames = []
        for frame in ImageSequence.Iterator(opened):
            dpi = _dpi(frame.info.get("dpi"))
            frames.append((_on_white(frame), dpi))
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise DocumentError(name, "unreadable", f"not a readable image ({exc})") from None
    pdf = pdfium.PdfDocument.new()
    for image, dpi in frames:
        pdf.new_page(image.width * 72 / dpi, image.height * 72 / dpi)
    buf = io.BytesIO()
    pdf.save(buf)
    pdf.close()
    reader = PageOcr("always", engine, images=frames)
    try:
        got = extract_pdf(buf.getvalue(), name, ocr=reader)
    except DocumentError as exc:
        if exc.reason != "no-text-layer":
            raise
        why = reader.error or "OCR found no text"
        raise DocumentError(name, "no-text-layer", f"an image: {why}") from None
    meta: dict[str, Any] = {**(got.metadata or {}), "extractor": f"ocr:{reader.pages[0]['engine']}"}
    return Extracted(got.text, got.elements, got.title, meta)


def _on_white(frame: Image) -> Image:
    """A frame in grayscale, its transparent parts white (as on paper), not black."""
    from PIL import Image as PILImage

    if frame.mode in ("RGBA", "LA", "PA") or "transparency" in frame.info:
        rgba = frame.convert("RGBA")
        white = PILImage.new("RGBA", rgba.size, (255, 255, 255, 255))
        return PILImage.alpha_composite(white, rgba).convert("L")
    return frame.convert("L")


def _dpi(value: object) -> float:
    """An image's resolution from its ``dpi`` info, 150 when it has none or a nonsense one."""
    if isinstance(value, tuple) and value and isinstance(value[0], (int, float)) and 50 <= value[0] <= 2400:
        return float(value[0])
    return 150.0
