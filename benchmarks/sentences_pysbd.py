"""The kit's one sentence rule against pysbd (rule-based, offline) on the kit's docs corpus.

For every document of ``chunklab.datasets.load_docs()``, sentence ends are taken from
:func:`chunklab.text.split_sentences` and from ``pysbd.Segmenter(language="en", clean=False,
char_span=True)`` run on the same text; an end is a character offset after trimming
whitespace. The result counts sentences by each, the ends both agree on, and the ends only
one of them finds, with examples (the 40 characters around the disagreement), grouped by what
is at the end: a Markdown structure boundary (a line that starts a heading, list item, table
row or code fence: the kit's rule always ends a sentence there), an abbreviation-like word, a
number, or other.

    python benchmarks/sentences_pysbd.py [--out benchmarks/results/sentences_pysbd.json]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from pathlib import Path

from chunklab.datasets import load_docs
from chunklab.text import split_sentences

RESULTS = Path(__file__).parent / "results" / "sentences_pysbd.json"
_STRUCTURE = re.compile(r"\s*\n\s*(?:#|[-*+] |\d+[.)] |\||```|~~~)")


def _ends_pysbd(text: str) -> set[int]:
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
    ends = set()
    for span in seg.segment(text):
        e = span.end
        while e > span.start and text[e - 1].isspace():
            e -= 1
        if e > span.start:
            ends.add(e)
    return ends


def _why(text: str, end: int) -> str:
    if _STRUCTURE.match(text, end) or text.startswith("\n\n", end):
        return "structure boundary (line or block)"
    word = text[max(0, end - 8) : end].split()[-1:] or [""]
    if re.search(r"\d\.?$", word[0]):
        return "number"
    if re.search(r"\b[A-Za-z]{1,4}\.$", word[0]):
        return "short word with a period (abbreviation-like)"
    return "other"


def run() -> dict:
    """Compare both splitters on every document; the result record."""
    docs = load_docs().documents
    t0 = time.perf_counter()
    kit = {d.doc_id: {e for _s, e in split_sentences(d.text)} for d in docs}
    kit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    sbd = {d.doc_id: _ends_pysbd(d.text) for d in docs}
    sbd_s = time.perf_counter() - t0
    only: dict[str, Counter[str]] = {"kit": Counter(), "pysbd": Counter()}
    examples: dict[str, list[str]] = {"kit": [], "pysbd": []}
    both = 0
    for d in docs:
        a, b = kit[d.doc_id], sbd[d.doc_id]
        both += len(a & b)
        for who, ends in (("kit", a - b), ("pysbd", b - a)):
            for e in sorted(ends):
                why = _why(d.text, e)
                only[who][why] += 1
                if len(examples[who]) < 12 and why != "structure boundary (line or block)":
                    snippet = d.text[max(0, e - 30) : e] + " ⟂ " + d.text[e : e + 20]
                    examples[who].append(f"{d.doc_id}: {' '.join(snippet.split())}")
    return {
        "documents": len(docs),
        "characters": sum(len(d.text) for d in docs),
        "kit_sentences": sum(map(len, kit.values())),
        "pysbd_sentences": sum(map(len, sbd.values())),
        "ends_both": both,
        "ends_only_kit": dict(only["kit"]),
        "ends_only_pysbd": dict(only["pysbd"]),
        "examples_only_kit": examples["kit"],
        "examples_only_pysbd": examples["pysbd"],
        "seconds": {"kit": round(kit_s, 3), "pysbd": round(sbd_s, 3)},
    }


def main() -> None:
    """Run and write the JSON; print the counts."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    result = run()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if not k.startswith("examples")}, indent=2))


if __name__ == "__main__":
    main()
