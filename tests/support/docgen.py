"""Generated PDFs, Word files and notebooks with known text, made at test time."""

from __future__ import annotations

import io
import os
from pathlib import Path

import matplotlib

TTF = os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")
TTF_BOLD = os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans-Bold.ttf")


def _pdf():  # type: ignore[no-untyped-def]
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_font("dv", "", TTF)
    pdf.add_font("dv", "B", TTF_BOLD)
    pdf.set_margins(20, 20, 20)
    return pdf


def pdf_pages(
    path: str | Path,
    pages: list[list[str]],
    *,
    header: str | None = None,
    footer: str | None = None,
    numbers: bool = False,
    headings: list[str] | None = None,
) -> Path:
    """One paragraph list per page; optional running header/footer text and page numbers."""
    pdf = _pdf()
    for i, paragraphs in enumerate(pages, 1):
        pdf.add_page()
        if header:
            pdf.set_font("dv", "", 8)
            pdf.set_xy(20, 8)
            pdf.cell(0, 5, header)
        pdf.set_xy(20, 25)
        if headings:
            pdf.set_font("dv", "B", 16)
            pdf.multi_cell(0, 9, headings[i - 1])
            pdf.ln(3)
        pdf.set_font("dv", "", 11)
        for p in paragraphs:
            pdf.multi_cell(0, 5.5, p)
            pdf.ln(4)
        pdf.set_font("dv", "", 8)
        if footer:
            pdf.set_xy(20, 282)
            pdf.cell(100, 5, footer)
        if numbers:
            pdf.set_xy(180, 282)
            pdf.cell(10, 5, str(i))
    pdf.output(str(path))
    return Path(path)


def pdf_margins(path: str | Path, pages: list[tuple[list[str], list[str]]]) -> Path:
    """One ``(header lines, footer lines)`` pair per page (three of each at most), each line on its
    own baseline in the top or bottom margin, and a body paragraph between them."""
    pdf = _pdf()
    for k, (header, footer) in enumerate(pages, 1):
        pdf.add_page()
        pdf.set_font("dv", "", 8)
        for j, line in enumerate(header):
            pdf.set_xy(20, 5 + 5 * j)
            pdf.cell(0, 5, line)
        for j, line in enumerate(footer):
            pdf.set_xy(20, 286 - 5 * j)
            pdf.cell(0, 5, line)
        pdf.set_font("dv", "", 11)
        pdf.set_xy(20, 40)
        pdf.multi_cell(0, 5.5, f"Body text of page {k}, with enough words to read as a paragraph.")
    pdf.output(str(path))
    return Path(path)


def pdf_chapters(
    path: str | Path,
    chapters: list[tuple[str, list[str]]],
    *,
    header_y: float = 30.0,
    footer_y: float = 262.0,
) -> Path:
    """A book-like PDF: each chapter ``(title, one paragraph per page)`` opens with a large heading and
    no running header; its other pages carry the running header "<n>  Chapter <c>. <title>" (the page
    number in it) at ``header_y`` mm and a bare page number at ``footer_y`` mm, both outside the
    usual 9 % bands of an A4 page; the body lies between them."""
    pdf = _pdf()
    n = 0
    for c, (title, pages) in enumerate(chapters, 1):
        for k, paragraph in enumerate(pages):
            n += 1
            pdf.add_page()
            pdf.set_xy(20, 45)
            if k == 0:
                pdf.set_font("dv", "B", 18)
                pdf.multi_cell(0, 10, f"Chapter {c}. {title}")
                pdf.ln(4)
            else:
                pdf.set_font("dv", "", 9)
                pdf.set_xy(20, header_y)
                pdf.cell(0, 5, f"{n}  Chapter {c}. {title}")
                pdf.set_xy(20, 45)
            pdf.set_font("dv", "", 11)
            pdf.multi_cell(0, 5.5, paragraph)
            pdf.set_font("dv", "", 9)
            pdf.set_xy(100, footer_y)
            pdf.cell(10, 5, str(n), align="C")
    pdf.output(str(path))
    return Path(path)


