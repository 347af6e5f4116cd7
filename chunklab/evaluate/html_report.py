"""One report to read: a benchmark run as a single self-contained HTML file.

:func:`write_report` writes the summary table with its intervals, the plots (inlined as
base64 PNG), the pairwise win shares, and a per-question view: for every question where the
strategies disagree, the gold span and each strategy's top chunks with the characters they
share with the gold highlighted, so a reader sees *why* a strategy lost. The file loads no
external resource (no scripts, fonts, styles or images from elsewhere).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chunklab.documents.layout import where

if TYPE_CHECKING:
    import pandas as pd

    from chunklab.chunk import Chunk
    from chunklab.datasets.model import GoldQuestion
    from chunklab.evaluate.benchmark import Benchmark
    from chunklab.evaluate.result import BenchmarkResult
    from chunklab.protocols import DocumentLike

__all__ = ["render_report", "write_report"]

#: questions shown in the per-question view at most (the most disagreeing first)
MAX_QUESTIONS = 60
#: strategies disagree on a question when any of these differs between them
DISAGREE_ON = ("recall", "mrr", "iou")
_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:75em;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:.9em;display:block;overflow-x:auto}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right}
th:first-child,td:first-child{text-align:left}
caption{caption-side:bottom;font-size:.85em;color:#555;text-align:left}mark{background:#ffe08a}
.miss{color:#a33}.hit{color:#1a7f37}
pre{white-space:pre-wrap;background:#f6f8fa;padding:.5em;
margin:.25em 0;font-size:.85em;max-height:18em;overflow:auto}
details{margin:.5em 0;border:1px solid #ddd;padding:.5em}summary{cursor:pointer;font-weight:600}
.gold{border-left:4px solid #e3b341}.warning{color:#a33;font-weight:600}.note{color:#555}img{max-width:100%}
"""


def write_report(result: BenchmarkResult, benchmark: Benchmark, path: str | Path) -> Path:
    """Write :func:`render_report` of ``result`` (from ``benchmark.run()``) to ``path``; returns the path."""
    out = Path(path)
    if out.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"--report must name an .html file, got {str(out)!r}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(result, benchmark), encoding="utf-8")
    return out


def render_report(result: BenchmarkResult, benchmark: Benchmark) -> str:
    """The report as one HTML string (see the module docstring)."""
    docs = {d.doc_id: d for d in benchmark.documents}
    title = f"ChunkLab benchmark: {result.dataset or 'your corpus'}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">",
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>{len(benchmark.questions)} questions, {len(benchmark.documents)} documents, k = {result.k}; "
        f"means with 95% intervals over {result.n_resamples} paired bootstrap resamples "
        f"(seed {result.seed}); "
        f"{_e(result.note())}. Wall time {result.wall_s:.1f} s.</p>",
        "<h2>Summary</h2>",
        _table(
            result.table(),
            caption="mean [95% interval] per metric, then costs (see results.json for definitions)",
        ),
        *(f'<p class="warning">{_e(line.strip())}</p>' for line in result.truncation_warnings()),
        "<h2>Plots</h2>",
        *_plots(result),
        "<h2>Pairwise win shares</h2>",
        "<p class=\"note\">Share of bootstrap resamples in which A's mean beats B's (ties are the rest). "
        "A difference is established when one side wins at least 97.5% of resamples.</p>",
        _pairwise(result),
        "<h2>Questions where the strategies disagree</h2>",
        *_disagreements(result, benchmark, docs),
        "</body></html>",
    ]
    return "\n".join(parts)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(df: pd.DataFrame, caption: str = "") -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in [df.index.name or "", *df.columns])
    rows = []
    for name, row in df.iterrows():
        rows.append("<tr>" + f"<td>{_e(name)}</td>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>")
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _plots(result: BenchmarkResult) -> list[str]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from chunklab.evaluate.plots import plot_cost_quality, plot_metrics
    from chunklab.evaluate.result import MAIN_METRICS

    metrics = [m for m in MAIN_METRICS if m in result.reported_metrics]
    figures = [
        (
            plot_metrics(result, metrics=metrics),
            "Each metric's mean per strategy; whiskers are 95% bootstrap intervals.",
        ),
        (
            plot_cost_quality(result),
            "Recall against the characters handed on per question (the context cost).",
        ),
    ]
    out = []
    for fig, caption in figures:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        plt.close(fig)
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        out.append(
            f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>"
        )
    return out


