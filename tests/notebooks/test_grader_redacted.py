"""The redacted view (issue 37): what 07-retrieval asks for is not in the grading sandbox at all.

Each attack of the issue's sweep that scored 2/2 on 07 without writing the fusion is a generated
notebook here: the 07 reference cut to its ``rrf`` cell and ``cp-rrf`` checkpoint (so no model
or corpus loads), the ``rrf`` body replaced by the attack. All are graded in one batch; each must
fail ``cp-rrf`` with a detail naming the missing library function, and the reference still
passes with its hidden checks.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from chunklab.course.grader import GradeOptions, grade_notebooks
from chunklab.course.hidden import NotPlain, plain, summarize
from chunklab.course.notebooks import read_notebook
from chunklab.course.redact import build_view, redact_source
from chunklab.course.shortcuts import SHORTCUTS, Shortcut
from tests.support.sandbox import needs_bwrap

ROOT = Path(__file__).resolve().parents[2]
HEAD = "def rrf(rankings, k=60):\n"
#: what every attack computes, one way or another: the library's fused ids
FUSED = "[i for i, _ in fuse(rankings, rrf_k=k)]"

ATTACKS = {
    # the result's own methods call the library when the checkpoint prints it or the check summarizes it
    "dunder methods": HEAD + "    class Fused(list):\n"
    "        def _real(self):\n"
    "            from chunklab.retrieval.hybrid import reciprocal_rank_fusion as f\n"
    "            from chunklab import Chunk\n"
    "            fused = f([[(Chunk(i, 0, 0, i), 0.0) for i in r] for r in rankings], rrf_k=k)\n"
    "            return [c.text for c, _ in fused]\n"
    "        def __format__(self, spec):\n            return str(self._real())\n"
    "        def __eq__(self, other):\n            return self._real() == other\n"
    "        def tolist(self):\n            return self._real()\n"
    "        def __iter__(self):\n            return iter(self._real())\n"
    "    return Fused()\n",
    "the library's fusion itself": HEAD
    + "    from chunklab.retrieval.hybrid import reciprocal_rank_fusion\n    from chunklab import Chunk\n"
    "    fused = reciprocal_rank_fusion([[(Chunk(i, 0, 0, i), 0.0) for i in r] for r in rankings], rrf_k=k)\n"
    "    return [c.text for c, _ in fused]\n",
    # the ids-only twin was not in shortcuts.py before issue 37, so calling it scored full marks
    "the ids twin": HEAD
    + "    from chunklab.retrieval.hybrid import reciprocal_rank_fusion_ids as fuse\n"
    + f"    return {FUSED}\n",
    "exec of the module's source under another name": HEAD
    + "    import chunklab.retrieval.hybrid as h\n    ns = {'__name__': 'elsewhere'}\n"
    "    exec(compile(open(h.__file__).read(), '/tmp/elsewhere.py', 'exec'), ns)\n"
    "    fuse = ns['reciprocal_rank_fusion_ids']\n" + f"    return {FUSED}\n",
    "ctypes switches the profile off": HEAD + "    import ctypes\n"
    "    ctypes.pythonapi.PyEval_SetProfile(None, None)\n"
    "    from chunklab.retrieval.hybrid import reciprocal_rank_fusion_ids as fuse\n"
    + f"    return {FUSED}\n",
    "the original from the tripwire's closure": HEAD + "    import chunklab.retrieval.hybrid as h\n"
    "    wire = h.reciprocal_rank_fusion_ids\n"
    "    cells = [c.cell_contents for c in (wire.__closure__ or ())]\n"
    "    fuse = next((c for c in cells if callable(c) and c is not wire), wire)\n" + f"    return {FUSED}\n",
    "a thread started in an earlier cell": HEAD + "    jobs.put((rankings, k))\n"
    "    answer = answers.get()\n"
    "    if isinstance(answer, Exception):\n        raise answer\n    return answer\n",
    "_thread.start_new_thread": HEAD + "    import _thread, queue\n    box = queue.Queue()\n"
    "    def work():\n        try:\n"
    "            from chunklab.retrieval.hybrid import reciprocal_rank_fusion_ids as fuse\n"
    f"            box.put({FUSED})\n"
    "        except Exception as exc:\n            box.put(exc)\n"
    "    _thread.start_new_thread(work, ())\n    answer = box.get()\n"
    "    if isinstance(answer, Exception):\n        raise answer\n    return answer\n",
    "an os.fork child": HEAD + "    import json, os\n    read, write = os.pipe()\n"
    "    if os.fork() == 0:\n        try:\n"
    "            from chunklab.retrieval.hybrid import reciprocal_rank_fusion_ids as fuse\n"
    f"            os.write(write, json.dumps({FUSED}).encode())\n"
    "        finally:\n            os._exit(0)\n"
    "    os.close(write)\n    data = b''\n    while chunk := os.read(read, 65536):\n        data += chunk\n"
    "    os.close(read)\n    os.wait()\n    return json.loads(data)\n",
}
#: the worker the thread attack starts in a cell before the rrf cell
WORKER = (
    "import queue, threading\njobs, answers = queue.Queue(), queue.Queue()\n\n"
    "def worker():\n    while True:\n        rankings, k = jobs.get()\n        try:\n"
    "            from chunklab.retrieval.hybrid import reciprocal_rank_fusion_ids as fuse\n"
    f"            answers.put({FUSED})\n"
    "        except Exception as exc:\n            answers.put(exc)\n\n"
    "threading.Thread(target=worker, daemon=True).start()"
)


def _cut_reference(folder: Path) -> Path:
    """The 07 reference with only its ``rrf`` cell and ``cp-rrf`` checkpoint, as ``07-retrieval.ipynb``."""
    nb = read_notebook(ROOT / "solutions" / "07-retrieval.ipynb")
    nb.cells = [c for c in nb.cells if c.get("id") in ("rrf", "cp-rrf")]
    path = folder / "07-retrieval.ipynb"
    nbformat.write(nb, path)
    return path


def _attack(reference: Path, how: str):
    nb = read_notebook(reference)
    cell = next(c for c in nb.cells if c.get("id") == "rrf")
    cell.source = ATTACKS[how]
    if how == "a thread started in an earlier cell":
        nb.cells.insert(0, nbformat.v4.new_code_cell(WORKER, id="worker"))
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The cut reference and every attack, graded in one batch: ``name -> GradeResult``."""
    reference = _cut_reference(tmp_path_factory.mktemp("course"))
    items = [("good-07-retrieval.ipynb", read_notebook(reference))]
    items += [(f"{how}-07-retrieval.ipynb", _attack(reference, how)) for how in ATTACKS]
    results = grade_notebooks(items, reference=reference, options=GradeOptions(timeout=60, seed=7), jobs=2)
    return {r.path.name.removesuffix("-07-retrieval.ipynb"): r for r in results}