def pdf_two_columns(path: str | Path, left: list[str], right: list[str], *, title: str = "") -> Path:
    """One page, a full-width title, then two columns written line by line (interleaved)."""
    pdf = _pdf()
    pdf.add_page()
    y = 20.0
    if title:
        pdf.set_font("dv", "B", 16)
        pdf.set_xy(20, y)
        pdf.cell(170, 9, title)
        y += 15
    pdf.set_font("dv", "", 10)
    lines_l = _wrap(pdf, left, 80)
    lines_r = _wrap(pdf, right, 80)
    for k in range(max(len(lines_l), len(lines_r))):
        for x, lines in ((20, lines_l), (110, lines_r)):
            if k < len(lines) and lines[k]:
                pdf.set_xy(x, y + k * 5)
                pdf.cell(80, 5, lines[k])
    pdf.output(str(path))
    return Path(path)


def pdf_column_blocks(
    path: str | Path,
    blocks: list[str | tuple[list[str], list[str]]],
    *,
    title: str = "",
    gutter: float = 6.0,
    size: float = 9.0,
) -> Path:
    """One page: a full-width title, then ``blocks`` top to bottom, each a full-width paragraph (a
    string: an abstract, a figure caption) or a ``(left, right)`` pair of paragraph lists set as two
    columns ``gutter`` mm apart, written line by line across both columns (interleaved)."""
    pdf = _pdf()
    pdf.add_page()
    y, lead = 20.0, size * 0.45
    if title:
        pdf.set_font("dv", "B", 16)
        pdf.set_xy(15, y)
        pdf.cell(180, 9, title)
        y += 14
    pdf.set_font("dv", "", size)
    col = (180 - gutter) / 2
    for block in blocks:
        if isinstance(block, str):
            pdf.set_xy(15, y)
            pdf.multi_cell(180, lead, block)
            y = pdf.get_y() + 4
            continue
        lines_l, lines_r = _wrap(pdf, block[0], col), _wrap(pdf, block[1], col)
        for k in range(max(len(lines_l), len(lines_r))):
            for x, lines in ((15, lines_l), (15 + col + gutter, lines_r)):
                if k < len(lines) and lines[k]:
                    pdf.set_xy(x, y + k * lead)
                    pdf.cell(col, lead, lines[k])
        y += max(len(lines_l), len(lines_r)) * lead + 4
    pdf.output(str(path))
    return Path(path)


def _wrap(pdf, paragraphs: list[str], width: float) -> list[str]:  # type: ignore[no-untyped-def]
    lines: list[str] = []
    for p in paragraphs:
        lines += pdf.multi_cell(width, 5, p, dry_run=True, output="LINES")
        lines.append("")
    return lines


def pdf_lines(path: str | Path, lines: list[str], *, size: float = 11) -> Path:
    """One page with each string on its own line exactly as given (for hyphenation)."""
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("dv", "", size)
    for k, line in enumerate(lines):
        pdf.set_xy(20, 25 + k * 6)
        pdf.cell(0, 6, line)
    pdf.output(str(path))
    return Path(path)


def pdf_table(path: str | Path, lead: str, rows: list[list[str]], caption: str, after: str) -> Path:
    """A paragraph, a caption, a table (first row the header), then a paragraph."""
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("dv", "B", 15)
    pdf.multi_cell(0, 8, "Results")
    pdf.ln(3)
    pdf.set_font("dv", "", 11)
    pdf.multi_cell(0, 5.5, lead)
    pdf.ln(3)
    pdf.multi_cell(0, 5.5, caption)
    pdf.ln(2)
    with pdf.table(col_widths=(50, 40, 40), width=130, align="LEFT") as table:
        for r in rows:
            row = table.row()
            for cell in r:
                row.cell(cell)
    pdf.ln(4)
    pdf.multi_cell(0, 5.5, after)
    pdf.output(str(path))
    return Path(path)


def pdf_scanned(path: str | Path, pages: int = 2) -> Path:
    """Pages that hold only an image of text: no text layer."""
    return pdf_partly_scanned(path, [None] * pages)


def pdf_encrypted(path: str | Path, text: str = "A secret paragraph.") -> Path:
    """A PDF that needs a user password to open."""
    pdf = _pdf()
    pdf.set_encryption(owner_password="owner", user_password="secret")
    pdf.add_page()
    pdf.set_font("dv", "", 11)
    pdf.multi_cell(0, 5.5, text)
    pdf.output(str(path))
    return Path(path)


