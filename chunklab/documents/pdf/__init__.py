"""PDF files to one canonical text with a page-and-box map, read with pypdfium2 (PDFium).

:func:`extract_pdf` reads every character of the text layer with its box, baseline, size and
weight, groups characters into segments (runs on one baseline; a smaller raised or lowered
glyph, a footnote mark, stays in its run), finds the page's columns (a gutter no body line
crosses, below and between full-width titles, abstracts and captions; a run PDFium joined across
a narrow gutter is cut at its wide gap) and reads each band column by column, groups lines into
blocks (headings by font size and weight, list items by their bullet, table rows by cells
aligned on one baseline, captions by "Table n:" / "Figure n."), and mends a word hyphenated at a
line end only where the document (the word written whole elsewhere) or the hyphenation
dictionary (a legal break of the joined word) says it is one word, keeping the hyphen of
"camera-ready" where the document writes it so; each decision is recorded in
``metadata["hyphenation"]`` with the word's offsets in the text. Font claims are checked against
the page: a glyph's size is the size the font states times the text matrix's scale, checked
against its advance box (a PDF may set every glyph at size 1), and a bold claim (weight, name)
stands only when the font is not the body's own and its stems (the ink width of l, I, |) are
wider than the body font's. Margins are learned from what repeats: a line in the 9 % bands at
the top or bottom, or in a page's edge block (set apart from the body by more than body rows are
from each other, within a fifth of the page), is left out when its text (digits aside) recurs
there on half the pages or on three pages of one run (a chapter's running header), or when it is
a page number ("Page 3 of 10" in English, Spanish, French or German; bare digits or roman
numerals that advance with the pages); each is recorded in ``metadata["removed"]``.
Ligature code points are normalized (NFKC, for those code points only); a character outside the BMP,
which PDFium gives as two UTF-16 halves, is read as the one character they encode; TeX's separate
accent glyphs are composed ("M´etro" is "Métro",
:func:`~chunklab.documents.characters.compose_accents`) and the letters PDFium reports for TeX's
symbol font cmsy are its brackets ("h … i" is "⟨ … ⟩"). A PDF with no text layer (scanned), an
encrypted one, or one whose text has no Unicode mapping raises a
:class:`~chunklab.decoding.DocumentError` with the reason; it never gives empty or garbled text.
See ``benchmarks/pdf_extract.py`` for why PDFium (speed and text quality against pdfplumber).
"""

from __future__ import annotations

import ctypes
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from chunklab.decoding import DocumentError
from chunklab.documents.characters import surrogate_pair
from chunklab.documents.layout import Element, Extracted
from chunklab.documents.pdf.layout import (
    Hyphenation,
    LineEndHyphen,
    Seg,
    block_text,
    blocks,
    has_images,
    reading_order,
)
from chunklab.documents.pdf.pdfium import FastCalls, address, fast_calls

if TYPE_CHECKING:
    from pypdfium2 import PdfPage

    from chunklab.documents.ocr import PageOcr

__all__ = ["extract_pdf"]

