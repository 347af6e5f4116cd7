"""The code-RAG capstone's ``CHUNKLAB_CAPSTONE_RUN=poly`` branch, run end to end on a small polyglot corpus.

The solution notebook runs as committed except for one expression: the corpus comes from
generated npm / sdist / Debian archives (seven languages, documented functions whose names
and bodies share words with their doc comments) instead of the fetched ``code-poly``.
Everything else is the real pipeline: tree-sitter chunking in worker processes,
doc-comment questions, BM25, the per-language paired comparison. A last cell hands the
notebook's results back as JSON.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import zipfile
from pathlib import Path

import pytest

from chunklab.course.notebooks import read_notebook
from chunklab.datasets.corpora.archives import ArchivePin
from chunklab.datasets.corpora.code_poly import poly_corpus
from chunklab.datasets.questions.poly import poly_questions
from tests.support.archivegen import deb_bytes, tar_bytes

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "08-code-rag.ipynb"
WORDS = (
    "zebra quota lantern copper maple falcon harbor velvet cactus glacier orchid pepper "
    "saddle tundra walnut beacon cobalt dagger ember fjord garnet hazel igloo jasmine kettle "
    "lotus marble nectar onyx parrot quartz raven sierra timber umber violet willow yarrow"
).split()
#: language -> (file extension, archive, one documented function from (comment, name, body words))
TEMPLATES = {
    "javascript": (
        ".js",
        "npm",
        "/**\n * {doc}\n */\nfunction {name}(items) {{\n{body}  return items;\n}}\n",
    ),
    "typescript": (
        ".ts",
        "npm",
        "/**\n * {doc}\n */\nexport function {name}(items: number[]): number[] {{\n"
        "{body}  return items;\n}}\n",
    ),
    "go": (
        ".go",
        "pypi",
        "// {name} {doc_lower}\nfunc {name}(items []int) []int {{\n{body}\treturn items\n}}\n",
    ),
    "rust": (
        ".rs",
        "pypi",
        "/// {doc}\npub fn {name}(items: Vec<i64>) -> Vec<i64> {{\n{body}    items\n}}\n",
    ),
    "c": (".c", "pypi", "/* {doc} */\nint {name}(int *items, int n) {{\n{body}    return n;\n}}\n"),
    "ruby": (".rb", "deb", "# {doc}\ndef {name}(items)\n{body}  items\nend\n"),
    "php": (".php", "deb", "/**\n * {doc}\n */\nfunction {name}($items) {{\n{body}    return $items;\n}}\n"),
}
FILES_PER_LANGUAGE, FUNCTIONS_PER_FILE = 5, 3


def _function(
    language: str, words: list[str], doc: str = "Compute the {} {} of every {} in the list."
) -> str:
    _, _, template = TEMPLATES[language]
    name = "_".join(words[:3])
    doc = doc.format(*words)
    line = {
        "go": "\t{w} := len(items) // {w}\n",
        "rust": "    let {w} = items.len(); // {w}\n",
        "c": "    int {w} = n; /* {w} */\n",
        "ruby": "  {w} = items.length # {w}\n",
        "php": "    ${w} = count($items); // {w}\n",
    }.get(language, "  const {w} = items.length; // {w}\n")
    body = "".join(line.format(w=w) for w in words)
    return template.format(doc=doc, doc_lower=doc[0].lower() + doc[1:], name=name, body=body)


def _sources(rng: random.Random) -> dict[str, dict[str, str]]:
    """Per language, file path -> source: documented functions with distinct words each, and one
    file too small to ask questions of; a Python module and a shell script (no question builder)."""
    out: dict[str, dict[str, str]] = {}
    for language, (ext, _, _) in TEMPLATES.items():
        files = {}
        head = "<?php\n" if language == "php" else ""
        for i in range(FILES_PER_LANGUAGE):
            parts = [_function(language, rng.sample(WORDS, 5)) for _ in range(FUNCTIONS_PER_FILE)]
            files[f"src/{language}_{i}{ext}"] = head + "\n".join(parts)
        files[f"lib/small_{language}{ext}"] = head + _function(language, rng.sample(WORDS, 3), "A {} helper.")
        out[language] = files
    out["python"] = {"tools/run.py": "def main(items):\n    return sorted(items)\n"}
    out["bash"] = {"tools/run.sh": '#!/bin/sh\nset -e\nfor f in *.txt; do wc -l "$f"; done\n'}
    return out


def _zip(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return buf.getvalue()


@pytest.fixture(scope="module")
def tiny_poly(tmp_path_factory) -> tuple[Path, list[ArchivePin]]:
    """Three archives in a cache folder (``corpora/tiny-poly``) and their pins."""
    cache = tmp_path_factory.mktemp("cache")
    folder = cache / "corpora" / "tiny-poly"
    folder.mkdir(parents=True)
    by_kind: dict[str, dict[str, str]] = {"npm": {}, "pypi": {}, "deb": {}}
    for language, files in _sources(random.Random(3)).items():
        by_kind[TEMPLATES[language][1] if language in TEMPLATES else "deb"].update(files)
    blobs = {
        ("npm", "tiny-js", "1.0.0", "tiny-js-1.0.0.tgz"): tar_bytes(
            {f"package/{n}": t for n, t in by_kind["npm"].items()}
        ),
        ("pypi", "tiny-native", "0.1", "tiny-native-0.1.zip"): _zip(
            {f"tiny-native-0.1/{n}": t for n, t in by_kind["pypi"].items()}
        ),
        ("deb", "ruby-php-tiny", "1-1", "ruby-php-tiny_1-1_all.deb"): deb_bytes(
            {f"./usr/share/tiny/{n}": t for n, t in by_kind["deb"].items()}
        ),
    }
    pins = []
    for (kind, name, version, filename), data in blobs.items():
        pin = ArchivePin(
            kind, name, version, hashlib.sha256(data).hexdigest(), len(data), f"https://x.invalid/{filename}"
        )
        (folder / pin.filename).write_bytes(data)
        pins.append(pin)
    return cache, pins


def _run_poly(cache: Path, pins: list[ArchivePin], monkeypatch) -> dict:
    """The solution notebook with RUN=poly on the tiny corpus; the results its last cell prints."""
    import nbformat
    from nbclient import NotebookClient

    nb = read_notebook(SOLUTION)
    setup = next(c for c in nb.cells if c.id == "setup")
    fetched = 'named_corpus("code-poly")'
    assert setup.source.count(fetched) == 1, "the poly branch no longer reads code-poly here"
    tiny = f"poly_corpus('tiny-poly', cache_dir={str(cache)!r}, pins={pins!r})"
    setup.source = (
        "from chunklab.datasets.corpora.archives import ArchivePin\n"
        "from chunklab.datasets.corpora.code_poly import poly_corpus\n" + setup.source.replace(fetched, tiny)
    )
    report = nbformat.v4.new_code_cell(
        "import json as _json\n"
        "print('RESULTS', _json.dumps({'run': RUN, 'files': len(corpus), 'languages': dict(languages),\n"
        "    'questions': len(questions.questions), 'summary': summary,\n"
        "    'by_language': {' | '.join(k): v for k, v in scores_by_language.items()},\n"
        "    'corpus_by_language': {' | '.join(k): v for k, v in by_language.items()},\n"
        "    'indexed': {n: sorted({c.doc_id for c in ch}) for n, (ch, _) in indexes.items()}},\n"
        "    default=float))"
    )
    nb.cells.append(report)
    monkeypatch.setenv("CHUNKLAB_CAPSTONE_RUN", "poly")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cache)}}
    )
    client.execute()
    outputs = {
        c.id: "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        for c in nb.cells
        if c.cell_type == "code"
    }
    line = next(x for x in outputs[report.id].splitlines() if x.startswith("RESULTS "))
    return {"results": json.loads(line.removeprefix("RESULTS ")), "outputs": outputs}


@pytest.mark.slow
def test_poly_run_chunks_asks_and_compares_every_language(tiny_poly, monkeypatch):
    cache, pins = tiny_poly
    run = _run_poly(cache, pins, monkeypatch)
    res, outputs = run["results"], run["outputs"]
    files = poly_corpus("tiny-poly", cache_dir=cache, pins=pins)
    assert res["run"] == "poly"
    assert res["languages"] == dict(files.languages())
    assert set(res["languages"]) == {*TEMPLATES, "python", "bash"}
    expected = {lang: len(poly_questions(files, lang, n_files=300, seed=0).questions) for lang in TEMPLATES}
    assert res["questions"] == sum(expected.values()) > 0
    # every language gets its rows: both strategies and the paired difference, on its own questions
    for lang, n in expected.items():
        for name in ("structural", "recursive 800/80", "structural - recursive"):
            row = res["by_language"][f"{lang} | {name}"]
            assert row["questions"] == n
            mean, lo, hi = (float(x.strip("[],")) for x in row["recall"].split())
            assert lo <= mean <= hi
            assert (-1 if " - " in name else 0) <= lo and hi <= 1
        assert res["corpus_by_language"][f"{lang} | structural"]["files"] == FILES_PER_LANGUAGE + 1
        # generated code parses: tree-sitter never falls back on it
        assert res["corpus_by_language"][f"{lang} | structural"]["fallback_rate"] == 0
    # a function's name and body share its comment's words: structural chunks that hold it are found
    for lang in TEMPLATES:
        recall = float(res["by_language"][f"{lang} | structural"]["recall"].split()[0])
        assert recall >= 0.8, (lang, recall)
    # every file is indexed under the ids the questions use, by both strategies
    ids = sorted(f.doc_id for f in files)
    assert res["indexed"] == {"structural": ids, "recursive 800/80": ids}
    verdicts = [x.strip() for x in outputs["cp-index"].splitlines() if x.rstrip().endswith((": yes", ": no"))]
    assert len(verdicts) == 8 and all(v.endswith(": yes") for v in verdicts), outputs["cp-index"]
    assert "files chunked / corpus files >= 1: yes" in outputs["cp-corpus"]
    assert outputs["cp-question-agree"].splitlines()[1].endswith("equals the kit's >= 1: yes")