def pdf_partly_scanned(path: str | Path, pages: list[list[str] | None]) -> Path:
    """One paragraph list per page, or None for a page that holds only an image of text (no text layer)."""
    from PIL import Image, ImageDraw

    pdf = _pdf()
    for paragraphs in pages:
        pdf.add_page()
        if paragraphs is None:
            img = Image.new("L", (600, 300), 255)
            ImageDraw.Draw(img).text((20, 20), "This page was scanned", fill=0)
            buf = io.BytesIO()
            img.save(buf, format="PNG")
            pdf.image(buf, x=20, y=20, w=170)
        else:
            pdf.set_xy(20, 25)
            _set_paragraphs(pdf, "dv", paragraphs)
    pdf.output(str(path))
    return Path(path)


def pdf_serif(path: str | Path, paragraphs: list[str]) -> Path:
    """Paragraphs set in DejaVu Serif, which has the math italic letters outside the BMP (U+1D400...)."""
    pdf = _pdf()
    pdf.add_font("dvs", "", os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSerif.ttf"))
    pdf.add_page()
    _set_paragraphs(pdf, "dvs", paragraphs)
    pdf.output(str(path))
    return Path(path)


def pdf_runs(path: str | Path, runs: list[tuple[str, str]]) -> Path:
    """One line of text runs, each ``(font, text)`` with ``font`` a file of matplotlib's TrueType folder
    ("cmsy10.ttf": TeX's symbol font, whose "h" draws the angle bracket ⟨)."""
    pdf = _pdf()
    pdf.add_page()
    for font, text in runs:
        pdf.add_font(font, "", os.path.join(matplotlib.get_data_path(), "fonts", "ttf", font))
        pdf.set_font(font, "", 11)
        pdf.write(6, text)
    pdf.output(str(path))
    return Path(path)


def pdf_font_claims(
    path: str | Path,
    lines: list[tuple[str, str, float, float]],
    fonts: dict[str, str] | None = None,
    word_spacing: list[float] | None = None,
) -> Path:
    """One A4 page written by hand (no PDF library), so that its fonts can claim what they are not.

    ``lines`` holds ``(font, text, size, claimed)`` top to bottom, 1.6 sizes apart: ``font`` names a
    resource of ``fonts`` (default: "R" Helvetica, "B" Helvetica-Bold, and "W": Helvetica with a
    font descriptor whose stem width, 151, PDFium reads as weight 744, as Ghostscript writes TeX's
    regular CMR10), ``size`` the size the glyphs are drawn at, ``claimed`` the size the font
    operator states (Tf); the text matrix scales one to the other, as Distiller does at size 1.
    ``word_spacing`` (one per line, in points on the page) widens each space of that line by the
    ``Tw`` operator, as a justified line's spaces are. Text is Latin-1.
    """
    descriptor = (
        "<< /Type /FontDescriptor /FontName /Helvetica /Flags 32 /StemV 151 /ItalicAngle 0 "
        "/FontBBox [-166 -225 1000 931] /Ascent 718 /Descent -207 /CapHeight 718 >>"
    )
    fonts = fonts or {"R": "Helvetica", "B": "Helvetica-Bold", "W": "Helvetica"}
    objects: list[bytes] = []
    ids: dict[str, int] = {}
    for key, name in fonts.items():
        extra = ""
        if key == "W":
            objects.append(descriptor.encode())
            extra = f" /FontDescriptor {len(objects)} 0 R"
        font = f"<< /Type /Font /Subtype /Type1 /BaseFont /{name} /Encoding /WinAnsiEncoding{extra} >>"
        objects.append(font.encode())
        ids[key] = len(objects)
    ops, y = [], 800.0
    for i, (key, text, size, claimed) in enumerate(lines):
        quoted = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        scale = size / claimed
        tw = (word_spacing[i] if word_spacing else 0.0) / scale  # Tw is in unscaled text space
        ops.append(
            f"BT /{key} {claimed:g} Tf {tw:g} Tw {scale:g} 0 0 {scale:g} 56 {y:.1f} Tm ({quoted}) Tj ET"
        )
        y -= 1.6 * size
    stream = "\n".join(ops).encode("latin-1")
    objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    resources = " ".join(f"/{k} {v} 0 R" for k, v in ids.items())
    n = len(objects)
    objects.append(
        f"<< /Type /Page /Parent {n + 2} 0 R /MediaBox [0 0 595 842] "
        f"/Resources << /Font << {resources} >> >> /Contents {n} 0 R >>".encode()
    )
    objects.append(f"<< /Type /Pages /Kids [{n + 1} 0 R] /Count 1 >>".encode())
    objects.append(f"<< /Type /Catalog /Pages {n + 2} 0 R >>".encode())
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for k, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        len(objects),
        xref,
    )
    Path(path).write_bytes(bytes(out))
    return Path(path)


