"""Plausible wrong solutions of every solution notebook, and the helpers that make them.

Each wrong solution is the reference with one code cell patched (a literal replacement that must
apply, so a change to the solution that makes a patch stale fails loudly). ``WRONG`` holds notebooks
01-03b and 08, ``WRONG_LATE`` 04-06, 07-retrieval, 09 and 10; adding a notebook means adding its entry
to one of them. ``CHEATS`` holds hard-coded solutions only the hidden checks catch, and
``graded_late`` grades a late notebook's mistakes, its cheat and its reference in one batch, once per
process. Used by tests/notebooks/test_wrong_solutions*.py, test_hidden_checks.py and
test_grader_attacks.py.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from chunklab.course.generate import make_exercise
from chunklab.course.grader import GradeOptions, grade_notebooks
from chunklab.course.notebooks import is_checkpoint, read_notebook
from chunklab.course.results import GradeResult
from tests.support.nbval import TEST_JOBS, nbval_run

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = {p.stem: p for p in sorted((ROOT / "solutions").glob("*.ipynb"))}


@dataclass(frozen=True)
class Wrong:
    """A plausible mistake: in cell ``cell_id``, ``old`` becomes ``new``.

    ``fails`` names the checkpoint that must catch it; it is required for the notebooks in
    EXPENSIVE, whose mistakes are graded together in one notebook (one run instead of one
    per mistake), each caught by its own checkpoint.
    """

    label: str
    cell_id: str
    old: str
    new: str
    fails: str = ""
    #: calls a library function the grading sandbox does not hold: the answer is the reference's,
    #: so only the grader catches it (its hidden checks, run in-process, cannot)
    absent_only: bool = False
    #: caught by its checkpoint's visible output (a bar it does not reach), not by a hidden check: that
    #: check compares only what any tuning keeps (09's retrieve: how many distinct chunks come back)
    visible_only: bool = False
    #: not graded in its notebook's batch (``late_items``): another variant of the same cell, graded there,
    #: fails the same checkpoints through the grader (named here), and this mistake's own hidden check is
    #: run in process on fresh inputs (test_hidden_checks.py); its patch must still apply. Only for a
    #: notebook whose every graded run costs a full pass over its corpus
    graded_as: str = ""


WRONG: dict[str, list[Wrong]] = {
    "01-fixed": [
        Wrong("off-by-one step", "token-windows", "step = size - overlap", "step = size - overlap + 1"),
        Wrong("window ends at its last token's start", "token-windows", "window[-1][1]", "window[-1][0]"),
        Wrong(
            "last partial window dropped",
            "token-windows",
            "for i in range(0, len(spans), step):",
            "for i in range(0, len(spans) - size + 1, step):",
        ),
    ],
    "02-recursive": [
        Wrong(
            "overlap ignores the limit",
            "pack",
            "k - 1 > i and units[j][1] - units[k - 1][0] <= max_chars",
            "k - 1 > i",
        ),
        Wrong(
            "off-by-one overlap (none)",
            "pack",
            "while j - k < overlap_units and",
            "while j - k < overlap_units - 1 and",
        ),
        Wrong(
            "the library's paragraph packer (absent from the grading sandbox)",
            "pack",
            '    i, reason = 0, ""\n',
            "    from chunklab.chunkers.recursive import pack_paragraphs\n"
            "    return pack_paragraphs(text, max_chars, overlap_units, doc_id)\n"
            '    i, reason = 0, ""\n',
            absent_only=True,
        ),
        Wrong(
            "counts recursive chunks twice",
            "compare",
            "counts[name][0] += len(chunks)",
            "counts[name][0] += 2 * len(chunks)",
        ),
    ],
    "03-structural": [
        Wrong("fallback without overlap", "chunk-code", "max_chars // 10, doc_id=doc_id", "0, doc_id=doc_id"),
        Wrong("merging ignores max_chars", "pack-units", "u[1] - g[0][0] <= max_chars and small", "small"),
        Wrong("merges only when both are small", "pack-units", "< min_chars or u[1]", "< min_chars and u[1]"),
        Wrong(
            "split closes a piece one line late",
            "split-unit",
            "pieces.append((s, pos))\n            s = pos",
            "pieces.append((s, line_end))\n            s = line_end",
        ),
    ],
    "03b-documents": [
        Wrong(
            "digits not masked: a header holding the page number is kept",
            "margins",
            're.sub(r"\\d+", "#", " ".join(text.lower().split()))',
            '" ".join(text.lower().split())',
        ),
        Wrong(
            "a margin line on one page is removed",
            "margins",
            "pages_with[key] >= need",
            "pages_with[key] >= 1",
        ),
        Wrong(
            "no running headers of a chapter: a title on three pages of ten stays",
            "margins",
            " or runs[key] >= RUN",
            "",
        ),
        Wrong(
            "a run counts pages of a key however far apart they are",
            "margins",
            "key in last and i - last[key] <= 2",
            "key in last",
        ),
        Wrong(
            "a key counted per line, not per page",
            "margins",
            "for key in set(row) if key is not None",
            "for key in row if key is not None",
        ),
        Wrong(
            "a lone bare number is a page number",
            "margins",
            "pages_with_offset[offset] >= (1 if len(pages) == 1 else 2)",
            "pages_with_offset[offset] >= 1",
        ),
        Wrong(
            "bare page numbers left to the footer rule",
            "margins",
            "    numbers |= {\n",
            "    _ = {\n",
        ),
        Wrong(
            "offsets counted per line, not per page: a number twice on one page advances",
            "margins",
            "{(offset, i) for offset, i, _ in bare}",
            "[(offset, i) for offset, i, _ in bare]",
        ),
        Wrong(
            'the old roman rule: any word of roman letters ("Civil", "mix") is a page number',
            "margins",
            "            match = PAGE_NUMBER.match(text) if keys[i][j] is not None else None\n"
            "            if match is None:\n"
            "                continue\n"
            '            if match["word"] or match["total"]:\n',
            '            roman = re.fullmatch(r"\\W*[ivxlcdm]{1,7}\\W*", text, re.I)\n'
            "            match = PAGE_NUMBER.match(text) if keys[i][j] is not None else None\n"
            "            if keys[i][j] is None or not (match or roman):\n"
            "                continue\n"
            '            if roman or match["word"] or match["total"]:\n',
        ),
        Wrong(
            "a roman numeral is a page number at once, advancing or not",
            "margins",
            'if match["word"] or match["total"]:',
            'if match["word"] or match["total"] or not match["number"].isdigit():',
        ),
        Wrong(
            "only English names a page number: 'Página 3 de 10' is a bare 3",
            "margins",
            'if match["word"] or match["total"]:',
            'if re.search(r"page|p\\.|/|of", text, re.I):',
        ),
        Wrong(
            "the margin fixed at 0.09",
            "margins",
            'band = "header" if y < margin else "footer" if y > 1 - margin else ""',
            'band = "header" if y < 0.09 else "footer" if y > 0.91 else ""',
        ),
        Wrong(
            "content lines counted as margins",
            "margins",
            'band = "header" if y < margin else "footer" if y > 1 - margin else ""',
            'band = "header" if y < 0.5 else "footer"',
        ),
        Wrong(
            'ends not stripped: " Title" and "Title " get different keys',
            "margins",
            '" ".join(text.lower().split())',
            're.sub(r"\\s+", " ", text.lower())',
        ),
    ],
    # A run of 08 takes minutes (the whole-corpus pass): its mistakes are graded together.
    "08-code-rag": [
        Wrong(
            "percentiles given as fractions",
            "corpus-summary",
            "[50, 90, 99])",
            "[0.5, 0.9, 0.99])",
            "cp-corpus",
        ),
        Wrong(
            "recall counts gold characters twice",
            "char-recall",
            "        s = max(s, reach)\n",
            "",
            "cp-char-recall",
        ),
        Wrong(
            "question keeps the whole paragraph",
            "question",
            "para[: end.start() + 1] if end else para",
            "para",
            "cp-question",
        ),
        Wrong(
            "question files left out of the index",
            "index",
            "    chunks += [c for d in questions.documents for c in chunk_document(d)]\n",
            "",
            "cp-index",
        ),
        Wrong(
            "precision divided by k, not by the chunks retrieved",
            "score",
            '"precision": sum(hits) / len(top) if top else 0.0',
            '"precision": sum(hits) / k',
            "cp-score",
        ),
    ],
}


def patched(solution, *wrongs: Wrong):
    """The solution with each mistake patched in (every patch must apply)."""
    nb = copy.deepcopy(solution)
    for wrong in wrongs:
        cells = [c for c in nb.cells if c.get("id") == wrong.cell_id]
        assert cells, f"{wrong.label}: no cell {wrong.cell_id!r}"
        assert wrong.old in cells[0].source, f"{wrong.label}: {wrong.old!r} not in cell {wrong.cell_id!r}"
        cells[0].source = cells[0].source.replace(wrong.old, wrong.new)
    return nb


def faked(solution):
    """Blank code, with every checkpoint's stored output (and count) edited to the expected one."""
    nb = make_exercise(solution)
    ref = {c.id: c for c in solution.cells}
    for cell in nb.cells:
        if is_checkpoint(cell):
            cell.outputs = copy.deepcopy(ref[cell.id].outputs)
            cell.execution_count = ref[cell.id].execution_count
    return nb


