"""Hidden checks: the learner's functions on fresh inputs, against the reference's results.

A checkpoint shows a few fixed inputs; a function written for those alone passes it. Each
:class:`HiddenCheck` below names a learner function, generates inputs at grading time from
a per-submission seed (:mod:`chunklab.course.hidden.inputs`), and compares the learner's
results (computed in the sandboxed kernel) with the reference solution's (its own cells,
executed in the grader's process after the check's ``setup``, never the learner's cells).
Expected values are never sent to the kernel. :func:`arguments` rebuilds the JSON inputs
(arrays, documents, a fresh store) and :func:`summarize` turns a result into JSON, in both
processes the same way; :func:`same` compares the two.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chunklab.course.hidden import inputs as gen
from chunklab.course.hidden import inputs_llm as llm
from chunklab.course.hidden import inputs_pdf as pdf
from chunklab.course.hidden import inputs_rag as rag

__all__ = [
    "CONVERTERS",
    "HIDDEN",
    "HiddenCheck",
    "NotPlain",
    "arguments",
    "plain",
    "plain_encoder",
    "reference_function",
    "same",
    "summarize",
]


@dataclass(frozen=True)
class HiddenCheck:
    """Checks of ``function`` attached to checkpoint ``checkpoint``.

    ``inputs(rng)`` yields ``(kind, kwargs)`` pairs (the kind is what feedback names when
    one fails); ``reference_cells`` are the solution cells, in order, that define the
    reference ``function``, run after ``setup`` (the imports and objects those cells need,
    so the reference never runs the notebook's heavy cells); ``summary`` says how a result
    is compared (see :func:`summarize`); ``convert`` names the arguments rebuilt on arrival
    (see :data:`CONVERTERS`); numbers may differ by ``tolerance``. ``definitions_only`` keeps
    the reference cells' ``def``, ``class`` and ``import`` statements and drops the rest (a
    cell that defines the function and then runs it on the whole corpus).
    """

    checkpoint: str
    function: str
    reference_cells: tuple[str, ...]
    inputs: Callable[[random.Random], list[tuple[str, dict[str, Any]]]]
    summary: str = "chunks"
    setup: str = ""
    convert: dict[str, str] = field(default_factory=dict)
    tolerance: float = 0.0
    definitions_only: bool = (
        False  # from the reference cells, run only their def, class and import statements
    )


class NotPlain(TypeError):
    """A result that is not made of plain JSON values: refused without calling its methods."""


_PLAIN = (str, int, float, bool, type(None))


def plain(value: Any, function: str = "the function") -> Any:
    """``value`` as plain JSON values: exact ``str``/``int``/``float``/``bool``/``None``, lists (from
    lists and tuples), dicts with such keys, and numpy's own arrays and scalars (as lists and numbers).

    Only exact types pass (a subclass may run its own code when printed, compared or encoded):
    anything else raises :class:`NotPlain` naming its type; no method of it is called.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list or kind is tuple:
        return [plain(v, function) for v in value]
    if kind is dict:
        for key in value:
            if type(key) not in _PLAIN:
                raise NotPlain(f"{function} returned a dict key of type {type(key).__name__}: {_RULE}")
        return {key: plain(v, function) for key, v in value.items()}
    if kind.__module__ == "numpy":
        import numpy as np

        if kind is np.ndarray:
            return plain(value.tolist(), function)
        if kind in {t for t in np.sctypeDict.values() if issubclass(t, np.bool_ | np.number)}:
            return plain(value.item(), function)
    raise NotPlain(f"{function} returned a {kind.__module__}.{kind.__qualname__}: {_RULE}")


_RULE = "only plain values (lists, dicts, strings, numbers, None; numpy arrays) cross from the kernel"


def summarize(value: Any, summary: str, function: str = "the function") -> Any:
    """A plain JSON summary of a function's result (see :func:`plain`; else :class:`NotPlain`).

    ``chunks``: ``[start, end, kind, text]`` rows; ``chunks+KEY,KEY``: ``[doc_id, start, end,
    text, {KEY: metadata value}]`` rows; ``value``: the value (arrays as lists); ``rounded``:
    floats rounded to 6 decimals; ``count``: how many chunks and how many distinct spans among
    them (for a function the learner tunes, whose chunks may differ from the reference's).
    """
    if summary == "chunks":
        return plain([[c.start, c.end, (c.metadata or {}).get("kind"), c.text] for c in value], function)
    if summary.startswith("chunks+"):
        keys = summary.removeprefix("chunks+").split(",")
        return plain(
            [[c.doc_id, c.start, c.end, c.text, {k: (c.metadata or {}).get(k) for k in keys}] for c in value],
            function,
        )
    if summary == "count":
        return plain([len(value), len({(c.doc_id, c.start, c.end) for c in value})], function)
    if summary == "value":
        return plain(value, function)
    if summary == "rounded":
        return _rounded(plain(value, function))
    raise ValueError(
        f"summary must be 'chunks', 'chunks+KEYS', 'count', 'value' or 'rounded', got {summary!r}"
    )


