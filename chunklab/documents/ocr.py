"""OCR, offline: pages without a text layer (and, by a flag, every page) and image files read by an engine.

Two engines read a page image into lines of words with boxes and confidences:
``tesseract`` (Debian's ``tesseract-ocr`` 5 with ``tesseract-ocr-eng``, run as a program) and
``rapidocr`` (``rapidocr-onnxruntime``, whose PP-OCRv4 ONNX models ship in the wheel; no hub, no
download). :data:`DEFAULT_ENGINE` and :data:`DEFAULT_DPI` were chosen by ``benchmarks/ocr_engines.py``
(``benchmarks/results/ocr_engines.json``): the engine with the lower character error rate at
300 dpi (the faster one within a point), and the lowest dpi within a point of its best; when the
default engine is missing the other is used.

The lines become the PDF loader's segments (:class:`~chunklab.documents.pdf.layout.Seg`, in PDF
points), so an OCR'd page goes through the same reading order, blocks, headings and margin
rules as a digital page and lands in the same page/bbox elements. :class:`PageOcr` is the hook
:func:`chunklab.documents.pdf.extract_pdf` calls on each page;
:func:`chunklab.documents.image.extract_image` reads PNG, JPEG and TIFF files (a multi-page TIFF
page by page) through it. The mode (``auto``: pages without text;
``always``; ``never``) and the engine come from :func:`set_ocr` or the ``CHUNKLAB_OCR`` and
``CHUNKLAB_OCR_ENGINE`` environment variables (so worker processes see them); ONNX Runtime and
Tesseract run on one thread, since other work (other workers, the encoder) shares the CPU.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import statistics
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from chunklab.documents.pdf.layout import Seg, has_images

if TYPE_CHECKING:
    from PIL.Image import Image
    from pypdfium2 import PdfPage

__all__ = [
    "DEFAULT_DPI",
    "DEFAULT_ENGINE",
    "ENGINES",
    "INSTALL",
    "MIN_TEXT",
    "OCR_MODES",
    "OcrEngine",
    "OcrLine",
    "OcrUnavailable",
    "OcrWord",
    "PageOcr",
    "get_engine",
    "ocr_settings",
    "set_ocr",
]

#: when pages are OCR'd: ``auto`` those without a text layer, ``always`` every page, ``never`` none
OCR_MODES = ("auto", "always", "never")
#: the engines, in the order tried when the chosen one is missing
ENGINES = ("tesseract", "rapidocr")
#: the engine used unless one is named (measured: benchmarks/results/ocr_engines.json)
DEFAULT_ENGINE = "tesseract"
#: the resolution a PDF page is rendered at for OCR (measured with the engine)
DEFAULT_DPI = 150
#: a page with an image and fewer characters of text layer than this is a scan (``auto`` reads it by OCR)
MIN_TEXT = 20
#: how each engine is installed, named by the error when it is missing
INSTALL = {
    "tesseract": "apt-get install tesseract-ocr tesseract-ocr-eng (or: make sysdeps)",
    "rapidocr": "pip install rapidocr-onnxruntime==1.4.4",
}
_MODE_VAR, _ENGINE_VAR = "CHUNKLAB_OCR", "CHUNKLAB_OCR_ENGINE"
T = TypeVar("T")


class OcrUnavailable(RuntimeError):
    """No OCR engine of the name (or none at all) is installed; the message names the install line."""


@dataclass(frozen=True)
class OcrWord:
    """A word (or piece of a line) read by OCR: text, box ``(x0, top, x1, bottom)`` in pixels, confidence."""

    text: str
    box: tuple[float, float, float, float]
    confidence: float


@dataclass(frozen=True)
class OcrLine:
    """A line of words on one baseline, left to right."""

    words: tuple[OcrWord, ...]


class OcrEngine(Protocol):
    """Reads a page image into lines. ``em`` is a line box's height per point of font size."""

    name: str
    em: float

    def read(self, image: Image, dpi: float) -> list[OcrLine]:
        """The lines of text on ``image`` (any order; reading order is found from the boxes)."""
        ...


# --------------------------------------------------------------------------- engines


