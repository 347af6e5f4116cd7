"""Timing of ``chunklab evaluate --corpus`` on a 1-MB corpus with 100 questions, cold and warm cache.

The corpus is built in a temporary folder from text already on this machine: the Markdown and
reStructuredText files installed with the kit's dependencies, the kit's own documents, then
standard-library Python files until it holds ``--mb`` megabytes. The 100 questions (quotes
format) are known-item lookups: a line of prose that occurs once in its file is both the
question and its gold quote, picked deterministically. They measure the pipeline's cost, not
retrieval quality. The first run uses an empty embedding cache (cold), the second the cache
the first one filled (warm)::

    nice .venv/bin/python benchmarks/eval_your_corpus.py [--mb 1] [--questions 100]
        [--strategies fixed,recursive,structural]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    """Build the corpus and questions, run the evaluation twice, print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--strategies", default="fixed,recursive,structural")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="chunklab-1mb-"))
    try:
        corpus, n_bytes = build_corpus(work / "corpus", int(args.mb * 1_000_000))
        qfile = write_questions(corpus, work / "questions.jsonl", args.questions)
        env = {**os.environ, "CHUNKLAB_CACHE": str(work / "cache")}
        cmd = [
            sys.executable,
            "-m",
            "chunklab.cli",
            "evaluate",
            "--corpus",
            str(corpus),
            "--questions",
            str(qfile),
            "--strategies",
            args.strategies,
            "--k",
            str(args.k),
            "--no-progress",
            "--resamples",
            "10000",
            "--out",
            str(work / "out"),
        ]
        n_files = sum(1 for _ in corpus.rglob("*") if _.is_file())
        print(
            f"corpus: {n_files} files, {n_bytes / 1e6:.2f} MB; {args.questions} questions; "
            f"strategies {args.strategies}; k = {args.k}"
        )
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - t0
            if out.returncode != 0:
                print(out.stderr[-3000:], file=sys.stderr)
                return out.returncode
            print(f"\n{label} cache: {wall:.1f} s wall")
            print(out.stdout.strip())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def build_corpus(dest: Path, limit: int) -> tuple[Path, int]:
    """Copy text files into ``dest`` (docs of installed packages, the kit's docs, then stdlib code)."""
    site = Path(sysconfig.get_paths()["purelib"])
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources = sorted(p for ext in ("*.md", "*.rst") for p in site.rglob(ext) if ".dist-info" not in str(p))
    sources += sorted((ROOT / "chunklab" / "data" / "docs").glob("*.md"))
    sources += sorted(p for p in stdlib.glob("*.py"))
    total = 0
    for i, src in enumerate(sources):
        try:
            text = src.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        size = len(text.encode("utf-8"))
        if not text.strip() or total + size > limit:
            continue
        target = dest / f"{i:04d}-{src.parent.name}-{src.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        total += size
    return dest, total


def write_questions(corpus: Path, path: Path, n: int) -> Path:
    """``n`` quotes-format questions: lines of prose that occur exactly once in their file."""
    candidates = []
    for f in sorted(corpus.iterdir()):
        if f.suffix not in (".md", ".rst"):
            continue
        text = f.read_text(encoding="utf-8")
        for line in text.splitlines():
            line = line.strip()
            if 60 <= len(line) <= 160 and line[0].isalpha() and text.count(line) == 1:
                candidates.append((f.name, line))
    picked = random.Random(0).sample(candidates, min(n, len(candidates)))
    with path.open("w", encoding="utf-8") as out:
        for j, (doc, line) in enumerate(picked):
            out.write(json.dumps({"id": f"q{j}", "question": line, "doc": doc, "answer": line}) + "\n")
    return path


if __name__ == "__main__":
    sys.exit(main())
