"""Words hyphenated at a PDF line end on the pdf-docs corpus: what decides, and what changed.

Every born-digital PDF of ``pdf-docs`` is read from its text layer by the kit's loader
(:func:`chunklab.documents.pdf.extract_pdf`, OCR off). Each word hyphenated at a line end is
decided by :class:`chunklab.documents.pdf.layout.Hyphenation` (the document's own spelling of
the word first, then LibreOffice's en_US hyphenation patterns through pyphen) and recorded in
``metadata["hyphenation"]``; the previous rule (drop the hyphen unless the document writes the
word with it elsewhere) is evaluated on the same candidates, so the decisions that changed are
counted and listed. Scanned files (no text layer) are left out.

    python -m benchmarks.pdf_hyphenation [--corpus-dir DIR] [--out FILE]
    # benchmarks/results/pdf_hyphenation.json and .md
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.code_rag_50k.resources import machine, measured  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "pdf_hyphenation.json"


def run(folder: Path) -> dict[str, Any]:
    """Decisions on every readable PDF under ``folder``: counts by what decided, and the changes."""
    from chunklab.decoding import DocumentError
    from chunklab.documents.ocr import PageOcr
    from chunklab.documents.pdf import extract_pdf, layout

    seen: list[tuple[str, bool, str, bool]] = []  # (word as written now, joined, by, joined by the old rule)
    decide = layout.Hyphenation.joins

    def joins(self: layout.Hyphenation, head: str, tail: str) -> tuple[bool, str]:
        joined, by = decide(self, head, tail)
        old = self.counts[(head + tail).lower()] == 0  # the old rule: join unless written with the hyphen
        seen.append((head[:-1] + tail if joined else head + tail, joined, by, old))
        return joined, by

    files, refused = [], []
    layout.Hyphenation.joins = joins  # type: ignore[method-assign]
    try:
        for path in sorted(folder.rglob("*.pdf")):
            name = path.relative_to(folder).as_posix()
            try:
                extract_pdf(path.read_bytes(), name, ocr=PageOcr("never"))
            except DocumentError:
                refused.append(name)
                continue
            files.append(name)
    finally:
        layout.Hyphenation.joins = decide  # type: ignore[method-assign]
    by = Counter(f"{'joined' if j else 'kept'} by {b}" for _, j, b, _ in seen)
    changed = [(w, j) for w, j, _, old in seen if j != old]
    return {
        "measured": measured(),
        "machine": machine(),
        "rule": "the document's spelling (the more frequent form, the hyphen on a tie), else en_US patterns",
        "files": len(files),
        "files_refused": refused,
        "decisions": len(seen),
        "by": dict(sorted(by.items())),
        "joined_by_old_rule": sum(old for *_, old in seen),
        "joined_now": sum(j for _, j, _, _ in seen),
        "changed": len(changed),
        "now_kept_was_joined": sorted(Counter(w for w, j in changed if not j).items()),
        "now_joined_was_kept": sorted(Counter(w for w, j in changed if j).items()),
    }


def report(result: dict[str, Any]) -> str:
    """The Markdown summary written beside the JSON."""
    lines = [
        "# Words hyphenated at a line end (pdf-docs, text layer)",
        "",
        f"Measured {result['measured']['date']} on {result['measured']['machine']['cpu']}, "
        f"{result['measured']['machine']['cores']} cores; benchmarks/pdf_hyphenation.py.",
        "",
        f"{result['files']} PDFs, {result['decisions']} line-end hyphens; joined now {result['joined_now']}, "
        f"by the old rule {result['joined_by_old_rule']}; {result['changed']} decisions changed.",
        "",
        "| decided | count |",
        "| --- | --- |",
        *(f"| {k} | {v} |" for k, v in result["by"].items()),
        "",
        "Now kept, joined before: " + ", ".join(f"{w} ×{n}" for w, n in result["now_kept_was_joined"]),
        "",
        "Now joined, kept before: " + ", ".join(f"{w} ×{n}" for w, n in result["now_joined_was_kept"]),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run on the fetched corpus; write the JSON and Markdown results."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus-dir", help="the fetched pdf-docs folder (default: the kit's cache)")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    if args.corpus_dir:
        folder = Path(args.corpus_dir)
    else:
        from chunklab.datasets.corpora.pdfdocs import NAME
        from chunklab.datasets.corpora.wheels import corpus_dir

        folder = corpus_dir(NAME)
    result = run(folder)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(report(result), encoding="utf-8")
    print(report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
