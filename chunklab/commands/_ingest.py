"""What ``chunklab chunk`` and ``chunklab index`` share: the per-file report and atomic output files.

Every file a command is given ends up in exactly one of three piles: **ok** (read and chunked;
possibly decoded by a reported fallback encoding), **skipped** (not a document: binary, not a
regular file, undecodable under ``--strict``) or **failed** (could not be read, the chunker
crashed, the worker process died). The summary counts each pile by reason and lists the files;
a command exits non-zero when a file failed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from chunklab.documents import Document, DocumentError

#: DocumentError reasons that mean "not a document" (skipped) rather than "broken" (failed)
SKIP_REASONS = frozenset({"binary", "not-regular", "undecodable"})
#: how many files of each pile the printed summary names
SHOWN = 10


@dataclass
class FileReport:
    """Per-file outcomes of a run: ok, skipped and failed files with their reasons."""

    ok: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    fallback_decoded: list[tuple[str, str]] = field(default_factory=list)
    reasons: Counter = field(default_factory=Counter)

    def document(self, doc: Document) -> None:
        """Count a document read and chunked (noting a fallback decoding)."""
        self.ok += 1
        problem = doc.metadata.get("decode_problem")
        if problem:
            self.fallback_decoded.append((doc.path or doc.doc_id, problem))

    def error(self, exc: DocumentError) -> None:
        """Count a file that could not become a document: skipped or failed by its reason."""
        if exc.reason in SKIP_REASONS:
            self.skip(exc.path, exc.reason, exc.detail)
        else:
            self.fail(exc.path, exc.reason, exc.detail)

    def skip(self, path: str, reason: str, detail: str) -> None:
        """Count a file skipped because it is not a document."""
        self.skipped.append((path, detail))
        self.reasons[f"skipped: {reason}"] += 1

    def fail(self, path: str, reason: str, detail: str) -> None:
        """Count a file that failed (the run goes on, the exit status will say so)."""
        self.failed.append((path, detail))
        self.reasons[f"failed: {reason}"] += 1

    @property
    def exit_code(self) -> int:
        """1 when a file failed, else 0."""
        return 1 if self.failed else 0

    def lines(self) -> list[str]:
        """The summary lines: counts, reasons, the first files of each pile."""
        return report_lines(self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {
            "ok": self.ok,
            "skipped": [list(x) for x in self.skipped],
            "failed": [list(x) for x in self.failed],
            "fallback_decoded": [list(x) for x in self.fallback_decoded],
            "reasons": dict(sorted(self.reasons.items())),
        }


def report_lines(report: dict[str, Any]) -> list[str]:
    """Summary lines from :meth:`FileReport.as_dict`: counts, reasons, the first files of each pile."""
    piles = (
        ("failed", report["failed"]),
        ("skipped", report["skipped"]),
        ("fallback-decoded", report["fallback_decoded"]),
    )
    out = [
        f"  files     ok {report['ok']:,}, skipped {len(report['skipped']):,}, failed {len(report['failed']):,}"
        + (f", decoded by fallback {len(report['fallback_decoded']):,}" if report["fallback_decoded"] else "")
    ]
    out.extend(f"    {count:6,}  {reason}" for reason, count in report["reasons"].items())
    for title, pile in piles:
        out.extend(f"    {title}: {path}: {detail}" for path, detail in pile[:SHOWN])
        if len(pile) > SHOWN:
            out.append(f"    ... and {len(pile) - SHOWN:,} more {title} (see --summary-json)")
    return out


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[TextIO]:
    """A text file written under a temporary name beside ``path``, renamed over it only on success.

    A run that fails or is interrupted leaves the previous ``path`` as it was.
    """
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"--out {path} is a directory")
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # what open() would have made, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
