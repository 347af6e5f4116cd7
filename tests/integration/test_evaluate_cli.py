"""``chunklab evaluate --corpus DIR --questions FILE`` end to end, in each format, plus search and the report.

The corpus is two 100-character files; with ``k`` at least the number of chunks every chunk is
retrieved whatever the ranking, so the span metrics do not depend on the embedding model and
can be computed by hand.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

os.environ.setdefault("CHUNKLAB_TORCH_THREADS", "1")

from chunklab.cli import main  # noqa: E402

A = "Scanners reboot when the power key is held for ten seconds; the screen goes dark and the logo shows."
B = "Depot doors open at six every weekday morning, and on Saturdays the loading bay opens an hour later."
METRIC_COLUMNS = (
    "recall",
    "precision",
    "mrr",
    "ndcg",
    "char_recall",
    "char_precision",
    "iou",
    "precision_omega",
)
# fixed windows of 60 characters with 20 of overlap: [0, 60) and [40, 100) in each file
OVERLAPPING = "fixed:size=60;overlap=20"
WHOLE = "fixed:size=100;overlap=0"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    assert len(A) == len(B) == 100
    root = tmp_path_factory.mktemp("corpus")
    (root / "scanner.txt").write_text(A, encoding="utf-8")
    (root / "depot.txt").write_text(B, encoding="utf-8")
    return root


def evaluate(corpus: Path, questions: Path | None, out: Path, *extra: str) -> pd.DataFrame:
    argv = [
        "evaluate",
        "--corpus",
        str(corpus),
        "--strategies",
        f"{OVERLAPPING},{WHOLE}",
        "--k",
        "4",
        "--resamples",
        "200",
        "--no-progress",
        "--out",
        str(out),
        *extra,
    ]
    if questions is not None:
        argv[3:3] = ["--questions", str(questions)]
    assert main(argv) == 0
    return pd.read_csv(out / "results.csv", index_col="strategy")


def spans_file(tmp_path: Path) -> Path:
    path = tmp_path / "questions.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["question", "corpus_id", "references"])
        w.writeheader()
        w.writerow(
            {
                "question": "How long is the power key held?",
                "corpus_id": "scanner",
                "references": json.dumps([{"content": A[50:70], "start_index": 50, "end_index": 70}]),
            }
        )
        w.writerow(
            {
                "question": "When do the depot doors open?",
                "corpus_id": "depot.txt",
                "references": json.dumps([{"content": B[0:30], "start_index": 0, "end_index": 30}]),
            }
        )
    return path


def test_spans_format_reproduces_hand_computed_span_metrics(module_cache, corpus, tmp_path):
    from chunklab.chunkers.fixed import chunk_fixed

    assert [(c.start, c.end) for c in chunk_fixed(A, 60, 20, "chars", "d")] == [(0, 60), (40, 100)]
    union = evaluate(corpus, spans_file(tmp_path), tmp_path / "union")
    chroma = evaluate(corpus, spans_file(tmp_path), tmp_path / "chroma", "--convention", "chroma")
    for table in (union, chroma):
        for col in METRIC_COLUMNS:
            assert {col, col + "_lo", col + "_hi"} <= set(table.columns)
        assert list(table.index) == ["fixed[overlap=20,size=60]", "fixed[overlap=0,size=100]"]
    over, whole = union.index
    # k = 4 retrieves every chunk. Overlapping strategy: 4 chunks of 60 -> L = 240 characters,
    # U = both files = 200 characters. Q1 gold = 20 characters (50..70, inside both scanner chunks),
    # Q2 gold = 30 characters (0..30, inside the first depot chunk); all gold is covered.
    assert union.loc[over, "char_recall"] == pytest.approx(1.0)
    # union: precision = covered / |U|: (20/200 + 30/200) / 2 = 0.125; iou = covered / |U ∪ G| = same
    assert union.loc[over, "char_precision"] == pytest.approx((20 / 200 + 30 / 200) / 2)
    assert union.loc[over, "iou"] == pytest.approx((20 / 200 + 30 / 200) / 2)
    # chroma: precision = covered / L = (20/240 + 30/240) / 2; iou = covered / (L + |G| - covered) = same
    assert chroma.loc[over, "char_precision"] == pytest.approx((20 / 240 + 30 / 240) / 2)
    assert chroma.loc[over, "iou"] == pytest.approx((20 / 240 + 30 / 240) / 2)
    # precision Ω (chunks touching the gold): Q1 both scanner chunks, union [0,100) -> 20/100,
    # summed 120 -> 20/120;
    # Q2 only depot [0,60) -> 30/60 either way
    assert union.loc[over, "precision_omega"] == pytest.approx((20 / 100 + 30 / 60) / 2)
    assert chroma.loc[over, "precision_omega"] == pytest.approx((20 / 120 + 30 / 60) / 2)
    # one 100-character chunk per file: no overlap, so both conventions give (20/200 + 30/200) / 2
    for table in (union, chroma):
        assert table.loc[whole, "char_precision"] == pytest.approx(0.125)
        assert table.loc[whole, "iou"] == pytest.approx(0.125)
        # every question's gold lies inside a retrieved chunk: chunk-level recall 1
        assert table.loc[whole, "recall"] == pytest.approx(1.0)


def test_quotes_format_end_to_end_with_split(module_cache, corpus, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        json.dumps(
            {
                "id": "key",
                "question": "How long is the key held?",
                "doc": "scanner.txt",
                "answer": "ten seconds",
                "split": "dev",
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": "sat",
                "question": "When does the bay open on Saturdays?",
                "doc": "depot.txt",
                "answer": ["an hour later"],
                "split": "test",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    table = evaluate(corpus, qfile, tmp_path / "out", "--split", "dev")
    per_q = pd.read_csv(tmp_path / "out" / "per_question.csv")
    assert set(per_q["question_id"]) == {"key"}
    assert table["char_recall"].tolist() == [1.0, 1.0]
    assert "1 question, 2 documents" in capsys.readouterr().out


def test_beir_format_reports_no_span_metrics_and_says_so(module_cache, tmp_path, capsys):
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        json.dumps({"_id": "s", "title": "Scanner", "text": A})
        + "\n"
        + json.dumps({"_id": "d", "title": "Depot", "text": B})
        + "\n",
        encoding="utf-8",
    )
    (root / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "reboot the scanner"}) + "\n", encoding="utf-8"
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ts\t1\n", encoding="utf-8")
    table = evaluate(root, None, tmp_path / "out")
    out = capsys.readouterr().out
    assert "span metrics (char_recall, char_precision, iou, precision_omega) are not reported" in out
    assert table["iou"].isna().all() and table["char_recall_lo"].isna().all()
    data = json.loads(
        (tmp_path / "out" / "results.json").read_text(), parse_constant=lambda c: pytest.fail(c)
    )
    assert data["relevance"] == "document" and data["summary"][0]["iou"] is None
    # k = 4 retrieves every chunk, so the relevant document is always found
    assert (table["recall"] == 1.0).all()
    assert "char_recall" not in out.split("wall time")[0].splitlines()[2]


def test_tokenizer_option_sizes_every_unit_strategy_in_its_tokens(module_cache, corpus, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()  # every word and every punctuation mark is one token
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    argv = [
        "evaluate",
        "--corpus",
        str(corpus),
        "--questions",
        str(spans_file(tmp_path)),
        "--strategies",
        "fixed:size=5",
        "--tokenizer",
        str(path),
        "--resamples",
        "50",
        "--no-progress",
        "--out",
        str(tmp_path / "o"),
    ]
    assert main(argv) == 0
    table = pd.read_csv(tmp_path / "o" / "results.csv", index_col="strategy")
    # scanner.txt: 19 words + ';' + '.' = 21 tokens -> windows of 5, 5, 5, 5, 1;
    # depot.txt: 18 words + ',' + '.' = 20 tokens -> 5, 5, 5, 5: 9 chunks (not the 40 of 5 characters)
    assert table.loc["fixed[size=5]", "chunks"] == 9
    params = json.loads((tmp_path / "o" / "results.json").read_text())["strategies"]["fixed[size=5]"]
    assert params["unit"] == f"tokenizer:{path.resolve()}"
    assert main([*argv[:-2], "--tokenizer", str(tmp_path / "nope.json")]) == 2


def test_malformed_input_is_a_clear_cli_error(module_cache, corpus, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        json.dumps({"question": "x?", "doc": "nowhere.md", "answer": "x"}) + "\n", encoding="utf-8"
    )
    assert main(["evaluate", "--corpus", str(corpus), "--questions", str(qfile), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert (
        "chunklab evaluate: error:" in err and "doc 'nowhere.md' is not a readable file of the corpus" in err
    )
    assert main(["evaluate", "--questions", str(qfile)]) == 2
    assert "--questions needs --corpus" in capsys.readouterr().err


def test_search_prints_hits_and_json_lines(module_cache, corpus, tmp_path, capsys):
    store = tmp_path / "store"
    assert (
        main(["index", str(corpus), "--store", str(store), "--strategy", "recursive", "--no-progress"]) == 0
    )
    capsys.readouterr()
    assert main(["search", str(store), "when do the doors open", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(" 1. ") and "depot.txt:0-100" in out and "Depot doors open" in out
    assert main(["search", str(store), "power key", "--k", "2", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["rank"] for x in lines] == [1, 2] and lines[0]["doc_id"] == "scanner.txt"
    assert main(["search", str(store), "power key", "--where", "doc_id=depot.txt", "--json"]) == 0
    assert {json.loads(x)["doc_id"] for x in capsys.readouterr().out.splitlines()} == {"depot.txt"}
    assert main(["search", str(store), "x", "--where", "doc_id"]) == 2
    assert "--where expects KEY=VALUE" in capsys.readouterr().err


# ----------------------------------------------------------------- the HTML report in headless Chromium

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def report(module_cache, corpus, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    path = tmp / "report.html"
    # k = 1: the two strategies hand on different spans, so they disagree on some questions
    evaluate(corpus, spans_file(tmp), tmp / "out", "--report", str(path), "--k", "1")
    return path


def disagreements(report: Path) -> int:
    per_q = pd.read_csv(report.parent / "out" / "per_question.csv")
    spread = per_q.groupby("question_id")[["recall", "mrr", "iou"]].agg(lambda x: x.max() - x.min())
    return int((spread.sum(axis=1) > 0).sum())


def test_report_is_self_contained_and_shows_each_part(report):
    page = report.read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page and "<script" not in page
    for part in ("Summary", "Plots", "Pairwise win shares", "Questions where the strategies disagree"):
        assert f"<h2>{part}</h2>" in page
    assert page.count('src="data:image/png;base64,') == 2
    assert re.search(r"<td>\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]</td>", page)  # a mean with its interval
    assert page.count("<details>") == disagreements(report) >= 1
    assert "<mark>" in page  # the gold characters a retrieved chunk holds


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium (apt-get install -y chromium)"
)
def test_report_loads_in_headless_chromium_without_errors_or_network(report, tmp_path):
    import urllib.request

    ws_client = pytest.importorskip("websockets.sync.client")
    port = _free_port()
    proc = subprocess.Popen(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--remote-debugging-port={port}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        targets = None
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=1) as r:
                    targets = [t for t in json.load(r) if t.get("type") == "page"]
                if targets:
                    break
            except OSError:
                time.sleep(0.2)
        assert targets, "chromium did not start"
        events, result = _load_page(ws_client, targets[0]["webSocketDebuggerUrl"], report.resolve().as_uri())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    errors = [
        e
        for e in events
        if e["method"] == "Runtime.exceptionThrown"
        or (e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
        or (e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
    ]
    assert errors == []
    urls = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
    assert urls and all(u.startswith(("file:", "data:")) for u in urls), urls
    assert result == {"tables": 2, "images": 2, "loaded": 2, "details": disagreements(report)}


def _load_page(ws_client, ws_url: str, url: str) -> tuple[list[dict], dict]:
    """Navigate to ``url`` over the DevTools protocol; every event seen, and what the page shows."""
    events: list[dict] = []
    with ws_client.connect(ws_url, max_size=None) as ws:
        n = 0

        def call(method: str, **params) -> dict:
            nonlocal n
            n += 1
            ws.send(json.dumps({"id": n, "method": method, "params": params}))
            while True:
                msg = json.loads(ws.recv(timeout=30))
                if msg.get("id") == n:
                    return msg.get("result", {})
                events.append(msg)

        for domain in ("Runtime", "Log", "Network", "Page"):
            call(f"{domain}.enable")
        call("Page.navigate", url=url)
        deadline = time.time() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in events) and time.time() < deadline:
            events.append(json.loads(ws.recv(timeout=30)))
        expr = (
            "JSON.stringify({tables: document.querySelectorAll('table').length, "
            "images: document.images.length, "
            "loaded: [...document.images].filter(i => i.complete && i.naturalWidth > 0).length, "
            "details: document.querySelectorAll('details').length})"
        )
        shown = call("Runtime.evaluate", expression=expr, returnByValue=True)
        events = [e for e in events if "method" in e]
    return events, json.loads(shown["result"]["value"])


# ------------------------------------------------- what a practitioner sees on real data (issue 30)

LONG = " ".join(f"word{i} of a long paragraph that goes on" for i in range(150))  # ~1,000 MiniLM tokens


def test_evaluate_shows_truncation_and_warns_past_five_percent(module_cache, tmp_path, capsys):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "long.txt").write_text(LONG, encoding="utf-8")
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"question": "word3?", "doc": "long.txt", "answer": "word3 of"}) + "\n")
    report = tmp_path / "report.html"
    argv = ["evaluate", "--corpus", str(root), "--questions", str(qfile), "--no-progress"]
    argv += ["--strategies", "fixed:size=4000;overlap=0,fixed:size=300;overlap=0", "--resamples", "50"]
    assert main([*argv, "--report", str(report)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith(" ") and "recall" in line)
    assert "truncated" in header.split() and "precision_omega" in header.split()
    warnings = [line for line in out.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "size=4000]" in warnings[0] and "256-token window" in warnings[0]
    assert "compares embeddings of each chunk's opening" in out
    page = report.read_text(encoding="utf-8")
    assert "<th>truncated</th>" in page and "<th>precision_omega</th>" in page
    assert "256-token window" in page


def test_evaluate_reads_corpus_files_as_index_does(module_cache, corpus, tmp_path, capsys):
    root = tmp_path / "corpus"
    shutil.copytree(corpus, root)
    (root / "cafe.txt").write_bytes(
        "Caf\u00e9 opens at nine, the espresso machine warms for ten minutes.".encode("latin-1")
    )
    (root / "logo.txt").write_bytes(b"\x00\x01PNG\x00")
    qfile = tmp_path / "q.jsonl"
    rows = [{"question": "When does the café open?", "doc": "cafe.txt", "answer": "opens at nine"}]
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["evaluate", "--corpus", str(root), "--questions", str(qfile), "--no-progress"]
    argv += ["--strategies", WHOLE, "--resamples", "50"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "fallback-decoded:" in err and "cafe.txt" in err and "windows-1252" in err
    assert "skipped: corpus file" in err and "logo.txt" in err
    # a failing run lists its problems, counted where they are, and no "skipped" file
    bad = rows + [{"question": "x?", "doc": "nowhere.md", "answer": "x"}]
    qfile.write_text("".join(json.dumps(r) + "\n" for r in bad), encoding="utf-8")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"1 problem(s): 1 in {qfile}" in err and "logo.txt" not in err and "skipped:" not in err
