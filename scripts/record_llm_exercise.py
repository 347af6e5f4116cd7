"""Record the packaged SmolLM2's answers for exercise 10-llm (run once; the exercise never runs the model).

The model answers the kit's own prompts (:func:`chunklab.chunkers.llm.boundary_prompt` with the
boundary chunker's token limit and stop rule, :func:`chunklab.chunkers.llm.propositions_prompt`
with the propositions chunker's limit) about paragraphs of the kit's docs corpus:

- boundary windows: 3 to 6 consecutive paragraphs of one document, and windows whose last
  paragraphs come from another document (a real topic shift);
- proposition passages: single prose paragraphs.

Written to ``chunklab/data/recorded/smollm2-135m-exercise.json`` as ``{"model", "boundaries":
[{"doc", "units", "answer"}], "propositions": [{"doc", "passage", "answer"}]}``. Run with ``nice``:

    nice .venv/bin/python scripts/record_llm_exercise.py [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "chunklab" / "data" / "docs"
OUT = ROOT / "chunklab" / "data" / "recorded" / "smollm2-135m-exercise.json"
#: the documents the paragraphs come from (sorted names, every other one: varied topics)
N_DOCS = 12


def paragraphs(path: Path) -> list[str]:
    """The prose paragraphs of a document (no headings, lists, tables or code), 80 to 600 characters."""
    from chunklab.documents import load_document

    out = []
    for block in load_document(path).text.split("\n\n"):
        block = block.strip()
        if 80 <= len(block) <= 600 and block[0].isalpha() and "|" not in block and "```" not in block:
            out.append(block)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None, help="the generation cache root (default: the kit's)")
    args = parser.parse_args()
    from chunklab.chunkers.llm import boundaries as bmod
    from chunklab.chunkers.llm import boundary_prompt, propositions_prompt
    from chunklab.chunkers.llm import propositions as pmod
    from chunklab.generate import Generator

    paths = sorted(p for p in DOCS.glob("*.md") if p.name != "FORMAT.md")[::2][:N_DOCS]
    paras = {p.name: paragraphs(p) for p in paths}
    names = [n for n in paras if len(paras[n]) >= 4]
    windows: list[tuple[str, list[str]]] = []
    for i, name in enumerate(names):
        own = paras[name]
        size = 3 + i % 4  # 3..6 paragraphs
        windows.append((name, own[:size]))
        other = paras[names[(i + 1) % len(names)]]
        keep = 1 + i % 3  # 1..3 paragraphs of this document, then the next document's
        windows.append((f"{name}+{names[(i + 1) % len(names)]}", own[1 : 1 + keep] + other[: size - keep]))
    passages = [(name, paras[name][j]) for name in names for j in (0, 2)]
    gen = Generator(cache_dir=args.cache)
    boundaries = []
    for doc, units in windows:
        answer = gen.generate([boundary_prompt(units)], max_new_tokens=bmod.ANSWER_TOKENS, stop=("\n\n",))[0]
        boundaries.append({"doc": doc, "units": units, "answer": answer})
        print(f"boundary {len(boundaries)}/{len(windows)}: {answer!r}", flush=True)
    props = []
    for doc, passage in passages:
        answer = gen.generate([propositions_prompt(passage)], max_new_tokens=pmod.ANSWER_TOKENS)[0]
        props.append({"doc": doc, "passage": passage, "answer": answer})
        print(f"propositions {len(props)}/{len(passages)}: {answer[:80]!r}", flush=True)
    OUT.write_text(
        json.dumps(
            {"model": gen.model_id, "boundaries": boundaries, "propositions": props},
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{OUT}: {len(boundaries)} boundary answers, {len(props)} proposition answers")


if __name__ == "__main__":
    main()