def _rounded(value: Any) -> Any:
    """Floats rounded to 6 decimals, recursively (equivalent arithmetic may differ in the last bits)."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def same(got: Any, expected: Any, tolerance: float = 0.0) -> bool:
    """Whether two JSON summaries agree, numbers within ``tolerance`` (``bool`` is not a number here)."""
    if isinstance(got, bool) or isinstance(expected, bool):
        return type(got) is type(expected) and got == expected
    if tolerance and isinstance(got, int | float) and isinstance(expected, int | float):
        return math.isclose(got, expected, rel_tol=0.0, abs_tol=tolerance)
    if isinstance(got, list) and isinstance(expected, list):
        return len(got) == len(expected) and all(
            same(g, e, tolerance) for g, e in zip(got, expected, strict=True)
        )
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(same(got[k], expected[k], tolerance) for k in got)
    return got == expected


_SHARED: dict[str, Any] = {}  # this process's objects that converters reuse (the kernel passes its own)


def plain_encoder(shared: dict[str, Any] | None = None) -> Any:
    """MiniLM without the vector cache (fresh inputs would only fill it), loaded once per ``shared``."""
    holder = _SHARED if shared is None else shared
    if "encoder" not in holder:
        from chunklab.embed import Encoder

        holder["encoder"] = Encoder(cache_dir=False)
    return holder["encoder"]


def _array(value: Any, shared: dict[str, Any]) -> Any:
    import numpy as np

    return np.asarray(value, dtype=float)


def _chunks(value: Any, shared: dict[str, Any]) -> Any:
    from chunklab.chunk import Chunk

    return [Chunk(**c) for c in value]


def _documents(value: Any, shared: dict[str, Any]) -> Any:
    from chunklab.documents import Document

    return [Document(**d) for d in value]


def _code_file(value: Any, shared: dict[str, Any]) -> Any:
    """A :class:`~chunklab.datasets.corpora.code.CorpusFile` of ``value["source"]``, in a fresh temp file."""
    import atexit
    import shutil
    import tempfile

    from chunklab.datasets.corpora.code import CodeFile

    folder = tempfile.mkdtemp(prefix="chunklab-hidden-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder, Path(value["relpath"]).name)
    path.write_text(value["source"], encoding="utf-8")
    return CodeFile(str(path), value["root"], value["relpath"], path.stat().st_size)


def _store(value: Any, shared: dict[str, Any]) -> Any:
    """A fresh in-memory store holding ``value``'s chunks, embedded by MiniLM without the vector cache."""
    from chunklab.retrieval.chroma.store import ChunkStore

    store = ChunkStore(collection="hidden-check", encoder=plain_encoder(shared), in_memory=True)
    store.add(_chunks(value, shared), show_progress=False)
    return store


#: how a JSON argument is rebuilt on arrival, by name
CONVERTERS: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "array": _array,
    "chunks": _chunks,
    "code-file": _code_file,
    "documents": _documents,
    "store": _store,
}