class TesseractEngine:
    """Debian's ``tesseract`` program (5.x, English), its word boxes read from its TSV output."""

    name = "tesseract"
    em = 0.95  # a line's ink box: ascenders to descenders

    def __init__(self) -> None:
        exe = shutil.which("tesseract")
        if exe is None:
            raise OcrUnavailable(f"OCR engine 'tesseract' is not installed: {INSTALL['tesseract']}")
        langs = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, check=False).stdout
        if "eng" not in langs.split():
            raise OcrUnavailable(f"OCR engine 'tesseract' has no English data: {INSTALL['tesseract']}")
        self.exe = exe

    def read(self, image: Image, dpi: float) -> list[OcrLine]:
        """Words grouped by tesseract's block, paragraph and line numbers; then the top and bottom
        tenths of the page read again as plain blocks, for the lone page numbers and running
        heads that page segmentation passes over."""
        lines = self._lines(image, dpi, "3", 0)
        found = [w.box for line in lines for w in line.words]
        band = round(0.1 * image.height)
        for top in (0, image.height - band):
            for line in self._lines(image.crop((0, top, image.width, top + band)), dpi, "6", top):
                words = tuple(w for w in line.words if not any(_overlaps(w.box, box) for box in found))
                if words:
                    lines.append(OcrLine(words))
        return lines

    def _lines(self, image: Image, dpi: float, psm: str, dy: float) -> list[OcrLine]:
        buf = io.BytesIO()
        image.convert("L").save(buf, format="PNG")
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        args = [self.exe, "stdin", "stdout", "--dpi", str(round(dpi)), "-l", "eng", "--psm", psm, "tsv"]
        done = subprocess.run(args, input=buf.getvalue(), capture_output=True, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"tesseract failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
        lines: dict[tuple[str, ...], list[OcrWord]] = {}
        for row in done.stdout.decode("utf-8", errors="replace").splitlines()[1:]:
            cols = row.split("\t")
            if len(cols) < 12 or cols[0] != "5" or not cols[11].strip():
                continue
            left, top, width, height = (float(v) for v in cols[6:10])
            box = (left, top + dy, left + width, top + dy + height)
            lines.setdefault(tuple(cols[1:5]), []).append(
                OcrWord(cols[11].strip(), box, float(cols[10]) / 100)
            )
        return [OcrLine(tuple(words)) for words in lines.values()]


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


class RapidOcrEngine:
    """``rapidocr-onnxruntime``: PP-OCRv4 detection and recognition, models from the wheel."""

    name = "rapidocr"
    em = 1.2  # a detected box is padded around the ink

    def __init__(self) -> None:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise OcrUnavailable(f"OCR engine 'rapidocr' is not installed: {INSTALL['rapidocr']}") from None
        self.ocr = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)

    def read(self, image: Image, dpi: float) -> list[OcrLine]:
        """Detected boxes, those on one baseline joined into a line."""
        import numpy as np

        result, _ = self.ocr(np.asarray(image.convert("RGB")))
        pieces = []
        for points, text, score in result or []:
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            if text.strip():
                pieces.append(OcrWord(text.strip(), (min(xs), min(ys), max(xs), max(ys)), float(score)))
        return _join_baselines(pieces)


def _join_baselines(pieces: list[OcrWord]) -> list[OcrLine]:
    """Pieces whose boxes overlap vertically by half their height, as lines read left to right."""
    return [OcrLine(tuple(row)) for row in rows_by_overlap(pieces, lambda w: w.box)]


def rows_by_overlap(
    items: Sequence[T], box: Callable[[T], tuple[float, float, float, float]]
) -> list[list[T]]:
    """``items`` grouped into rows, top to bottom, each read left to right: an item joins the row
    above when its box (``x0, top, x1, bottom``) overlaps that row's last box vertically by half
    the lower of their heights. Boxes, not baselines: a table's cells set a little higher or lower
    than their neighbours (a taller cell, a box that reaches a descender) stay in their row."""
    rows: list[list[T]] = []
    for item in sorted(items, key=lambda i: (box(i)[1] + box(i)[3]) / 2):
        b = box(item)
        if rows:
            last = box(rows[-1][-1])
            overlap = min(last[3], b[3]) - max(last[1], b[1])
            if overlap > 0.5 * min(last[3] - last[1], b[3] - b[1]):
                rows[-1].append(item)
                continue
        rows.append([item])
    return [sorted(row, key=lambda i: box(i)[0]) for row in rows]


