"""CodeSearchNet-style questions over the installed-code corpus: a docstring asks, the function answers.

:func:`code_questions` samples files deterministically from
:func:`chunklab.datasets.corpora.code.code_corpus`, takes every function or method with a docstring
whose first sentence is a usable query, and makes that first sentence the question and the
function's span (decorators included) the gold answer. With ``strip_docstrings`` (the
default) the **indexed** copy of each file has every docstring removed — module, class and
function — so retrieval cannot win by matching the docstring's words; the gold offsets are
computed in that stripped text through an exact offset map, never by searching.

The procedure depends only on the corpus listing (sorted paths, deduplicated contents), the
seed and the parameters, so two machines with the same installed packages get the same
questions.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import re
import warnings
from collections import Counter
from dataclasses import dataclass

from chunklab._validate import check_positive_int
from chunklab.datasets.corpora.code import CodeCorpus
from chunklab.datasets.corpora.docs import SPLITS, Question
from chunklab.datasets.model import QuestionSet
from chunklab.documents import Document

__all__ = ["StrippedSource", "code_questions", "first_sentence", "function_spans", "strip_docstrings"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`'\"(\[])|(?<=[.!?])$")
_SKIP_NAME = re.compile(r"test", re.I)


def code_questions(
    n_files: int = 200,
    seed: int = 0,
    strip_docstrings: bool = True,
    *,
    min_words: int = 4,
    min_file_chars: int = 500,
    max_file_chars: int = 20_000,
    max_per_file: int | None = 10,
    heldout_share: float = 0.25,
    corpus: CodeCorpus | None = None,
) -> QuestionSet[Document, Question]:
    """Documents (the sampled files, docstrings stripped) and one question per documented function.

    Procedure, in order:

    1. From ``corpus`` (default ``code_corpus()``) keep files of ``min_file_chars`` to
       ``max_file_chars`` bytes, then draw ``n_files`` of them with ``sample(n_files, seed)``.
    2. Decode each file and parse it; files that do not parse are skipped.
    3. For every function or method (sync or async, nested included) whose name contains no
       ``test`` and is not a dunder, with a docstring: the question is the docstring's first
       sentence (first paragraph, whitespace collapsed, cut after the first ``.``/``!``/``?``
       followed by a capital or the end); it needs ``min_words`` words.
    4. Questions whose text occurs more than once in the dataset are dropped (ambiguous), then
       at most ``max_per_file`` per file are kept, in source order.
    5. The gold span is the function from its first decorator (or ``def``) to its last
       character, in the indexed text; ``split`` is ``heldout`` for about ``heldout_share``
       of the questions, decided by a hash of the question id.

    Document ids are ``"<root>:<relative path>"`` (e.g. ``stdlib:json/decoder.py``); question
    ids are ``"<doc id>::<qualified function name>"``.
    """
    n_files = check_positive_int(n_files, "n_files")
    min_words = check_positive_int(min_words, "min_words")
    if max_per_file is not None:
        max_per_file = check_positive_int(max_per_file, "max_per_file")
    if not 0 <= heldout_share <= 1:
        raise ValueError(f"heldout_share must be in [0, 1], got {heldout_share!r}")
    if corpus is None:
        from chunklab.datasets.corpora.code import code_corpus

        corpus = code_corpus()
    eligible = CodeCorpus([f for f in corpus if min_file_chars <= f.size <= max_file_chars])
    if len(eligible) < n_files:
        raise ValueError(
            f"only {len(eligible)} files of {min_file_chars}-{max_file_chars} bytes in the corpus; "
            f"asked for n_files={n_files}"
        )
    documents: list[Document] = []
    candidates: list[tuple[str, str, str, int, int, str]] = []  # doc_id, qid, question, s, e, answer
    for f in eligible.sample(n_files, seed):
        source = f.read_text()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escape sequences in old files
                tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        stripped = _strip(source, tree) if strip_docstrings else StrippedSource(source, source, [])
        doc_id = f.doc_id
        documents.append(Document(doc_id, stripped.text, f.path, "python", f.module))
        for qualname, node in _functions(tree):
            doc = ast.get_docstring(node, clean=True)
            if not doc:
                continue
            question = first_sentence(doc)
            if len(question.split()) < min_words:
                continue
            s, e = _node_span(source, stripped.starts, node)
            ns, ne = stripped.map(s), stripped.map(e)
            text = stripped.text[ns:ne]
            candidates.append((doc_id, f"{doc_id}::{qualname}", question, ns, ne, text))
    counts = Counter(c[2] for c in candidates)
    per_file: Counter[str] = Counter()
    questions: list[Question] = []
    seen_ids: set[str] = set()
    for doc_id, qid, question, s, e, text in candidates:
        if counts[question] > 1 or qid in seen_ids:
            continue
        if max_per_file is not None and per_file[doc_id] >= max_per_file:
            continue
        per_file[doc_id] += 1
        seen_ids.add(qid)
        split = "heldout" if _hash_share(qid) < heldout_share else "dev"
        questions.append(Question(qid, question, doc_id, [(s, e)], [text], "function", split, False))
    name = f"code:n{n_files}:seed{seed}" + ("" if strip_docstrings else ":docstrings")
    return QuestionSet(name, documents, questions, split_names=SPLITS)


def first_sentence(docstring: str) -> str:
    """The first sentence of a docstring's first paragraph, whitespace collapsed.

    The paragraph ends at the first blank line; the sentence ends after the first ``.``,
    ``!`` or ``?`` that is followed by whitespace and a capital letter, digit, quote or
    bracket (so ``e.g. this`` and ``v1.2`` do not end it), or by the end of the paragraph.
    """
    para = re.split(r"\n\s*\n", docstring.strip(), maxsplit=1)[0]
    para = " ".join(para.split())
    m = _SENTENCE_END.search(para)
    return para[: m.start()].strip() if m else para


@dataclass
class StrippedSource:
    """A source with its docstrings removed, and the map from original to stripped offsets.

    ``edits`` are ``(start, end, replacement)`` on the original text, sorted and disjoint.
    """

    original: str
    text: str
    edits: list[tuple[int, int, str]]
    starts: list[int] | None = None

    def __post_init__(self) -> None:
        if self.starts is None:
            from chunklab.text import LineIndex

            self.starts = LineIndex(self.original, universal=True).edges
        self._ends = [e for _, e, _ in self.edits]
        shift = 0
        self._shifts = []
        for s, e, rep in self.edits:
            shift += len(rep) - (e - s)
            self._shifts.append(shift)

    def map(self, offset: int) -> int:
        """Where original ``offset`` lands in the stripped text (inside a removed span: its start)."""
        i = bisect.bisect_right(self._ends, offset)  # edits wholly before offset
        before = self._shifts[i - 1] if i else 0
        if i < len(self.edits) and self.edits[i][0] < offset:
            s = self.edits[i][0]  # offset inside this edit: clamp to the edit's start
            return s + before
        return offset + before


def strip_docstrings(source: str) -> StrippedSource:
    """Remove every docstring (module, class, function) from Python ``source``.

    A docstring on lines of its own is removed with those lines; one sharing a line with
    other code is cut out of it. A body left empty gets ``pass`` in its place, so the
    stripped source still parses. Raises ``SyntaxError`` if ``source`` does not parse.
    """
    return _strip(source, ast.parse(source))


def _strip(source: str, tree: ast.AST) -> StrippedSource:
    from chunklab.text import LineIndex

    starts = LineIndex(source, universal=True).edges
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if not body or not _is_docstring(body[0]):
            continue
        expr = body[0]
        s = _offset(source, starts, expr.lineno, expr.col_offset)
        e = _offset(source, starts, expr.end_lineno or expr.lineno, expr.end_col_offset or 0)
        line_start = starts[expr.lineno - 1]
        line_end_idx = expr.end_lineno or expr.lineno
        next_line = starts[line_end_idx] if line_end_idx < len(starts) else len(source)
        head = source[line_start:s]
        tail = source[e:next_line]
        alone = not head.strip() and (not tail.strip() or tail.strip().startswith("#"))
        only = len(body) == 1 and not isinstance(node, ast.Module)
        if alone and not only:
            edits.append((line_start, next_line, ""))
        elif only:
            edits.append((s, e, "pass"))
        else:
            # shares a line with other statements ("def f(): '''doc'''; x = 1"): cut the
            # expression and the ';' after it, keeping the rest of the line
            m = re.match(r"[ \t]*;[ \t]*", tail)
            edits.append((s, e + (m.end() if m else 0), ""))
    edits.sort()
    parts = []
    pos = 0
    for s, e, rep in edits:
        parts.append(source[pos:s])
        parts.append(rep)
        pos = e
    parts.append(source[pos:])
    return StrippedSource(source, "".join(parts), edits, starts)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def function_spans(source: str) -> list[tuple[str, int, int]]:
    """``(qualified name, start, end)`` of each function and method not nested in a function.

    Offsets are characters of ``source`` (``ast`` columns are UTF-8 bytes: converted), from
    the first decorator's ``@`` (or ``def``) to the end of the body; ``[]`` when the source
    does not parse.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    from chunklab.text import LineIndex

    starts = LineIndex(source, universal=True).edges
    return [(q, *_node_span(source, starts, n)) for q, n in _functions(tree, questions=False)]