@needs_bwrap
def test_the_07_reference_passes_cp_rrf_and_its_hidden_checks_in_the_redacted_sandbox(graded):
    good = graded["good"]
    assert good.error == "" and good.ok, [(c.cell_id, c.detail, c.hidden) for c in good.checkpoints]
    (cp,) = good.checkpoints
    assert cp.hidden and all(h.passed for h in cp.hidden)


@needs_bwrap
@pytest.mark.parametrize("how", sorted(ATTACKS))
def test_each_07_bypass_of_the_sweep_fails_cp_rrf_naming_the_missing_fusion(graded, how):
    result = graded[how]
    assert result.error == "", result.error
    (cp,) = result.checkpoints
    said = cp.detail + " | " + " | ".join(h.detail for h in cp.hidden)
    assert not cp.passed and not any(h.passed for h in cp.hidden), said
    assert "chunklab.retrieval.hybrid.reciprocal_rank_fusion" in said, said
    assert "which this exercise asks you to write" in said, said


@needs_bwrap
def test_a_result_that_is_not_plain_values_is_refused_by_the_hidden_check(graded):
    hidden = graded["dunder methods"].checkpoints[0].hidden
    assert hidden and all(
        h.detail.startswith("refused: rrf returned a __main__.rrf.<locals>.Fused: only plain values")
        for h in hidden
    ), [h.detail for h in hidden]


# ------------------------------------------------------------------------- the view itself (no kernel)


def test_every_absent_function_is_a_stub_in_the_view_and_its_code_is_nowhere_in_it(tmp_path):
    absent = sorted({e for s in SHORTCUTS.values() for e in s.absent})
    assert "chunklab.retrieval.hybrid:reciprocal_rank_fusion_ids" in absent
    also = {"chunklab.chunkers.recursive:pack_paragraphs", "chunklab.evaluate.bootstrap:bootstrap_means"}
    assert also <= set(absent)
    view = build_view(absent, tmp_path)
    for entry in absent:
        module, name = entry.split(":")
        source = view.joinpath(*module.split(".")[1:]).with_suffix(".py").read_text(encoding="utf-8")
        assert f"def {name}(*args, **kwargs):  # redacted by the grader" in source, entry
        assert source.count(f"def {name}(") == 1, entry
    sources = "".join(p.read_text(encoding="utf-8") for p in view.rglob("*.py"))
    assert "1.0 / (rrf_k + rank)" not in sources  # the fusion's one line
    assert "(score - lo) / (hi - lo)" not in sources  # the weighted fusion's scaling
    assert "np.percentile(resampled" not in sources  # the bootstrap interval's one line
    assert not list(view.rglob("*.pyc")) or all("__pycache__" in str(p) for p in view.rglob("*.pyc"))


def test_redacting_a_name_the_module_does_not_define_as_a_function_names_it():
    with pytest.raises(ValueError, match="top-level functions of m, got nope"):
        redact_source("def f():\n    return 1\n", "m", ["f", "nope"])
    out = redact_source("import x\n\n@x.deco\ndef f(a):\n    return a\n\nY = 1\n", "m", ["f"])
    assert "@x.deco" not in out and "return a" not in out and out.endswith("Y = 1\n")


def test_a_shortcut_cannot_declare_absent_what_it_does_not_list():
    with pytest.raises(ValueError, match="absent must name library entries, got m:g"):
        Shortcut(("f",), ("m:f",), absent=("m:g",))


def test_plain_lets_exact_values_through_and_refuses_anything_else_without_calling_it():
    import numpy as np

    called = []

    class Sneaky(list):
        def __iter__(self):
            called.append("iter")
            return iter([])

    assert plain({"a": (1, 2.5, None, True, "x")}) == {"a": [1, 2.5, None, True, "x"]}
    assert plain(np.arange(3)) == [0, 1, 2] and type(plain(np.float64(0.5))) is float
    boxed = np.empty(1, dtype=object)
    boxed[0] = Sneaky()
    for bad in (Sneaky([1]), {"a": Sneaky()}, [object()], boxed, {Sneaky: 1}):
        with pytest.raises(NotPlain, match="only plain values"):
            plain(bad, "rrf")
    assert called == []
    with pytest.raises(NotPlain, match="rrf returned a .*Sneaky"):
        summarize(Sneaky(), "value", "rrf")