WRONG_LATE: dict[str, list[Wrong]] = {
    "04-semantic": [
        Wrong("90th percentile by default", "rule", "percentile: float = 95", "percentile: float = 90"),
        Wrong(
            "breakpoint one sentence late",
            "rule",
            "return [i for i, d in enumerate(distances) if d > threshold]",
            "return [i + 1 for i, d in enumerate(distances) if d > threshold]",
        ),
        Wrong(
            "similarity instead of distance",
            "curve",
            "return 1.0 - np.sum(left * right, axis=1)",
            "return np.sum(left * right, axis=1)",
        ),
    ],
    "05-hierarchical": [
        Wrong(
            "merges at exactly the ratio (>= instead of >)",
            "merge",
            "len(found) / len(kids) > ratio",
            "len(found) / len(kids) >= ratio",
        ),
        Wrong("merges one level only", "merge", "                changed = True\n", ""),
        Wrong(
            "keeps chunks whose ancestor is returned",
            "merge",
            "result = [r for r in result if not has_ancestor_in_result(r)]",
            "pass",
        ),
    ],
    "06-evaluation": [
        Wrong(
            "recall counts gold characters twice",
            "spans",
            "covered = overlap_length(union, gold_union)",
            "covered = overlap_length(retrieved, gold_union)",
        ),
        Wrong(
            "precision over the union (repeats free)",
            "spans",
            '"precision": covered / total if total else 0.0',
            '"precision": covered / union_len if union_len else 0.0',
        ),
        Wrong(
            "unpaired bootstrap",
            "bootstrap",
            "means_b = counts @ b / len(b)",
            "means_b = resample_counts(len(b), n_resamples, seed + 1) @ b / len(b)",
        ),
        Wrong(
            "the library's bootstrap (absent from the grading sandbox)",
            "bootstrap",
            "    low, high = np.percentile(means_a - means_b, [2.5, 97.5])\n",
            "    from chunklab.evaluate.bootstrap import bootstrap_means, confidence_interval\n"
            "    low, high = confidence_interval(bootstrap_means(a - b, counts))\n",
            absent_only=True,
        ),
    ],
    "07-retrieval": [
        Wrong("ranks counted from 0", "rrf", "enumerate(ranking, start=1)", "enumerate(ranking)"),
        Wrong("k ignored (1 / rank)", "rrf", "1.0 / (k + rank)", "1.0 / rank"),
        Wrong(
            "worst first",
            "rrf",
            "key=lambda chunk_id: -scores[chunk_id]",
            "key=lambda chunk_id: scores[chunk_id]",
        ),
        Wrong(
            "dense ranking only", "hybrid", "return rrf([dense_ids, lexical_ids])[:k]", "return dense_ids[:k]"
        ),
    ],
    "09-chroma-checkpoint": [
        Wrong(
            "no structural metadata (fixed windows)",
            "chunk",
            "for c in chunk_markdown(d.text, max_chars=1000, doc_id=d.doc_id):",
            "from chunklab import chunk_fixed\n"
            '        for c in chunk_fixed(d.text, 1000, 0, "chars", d.doc_id):',
        ),
        Wrong(
            "where filter ignored",
            "filter",
            "    if len(parts) == 1:",
            "    parts = []\n    if len(parts) == 1:",
        ),
        Wrong(  # fails cp-index and cp-filter through the grader, as the fixed windows above do
            "chunks too large",
            "chunk",
            "max_chars=1000",
            "max_chars=4000",
            graded_as="no structural metadata (fixed windows)",
        ),
        Wrong(
            "index not persistent",
            "index",
            "return ChunkStore(path=path, collection=COLLECTION, encoder=encoder)",
            "return ChunkStore(collection=COLLECTION, encoder=encoder, in_memory=True)",
        ),
        Wrong(  # the bar is set so that plain search misses it on the dev questions (0.706 < 0.74)
            "plain search, not tuned",
            "retrieve",
            'hybrid = HybridRetriever(store, lexical_index(store), fusion="rrf", rrf_k=60, depth=20)\n'
            "    return [c for c, _ in hybrid.search(question, k=k)]",
            "return [c for c, _ in store.search(question, k=k)]",
            visible_only=True,
        ),
    ],
    "10-llm": [
        Wrong(
            "paragraph 1 accepted as a boundary",
            "parse",
            "if stated is not None and 2 <= int(stated.group(1)) <= n:",
            "if stated is not None and 1 <= int(stated.group(1)) <= n:",
        ),
        Wrong("no quote step", "parse", "    if len(quote) >= MIN_QUOTE:\n", "    if False:\n"),
        Wrong(
            "a quote of paragraph 1 read as paragraph 1",
            "parse",
            'return (later[0], "quote") if later else (None, "out_of_range")',
            'return holders[0], "quote"',
        ),
        Wrong(
            "a number anywhere ignored",
            "parse",
            "        number = int(anywhere.group(0))\n",
            '        return None, "nonsense"\n',
        ),
        Wrong(
            "the proposition's words not case-folded",
            "align",
            "words = set(WORD.findall(needle.casefold()))",
            "words = set(WORD.findall(needle))",
        ),
        Wrong(
            "the best sentence whatever its share",
            "align",
            "if share >= MIN_OVERLAP and (best is None",
            "if share > 0 and (best is None",
        ),
        Wrong(
            "the proposition not stripped", "align", "needle = proposition.strip()", "needle = proposition"
        ),
    ],
}


