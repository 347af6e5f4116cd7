"""The one report of a run: every file in one of three piles, and what happened to the chunks.

Every file a run is given ends up in exactly one pile: **ok** (read and chunked; possibly
decoded by a reported fallback encoding), **skipped** (not a document: binary, not a regular
file, undecodable under ``--strict``; :data:`SKIP_REASONS`) or **failed** (could not be read,
the chunker crashed, the worker process died). An ok file read with a gap is also **noted**
(:func:`document_notes`: pages without a text layer, characters that had to be replaced), so
the summary names it and its pages, not only its metadata. ``chunklab chunk`` fills the piles only;
an ingest run also counts the chunks: added (embedded and written), unchanged (already
stored as they are: not embedded again), deleted (stale chunks of a re-indexed document,
pruned documents), and the chunks longer than the model's window.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from chunklab.documents import Document, DocumentError
from chunklab.words import counted

__all__ = [
    "SHOWN",
    "SKIP_REASONS",
    "FilePiles",
    "IngestReport",
    "document_notes",
    "problem_of",
    "report_lines",
    "truncation_warning",
]

#: DocumentError reasons that mean "not a document" (skipped) rather than "broken" (failed)
SKIP_REASONS = frozenset(
    {"binary", "not-regular", "undecodable", "no-text-layer", "encrypted", "garbled", "empty"}
)
#: how many files of each pile the printed summary names
SHOWN = 10


def document_notes(metadata: Mapping[str, Any]) -> list[str]:
    """What a run summary says of a document read with a gap, from its metadata (empty: nothing to say).

    ``pages_without_text`` (a PDF page with no text layer, e.g. scanned) gives ``"no text
    layer: pages 4, 7"``; ``lone_surrogates`` (half characters the loader replaced by U+FFFD)
    gives ``"3 broken characters replaced by U+FFFD"``; ``ocr_pages`` (pages read by OCR) gives
    ``"read by OCR (tesseract): page 4"``, and ``ocr_error`` says why a page without text was not.
    """
    notes = []
    pages = metadata.get("pages_without_text") or []
    if pages:
        notes.append(f"no text layer: {_pages(pages)}")
        if metadata.get("ocr_error"):
            notes.append(f"not read by OCR: {metadata['ocr_error']}")
    ocr = metadata.get("ocr_pages") or []
    if ocr:
        notes.append(f"read by OCR ({metadata.get('ocr_engine', 'ocr')}): {_pages(ocr)}")
    lone = metadata.get("lone_surrogates") or 0
    if lone:
        notes.append(f"{counted(lone, 'broken character')} (lone UTF-16 surrogates) replaced by U+FFFD")
    return notes


def _pages(pages: list[int]) -> str:
    return f"{'page' if len(pages) == 1 else 'pages'} {', '.join(map(str, pages))}"


def problem_of(exc: BaseException) -> tuple[str, str, str]:
    """``(pile, reason, detail)`` of a document that gave no chunks: a DocumentError or a chunker crash."""
    if isinstance(exc, DocumentError):
        return ("skipped" if exc.reason in SKIP_REASONS else "failed"), exc.reason, exc.detail
    return "failed", "chunker", f"{type(exc).__name__}: {exc}"


class FilePiles(TypedDict):
    """The file piles of a report as JSON: the ok count, ``[path, detail]`` pairs, counts by reason."""

    ok: int
    skipped: list[list[str]]
    failed: list[list[str]]
    fallback_decoded: list[list[str]]
    noted: list[list[str]]
    reasons: dict[str, int]


@dataclass
class IngestReport:
    """What a run did: files ok / skipped / failed with reasons, chunks added / unchanged / deleted."""

    engine: str = "local"
    model: str = ""
    workers: int = 1
    ok: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    fallback_decoded: list[tuple[str, str]] = field(default_factory=list)
    noted: list[tuple[str, str]] = field(default_factory=list)  # ok files read with a gap: document_notes
    reasons: Counter[str] = field(default_factory=Counter)
    added: int = 0  # chunks embedded and written
    unchanged: int = 0  # chunks already stored as they are: neither embedded nor written
    deleted: int = 0  # stale chunks of re-indexed documents, and the chunks of pruned documents
    pruned: int = 0  # documents deleted because they are gone from the corpus
    over_window: int = 0  # embedded chunks longer than the model's window (the rest is not embedded)
    window: int | None = None
    model_calls: int | None = None  # texts the model embedded / found in the cache (when measured)
    cache_hits: int | None = None
    seconds: float = 0.0  # wall time of the whole run, start-up included
    startup_seconds: float = 0.0  # getting the workers (or the Ray cluster) ready
    title: str = ""  # the run in one line (strategy, root)
    target: str = ""  # where the chunks went

    # -- files ------------------------------------------------------------------------
    def document(self, doc: Document) -> None:
        """Count a document read and chunked (noting a fallback decoding and :func:`document_notes`)."""
        self.document_ok(
            doc.path or doc.doc_id, doc.metadata.get("decode_problem"), document_notes(doc.metadata)
        )

    def document_ok(self, path: str, decode_problem: str | None = None, notes: Sequence[str] = ()) -> None:
        """Count a document read and chunked, by its path, decoding problem (None or "") and notes."""
        self.ok += 1
        if decode_problem:
            self.fallback_decoded.append((path, decode_problem))
        self.noted.extend((path, note) for note in notes)

    def error(self, exc: DocumentError) -> None:
        """Count a file that could not become a document: skipped or failed by its reason."""
        self.problem(exc.path, *problem_of(exc))

    def problem(self, path: str, pile: str, reason: str, detail: str) -> None:
        """Count a file in the ``"skipped"`` or ``"failed"`` pile."""
        (self.skip if pile == "skipped" else self.fail)(path, reason, detail)

    def skip(self, path: str, reason: str, detail: str) -> None:
        """Count a file skipped because it is not a document."""
        self.skipped.append((path, detail))
        self.reasons[f"skipped: {reason}"] += 1

    def fail(self, path: str, reason: str, detail: str) -> None:
        """Count a file that failed (the run goes on, the exit status will say so)."""
        self.failed.append((path, detail))
        self.reasons[f"failed: {reason}"] += 1

    @property
    def documents(self) -> int:
        """Documents read and chunked (the ok pile)."""
        return self.ok

    @property
    def exit_code(self) -> int:
        """1 when a file failed, else 0 (skipped files are not failures)."""
        return 1 if self.failed else 0

    def files_dict(self) -> FilePiles:
        """The file piles, JSON-ready (what :func:`report_lines` prints)."""
        return {
            "ok": self.ok,
            "skipped": [list(x) for x in self.skipped],
            "failed": [list(x) for x in self.failed],
            "fallback_decoded": [list(x) for x in self.fallback_decoded],
            "noted": [list(x) for x in self.noted],
            "reasons": dict(sorted(self.reasons.items())),
        }

    # -- chunks -----------------------------------------------------------------------
    @property
    def chunks(self) -> int:
        """Chunks the documents gave: added plus unchanged."""
        return self.added + self.unchanged

    @property
    def embedded(self) -> int:
        """Chunks that went through the embed stage in this run (unchanged ones never do)."""
        return self.added

    @property
    def chunks_per_second(self) -> float:
        """Chunks per second of wall time after start-up."""
        busy = self.seconds - self.startup_seconds
        return self.chunks / busy if busy > 0 else 0.0

    def summary(self) -> str:
        """The lines printed at the end of a run."""
        lines = [f"{self.title}: " if self.title else ""]
        workers = f"{self.workers} worker" + ("s" if self.workers != 1 else "")
        lines[0] += f"engine {self.engine} ({workers}, model {self.model})"
        lines.extend(report_lines(self.files_dict()))
        warning = truncation_warning(self.over_window, self.added, self.window)
        if warning:
            lines.append(f"  {warning}")
        cache = (
            f" (model {self.model_calls:,}, from cache {self.cache_hits:,})"
            if self.model_calls is not None and self.cache_hits is not None
            else ""
        )
        lines.append(
            f"  chunks    {self.chunks:,} from {counted(self.ok, 'file')}: added {self.added}, "
            f"unchanged {self.unchanged}, deleted {self.deleted}"
            + (f" (pruned {counted(self.pruned, 'document')} no longer present)" if self.pruned else "")
            + f"; embedded {self.embedded:,}{cache}"
        )
        lines.append(
            f"  time      {self.seconds:.1f}s (start-up {self.startup_seconds:.1f}s, "
            f"{self.chunks_per_second:,.0f} chunks/s)"
        )
        lines.append(f"  wrote     {self.target}")
        return "\n".join(lines)


def truncation_warning(
    over: int, embedded: int, window: int | None, min_share: float = 0.0, name: str = ""
) -> str | None:
    """The warning line when ``over`` of ``embedded`` chunks exceed the model's ``window`` tokens.

    None when no chunk (or no more than ``min_share`` of them) is over the window, or when the
    model has no window; ``name`` (a strategy) heads the line. ``chunklab index`` warns at any
    truncated chunk, ``chunklab evaluate`` above 5 % of a strategy's chunks.
    """
    if not over or not embedded or not window or over / embedded <= min_share:
        return None
    return (
        f"WARNING   {name + ': ' if name else ''}{over:,} of {embedded:,} chunks embedded "
        f"({over / embedded:.0%}) exceed the model's {window}-token window: "
        "the text past it is not embedded; use a smaller --size"
    )


def report_lines(report: Mapping[str, Any]) -> list[str]:
    """Summary lines from :meth:`IngestReport.files_dict`: counts, reasons, the first files of each pile."""
    piles = (
        ("failed", report["failed"]),
        ("skipped", report["skipped"]),
        ("fallback-decoded", report["fallback_decoded"]),
        ("noted", report.get("noted", [])),
    )
    counts = f"ok {report['ok']:,}, skipped {len(report['skipped']):,}, failed {len(report['failed']):,}"
    out = [
        f"  files     {counts}"
        + (f", decoded by fallback {len(report['fallback_decoded']):,}" if report["fallback_decoded"] else "")
    ]
    out.extend(f"    {count:6,}  {reason}" for reason, count in report["reasons"].items())
    for title, pile in piles:
        out.extend(f"    {title}: {path}: {detail}" for path, detail in pile[:SHOWN])
        if len(pile) > SHOWN:
            out.append(f"    ... and {len(pile) - SHOWN:,} more {title} (see --summary-json)")
    return out