def pdf_marked(path: str | Path, runs: list[tuple[str, str]]) -> Path:
    """One paragraph written run by run, each ``(position, text)`` with ``position`` "LINE",
    "SUP" (a superscript, as a footnote mark) or "SUB" (a subscript)."""
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("dv", "", 11)
    pdf.set_xy(20, 40)
    for position, text in runs:
        pdf.char_vpos = position
        pdf.write(5.5, text)
    pdf.char_vpos = "LINE"
    pdf.output(str(path))
    return Path(path)


def _set_paragraphs(pdf, font: str, paragraphs: list[str]) -> None:  # type: ignore[no-untyped-def]
    pdf.set_font(font, "", 11)
    for p in paragraphs:
        pdf.multi_cell(0, 5.5, p)
        pdf.ln(4)


#: how a Word segment starts: on the same page, or on a new one by each kind of break Word saves
DOCX_STARTS = ("same", "rendered", "hard", "hard+rendered", "blank", "before", "before+rendered")


def docx_paged(
    path: str | Path, paragraphs: list[list[tuple[str, str]]], *, own_paragraph: bool = False
) -> list[int]:
    """A Word file whose page breaks are known: the page each segment's text lies on.

    ``paragraphs`` holds ``(text, start)`` segments, ``start`` one of :data:`DOCX_STARTS`:
    ``rendered`` is a ``w:lastRenderedPageBreak`` before the text (Word's layout ran out of page),
    ``hard`` a ``w:br w:type="page"`` (at the end of the previous paragraph, or in a paragraph of
    its own when ``own_paragraph``, for a segment that opens its paragraph), ``+rendered`` the
    rendered break Word also writes at the top of the page that starts, ``blank`` two hard breaks
    (an empty page between), ``before`` the paragraph's ``pageBreakBefore`` (a later segment of
    the paragraph gets a rendered break instead). Segments of a paragraph are joined by a space;
    the first segment of the file should be ``same``. The pages are counted here, from what was
    written, not by the loader's rules.
    """
    import docx
    from docx.enum.text import WD_BREAK
    from docx.oxml import OxmlElement

    d = docx.Document()
    page, pages, last_run = 1, [], None
    for segments in paragraphs:
        p = None
        for k, (text, start) in enumerate(segments):
            if k and start.startswith("before"):
                start = "rendered"
            hard = 2 if start == "blank" else 1 if start.startswith("hard") else 0
            if hard and k == 0 and own_paragraph:
                holder = d.add_paragraph().add_run()
            elif hard and k == 0 and last_run is not None:
                holder = last_run
            else:
                p = p if p is not None else d.add_paragraph()
                holder = p.add_run() if hard else None
            for _ in range(hard):
                holder.add_break(WD_BREAK.PAGE)
            p = p if p is not None else d.add_paragraph()
            if start.startswith("before"):
                p.paragraph_format.page_break_before = True
            run = p.add_run()
            if start.endswith("rendered") or start == "blank":
                run._r.append(OxmlElement("w:lastRenderedPageBreak"))
            run.add_text(text + (" " if k + 1 < len(segments) else ""))
            page += hard or (start != "same")
            pages.append(page)
            last_run = run
    d.save(str(path))
    return pages


