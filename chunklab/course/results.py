"""What the grader reports: per-checkpoint verdicts, a printed summary, the CSV gradebook, feedback pages.

Every text that came from a learner (file names, cell ids, error messages, diffs of what a
cell printed) is data: :func:`printable` shows its control characters as escapes (``\\x1b``)
in the terminal, the CSV and the HTML pages, so no learner text can move a terminal's cursor or
repaint a score. :class:`Gradebook` writes a notebook's CSV row and feedback page as soon as
it is graded, and reads back what an interrupted run already wrote (``--resume``).
"""

from __future__ import annotations

import csv
import hashlib
import html
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chunklab.words import counted

__all__ = [
    "CSV_COLUMNS",
    "CheckpointResult",
    "GradeResult",
    "Gradebook",
    "HiddenResult",
    "format_result",
    "identify",
    "printable",
    "student_of",
    "write_feedback",
    "write_report",
]

#: the gradebook's columns
CSV_COLUMNS = [
    "notebook",
    "student",
    "reference",
    "passed",
    "total",
    "score",
    "failed_checkpoints",
    "error",
    "flags",
    "seed",
    "submission",
]

#: what a spreadsheet takes for the start of a formula (OWASP's CSV-injection list)
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def printable(text: object, *, keep_newlines: bool = True) -> str:
    """``text`` with every control or format character shown as an escape (``\\x1b``, ``\\u202e``).

    Newlines (and tabs) are kept when ``keep_newlines``; a lone backslash stays as it is.
    """
    out = []
    for ch in str(text):
        if ch in "\n\t" and keep_newlines:
            out.append(ch)
        elif unicodedata.category(ch)[0] == "C" or ch in "\u2028\u2029":
            code = ord(ch)
            out.append(
                f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
        else:
            out.append(ch)
    return "".join(out)


@dataclass
class HiddenResult:
    """One hidden check on one kind of input (the expected value is never shown)."""

    name: str  # e.g. "token_windows on overlap of size - 1"
    passed: bool
    detail: str = ""  # what went wrong, without the expected value


@dataclass
class CheckpointResult:
    """The verdict on one checkpoint cell: its visible output and its hidden checks."""

    cell_id: str
    passed: bool
    detail: str = ""  # the diff or the error when the visible output failed
    weight: float = 1.0
    hidden: list[HiddenResult] = field(default_factory=list)


@dataclass
class GradeResult:
    """The verdict on one learner notebook."""

    path: Path
    reference: Path | None = None
    checkpoints: list[CheckpointResult] = field(default_factory=list)
    error: str = ""  # the notebook could not be graded at all
    stopped: str = ""  # why the run ended early: a timeout (with its limit) or the kernel's death
    timeouts: list[str] = field(default_factory=list)  # cells interrupted past their limit (the run went on)
    flags: list[str] = field(default_factory=list)  # e.g. NotImplementedError still raised
    notes: list[str] = field(default_factory=list)  # e.g. the first learner cell that raised
    seed: int | None = None  # the seed of the hidden checks' inputs
    seconds: float = 0.0
    student: str = ""  # who it is credited to (see :func:`identify`); '' : from the file name

    @property
    def passed(self) -> int:
        """Checkpoints passed."""
        return sum(c.passed for c in self.checkpoints)

    @property
    def total(self) -> int:
        """Checkpoints graded."""
        return len(self.checkpoints)

    @property
    def ok(self) -> bool:
        """True when the notebook was graded and every checkpoint passed."""
        return not self.error and self.total > 0 and self.passed == self.total

    @property
    def score(self) -> float:
        """Weighted fraction of checkpoints passed (0 when the notebook could not be graded)."""
        weight = sum(c.weight for c in self.checkpoints)
        if self.error or not weight:
            return 0.0
        return sum(c.weight for c in self.checkpoints if c.passed) / weight


def format_result(result: GradeResult) -> str:
    """One line per checkpoint (passed / FAILED with its diff and hidden checks), then the score."""
    lines = [f"{result.path}" + (f"  (reference: {result.reference.name})" if result.reference else "")]
    if result.error:
        lines.append(f"  error: {result.error}")
        lines.append("  score: 0 (not graded)")
        return "\n".join(printable(line, keep_newlines=False) for line in lines)
    for cp in result.checkpoints:
        hidden = (
            f"  (hidden checks: {sum(h.passed for h in cp.hidden)}/{len(cp.hidden)} passed)"
            if cp.hidden
            else ""
        )
        lines.append(f"  {'passed' if cp.passed else 'FAILED'}  {cp.cell_id}{hidden}")
        if cp.detail:
            lines.extend("          " + ln for ln in cp.detail.splitlines())
        for h in cp.hidden:
            if not h.passed:
                lines.append(
                    f"          hidden check failed: {h.name}" + (f" ({h.detail})" if h.detail else "")
                )
    lines.extend(f"  {t}" for t in result.timeouts)
    if result.stopped:
        lines.append(f"  stopped: {result.stopped}")
    lines.extend(f"  flag: {f}" for f in result.flags)
    lines.extend(f"  note: {n}" for n in result.notes)
    pct = round(100 * result.score)
    lines.append(f"  score: {result.passed}/{counted(result.total, 'checkpoint')} passed ({pct}%)")
    return "\n".join(printable(line, keep_newlines=False) for line in lines)


def student_of(path: Path, reference: Path | None) -> str:
    """The student a submission belongs to: its file name without the course notebook's name.

    ``alice-01-fixed.ipynb`` -> ``alice``; ``alice/01-fixed.ipynb`` -> ``alice`` (the folder).
    """
    stem = path.stem
    if reference is not None:
        stem = stem.replace(reference.stem, "")
    else:  # not matched to a course notebook (unreadable, ambiguous): drop a trailing ``NN-name``
        stem = re.sub(r"(^|[-_. ])\d\d[a-z]?-[A-Za-z][A-Za-z0-9-]*$", "", stem)
    stem = re.sub(r"^[-_. ]+|[-_. ]+$", "", stem)
    return stem or path.parent.name or path.stem


def identify(path: Path, reference: Path | None, folder: Path | None = None) -> tuple[str, str]:
    """``(student, note)`` for a submission found in ``folder`` (None: given on its own).

    Folder mode (the notebook lies in a sub-folder of ``folder``): the student is that
    sub-folder, whatever the file is called, and a file name naming someone else is noted.
    Flat mode: the file name's prefix (:func:`student_of`).
    """
    by_name = student_of(path, reference)
    if folder is None:
        return by_name, ""
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return by_name, ""
    if len(parts) < 2:
        return by_name, ""
    student = parts[0]
    prefix = _name_prefix(path, reference)
    note = ""
    if prefix and prefix != student:
        note = f"the file name says {prefix!r} but the notebook is in the folder {student!r}: credited to it"
    return student, note


def _name_prefix(path: Path, reference: Path | None) -> str:
    stem = path.stem
    if reference is not None:
        stem = stem.replace(reference.stem, "")
    else:
        stem = re.sub(r"(^|[-_. ])\d\d[a-z]?-[A-Za-z][A-Za-z0-9-]*$", "", stem)
    return re.sub(r"^[-_. ]+|[-_. ]+$", "", stem)


def report_row(r: GradeResult) -> list[str]:
    """The gradebook row of one result (learner text escaped)."""
    row = [
        str(r.path),
        r.student or student_of(r.path, r.reference),
        r.reference.stem if r.reference else "",
        str(r.passed),
        str(r.total),
        f"{r.score:.3f}",
        " ".join(c.cell_id for c in r.checkpoints if not c.passed),
        r.error or "; ".join([*r.timeouts, *([r.stopped] if r.stopped else [])]),
        "; ".join(r.flags),
        "" if r.seed is None else str(r.seed),
        submission_key(r.path),
    ]
    return [spreadsheet_safe(printable(v)) for v in row]


def spreadsheet_safe(cell: str) -> str:
    """``cell`` with a leading ``'`` when a spreadsheet would take it for a formula (``= + - @``, tab, CR)."""
    return "'" + cell if cell.startswith(_FORMULA_STARTS) else cell


def submission_key(path: Path) -> str:
    """A short hash of the submission's exact path (its bytes): the identity ``--resume`` keys on."""
    return hashlib.sha256(os.fsencode(str(path))).hexdigest()[:16]


def write_report(results: Sequence[GradeResult], path: str | os.PathLike) -> Path:
    """One CSV row per notebook: who, which, passed, total, score, failed checkpoints, error, flags."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(report_row(r) for r in results)
    return out


class Gradebook:
    """The CSV report and the feedback pages, written one notebook at a time as each is graded.

    With ``resume``, the rows already in ``csv_path`` are kept and :meth:`done` names their
    notebooks (so an interrupted bulk run grades only the rest); otherwise both start afresh.
    """

    def __init__(
        self, csv_path: str | os.PathLike | None, feedback: str | os.PathLike | None, *, resume: bool = False
    ) -> None:
        self.csv_path = Path(csv_path) if csv_path else None
        self.feedback = Path(feedback) if feedback else None
        self.rows: list[dict[str, str]] = []
        self.pages: dict[str, str] = {}  # page name -> the submission it is for (no two share one)
        if self.csv_path is not None:
            self.csv_path.parent.mkdir(parents=True, exist_ok=True)
            if resume and self.csv_path.is_file():
                with self.csv_path.open(newline="", encoding="utf-8") as fh:
                    self.rows = [row for row in csv.DictReader(fh) if row.get("notebook")]
            with self.csv_path.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(CSV_COLUMNS)
                writer.writerows([row.get(c, "") for c in CSV_COLUMNS] for row in self.rows)
        if self.feedback is not None:
            self.feedback.mkdir(parents=True, exist_ok=True)

    def graded(self, path: Path) -> bool:
        """Whether the submission at exactly ``path`` already has a row (``--resume``).

        Keyed by :func:`submission_key`, not by the escaped file name shown in the CSV (two names
        can escape alike, and a name with an invisible character would never match its row). A
        row from a gradebook written before that column existed matches by its escaped name.
        """
        key = submission_key(path)
        return any(
            row.get("submission") == key
            if row.get("submission")
            else row["notebook"] == spreadsheet_safe(printable(path))
            for row in self.rows
        )

    def add(self, r: GradeResult) -> None:
        """Append ``r``'s row (flushed), write its feedback page and refresh the index."""
        row = report_row(r)
        self.rows.append(dict(zip(CSV_COLUMNS, row, strict=True)))
        if self.csv_path is not None:
            with self.csv_path.open("a", newline="", encoding="utf-8") as fh:
                csv.writer(fh).writerow(row)
                fh.flush()
                os.fsync(fh.fileno())
        if self.feedback is not None:
            page = self.feedback / f"{_page_name(r, self.pages)}.html"
            page.write_text(_page(f"Feedback: {printable(r.path.name)}", _feedback_body(r)), encoding="utf-8")
            self.write_index()

    def write_index(self) -> Path | None:
        """``index.html``: each student's notebooks, checkpoints passed and mean score (the rows so far)."""
        if self.feedback is None:
            return None
        totals: dict[str, list[dict[str, str]]] = {}
        for row in self.rows:
            totals.setdefault(row["student"], []).append(row)
        index = self.feedback / "index.html"
        index.write_text(
            _index(
                (
                    s,
                    len(rs),
                    sum(_int(r["passed"]) for r in rs),
                    sum(_int(r["total"]) for r in rs),
                    sum(_float(r["score"]) for r in rs) / len(rs),
                )
                for s, rs in sorted(totals.items())
            ),
            encoding="utf-8",
        )
        return index


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def _page_name(r: GradeResult, taken: dict[str, str]) -> str:
    """The feedback page's name: readable (folder and file name, Unicode letters kept) and one per path.

    A short hash of the exact path follows the readable part, so ``bob/alice/01-fixed.ipynb`` and
    ``alice/01-fixed.ipynb``, or ``jürgen`` written composed and decomposed, get pages of their own;
    ``taken`` (name -> submission key) is checked, and a longer hash is used should two ever meet.
    """
    readable = unicodedata.normalize("NFKC", f"{r.path.parent.name}-{r.path.stem}")
    readable = re.sub(r"[^\w.-]+", "_", readable, flags=re.UNICODE).strip("_.")[:120] or "notebook"
    key = hashlib.sha256(os.fsencode(str(r.path))).hexdigest()
    for length in (8, 16, 64):
        name = f"{readable}-{key[:length]}"
        if taken.setdefault(name, key) == key:
            return name
    raise ValueError(f"two submissions share the page name {name!r}")  # a SHA-256 collision


def _index(totals: object) -> str:
    rows = "".join(
        f"<tr><td>{_esc(s)}</td><td>{n}</td><td>{passed}/{total}</td><td>{mean:.0%}</td></tr>"
        for s, n, passed, total, mean in totals  # type: ignore[attr-defined]
    )
    return _page(
        "Gradebook",
        "<table><tr><th>student</th><th>notebooks</th><th>checkpoints</th>"
        f"<th>mean score</th></tr>{rows}</table>",
    )


def _esc(text: object) -> str:
    return html.escape(printable(text))


def write_feedback(results: Sequence[GradeResult], folder: str | os.PathLike) -> list[Path]:
    """One HTML feedback page per submission, and ``index.html`` with each student's totals."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    totals: dict[str, list[GradeResult]] = {}
    taken: dict[str, str] = {}
    for r in results:
        totals.setdefault(r.student or student_of(r.path, r.reference), []).append(r)
        page = out / f"{_page_name(r, taken)}.html"
        page.write_text(_page(f"Feedback: {printable(r.path.name)}", _feedback_body(r)), encoding="utf-8")
        written.append(page)
    index = out / "index.html"
    index.write_text(
        _index(
            (
                s,
                len(rs),
                sum(r.passed for r in rs),
                sum(r.total for r in rs),
                sum(r.score for r in rs) / len(rs),
            )
            for s, rs in sorted(totals.items())
        ),
        encoding="utf-8",
    )
    return [*written, index]


def _feedback_body(r: GradeResult) -> str:
    esc = _esc
    if r.error:
        return f"<p class='bad'>Not graded: {esc(r.error)}</p>"
    parts = [f"<p>Score: {r.passed}/{counted(r.total, 'checkpoint')} ({r.score:.0%}).</p><ul>"]
    for cp in r.checkpoints:
        parts.append(
            f"<li class='{'ok' if cp.passed else 'bad'}'><b>{esc(cp.cell_id)}</b>: "
            f"{'passed' if cp.passed else 'failed'}"
        )
        if cp.detail:
            parts.append(f"<pre>{esc(cp.detail)}</pre>")
        failed = [h for h in cp.hidden if not h.passed]
        if cp.hidden:
            parts.append(f"<br>hidden checks: {len(cp.hidden) - len(failed)}/{len(cp.hidden)} passed")
        parts.extend(f"<br>failed: {esc(h.name)} {esc(h.detail)}" for h in failed)
        parts.append("</li>")
    parts.append("</ul>")
    for label, items in (
        ("Timed out", r.timeouts),
        ("Stopped", [r.stopped] if r.stopped else []),
        ("Flag", r.flags),
        ("Note", r.notes),
    ):
        parts.extend(f"<p>{label}: {esc(i)}</p>" for i in items)
    return "".join(parts)


def _page(title: str, body: str) -> str:
    style = (
        "body{font-family:sans-serif;max-width:50em;margin:2em auto}.ok{color:#1a7f37}.bad{color:#b42318}"
        "pre{background:#f6f8fa;padding:.5em}td,th{padding:.2em 1em;text-align:left}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>\n"
    )
