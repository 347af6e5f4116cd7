"""The PDF chapter's helpers: a small generated manual and the chunk boxes drawn on its pages.

Kept beside the chapter (like ``booktools.py``) so the page builds offline without the corpus:
the PDF is written by fpdf2 at build time, read by ``chunklab.documents.load_document`` and
rendered by pypdfium2.
"""

from __future__ import annotations

from pathlib import Path

SECTIONS = [
    (
        "Installation",
        [
            "Mount the pump on a level concrete base at least 10 cm thick. Leave 40 cm of free "
            "space on the motor side for the cooling air.",
            "Connect the suction line first. The suction pipe must rise towards the pump by at "
            "least 2 per cent, so that no air pocket forms.",
        ],
    ),
    (
        "Operating limits",
        ["Never run the pump dry: the mechanical seal fails within 30 seconds without water."],
    ),
]
TABLE = [
    ("Quantity", "Minimum", "Maximum"),
    ("Flow (m3/h)", "2", "40"),
    ("Head (m)", "5", "62"),
    ("Water (C)", "4", "60"),
]


def write_manual(path: Path) -> Path:
    """A two-page A5 manual: a running header, page numbers, headings, a table and its caption."""
    from fpdf import FPDF

    pdf = FPDF(format=(148, 210))
    pdf.set_auto_page_break(True, margin=18)

    def header() -> None:
        pdf.set_font("helvetica", size=8)
        pdf.set_y(6)
        pdf.cell(0, 5, "Pump P-40 service manual - revision 3", align="C")
        pdf.set_y(16)

    def footer() -> None:
        pdf.set_y(-12)
        pdf.set_font("helvetica", size=8)
        pdf.cell(0, 5, str(pdf.page_no()), align="C")

    pdf.header = header  # type: ignore[method-assign]
    pdf.footer = footer  # type: ignore[method-assign]
    pdf.add_page()
    for n, (title, paras) in enumerate(SECTIONS, 1):
        pdf.set_font("helvetica", "B", 14)
        pdf.cell(0, 9, f"{n} {title}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", size=10)
        for p in paras:
            pdf.multi_cell(0, 5, p, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
    pdf.set_font("helvetica", size=9)
    with pdf.table(col_widths=(40, 30, 30)) as table:
        for row in TABLE:
            cells = table.row()
            for value in row:
                cells.cell(value)
    pdf.ln(3)
    pdf.set_font("helvetica", size=10)
    pdf.multi_cell(0, 5, "Table 1: Limits of the P-40 at 2900 rpm.", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    pdf.multi_cell(
        0,
        5,
        "Above 60 C the seal wears quickly; below 4 C the water may freeze in the casing.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.add_page()
    pdf.set_font("helvetica", "B", 14)
    pdf.cell(0, 9, "3 Maintenance", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=10)
    pdf.multi_cell(
        0,
        5,
        "Check the seal every 500 hours. Replace the bearings every 8000 hours or every "
        "two years, whichever comes first.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.output(str(path))
    return path


def chunk_boxes(doc, chunks, page: int) -> list[tuple[int, tuple[float, float, float, float]]]:
    """For each chunk, the union of the boxes of its elements on ``page`` (PDF points, top-left origin)."""
    out = []
    for i, c in enumerate(chunks):
        boxes = [
            e.bbox for e in doc.elements if e.page == page and e.bbox and e.start < c.end and e.end > c.start
        ]
        if boxes:
            out.append(
                (
                    i,
                    (
                        min(b[0] for b in boxes),
                        min(b[1] for b in boxes),
                        max(b[2] for b in boxes),
                        max(b[3] for b in boxes),
                    ),
                )
            )
    return out


def page_image(path: Path, page: int, scale: float = 2.0):
    """Page ``page`` (1-based) rendered by pypdfium2 as an RGB array, and its size in points."""
    import numpy as np
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        p = pdf[page - 1]
        width, height = p.get_size()
        image = np.asarray(p.render(scale=scale).to_pil().convert("RGB"))
        return image, (width, height)
    finally:
        pdf.close()