def _functions(
    tree: ast.AST, questions: bool = True
) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function with its qualified name, in source order.

    For ``questions``, dunders and tests are skipped and nested functions included; else
    every function not nested inside another function.
    """
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{child.name}"
                name = child.name
                if not questions or (
                    not (name.startswith("__") and name.endswith("__")) and not _SKIP_NAME.search(name)
                ):
                    out.append((qual, child))
                if questions:
                    visit(child, qual + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    out.sort(key=lambda t: (t[1].lineno, t[1].col_offset))
    return out


def _node_span(
    source: str, starts: list[int] | None, node: ast.FunctionDef | ast.AsyncFunctionDef
) -> tuple[int, int]:
    """Character span of a function: from its first decorator's ``@`` (or ``def``) to its end."""
    assert starts is not None
    if node.decorator_list:
        first = min(node.decorator_list, key=lambda d: (d.lineno, d.col_offset))
        s = _offset(source, starts, first.lineno, first.col_offset)
        at = source.rfind("@", starts[first.lineno - 1], s)
        s = at if at != -1 else s
    else:
        s = _offset(source, starts, node.lineno, node.col_offset)
    assert node.end_lineno is not None and node.end_col_offset is not None  # ast.parse always sets them
    e = _offset(source, starts, node.end_lineno, node.end_col_offset)
    return s, e


def _offset(source: str, starts: list[int], lineno: int, col_bytes: int) -> int:
    """Character offset of (1-based line, UTF-8 byte column) as ``ast`` reports positions."""
    line_start = starts[lineno - 1]
    line_end = starts[lineno] if lineno < len(starts) else len(source)
    line = source[line_start:line_end]
    if line.isascii():
        return line_start + col_bytes
    prefix = line.encode("utf-8", errors="surrogatepass")[:col_bytes]
    return line_start + len(prefix.decode("utf-8", errors="ignore"))


def _hash_share(key: str) -> float:
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64
