"""What the grader reports: per-checkpoint verdicts, a printed summary, the CSV gradebook, feedback pages."""

from __future__ import annotations

import csv
import html
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CheckpointResult", "GradeResult", "HiddenResult", "format_result", "student_of", "write_feedback",
           "write_report"]


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
        return "\n".join(lines)
    for cp in result.checkpoints:
        hidden = f"  (hidden checks: {sum(h.passed for h in cp.hidden)}/{len(cp.hidden)} passed)" if cp.hidden else ""
        lines.append(f"  {'passed' if cp.passed else 'FAILED'}  {cp.cell_id}{hidden}")
        if cp.detail:
            lines.extend("          " + ln for ln in cp.detail.splitlines())
        for h in cp.hidden:
            if not h.passed:
                lines.append(f"          hidden check failed: {h.name}" + (f" ({h.detail})" if h.detail else ""))
    lines.extend(f"  {t}" for t in result.timeouts)
    if result.stopped:
        lines.append(f"  stopped: {result.stopped}")
    lines.extend(f"  flag: {f}" for f in result.flags)
    lines.extend(f"  note: {n}" for n in result.notes)
    pct = round(100 * result.score)
    lines.append(f"  score: {result.passed}/{result.total} checkpoints passed ({pct}%)")
    return "\n".join(lines)


def student_of(path: Path, reference: Path | None) -> str:
    """The student a submission belongs to: its file name without the course notebook's name.

    ``alice-01-fixed.ipynb`` -> ``alice``; ``alice/01-fixed.ipynb`` -> ``alice`` (the folder).
    """
    stem = path.stem
    if reference is not None:
        stem = stem.replace(reference.stem, "")
    else:  # not matched to a course notebook (unreadable, ambiguous): drop a trailing ``NN-name``
        stem = re.sub(r"(^|[-_. ])\d\d-[A-Za-z][A-Za-z0-9-]*$", "", stem)
    stem = re.sub(r"^[-_. ]+|[-_. ]+$", "", stem)
    return stem or path.parent.name or path.stem


def write_report(results: Sequence[GradeResult], path: str | os.PathLike) -> Path:
    """One CSV row per notebook: who, which, passed, total, score, failed checkpoints, error, flags."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["notebook", "student", "reference", "passed", "total", "score", "failed_checkpoints",
                         "error", "flags", "seed"])
        for r in results:
            writer.writerow([
                str(r.path), student_of(r.path, r.reference), r.reference.stem if r.reference else "", r.passed,
                r.total, f"{r.score:.3f}", " ".join(c.cell_id for c in r.checkpoints if not c.passed),
                r.error or "; ".join([*r.timeouts, *([r.stopped] if r.stopped else [])]), "; ".join(r.flags), "" if r.seed is None else r.seed,
            ])
    return out


def write_feedback(results: Sequence[GradeResult], folder: str | os.PathLike) -> list[Path]:
    """One HTML feedback page per submission, and ``index.html`` with each student's totals."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    totals: dict[str, list[GradeResult]] = {}
    for r in results:
        student = student_of(r.path, r.reference)
        totals.setdefault(student, []).append(r)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{r.path.parent.name}-{r.path.stem}").strip("_")
        page = out / f"{name}.html"
        page.write_text(_page(f"Feedback: {r.path.name}", _feedback_body(r)), encoding="utf-8")
        written.append(page)
    rows = "".join(
        f"<tr><td>{html.escape(s)}</td><td>{len(rs)}</td><td>{sum(r.passed for r in rs)}/{sum(r.total for r in rs)}"
        f"</td><td>{sum(r.score for r in rs) / len(rs):.0%}</td></tr>"
        for s, rs in sorted(totals.items())
    )
    index = out / "index.html"
    index.write_text(_page("Gradebook", "<table><tr><th>student</th><th>notebooks</th><th>checkpoints</th>"
                                        f"<th>mean score</th></tr>{rows}</table>"), encoding="utf-8")
    return [*written, index]


def _feedback_body(r: GradeResult) -> str:
    esc = html.escape
    if r.error:
        return f"<p class='bad'>Not graded: {esc(r.error)}</p>"
    parts = [f"<p>Score: {r.passed}/{r.total} checkpoints ({r.score:.0%}).</p><ul>"]
    for cp in r.checkpoints:
        parts.append(f"<li class='{'ok' if cp.passed else 'bad'}'><b>{esc(cp.cell_id)}</b>: "
                     f"{'passed' if cp.passed else 'failed'}")
        if cp.detail:
            parts.append(f"<pre>{esc(cp.detail)}</pre>")
        failed = [h for h in cp.hidden if not h.passed]
        if cp.hidden:
            parts.append(f"<br>hidden checks: {len(cp.hidden) - len(failed)}/{len(cp.hidden)} passed")
        parts.extend(f"<br>failed: {esc(h.name)} {esc(h.detail)}" for h in failed)
        parts.append("</li>")
    parts.append("</ul>")
    for label, items in (("Timed out", r.timeouts), ("Stopped", [r.stopped] if r.stopped else []), ("Flag", r.flags),
                         ("Note", r.notes)):
        parts.extend(f"<p>{label}: {esc(i)}</p>" for i in items)
    return "".join(parts)


def _page(title: str, body: str) -> str:
    style = "body{font-family:sans-serif;max-width:50em;margin:2em auto}.ok{color:#1a7f37}.bad{color:#b42318}" \
            "pre{background:#f6f8fa;padding:.5em}td,th{padding:.2em 1em;text-align:left}"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>\n")