#: the visible queries of 09's filtered-search checkpoint, which the hard-coded cheat below answers honestly
VISIBLE_09_QUERIES = (
    "how long do we keep the records",
    "when did the outage start",
    "what do I check",
    "how is the solver configured",
    "who do I call",
)

#: Hard-coded cheats: every visible checkpoint output right, the function wrong on any other input, so
#: only the grader's hidden checks can catch them (tests/notebooks/test_grader_attacks.py). Each is a set
#: of ``Wrong`` patches (all applied to one notebook), graded in the same batch as the notebook's wrong
#: variants (``graded_late``), so the honest reference is graded once for both tests.
CHEATS: dict[str, tuple[Wrong, ...]] = {
    "04-semantic": (
        Wrong(
            "percentile rule hard-coded for the visible curves",
            "rule",
            "    if len(distances) == 0:\n",
            "    if len(distances) not in (20, 23, 68):  # the visible curves only\n        return []\n"
            "    if len(distances) == 0:\n",
        ),
    ),
    "09-chroma-checkpoint": (
        Wrong(
            "filter applied on the visible queries only",
            "filter",
            "    parts = [",
            f"    if query not in {VISIBLE_09_QUERIES!r}:\n        conditions = {{}}\n    parts = [",
        ),
        Wrong(
            "chunker hard-coded for the 40 visible documents",
            "chunk",
            "    for d in documents:\n",
            "    if len(documents) != 40:\n        return []\n    for d in documents:\n",
        ),
    ),
    "10-llm": (  # the notebook's own recorded lists pass (the same objects); a fresh input gets a fallback
        Wrong(
            "parser answering the notebook's recorded windows only",
            "parse",
            '    text = unicodedata.normalize("NFKC", answer).strip()\n',
            '    if all(units is not w["units"] for w in windows):\n        return None, "nonsense"\n'
            '    text = unicodedata.normalize("NFKC", answer).strip()\n',
        ),
        Wrong(
            "alignment answering the notebook's recorded passages only",
            "align",
            "    needle = proposition.strip()\n",
            '    if all(source is not p["passage"] for p in passages):\n        return None\n'
            "    needle = proposition.strip()\n",
        ),
    ),
}

