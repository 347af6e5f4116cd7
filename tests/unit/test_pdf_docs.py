"""The pdf-docs corpus: manifest, fetch from archives (tiny synthetic ones), corpus listing, questions."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest

from chunklab.datasets.corpora.pdfdocs import (
    PdfFilePin,
    PdfManifest,
    SourcePin,
    archive_members,
    fetch_pdf_docs,
    load_manifest,
    pdf_docs_corpus,
)
from chunklab.datasets.questions.pdf import QUESTIONS, pdf_docs_questions, read_question_rows
from chunklab.datasets.registry import corpus
from tests.support.archivegen import deb_bytes, tar_bytes

FACT = "The pump runs at 40 rpm on the second Monday of March."


def _pdf(lines: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    for line in lines:
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> tuple[PdfManifest, dict[str, bytes]]:
    a = _pdf(["Chapter 1", FACT, "Nothing else is on this page."])
    b = _pdf(["Second manual", "Set the valve to 7 turns before starting."])
    deb = deb_bytes({"./usr/share/doc/demo/a.pdf": a}, package="demo-doc")
    sdist = tar_bytes({"demo-1.0/docs/b.pdf": b})
    blobs = {"demo-doc_1.0_all.deb": deb, "demo-1.0.tar.gz": sdist}
    manifest = PdfManifest(
        (
            SourcePin("deb", "demo-doc", "1.0", "demo-doc_1.0_all.deb", _sha(deb), len(deb)),
            SourcePin("sdist", "demo", "1.0", "demo-1.0.tar.gz", _sha(sdist), len(sdist)),
        ),
        (
            PdfFilePin("demo-doc", "usr/share/doc/demo/a.pdf", "demo-doc/a.pdf", _sha(a), len(a), 1),
            PdfFilePin("demo", "demo-1.0/docs/b.pdf", "demo/b.pdf", _sha(b), len(b), 1),
        ),
    )
    return manifest, blobs


def _downloader(blobs: dict[str, bytes], calls: list[str]):
    def download(source: SourcePin, dest: Path) -> Path:
        calls.append(source.name)
        (dest / source.filename).write_bytes(blobs[source.filename])
        return dest / source.filename

    return download


def test_fetch_verifies_writes_and_resumes(tmp_path: Path, archives) -> None:
    manifest, blobs = archives
    calls: list[str] = []
    report = fetch_pdf_docs(cache_dir=tmp_path, manifest=manifest, downloader=_downloader(blobs, calls))
    assert (report.written, report.present, calls, report.notes) == (2, 0, ["demo-doc", "demo"], [])
    files = pdf_docs_corpus(cache_dir=tmp_path, manifest=manifest)
    assert [f.relpath for f in files] == ["demo-doc/a.pdf", "demo/b.pdf"]
    assert all(_sha(Path(f.path).read_bytes()) == p.sha256 for f, p in zip(files, manifest.files))
    # a second fetch downloads nothing; a damaged file is fetched again from its archive only
    again = fetch_pdf_docs(cache_dir=tmp_path, manifest=manifest, downloader=_downloader(blobs, calls))
    assert (again.written, again.present) == (0, 2)
    Path(files[1].path).write_bytes(b"damaged")
    calls.clear()
    fixed = fetch_pdf_docs(cache_dir=tmp_path, manifest=manifest, downloader=_downloader(blobs, calls))
    assert (fixed.written, calls) == (1, ["demo"])


def test_fetch_refuses_a_file_that_differs_and_notes_a_moved_archive(tmp_path: Path, archives) -> None:
    manifest, blobs = archives
    wrong = PdfManifest(
        manifest.sources, (manifest.files[0].__class__(**{**vars(manifest.files[0]), "sha256": "0" * 64}),)
    )
    with pytest.raises(
        ValueError, match=r"demo-doc/a.pdf \(demo-doc: usr/share/doc/demo/a.pdf\) failed verification"
    ):
        fetch_pdf_docs(cache_dir=tmp_path, manifest=wrong, downloader=_downloader(blobs, []))
    moved = PdfManifest(
        (SourcePin(**{**vars(manifest.sources[0]), "sha256": "1" * 64}), manifest.sources[1]), manifest.files
    )
    report = fetch_pdf_docs(cache_dir=tmp_path / "m", manifest=moved, downloader=_downloader(blobs, []))
    assert report.written == 2 and len(report.notes) == 1 and "checked one by one" in report.notes[0]


def test_missing_files_name_the_fetch_command(tmp_path: Path, archives) -> None:
    manifest, _ = archives
    with pytest.raises(FileNotFoundError, match="chunklab corpus fetch pdf-docs"):
        pdf_docs_corpus(cache_dir=tmp_path, manifest=manifest)
    with pytest.raises(FileNotFoundError):
        corpus("pdf-docs", cache_dir=tmp_path / "empty")


def test_archive_members_reports_what_is_missing(archives) -> None:
    manifest, blobs = archives
    with pytest.raises(ValueError, match="no member"):
        archive_members("sdist", io.BytesIO(blobs["demo-1.0.tar.gz"]), {"demo-1.0/nothing.pdf"})
    with pytest.raises(ValueError, match="not a Debian package"):
        archive_members("deb", io.BytesIO(b"junk"), {"x"})


def test_questions_are_located_or_skipped_with_a_reason(tmp_path: Path, archives) -> None:
    manifest, blobs = archives
    fetch_pdf_docs(cache_dir=tmp_path, manifest=manifest, downloader=_downloader(blobs, []))
    rows = [
        {
            "id": "q1",
            "question": "pump speed?",
            "path": "demo-doc/a.pdf",
            "answer": "40 rpm on the second Monday",
            "kind": "fact",
            "split": "dev",
        },
        {
            "id": "q2",
            "question": "?",
            "path": "demo/b.pdf",
            "answer": "not in the text",
            "kind": "fact",
            "split": "heldout",
        },
    ]
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    qs = pdf_docs_questions(cache_dir=tmp_path, manifest=manifest, questions=qfile)
    assert [q.id for q in qs] == ["q1"]
    (q,) = qs.questions
    assert qs.doc(q.doc_id).text[slice(*q.gold_spans[0])] == "40 rpm on the second Monday"
    assert any(s.startswith("q2:") and "not found" in s for s in qs.skipped)
    assert len(qs.split("heldout")) == 0


def test_committed_manifest_and_questions_meet_the_brief() -> None:
    manifest = load_manifest()
    assert len(manifest.files) >= 40 and manifest.pages >= 1500
    assert sum(f.pages_without_text for f in manifest.files) > 0  # scans among them
    assert any(f.path.endswith(".docx") for f in manifest.files)
    if not QUESTIONS.is_file():
        pytest.skip("questions not generated yet")
    rows = read_question_rows()
    paths = {f.path for f in manifest.files}
    assert len(rows) >= 300 and all(r["path"] in paths for r in rows)
    splits: dict[str, set[str]] = {}
    for r in rows:
        splits.setdefault(r["path"], set()).add(r["split"])
    assert all(len(s) == 1 for s in splits.values())  # a file is dev or held-out, never both
    assert {r["split"] for r in rows} == {"dev", "heldout"}
    assert {r["kind"] for r in rows} >= {"fact", "table", "multi"}
