"""Generate the pdf-docs questions from the kit's extraction (chunklab/data/corpora/pdf-docs-questions.jsonl).

How the questions are made (said plainly: no person wrote or checked them one by one):

* Every fetched file is read by ``chunklab.documents.load_document``; scans are refused there.
* **fact**: a sentence (the kit's one sentence rule) of one paragraph element, 50 to 220
  characters, holding a digit or a code-like token, that occurs exactly once in the
  document's text. The question is a keyword query: the sentence's six rarest words across the
  corpus (document frequency), the distinctive token left out, in sentence order, after the
  document's title.
* **table**: a ``table_row`` element of 12 to 200 characters found exactly once; the question
  is the title plus the table's header-row words and the row's first cell.
* **multi**: two consecutive paragraphs; the answer is two quotes, the last sentence of the
  first and the first sentence of the second (each found exactly once); the question is built
  from both as for facts.
* At most ``5 + pages // 12`` questions a file (chosen with a fixed seed); the split is by
  file: a file whose sha256-of-path bucket is below 30% is ``heldout``, the others ``dev``.

    python benchmarks/pdf_questions_build.py [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
from collections import Counter

from chunklab.datasets.corpora.pdfdocs import NAME, load_manifest
from chunklab.datasets.corpora.wheels import corpus_dir
from chunklab.datasets.questions.pdf import QUESTIONS, load_corpus_documents
from chunklab.documents import Document
from chunklab.text import split_sentences

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\\.-]*[A-Za-z0-9]|[A-Za-z]{3,}")
_TOKEN = re.compile(r"\d|\\[a-zA-Z]+|\w+\(\)|[a-z]+_[a-z]+|[a-z]+[A-Z][a-z]+")
_STOP = frozenset(
    "the a an and or of to in is are be for on with as by this that it its at from can not if which "
    "when then than there these those will was were has have had you your we our also may must use "
    "used using into such each any all more most other only one two see but".split()
)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w.lower() not in _STOP]


def _query(title: str, text: str, df: Counter[str], drop: str = "", n: int = 6) -> str:
    words = [w for w in _words(text) if w != drop]
    rare = sorted(set(words), key=lambda w: (df[w.lower()], w))[:n]
    keep = [w for w in dict.fromkeys(words) if w in rare]
    return f"{title}: {' '.join(keep)}?"


def _unique(doc: Document, quote: str) -> bool:
    return doc.text.count(quote) == 1


def _facts(doc: Document, df: Counter[str], title: str) -> list[dict]:
    out = []
    for el in doc.elements:
        if el.type != "paragraph":
            continue
        for s, e in split_sentences(doc.text[el.start : el.end]):
            quote = doc.text[el.start + s : el.start + e]
            m = _TOKEN.search(quote)
            if 50 <= len(quote) <= 220 and m and "\n" not in quote and _unique(doc, quote):
                token = next((w for w in _words(quote) if m.group() in w), "")
                out.append({"kind": "fact", "answer": quote, "question": _query(title, quote, df, token)})
    return out


def _tables(doc: Document, df: Counter[str], title: str) -> list[dict]:
    out = []
    header = ""
    for el in doc.elements:
        if el.type != "table_row":
            continue
        row = doc.text[el.start : el.end]
        if el.header:
            header = row
            continue
        if 12 <= len(row) <= 200 and _unique(doc, row):
            first = row.split()[0] if row.split() else ""
            q = _query(title, f"{header} {row}", df, n=7)
            out.append({"kind": "table", "answer": row, "question": q.replace("?", f" {first}?", 1)})
    return out


def _multis(doc: Document, df: Counter[str], title: str) -> list[dict]:
    out = []
    paras = [el for el in doc.elements if el.type == "paragraph"]
    for a, b in zip(paras, paras[1:]):
        sa = split_sentences(doc.text[a.start : a.end])
        sb = split_sentences(doc.text[b.start : b.end])
        if not sa or not sb:
            continue
        qa = doc.text[a.start + sa[-1][0] : a.start + sa[-1][1]]
        qb = doc.text[b.start + sb[0][0] : b.start + sb[0][1]]
        if all(40 <= len(q) <= 200 and _unique(doc, q) for q in (qa, qb)) and qa != qb:
            out.append(
                {"kind": "multi", "answer": [qa, qb], "question": _query(title, f"{qa} {qb}", df, n=8)}
            )
    return out


def build(cache_dir: str | None = None) -> tuple[list[dict], list[str]]:
    """The question rows and the files left out (with the loader's reason)."""
    manifest = load_manifest()
    skipped: list[str] = []
    directory = corpus_dir(NAME, cache_dir)
    docs = load_corpus_documents(directory, manifest, skipped, cache=directory / ".extracted")
    df: Counter[str] = Counter()
    for d in docs:
        df.update({w.lower() for w in _words(d.text)})
    pages = {f.path: f.pages for f in manifest.files}
    rows: list[dict] = []
    for d in docs:
        title = d.doc_id.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        rng = random.Random(d.doc_id)
        pools = [_facts(d, df, title), _tables(d, df, title), _multis(d, df, title)]
        cap = 5 + pages.get(d.doc_id, 0) // 12
        share = {"fact": 0.6, "table": 0.2, "multi": 0.2}
        picked: list[dict] = []
        for pool in pools:
            if pool:
                want = math.ceil(cap * share[pool[0]["kind"]])
                picked += rng.sample(pool, min(want, len(pool)))
        bucket = int(hashlib.sha256(d.doc_id.encode()).hexdigest()[:8], 16) / 16**8
        split = "heldout" if bucket < 0.3 else "dev"
        for i, q in enumerate(picked[:cap]):
            rows.append(
                {
                    "id": f"{d.doc_id}#{q['kind']}{i}",
                    "question": q["question"],
                    "path": d.doc_id,
                    "answer": q["answer"],
                    "kind": q["kind"],
                    "split": split,
                }
            )
    return rows, skipped


def main() -> None:
    """Write the questions file and print counts by kind and split."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir")
    args = ap.parse_args()
    rows, skipped = build(args.cache_dir)
    QUESTIONS.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} questions to {QUESTIONS}")
    print(Counter((r["kind"], r["split"]) for r in rows))
    for s in skipped:
        print("skipped", s)


if __name__ == "__main__":
    main()