_FACTORIES: dict[str, type[TesseractEngine] | type[RapidOcrEngine]] = {
    "tesseract": TesseractEngine,
    "rapidocr": RapidOcrEngine,
}


@functools.cache
def get_engine(name: str | None = None) -> OcrEngine:
    """The OCR engine ``name`` (one of :data:`ENGINES`), or with None the default, else the first installed.

    Built once per process. A missing engine raises :class:`OcrUnavailable` with its install line.
    """
    if name is not None:
        if name not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {name!r}")
        return _FACTORIES[name]()
    missing = []
    for candidate in (DEFAULT_ENGINE, *(e for e in ENGINES if e != DEFAULT_ENGINE)):
        try:
            return _FACTORIES[candidate]()
        except OcrUnavailable as exc:
            missing.append(str(exc))
    raise OcrUnavailable("no OCR engine is installed; " + "; ".join(missing))


def ocr_settings() -> tuple[str, str | None]:
    """The OCR mode and engine in effect: :func:`set_ocr`'s (the environment), else ``("auto", None)``."""
    mode = os.environ.get(_MODE_VAR) or "auto"
    engine = os.environ.get(_ENGINE_VAR) or None
    if mode not in OCR_MODES:
        raise ValueError(f"{_MODE_VAR} must be one of {OCR_MODES}, got {mode!r}")
    if engine is not None and engine not in ENGINES:
        raise ValueError(f"{_ENGINE_VAR} must be one of {ENGINES}, got {engine!r}")
    return mode, engine


def set_ocr(mode: str | None = None, engine: str | None = None) -> None:
    """Set the OCR mode (:data:`OCR_MODES`) and engine (:data:`ENGINES`) for this process and its workers.

    Kept in the ``CHUNKLAB_OCR`` / ``CHUNKLAB_OCR_ENGINE`` environment variables, which worker
    processes inherit; None leaves a setting as it is.
    """
    if mode is not None:
        if mode not in OCR_MODES:
            raise ValueError(f"mode must be one of {OCR_MODES}, got {mode!r}")
        os.environ[_MODE_VAR] = mode
    if engine is not None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        os.environ[_ENGINE_VAR] = engine


# --------------------------------------------------------------------------- the PDF loader's hook