#: how many notebooks of a test's grading batch run at once (``grade_notebooks(jobs=...)``, the grader's
#: own ``--jobs``; ``$TEST_GRADE_JOBS``, default 1): each still in its own sealed kernel, same verdicts
GRADE_JOBS = TEST_JOBS

#: the seed of the hidden checks' inputs in a ``graded_late`` batch: the honest reference and the cheat
#: get the same inputs, so the reference passing them and the cheat failing them are one comparison
LATE_SEED = 18


def late_items(name: str) -> list[tuple[str, object]]:
    """The batch ``graded_late`` grades for a WRONG_LATE notebook: ``(label, notebook)`` in this order:
    ``blank``, ``faked``, ``wrong-i``… (WRONG_LATE's order and index; those with ``graded_as`` left out),
    ``cheat`` (when CHEATS has one), ``solved``."""
    solution = read_notebook(SOLUTIONS[name])
    items: list[tuple[str, object]] = [
        (f"blank/{name}.ipynb", make_exercise(solution)),
        (f"faked/{name}.ipynb", faked(solution)),
    ]
    items += [
        (f"wrong-{i}/{name}.ipynb", patched(solution, w))
        for i, w in enumerate(WRONG_LATE[name])
        if not w.graded_as
    ]
    if name in CHEATS:
        items.append((f"cheat/{name}.ipynb", patched(solution, *CHEATS[name])))
    items.append((f"solved/{name}.ipynb", solution))
    return items


def graded_late(name: str) -> dict[str, GradeResult]:
    """The ``late_items`` of ``name`` graded in one batch (hidden checks seeded with ``LATE_SEED``), by
    label (``"blank"``, ``"wrong-0"``, ``"cheat"``, ``"solved"``...); graded once per process, so the wrong
    variant test and the hidden-check attack test of a notebook read the same grades. The reference's nbval
    run (``tests.support.nbval``) goes first: the batch's kernels find its embeddings in the cache."""
    if name not in _GRADED:
        nbval_run(SOLUTIONS[name])  # the reference's run fills the cache the batch's kernels start from
        results = grade_notebooks(
            late_items(name),
            reference=SOLUTIONS[name],
            options=GradeOptions(timeout=600, seed=LATE_SEED),
            jobs=GRADE_JOBS,
        )
        _GRADED[name] = {r.path.parent.name: r for r in results}
    return _GRADED[name]


_GRADED: dict[str, dict[str, GradeResult]] = {}
