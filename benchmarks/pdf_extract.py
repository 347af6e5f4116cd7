"""PDF text extraction compared: chunklab's loader (PDFium + layout), PDFium alone, pdfplumber, pdfminer.six.

Speed: pages per second on real PDFs (the paths given, else the PDF manuals Debian ships in
/usr/share/doc). Text quality: on PDFs generated with known text (one column with running
headers, footers and page numbers; two columns; hyphenated line breaks; ligatures; two columns
under a wide abstract and around a wide caption with a 4 mm gutter; running headers that change
per chapter with page numbers outside the 9 % bands; every glyph at size 1), the word
sequence similarity (difflib ratio) to the known reading-order text, and how many header,
footer and page-number words leak into the text.

    python benchmarks/pdf_extract.py [PDF ...]      # writes benchmarks/results/pdf_extract.json

Needs the benchmark-only peers: ``pip install -r benchmarks/requirements.txt`` (pdfplumber).
"""

from __future__ import annotations

import difflib
import glob
import json
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import docgen  # noqa: E402  (the generators the tests use)

from chunklab.documents import load_document  # noqa: E402

Extractor = Callable[[str], str]


def chunklab_text(path: str) -> str:
    """The kit's canonical extraction."""
    return load_document(path).text


def pdfium_text(path: str) -> str:
    """pypdfium2's own text, page by page, no layout analysis."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        return "\n\n".join(pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf)))
    finally:
        pdf.close()


def plumber_text(path: str) -> str:
    """pdfplumber's ``extract_text`` per page."""
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return "\n\n".join(page.extract_text() or "" for page in pdf.pages)


def pdfminer_text(path: str) -> str:
    """pdfminer.six's high-level ``extract_text`` (its layout analysis, default LAParams)."""
    from pdfminer.high_level import extract_text

    return str(extract_text(path))


EXTRACTORS: dict[str, Extractor] = {
    "chunklab (pypdfium2 + layout)": chunklab_text,
    "pypdfium2 get_text_bounded": pdfium_text,
    "pdfplumber extract_text": plumber_text,
    "pdfminer.six extract_text": pdfminer_text,
}

PARA = (
    "Operators check the coolant level every morning before the first shift begins, and they "
    "write the reading in the log book kept beside the main control panel of the plant."
)


def known_cases(folder: Path) -> list[tuple[str, Path, str, list[str]]]:
    """(name, pdf, known reading-order text, words that must not appear) for each generated case."""
    pages = [[f"Page{k} {PARA}", f"Second{k} {PARA}"] for k in range(1, 6)]
    cases = [
        (
            "headers, footers, page numbers",
            docgen.pdf_pages(
                folder / "hf.pdf", pages, header="ACMEHEADER manual", footer="FOOTERCORP", numbers=True
            ),
            " ".join(p for page in pages for p in page),
            ["ACMEHEADER", "FOOTERCORP"],
        )
    ]
    left, right = [f"Leftcol {PARA} {PARA}"], [f"Rightcol {PARA} {PARA}"]
    cases.append(
        (
            "two columns",
            docgen.pdf_two_columns(folder / "two.pdf", left, right, title="Title words"),
            " ".join(["Title words", *left, *right]),
            [],
        )
    )
    lines = ["The experi-", "ment shows that a hyphen-", "ated word is one word, and the ﬁle ﬂow is"]
    cases.append(
        (
            "hyphenation, ligatures",
            docgen.pdf_lines(folder / "hy.pdf", lines),
            "The experiment shows that a hyphenated word is one word, and the file flow is",
            [],
        )
    )
    abstract = f"Abstract. {PARA} {PARA} {PARA}"
    caption = "Figure 1: A caption set across the whole page, under a figure that spans both columns."
    blocks: list[str | tuple[list[str], list[str]]] = [
        abstract,
        ([f"Alpha {PARA}"], [f"Beta {PARA}"]),
        caption,
        ([f"Gamma {PARA}"], [f"Delta {PARA}"]),
    ]
    cases.append(
        (
            "columns under a wide abstract, around a wide caption, 4 mm gutter",
            docgen.pdf_column_blocks(folder / "cols.pdf", blocks, title="A wide title", gutter=4.0),
            " ".join(["A wide title", abstract, f"Alpha {PARA}", f"Beta {PARA}", caption])
            + f" Gamma {PARA} Delta {PARA}",
            [],
        )
    )
    chapters = [(f"Part{c}", [f"Body{c}x{k} {PARA}" for k in range(4)]) for c in range(1, 4)]
    cases.append(
        (
            "running headers per chapter, page numbers at 0.88 of the page",
            docgen.pdf_chapters(folder / "book.pdf", chapters),
            " ".join(
                t for c, (title, pages) in enumerate(chapters, 1) for t in (f"Chapter {c}. {title}", *pages)
            ),
            [],  # the headers' words are the chapter headings' words: leaks show in the similarity
        )
    )
    lines = [("R", "Measuring the coolant", 18.0, 1.0)]
    lines += [("R", line, 10.0, 1.0) for line in textwrap.wrap(f"{PARA} {PARA}", 70)]
    cases.append(
        (
            "every glyph set at size 1 and scaled by the text matrix",
            docgen.pdf_font_claims(folder / "size1.pdf", lines),
            " ".join(text for _, text, _, _ in lines),
            [],
        )
    )
    return cases


def quality(extract: Extractor, cases: list[tuple[str, Path, str, list[str]]]) -> dict[str, dict[str, float]]:
    """Per case: word-sequence similarity to the known text, and leaked margin words."""
    out = {}
    for name, path, known, banned in cases:
        words = extract(str(path)).split()
        ratio = difflib.SequenceMatcher(a=known.split(), b=words, autojunk=False).ratio()
        leaked = sum(1 for w in words if w in banned) + (
            sum(1 for w in words if w.isdigit() and len(w) == 1) if banned else 0
        )
        out[name] = {"similarity": round(ratio, 4), "leaked_margin_words": leaked}
    return out


def speed(extract: Extractor, paths: list[str]) -> dict[str, float]:
    """Pages per second over ``paths`` (one pass each, wall time)."""
    import pypdfium2 as pdfium

    pages = sum(len(pdfium.PdfDocument(p)) for p in paths)
    t0 = time.perf_counter()
    chars = sum(len(extract(p)) for p in paths)
    seconds = time.perf_counter() - t0
    return {
        "pages": pages,
        "seconds": round(seconds, 3),
        "pages_per_s": round(pages / seconds, 1),
        "chars": chars,
    }


def main(argv: list[str]) -> int:
    """Run every extractor on the generated cases and the real PDFs; print and save the table."""
    real = argv or sorted(glob.glob("/usr/share/doc/**/*.pdf", recursive=True))
    results: dict[str, object] = {"real_pdfs": real, "extractors": {}}
    with tempfile.TemporaryDirectory() as tmp:
        cases = known_cases(Path(tmp))
        for name, extract in EXTRACTORS.items():
            try:
                row = {"quality": quality(extract, cases), "speed": speed(extract, real) if real else None}
            except ImportError as exc:
                row = {"error": f"not installed: {exc}"}
            results["extractors"][name] = row  # type: ignore[index]
            print(name, json.dumps(row))
    out = Path(__file__).parent / "results" / "pdf_extract.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