def page_image(pdf_path: str | Path, page: int = 1, dpi: int = 150):  # type: ignore[no-untyped-def]
    """A page of a PDF rendered to a grayscale PIL image (what a scanner would give)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        return pdf[page - 1].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
    finally:
        pdf.close()


def pdf_with_image_pages(
    path: str | Path, source: str | Path, images: set[int], dpi: int = 150, *, stamp: str | None = None
) -> Path:
    """``source`` again with the pages numbered in ``images`` replaced by a picture of themselves (no
    text layer there): a scanned, or partly scanned, PDF whose original text layer is the truth.
    ``stamp``: a line of real text written at the top of each picture page (as archive tools stamp)."""
    import ctypes

    import pypdfium2 as pdfium
    import pypdfium2.raw as pr

    src = pdfium.PdfDocument(str(source))
    out = pdfium.PdfDocument.new()
    try:
        for i in range(len(src)):
            if i + 1 not in images:
                out.import_pages(src, [i])
                continue
            width, height = src[i].get_size()
            page = out.new_page(width, height)
            picture = pdfium.PdfImage.new(out)
            bitmap = pdfium.PdfBitmap.from_pil(page_image(source, i + 1, dpi))
            picture.set_bitmap(bitmap)
            picture.set_matrix(pdfium.PdfMatrix().scale(width, height))
            page.insert_obj(picture)
            if stamp:
                text = pr.FPDFPageObj_NewTextObj(out.raw, b"Helvetica", ctypes.c_float(9))
                chars = ctypes.create_string_buffer((stamp + "\0").encode("utf-16-le"))
                pr.FPDFText_SetText(text, ctypes.cast(chars, ctypes.POINTER(pr.FPDF_WCHAR)))
                pr.FPDFPageObj_Transform(text, 1, 0, 0, 1, 20, height - 15)
                pr.FPDFPage_InsertObject(page.raw, text)
            page.gen_content()
        out.save(str(path))
    finally:
        out.close()
        src.close()
    return Path(path)


_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_RELS_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def docx_xml(
    path: str | Path,
    body: str,
    *,
    footnotes: dict[int, str] | None = None,
    endnotes: dict[int, str] | None = None,
    strict: bool = False,
) -> Path:
    """A Word file written by hand from WordprocessingML, for what python-docx cannot write.

    ``body`` is the inner XML of ``w:body`` (prefix ``w:``; ``mc:``, ``wps:`` and ``v:`` are
    declared too); ``footnotes`` / ``endnotes`` map a note id to its text. ``strict`` writes a Strict
    Open XML file (its own namespaces for ``w:``, ``r:`` and the relationship types).
    """
    import zipfile

    namespace = "http://purl.oclc.org/ooxml/wordprocessingml/main" if strict else _W_NS
    rels_ns = "http://purl.oclc.org/ooxml/officeDocument/relationships" if strict else _RELS_NS

    decl = (
        f'xmlns:w="{namespace}" xmlns:r="{rels_ns}" '
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
        'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
        'xmlns:v="urn:schemas-microsoft-com:vml" mc:Ignorable="wps"'
    )
    parts = {"word/document.xml": f"<w:document {decl}><w:body>{body}</w:body></w:document>"}
    types = [
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument'
        '.wordprocessingml.document.main+xml"/>'
    ]
    rels = []
    for kind, notes in (("footnote", footnotes), ("endnote", endnotes)):
        if notes is None:
            continue
        items = "".join(
            f'<w:{kind} w:id="{n}"><w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p></w:{kind}>'
            for n, text in notes.items()
        )
        parts[f"word/{kind}s.xml"] = f"<w:{kind}s {decl}>{items}</w:{kind}s>"
        types.append(
            f'<Override PartName="/word/{kind}s.xml" ContentType="application/vnd.openxmlformats-'
            f'officedocument.wordprocessingml.{kind}s+xml"/>'
        )
        rels.append(f'<Relationship Id="r{kind}" Type="{rels_ns}/{kind}s" Target="{kind}s.xml"/>')
    parts["[Content_Types].xml"] = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>' + "".join(types) + "</Types>"
    )
    parts["_rels/.rels"] = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rels_ns}/officeDocument" Target="word/document.xml"/>'
        "</Relationships>"
    )
    parts["word/_rels/document.xml.rels"] = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        + "".join(rels)
        + "</Relationships>"
    )
    with zipfile.ZipFile(path, "w") as z:
        for name, xml in parts.items():
            z.writestr(name, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' + xml)
    return Path(path)