class PageOcr:
    """The PDF loader's OCR hook: which pages are read by OCR, and what it found on them.

    :meth:`page` takes a page's digital segments and gives them back, or the page's OCR'd
    segments when the mode asks for it (``auto``: a page with an image and under :data:`MIN_TEXT`
    characters of text layer; ``always``: every page).
    ``images`` supplies a page's image (an image file's frames) instead of rendering it.
    """

    def __init__(
        self,
        mode: str | None = None,
        engine: str | None = None,
        dpi: int = DEFAULT_DPI,
        images: Sequence[tuple[Image, float]] = (),
    ) -> None:
        set_mode, set_engine = ocr_settings()
        self.mode = mode or set_mode
        if self.mode not in OCR_MODES:
            raise ValueError(f"mode must be one of {OCR_MODES}, got {self.mode!r}")
        self.engine_name = engine or set_engine
        if self.engine_name is not None and self.engine_name not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {self.engine_name!r}")
        self.dpi = dpi
        self.images = list(images)
        self.pages: list[dict[str, object]] = []
        self.error: str | None = None

    def page(self, page: PdfPage, number: int, segs: list[Seg], stats: Counter[str]) -> list[Seg]:
        """``segs``, or the segments OCR reads on the page (counted in ``stats["chars"]``).

        ``auto`` reads a page whose text layer has under :data:`MIN_TEXT` characters and which holds
        an image: a scan, or a scan with a stamped page number or header (those are read by OCR too).
        """
        if self.mode == "never" or (self.mode == "auto" and sum(len(s.text) for s in segs) >= MIN_TEXT):
            return segs
        if number <= len(self.images):
            image, dpi = self.images[number - 1]
        elif self.mode == "auto" and not has_images(page):
            return segs  # no picture: a blank page, or a few words of text
        else:
            dpi = self.dpi
            image = page.render(scale=dpi / 72, grayscale=True).to_pil()
        try:
            engine = get_engine(self.engine_name)
        except OcrUnavailable as exc:
            self.error = str(exc)
            return segs
        lines = engine.read(image, dpi)
        got = lines_to_segs(lines, number, 72 / dpi, engine.em)
        if not got:
            return segs
        chars = sum(len(w.text) for line in lines for w in line.words)
        confidence = sum(w.confidence * len(w.text) for line in lines for w in line.words) / max(chars, 1)
        self.pages.append(
            {"page": number, "engine": engine.name, "dpi": round(dpi), "confidence": round(confidence, 3)}
        )
        stats["chars"] += sum(len(s.chars) for s in got)
        return got

    def metadata(self) -> dict[str, object]:
        """What OCR did: ``ocr_pages`` (page numbers), ``ocr_engine``, ``ocr`` (per page: engine, dpi,
        confidence) and ``ocr_error`` when a page needed an engine that is missing."""
        out: dict[str, object] = {}
        if self.pages:
            out["ocr_pages"] = [p["page"] for p in self.pages]
            out["ocr_engine"] = self.pages[0]["engine"]
            out["ocr"] = self.pages
        if self.error:
            out["ocr_error"] = self.error
        return out


def lines_to_segs(lines: Sequence[OcrLine], number: int, scale: float, em: float) -> list[Seg]:
    """OCR lines as the PDF loader's segments, in points (``scale`` points per pixel).

    A line is cut where words stand more than twice the font size apart (table cells, columns).
    Font size is the line height over the engine's ``em``, rounded to half a point; sizes within
    the page's body range (0.45-1.12 of the median: lines without ascenders or descenders) are
    the median, so a paragraph's lines read as one style and only larger lines as headings.
    The pieces are then grouped into rows by the vertical overlap of their boxes
    (:func:`rows_by_overlap`) and each row's pieces share its middle, so a table row whose cells
    OCR found at slightly different heights (or as lines of their own) reads as one line, its
    cells left to right.
    """
    sized = []
    for line in lines:
        words = [w for w in line.words if w.text.strip()]
        if not words:
            continue
        height = max(w.box[3] for w in words) - min(w.box[1] for w in words)
        sized.append((words, round(2 * height * scale / em) / 2 or 0.5))
    if not sized:
        return []
    body = statistics.median(size for _, size in sized)
    pieces: list[tuple[list[OcrWord], float]] = []
    for words, size in sized:
        size = body if 0.45 * body <= size <= 1.12 * body else size
        cut: list[list[OcrWord]] = [[words[0]]]
        for w in words[1:]:
            if (w.box[0] - cut[-1][-1].box[2]) * scale > 2 * size:
                cut.append([w])
            else:
                cut[-1].append(w)
        pieces += [(piece, size) for piece in cut]
    segs: list[Seg] = []
    for row in rows_by_overlap(pieces, _piece_box):
        middle = statistics.median((_piece_box(p)[1] + _piece_box(p)[3]) / 2 for p in row) * scale
        for piece, size in row:
            text = " ".join(w.text for w in piece)
            seg = Seg(
                number,
                chars=list(text),
                x0=min(w.box[0] for w in piece) * scale,
                x1=max(w.box[2] for w in piece) * scale,
                top=middle - 0.475 * size,
                bottom=middle + 0.475 * size,
                base=middle + 0.475 * size,
                sizes=[size] * len(text),
            )
            segs.append(seg)
    return segs


def _piece_box(piece: tuple[list[OcrWord], float]) -> tuple[float, float, float, float]:
    """The box around a piece's words (pixels)."""
    words = piece[0]
    return (
        min(w.box[0] for w in words),
        min(w.box[1] for w in words),
        max(w.box[2] for w in words),
        max(w.box[3] for w in words),
    )