_LIGATURES = {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
_HYPHENS = {0x02, 0xAD, 0x2D, 0x2010, 0x2011}
#: a well-formed roman numeral, i (1) to mmmcmxcix (3999), in lower case
_ROMAN = "m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_ROMAN_DIGITS = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
#: a margin line that may be a page number: digits or a roman numeral in one case ("xiv", "XIV",
#: not "Mix"), named by a word before it ("Page", "p.", "Página", "Pág.", "Seite") or a total
#: after it ("of 10", "/10", "de 10", "sur 10", "von 10"), or bare ("12", "- 12 -", "xiv")
_PAGE_NUMBER = re.compile(
    r"^\W*(?P<word>page|p\.|página|pág\.|pag\.|seite)?\s*"
    rf"(?P<number>\d{{1,4}}|(?-i:(?=[ivxlcdm]){_ROMAN}|(?=[IVXLCDM]){_ROMAN.upper()}))"
    r"(?P<total>(?:\s*/\s*|\s+(?:of|de|sur|von)\s+)\d{1,4})?\W*$",
    re.I,
)
#: TeX's symbol font (cmsy, OMS encoding): letters PDFium reports for its glyphs without a Unicode map
_CMSY = {"h": "\u27e8", "i": "\u27e9", "f": "{", "g": "}", "j": "|"}
_STEMS = frozenset("lI|")  # glyphs drawn as one vertical stroke
_MARGIN = 0.09  # share of the page height next to an edge where any repeated line is a header or footer
_EDGE = 0.2  # how far from an edge a page's edge block (a learned header or footer band) may reach


def extract_pdf(raw: bytes, name: str = "<pdf>", *, ocr: PageOcr | None = None) -> Extracted:
    """The canonical text of a PDF's text layer, its elements (page, box, type) and what was left out.

    Pages without a text layer (every page, by the OCR mode) are read by OCR through ``ocr``
    (default: :class:`~chunklab.documents.ocr.PageOcr` with the mode and engine set).
    """
    import pypdfium2 as pdfium

    from chunklab.documents.ocr import PageOcr

    ocr = ocr if ocr is not None else PageOcr()

    try:
        pdf = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise DocumentError(name, "encrypted", "encrypted PDF: it needs a password to read") from None
        raise DocumentError(name, "unreadable", f"not a readable PDF ({exc})") from None
    try:
        pages, sizes, stats = [], [], Counter[str]()
        for i in range(len(pdf)):
            page = pdf[i]
            width, height = page.get_size()
            segs = ocr.page(page, i + 1, _segments(page, i + 1, height, stats), stats)
            pages.append(segs)
            sizes.append((width, height))
            if not segs and has_images(page):
                stats["image_pages"] += 1
        title = (pdf.get_metadata_dict().get("Title") or "").strip() or None
    finally:
        pdf.close()
    n_pages = len(pages)
    if stats["chars"] == 0:
        what = "scanned" if stats["image_pages"] else "empty"
        why = (
            f"; {ocr.error}" if ocr.error else ": run OCR first" if ocr.mode == "never" else "; OCR read none"
        )
        raise DocumentError(
            name, "no-text-layer", f"no text layer on any of its {n_pages} pages ({what}{why})"
        )
    if stats["unmapped"] > 0.25 * stats["chars"]:
        share = stats["unmapped"] / stats["chars"]
        raise DocumentError(name, "garbled", f"{share:.0%} of its characters have no Unicode mapping")
    _check_bold(pages, _body_size([s for segs in pages for s in segs]))
    removed = _remove_margins(pages, sizes)
    text, elements, hyphens = _assemble(pages, sizes)
    metadata: dict[str, object] = {
        "pages": n_pages,
        "removed": removed,
        "hyphenation": hyphens,
        "pages_without_text": [i + 1 for i, segs in enumerate(pages) if not segs],
        "extractor": "pypdfium2",
        **ocr.metadata(),
    }
    if stats["surrogate_pairs"]:  # characters outside the BMP, each read from its two UTF-16 halves
        metadata["surrogate_pairs"] = stats["surrogate_pairs"]
    heads = [e for e in elements if e.type == "heading" and e.level == 1]
    if title is None and heads:
        title = " ".join(text[heads[0].start : heads[0].end].split())
    return Extracted(text, tuple(elements), title, metadata)


# --------------------------------------------------------------------------- characters


def _segments(page: PdfPage, number: int, height: float, stats: Counter[str]) -> list[Seg]:
    import pypdfium2.raw as pr

    tp = page.get_textpage()
    try:
        raw_tp = tp.raw
        fast = fast_calls(pr)  # PDFium's per-character calls on plain addresses: the loop is the cost
        get_unicode, char_box, loose_box = fast.unicode, fast.char_box, fast.loose_box
        text_object = fast.text_object
        page_tp = address(raw_tp)
        box = [ctypes.c_double() for _ in range(4)]
        ref_l, ref_r, ref_b, ref_t = (ctypes.addressof(v) for v in box)
        loose = pr.FS_RECTF()
        loose_ref = ctypes.addressof(loose)
        segs: list[Seg] = []
        cur: Seg | None = None
        bold, last_size = False, -1.0
        n_chars, pair_low = tp.count_chars(), -1
        faces: dict[int, _Face] = {}  # a text object's characters share its face: read once per object
        n_text = 0
        for i in range(n_chars):
            if i == pair_low:  # the low half of a surrogate pair, already read with its high half
                continue
            code = get_unicode(page_tp, i)
            ch = chr(code) if code else ""
            if 0xD800 <= code <= 0xDBFF and i + 1 < n_chars:  # a character outside the BMP, in halves
                whole = surrogate_pair(code, get_unicode(page_tp, i + 1))
                if whole is not None:
                    ch, code, pair_low = whole, ord(whole), i + 1
                    stats["surrogate_pairs"] += 1
            if ch in ("\r", "\n") or not ch:
                cur = None
                continue
            if ch.isspace():
                if cur is not None:
                    cur.space = True
                continue
            n_text += 1
            if ch == "\ufffd" or 0xE000 <= code <= 0xF8FF or code < 32:
                stats["unmapped"] += 1
                if code < 32 and code not in _HYPHENS:  # a control code (Distiller's \x03 \x04): no letter
                    continue
            if code in _HYPHENS:
                ch = "-"
            ch = _LIGATURES.get(ch, ch)
            obj = text_object(page_tp, i)  # None for a character PDFium generated
            face = faces.get(obj) if obj is not None else None
            if face is None:
                face = _face(pr, fast, raw_tp, page_tp, i)
                if obj is not None:
                    faces[obj] = face
            if ch in _CMSY:
                ch = _symbol_font_char(ch, face.name)
            char_box(page_tp, i, ref_l, ref_r, ref_b, ref_t)  # left, right, bottom, top: the glyph's ink
            loose_box(page_tp, i, loose_ref)  # the advance box: gaps and baseline
            l_left, l_right, l_bottom = loose.left, loose.right, loose.bottom
            # the size on the page (its face's) checked against the height of its advance box; where
            # the two disagree by more than a factor of two the box wins (an advance box is about 1.15
            # font sizes high: ascent + descent)
            loose_height = loose.top - l_bottom
            if loose_height > 0 and not 0.5 <= loose_height / face.size <= 2.5:
                size = round(loose_height / 1.15, 2)
            else:
                size = face.rounded
            base = height - l_bottom
            if cur is not None:
                gap = l_left - cur.advance
                same_line = abs(base - cur.base) < 0.4 * (last_size if last_size > size else size) or (
                    size < 0.85 * cur.sizes[0] and abs(base - cur.base) < 0.7 * cur.sizes[0]
                )  # a smaller glyph raised or lowered in the line: a footnote mark, an index
                overdraw = gap < -0.5 * size and l_left < cur.last_left - 0.5  # not a ligature's 2nd letter
                if not same_line or overdraw or gap > (3.0 if cur.space else 1.5) * size:
                    cur = None
                elif cur.space or gap > 0.2 * size:
                    if gap > 0.8 * size:  # wider than a word space: a column gutter may lie here
                        cur.cuts.append((cur.x1, l_left, len(cur.chars), len(cur.sizes), cur.bold))
                    cur.chars.append(" ")
            if cur is None or size != last_size:
                bold = face.bold
            if cur is None:
                cur = Seg(number, base=base)
                cur.font = face.font
                segs.append(cur)
            last_size = size
            cur.space = False
            # min() and max() written out (what they return, the same values): they ran 6 times a character
            cur.last_left, cur.advance = l_left, (l_left if l_left > l_right else l_right)
            cur.chars.append(ch)
            left, right, bottom, top = box[0].value, box[1].value, box[2].value, box[3].value
            if left < cur.x0:
                cur.x0 = left
            if right > cur.x1:
                cur.x1 = right
            if (ink_top := height - top) < cur.top:
                cur.top = ink_top
            if (ink_bottom := height - bottom) > cur.bottom:
                cur.bottom = ink_bottom
            cur.sizes.append(size)
            cur.bold += bold
            if ch in _STEMS:  # a glyph that is one vertical stroke: its ink width is the stem's
                cur.stems.append((right - left) / size)
        stats["chars"] += n_text
        return [s for s in segs if s.text]
    finally:
        tp.close()


def _check_bold(pages: list[list[Seg]], body: float) -> None:
    """Bold claims (font weight, font name) checked against the glyphs and the document: a font
    whose runs claim bold is not bold when it is the body text's own font, or when its stems (the
    ink width of l, I, | over the size) are no wider than the body font's.

    Ghostscript writes a regular TeX font with a weight of 744; taken at its word, every short
    line of the document would be a heading.
    """
    chars: Counter[str] = Counter()
    stems: dict[str, list[float]] = {}
    claims: Counter[str] = Counter()
    for segs in pages:
        for s in segs:
            stems.setdefault(s.font, []).extend(s.stems)
            claims[s.font] += s.bold
            if abs(s.size - body) < 0.1 * body:
                chars[s.font] += len(s.sizes)
    if not chars:
        return
    body_font = chars.most_common(1)[0][0]
    thin = statistics.median(stems[body_font]) if len(stems[body_font]) >= 5 else None
    false = {
        font
        for font in claims
        if claims[font]
        and (
            font == body_font
            or (thin is not None and len(stems[font]) >= 3 and statistics.median(stems[font]) < 1.15 * thin)
        )
    }
    for segs in pages:
        for s in segs:
            if s.font in false:
                s.bold = 0


class _Face(NamedTuple):
    """What the characters of one text object share: their size on the page and their font."""

    size: float  # the font size the character claims times the scale of its text matrix
    rounded: float  # ``size`` to two decimals
    name: str  # the font's lower-case name ("abcdef+cmsy10")
    bold: bool  # a weight of 600 or more, or a bold word in the name
    font: str  # "name|weight", a segment's font


def _face(pr: ModuleType, fast: FastCalls, raw_tp: Any, page_tp: int, i: int) -> _Face:
    """The face of character ``i`` (``raw_tp`` and ``page_tp``: its text page, typed and as an address).

    The size is the font size the character claims times the scale of its text matrix: a PDF may
    set every glyph at size 1 and scale it by the matrix.
    """
    size = fast.font_size(page_tp, i) or 1.0
    matrix = pr.FS_MATRIX()
    if fast.matrix(page_tp, i, ctypes.addressof(matrix)):
        scale = abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
        size *= scale if scale > 0 else 1.0
    flags = ctypes.c_int()
    n = pr.FPDFText_GetFontInfo(raw_tp, i, None, 0, ctypes.byref(flags))
    buf = ctypes.create_string_buffer(max(n, 1))
    pr.FPDFText_GetFontInfo(raw_tp, i, buf, n, ctypes.byref(flags))
    name = buf.value.decode("latin-1").lower()
    weight = pr.FPDFText_GetFontWeight(raw_tp, i)
    bold = weight >= 600 or any(w in name for w in ("bold", "black", "heavy", "semibold", "demi"))
    return _Face(size, round(size, 2), name, bold, f"{name}|{weight}")


def _symbol_font_char(ch: str, font: str) -> str:
    """``ch`` as TeX's symbol font means it: cmsy's "h" and "i" are the angle brackets ⟨ ⟩, "f" "g"
    the braces, "j" the bar, when the PDF gives the font's code, not its Unicode (cmsy has no
    letters in those places, so the font name is a sure sign)."""
    name = font.rpartition("+")[2]
    return _CMSY.get(ch, ch) if name.startswith("cmsy") else ch


# --------------------------------------------------------------------------- headers and footers


class RemovedMargin(TypedDict):
    """A header, footer or page number left out of the text (``metadata["removed"]``), with its box."""

    page: int
    role: str
    text: str
    bbox: tuple[float, float, float, float]


def _remove_margins(
    pages: list[list[Seg]],
    sizes: list[tuple[float, float]],
) -> list[RemovedMargin]:
    """Drop running headers, footers and page numbers from ``pages``; return them.

    A margin line lies in the fixed band near the top or bottom edge (9 % of the page
    height), or, wherever it lies within a fifth of the page from an edge, in the page's
    edge block: the lines between that edge and the first vertical gap wider than the
    document's body rows are spaced, with body text beyond the gap
    (:func:`_edge_blocks`), so the bands are measured on each page of each document.
    A margin line is left out when it is a page number (:func:`_page_numbers`), or when
    its text (digits aside) recurs in its band on half the pages, or on three pages or
    more of one run (each within two pages of the last: a chapter's running header,
    :func:`_longest_run`) unless it is set in a heading's size (a slide's title over
    its overlays).
    """
    keyed: list[list[tuple[Seg, tuple[str, str] | None]]] = []
    pages_of: dict[tuple[str, str], list[int]] = {}
    large: dict[tuple[str, str], bool] = {}  # every line of the key in a heading's size
    pages_rows = [_rows(segs) for segs in pages]
    spacing = _body_spacing(pages_rows)
    body = _body_size([s for segs in pages for s in segs])
    for i, (segs, (_, height)) in enumerate(zip(pages, sizes, strict=True)):
        top_block, bottom_block = _edge_blocks(pages_rows[i], height, spacing)
        row = []
        for s in segs:
            band = (
                "header"
                if s.bottom < _MARGIN * height or id(s) in top_block
                else "footer"
                if s.top > (1 - _MARGIN) * height or id(s) in bottom_block
                else ""
            )
            text = " ".join(s.text.lower().split())
            key = (band, re.sub(r"\d+", "#", text)) if band else None
            row.append((s, key))
            if key is not None:
                large[key] = large.get(key, True) and s.size >= 1.15 * body
        keyed.append(row)
        for key in {k for _, k in row if k is not None}:
            pages_of.setdefault(key, []).append(i)
    need = max(2, (len(pages) + 1) // 2)
    running: set[tuple[str, str]] = set()
    for key, on in pages_of.items():
        if len(on) >= need or (_longest_run(on) >= 3 and not large[key]):
            running.add(key)
    numbered = _page_numbers(keyed)
    removed: list[RemovedMargin] = []
    for i, row in enumerate(keyed):
        keep = []
        for s, key in row:
            role = None
            if id(s) in numbered:
                role = "page_number"
            elif key is not None and key in running:
                role = key[0]
            if role is None:
                keep.append(s)
            else:
                removed.append(
                    {"page": s.page, "role": role, "text": s.text, "bbox": _box(s)},
                )
        pages[i] = keep
    return removed


def _box(s: Seg) -> tuple[float, float, float, float]:
    """The segment's box (x0, top, x1, bottom) in points, to 0.1."""
    return round(s.x0, 1), round(s.top, 1), round(s.x1, 1), round(s.bottom, 1)


def _longest_run(on: list[int]) -> int:
    """The most pages in one run of ``on`` (sorted page indexes), each within two
    of the last: pages 4, 5 and 7 are a run of three; 1, 4 and 7 three runs of one."""
    best = run = 0
    for k, page in enumerate(on):
        run = run + 1 if k and page - on[k - 1] <= 2 else 1
        best = max(best, run)
    return best


def _rows(segs: list[Seg]) -> list[tuple[float, float, list[Seg]]]:
    """The page's segments grouped into rows (overlapping vertical extents): (top, bottom, segments)."""
    rows: list[tuple[float, float, list[Seg]]] = []
    for s in sorted(segs, key=lambda s: s.top):
        if rows and s.top < rows[-1][1]:
            rows[-1] = (rows[-1][0], max(rows[-1][1], s.bottom), [*rows[-1][2], s])
        else:
            rows.append((s.top, s.bottom, [s]))
    return rows


def _body_spacing(pages_rows: list[list[tuple[float, float, list[Seg]]]]) -> float | None:
    """The document's wide spacing between body rows: the 90th percentile of the gaps between rows
    that are neither a page's first nor its last (None with fewer than five such gaps)."""
    gaps = sorted(b[0] - a[1] for rows in pages_rows for a, b in zip(rows[1:-2], rows[2:-1], strict=True))
    return gaps[int(0.9 * (len(gaps) - 1))] if len(gaps) >= 5 else None


def _edge_blocks(
    rows: list[tuple[float, float, list[Seg]]], height: float, spacing: float | None
) -> tuple[set[int], set[int]]:
    """The ids of the segments in the page's top and bottom edge blocks (see :func:`_remove_margins`).

    From each edge, rows are taken while they lie within ``_EDGE`` of the page height from it, up
    to the first gap wider than the row's height and than 1.5 times the document's ``spacing``
    (:func:`_body_spacing`): a header is set apart from the body more than body rows are from
    each other. A block counts only when that gap is found and body text (outside the fixed
    bands) lies between the two blocks; without a measured spacing there are no blocks.
    """
    if spacing is None:
        return set(), set()

    def block(order: list[int], near: Callable[[int], bool], gap: Callable[[int, int], float]) -> int:
        """How many rows, in ``order`` from the edge, form its block (0: none)."""
        for k, r in enumerate(order[:-1]):
            if not near(r):
                return 0
            if gap(r, order[k + 1]) > max(rows[r][1] - rows[r][0], 1.5 * spacing):
                return k + 1
        return 0

    idx = list(range(len(rows)))
    n_top = block(idx, lambda r: rows[r][0] < _EDGE * height, lambda a, b: rows[b][0] - rows[a][1])
    n_bottom = block(
        idx[::-1], lambda r: rows[r][1] > (1 - _EDGE) * height, lambda a, b: rows[a][0] - rows[b][1]
    )
    middle = range(n_top, len(rows) - n_bottom)
    if not any(_MARGIN * height < (rows[r][0] + rows[r][1]) / 2 < (1 - _MARGIN) * height for r in middle):
        return set(), set()  # no body text between the blocks: nothing to set them apart from
    top = {id(s) for r in rows[:n_top] for s in r[2]}
    bottom = {id(s) for r in rows[len(rows) - n_bottom :] for s in r[2]}
    return top, bottom


def _page_numbers(keyed: list[list[tuple[Seg, tuple[str, str] | None]]]) -> set[int]:
    """Margin lines that are page numbers: named ("Page 3", "3 of 10", "Página 3 de
    10", "Seite 3 von 10") or bare numbers, digits or roman numerals, that advance with
    the pages.

    A bare number counts only when its offset from the page index is shared by another
    page's bare number of its kind (or the document has one page), so a table cell "42",
    or a word of roman letters that is a numeral ("mix", 1009), that lands in the margin
    stays text.
    """
    found: set[int] = set()
    bare: list[tuple[tuple[bool, int], int, Seg]] = []
    for i, row in enumerate(keyed):
        for s, key in row:
            match = _PAGE_NUMBER.match(s.text) if key is not None else None
            if match is None:
                continue
            if match["word"] or match["total"]:
                found.add(id(s))
            else:
                number = match["number"]
                bare.append(((number.isdigit(), _number_value(number) - i), i, s))
    pages_with = Counter(off for off, _ in {(off, i) for off, i, _ in bare})
    need = 1 if len(keyed) == 1 else 2
    found.update(id(s) for off, _, s in bare if pages_with[off] >= need)
    return found


def _number_value(number: str) -> int:
    """The value of a number as ``_PAGE_NUMBER`` matches one: "12" is 12, "xiv" and "XIV" are 14."""
    if number.isdigit():
        return int(number)
    values = [_ROMAN_DIGITS[c] for c in number.lower()]
    return sum(-v if v < after else v for v, after in zip(values, [*values[1:], 0], strict=True))


def _assemble(
    pages: list[list[Seg]], sizes: list[tuple[float, float]]
) -> tuple[str, list[Element], list[LineEndHyphen]]:
    """The document's text, its elements and the words hyphenated at a line end (offsets into the text)."""
    allsegs = [s for segs in pages for s in segs]
    body = _body_size(allsegs)
    heading_sizes = sorted({round(s.size) for s in allsegs if s.size >= 1.15 * body}, reverse=True)
    hyphenation = Hyphenation(allsegs)
    hyphens: list[LineEndHyphen] = []
    parts: list[str] = []
    elements: list[Element] = []
    pos = 0
    tables = 0
    for segs, (width, _) in zip(pages, sizes, strict=True):
        page_blocks, tables = blocks(reading_order(segs, width), body, tables)
        for b in page_blocks:
            piece, decided = block_text(b, hyphenation)
            if not piece:
                continue
            if parts:
                same_table = b.table is not None and bool(elements) and elements[-1].table == b.table
                parts.append("\n" if same_table else "\n\n")
                pos += len(parts[-1])
            hyphens += [{**h, "start": pos + h["start"], "end": pos + h["end"]} for h in decided]
            level = None
            if b.type == "heading":
                size = round(statistics.median(s.size for line in b.lines for s in line))
                level = heading_sizes.index(size) + 1 if size in heading_sizes else len(heading_sizes) + 1
            segs_b = [s for line in b.lines for s in line]
            bbox = (
                round(min(s.x0 for s in segs_b), 1),
                round(min(s.top for s in segs_b), 1),
                round(max(s.x1 for s in segs_b), 1),
                round(max(s.bottom for s in segs_b), 1),
            )
            style = f"{statistics.median(s.size for s in segs_b):.1f}pt" + (
                " bold" if all(s.is_bold for s in segs_b) else ""
            )
            elements.append(
                Element(
                    pos,
                    pos + len(piece),
                    b.type,
                    segs_b[0].page,
                    bbox,
                    level,
                    style,
                    table=b.table,
                    header=b.header,
                )
            )
            parts.append(piece)
            pos += len(piece)
    return "".join(parts), elements, hyphens


def _body_size(segs: list[Seg]) -> float:
    weights: Counter[float] = Counter()
    for s in segs:
        weights[round(s.size, 1)] += len(s.chars)
    return weights.most_common(1)[0][0] if weights else 10.0