def arguments(
    cases: Sequence[dict[str, Any]], convert: dict[str, str], shared: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Each case's keyword arguments with those named in ``convert`` rebuilt (equal values built once).

    ``shared`` keeps what converters load once (the encoder) across calls; default: this module's.
    """
    shared = _SHARED if shared is None else shared
    built: dict[tuple[str, str], Any] = {}
    out = []
    for kwargs in cases:
        args = dict(kwargs)
        for name, how in convert.items():
            if name in args:
                key = (how, json.dumps(args[name], sort_keys=True))
                if key not in built:
                    built[key] = CONVERTERS[how](args[name], shared)
                args[name] = built[key]
        out.append(args)
    return out


_NUMPY = "import numpy as np\n"
_SEMANTIC = (
    _NUMPY + "from chunklab.course.hidden import plain_encoder\nencoder = plain_encoder()\nBUFFER = 2\n"
)
_CHROMA = (
    "from pathlib import Path\nfrom chunklab import Chunk\n"
    "from chunklab.retrieval.chroma.store import ChunkStore\n"
    "from chunklab.chunkers.structural import chunk_markdown\nimport dataclasses\nimport functools\n"
    "from chunklab.retrieval.hybrid import HybridRetriever\n"
    "from chunklab.retrieval.lexical import BM25Index\n"
    "COLLECTION = 'kit-docs'\n"
)
_CODE = (
    "from chunklab import Chunk\nfrom chunklab.datasets.corpora.code import CodeFile\n"
    "from chunklab.chunkers.structural import chunk_code, chunk_python\n"
)

#: hidden checks per course notebook (by solution file stem)
HIDDEN: dict[str, list[HiddenCheck]] = {
    "01-fixed": [
        HiddenCheck("cp-real", "token_windows", ("setup", "token-windows"), gen.token_window_inputs)
    ],
    "02-recursive": [HiddenCheck("cp-runbook", "pack", ("setup", "pack"), gen.pack_inputs)],
    "03-structural": [
        HiddenCheck(
            "cp-real",
            "chunk_python_source",
            ("setup", "split-unit", "pack-units", "chunk-code"),
            gen.python_inputs,
        )
    ],
    "03b-documents": [
        HiddenCheck("cp-small", "remove_margins", ("setup", "margins"), pdf.margin_inputs, "value")
    ],
    "04-semantic": [
        HiddenCheck(
            "cp-rule",
            "percentile_breakpoints",
            ("rule",),
            gen.percentile_inputs,
            "value",
            _NUMPY,
            {"distances": "array"},
        ),
        HiddenCheck(
            "cp-planted",
            "chunks_from_breakpoints",
            ("chunks",),
            gen.breakpoint_inputs,
            "chunks+sentences",
            _NUMPY + "from chunklab import Chunk\n",
        ),
        HiddenCheck(
            "cp-planted", "distance_curve", ("curve",), gen.curve_inputs, "value", _SEMANTIC, tolerance=1e-4
        ),
    ],
    "05-hierarchical": [HiddenCheck("cp-tree", "auto_merge_ids", ("merge",), gen.merge_inputs, "value")],
    "06-evaluation": [
        HiddenCheck("cp-spans", "span_metrics", ("setup", "spans"), gen.span_inputs, "rounded")
    ],
    "07-retrieval": [HiddenCheck("cp-rrf", "rrf", ("rrf",), gen.rrf_inputs, "value")],
    "08-code-rag": [
        HiddenCheck(
            "cp-pipeline",
            "chunk_code_file",
            ("pipeline",),
            rag.code_file_inputs,
            "chunks+kind,name,project,module,fallback",
            _CODE,
            {"f": "code-file"},
            definitions_only=True,
        ),
        HiddenCheck("cp-question", "docstring_question", ("question",), rag.docstring_inputs, "value"),
        HiddenCheck(
            "cp-char-recall",
            "char_recall",
            ("char-recall",),
            rag.char_recall_inputs,
            "rounded",
            definitions_only=True,
        ),
        HiddenCheck(
            "cp-score",
            "score_question",
            ("setup", "char-recall", "score"),
            rag.score_inputs,
            "rounded",
            convert={"retrieved": "chunks"},
            definitions_only=True,
        ),
    ],
    "09-chroma-checkpoint": [
        HiddenCheck(
            "cp-index",
            "chunk_corpus",
            ("chunk",),
            rag.corpus_inputs,
            "chunks+title,headings,kind",
            _CHROMA,
            {"documents": "documents"},
            definitions_only=True,
        ),
        HiddenCheck(
            "cp-filter",
            "filtered_search",
            ("filter",),
            rag.filtered_search_inputs,
            "chunks+kind",
            _CHROMA,
            {"store": "store"},
            definitions_only=True,
        ),
        HiddenCheck(  # retrieve is tuned (the held-out bar judges it): only its count is the reference's
            "cp-heldout",
            "retrieve",
            ("retrieve",),
            rag.retrieve_inputs,
            "count",
            _CHROMA,
            {"store": "store"},
            definitions_only=True,
        ),
    ],
    "10-llm": [
        HiddenCheck("cp-parse", "parse_boundary_answer", ("setup", "parse"), llm.boundary_inputs, "value"),
        HiddenCheck("cp-align", "align_proposition", ("setup", "align"), llm.alignment_inputs, "value"),
    ],
}

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
_REFERENCES: dict[tuple[str, str], Callable[..., Any]] = {}


def reference_function(reference: Path, check: HiddenCheck) -> Callable[..., Any]:
    """The reference ``check.function``: ``check.setup`` and its solution cells, executed here."""
    from chunklab.course.notebooks import read_notebook

    key = (str(reference), check.function)
    if key not in _REFERENCES:
        cells = {c.get("id"): c for c in read_notebook(reference).cells}
        missing = [cid for cid in check.reference_cells if cid not in cells]
        if missing:
            raise ValueError(f"{reference.name}: hidden check of {check.function} needs cells {missing}")
        namespace: dict[str, Any] = {"__name__": f"reference_{reference.stem.replace('-', '_')}"}
        sources = [(f"{check.function} setup", ast.parse(check.setup))]
        for cid in check.reference_cells:
            tree = ast.parse(cells[cid].source)
            if check.definitions_only:
                tree.body = [n for n in tree.body if isinstance(n, _DEFINITIONS)]
            sources.append((cid, tree))
        with contextlib.redirect_stdout(io.StringIO()):
            for where, tree in sources:
                exec(compile(tree, f"{reference.name}:{where}", "exec"), namespace)  # noqa: S102
        _REFERENCES[key] = namespace[check.function]
    return _REFERENCES[key]