def _pairwise(result: BenchmarkResult) -> str:
    pw = result.pairwise
    if pw.empty:
        return "<p>Only one strategy: nothing to compare.</p>"
    rows = []
    for _, r in pw.iterrows():
        lead = r["a"] if r["a_wins"] >= 0.975 else r["b"] if r["b_wins"] >= 0.975 else ""
        rows.append(
            f"<tr><td>{_e(r['metric'])}</td><td>{_e(r['a'])}</td><td>{_e(r['b'])}</td>"
            f"<td>{r['a_wins']:.1%}</td><td>{r['b_wins']:.1%}</td><td>{r['ties']:.1%}</td>"
            f"<td>{_e(lead or '—')}</td></tr>"
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("metric", "A", "B", "A wins", "B wins", "ties", "established lead")
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _disagreements(result: BenchmarkResult, benchmark: Benchmark, docs: dict[str, DocumentLike]) -> list[str]:
    pq = result.per_question
    names = list(result.summary.index)
    metrics = [m for m in DISAGREE_ON if m in result.reported_metrics]
    tables = {m: pq.pivot(index="question_id", columns="strategy", values=m) for m in metrics}
    spread = sum(t.max(axis=1) - t.min(axis=1) for t in tables.values()).to_dict()
    order = {q.id: i for i, q in enumerate(benchmark.questions)}
    picked = sorted(
        (q for q in benchmark.questions if spread.get(q.id, 0) > 0),
        key=lambda q: (-spread[q.id], order[q.id]),
    )
    if not picked:
        return [f"<p>Every strategy scored the same {', '.join(metrics)} on every question.</p>"]
    out = [
        f'<p class="note">{len(picked)} question(s) where {", ".join(metrics)} differ between strategies'
        + (f"; the {MAX_QUESTIONS} widest shown" if len(picked) > MAX_QUESTIONS else "")
        + ". Highlighted: characters a retrieved chunk shares with the gold.</p>"
    ]
    for q in picked[:MAX_QUESTIONS]:
        i = order[q.id]
        scores = "; ".join(
            f"{_e(n)}: " + ", ".join(f"{m} {tables[m].loc[q.id, n]:.2f}" for m in metrics) for n in names
        )
        body = [f"<details><summary>{_e(q.id)}: {_e(q.question)}</summary>", f"<p>{scores}</p>"]
        body.append(_gold(q, docs))
        for n in names:
            chunks = result.retrieved.get(n, [])
            found = chunks[i] if i < len(chunks) else []
            body.append(f"<h4>{_e(n)}: top {len(found)}</h4>")
            body.extend(_chunk_view(rank, c, q, docs) for rank, c in enumerate(found, 1))
        body.append("</details>")
        out.append("\n".join(body))
    return out


def _gold(question: GoldQuestion, docs: dict[str, DocumentLike]) -> str:
    relevant = question.relevant_docs
    if not question.gold_spans:
        return f'<p class="gold">relevant documents: {_e(", ".join(relevant))}</p>'
    text = docs[question.doc_id].text
    quotes = "".join(
        f'<pre class="gold">{_e(question.doc_id)}:{s}-{e}\n{_e(text[s:e])}</pre>'
        for s, e in question.gold_spans
    )
    return "<p>gold:</p>" + quotes


def _chunk_view(rank: int, chunk: Chunk, question: GoldQuestion, docs: dict[str, DocumentLike]) -> str:
    gold = _gold_ranges(chunk, question)
    shared = sum(e - s for s, e in gold)
    label = "hit" if shared or chunk.doc_id in question.relevant_docs else "miss"
    origin = where(chunk.metadata)  # the page (PDF) or cell (notebook) it cites
    span = f"{_e(chunk.doc_id)}:{chunk.start}-{chunk.end}" + (
        f' <span class="page">{_e(origin)}</span>' if origin else ""
    )
    head = f'<span class="{label}">#{rank} {span}, {shared} gold chars</span>'
    doc = docs.get(chunk.doc_id)
    if doc is None or doc.text[chunk.start : chunk.end] != chunk.text:  # HTML: text is not the source slice
        return f"<pre>{head}\n{_e(chunk.text)}</pre>"
    return f"<pre>{head}\n{_highlight(chunk.text, chunk.start, gold)}</pre>"


def _gold_ranges(chunk: Chunk, question: GoldQuestion) -> list[tuple[int, int]]:
    if chunk.doc_id != question.doc_id:
        return []
    out = []
    for s, e in question.gold_spans:
        lo, hi = max(s, chunk.start), min(e, chunk.end)
        if hi > lo:
            out.append((lo, hi))
    return sorted(out)


def _highlight(text: str, offset: int, ranges: Sequence[tuple[int, int]]) -> str:
    """``text`` (starting at source ``offset``) escaped, with the source ``ranges`` wrapped in <mark>."""
    pieces, pos = [], 0
    for s, e in ranges:
        s, e = max(s - offset, pos), e - offset
        if e <= s:
            continue
        pieces.append(_e(text[pos:s]))
        pieces.append(f"<mark>{_e(text[s:e])}</mark>")
        pos = e
    pieces.append(_e(text[pos:]))
    return "".join(pieces)
