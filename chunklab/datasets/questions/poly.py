"""Doc-comment → function questions in any language of ``code-poly`` (the CodeSearchNet construction).

:func:`poly_questions` parses files of one language with its tree-sitter grammar, takes every
function or method directly preceded by a comment (JSDoc, GoDoc, ``///``, Javadoc, ``#``
lines; attributes and decorators may sit between), makes the comment's first sentence the
question and the function's span (its attributes, ``export`` or ``template`` wrapper
included) the gold answer. The **indexed** copy of each file has every comment that became a
question removed, from the comment's first character to the function's, so retrieval cannot
win by matching the comment's words; gold offsets are mapped through an exact offset map,
never searched for. Offsets are characters (tree-sitter's byte offsets are converted).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from chunklab._validate import check_positive_int
from chunklab.datasets.corpora.docs import SPLITS, Question
from chunklab.datasets.model import QuestionSet
from chunklab.datasets.questions.code import StrippedSource, _hash_share, first_sentence
from chunklab.documents import Document

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

    from chunklab.datasets.corpora.code import CorpusFile

__all__ = [
    "DOC_PREFIXES",
    "FUNCTION_NODES",
    "DocFunction",
    "doc_functions",
    "poly_questions",
    "strip_comment_markers",
    "xml_doc_text",
]

#: per language: its tree-sitter module and attribute, the function node types, and the wrappers
#: (a node whose only definition child is the function: ``export``, C++ ``template``)
FUNCTION_NODES: dict[str, tuple[str, str, frozenset[str], frozenset[str]]] = {
    "javascript": (
        "tree_sitter_javascript",
        "language",
        frozenset({"function_declaration", "generator_function_declaration", "method_definition"}),
        frozenset({"export_statement"}),
    ),
    "typescript": (
        "tree_sitter_typescript",
        "language_typescript",
        frozenset({"function_declaration", "generator_function_declaration", "method_definition"}),
        frozenset({"export_statement"}),
    ),
    "tsx": (
        "tree_sitter_typescript",
        "language_tsx",
        frozenset({"function_declaration", "generator_function_declaration", "method_definition"}),
        frozenset({"export_statement"}),
    ),
    "go": (
        "tree_sitter_go",
        "language",
        frozenset({"function_declaration", "method_declaration"}),
        frozenset(),
    ),
    "rust": ("tree_sitter_rust", "language", frozenset({"function_item"}), frozenset()),
    "c": ("tree_sitter_c", "language", frozenset({"function_definition"}), frozenset()),
    "cpp": (
        "tree_sitter_cpp",
        "language",
        frozenset({"function_definition"}),
        frozenset({"template_declaration"}),
    ),
    "java": (
        "tree_sitter_java",
        "language",
        frozenset({"method_declaration", "constructor_declaration"}),
        frozenset(),
    ),
    "csharp": (
        "tree_sitter_c_sharp",
        "language",
        frozenset({"method_declaration", "constructor_declaration"}),
        frozenset(),
    ),
    "ruby": ("tree_sitter_ruby", "language", frozenset({"method", "singleton_method"}), frozenset()),
    "php": (
        "tree_sitter_php",
        "language_php",
        frozenset({"function_definition", "method_declaration"}),
        frozenset(),
    ),
}
#: the comment openings that count as documentation, per language (others: any comment)
DOC_PREFIXES: dict[str, tuple[str, ...]] = {
    "javascript": ("/**",),
    "typescript": ("/**",),
    "tsx": ("/**",),
    "java": ("/**",),
    "php": ("/**",),
    "rust": ("///", "/**"),
    "csharp": ("///", "/**"),
}
_BETWEEN = frozenset({"attribute_item", "decorator", "annotation", "marker_annotation"})
_BETWEEN_CSHARP = _BETWEEN | {"attribute_list"}  # ``[Test]``; PHP's ``#[...]`` shares the name, so C# only
#: C# XML doc comments: from the first block tag after the summary on, nothing asks; a reference
#: tag stands for the name it holds; other tags (``<summary>``, ``<c>``) go
_XML_DOC_REST = re.compile(
    r"<(?:param|typeparam|returns|exception|remarks|example|value|seealso|inheritdoc)\b.*", re.S
)
_XML_DOC_REF = re.compile(r"<(?:see|paramref|typeparamref)\s+(?:cref|name|langword)=\"([^\"]*)\"\s*/>")
_XML_DOC_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_MARKERS = re.compile(r"^\s*(?:/\*\*+|/\*!?|\*+/|\*(?!\w)|///?!?|//|#+)\s?", re.M)
_TAG = re.compile(r"^\s*[@\\][a-zA-Z]")
_NAME = re.compile(r"test|^_", re.I)


class DocFunction(tuple):
    """``(name, comment_start, start, end, comment)``: character offsets into the original text."""

    __slots__ = ()

    def __new__(cls, name: str, comment_start: int, start: int, end: int, comment: str) -> DocFunction:
        return super().__new__(cls, (name, comment_start, start, end, comment))

    name = property(lambda self: self[0])
    comment_start = property(lambda self: self[1])
    start = property(lambda self: self[2])
    end = property(lambda self: self[3])
    comment = property(lambda self: self[4])


def strip_comment_markers(comment: str) -> str:
    """A comment's words: ``/**``, ``*/``, leading ``*``, ``//``, ``///``, ``#`` and doc tags removed.

    Lines from the first ``@param``-style tag on are dropped (they describe, they do not ask).
    """
    lines = _MARKERS.sub("", comment.replace("*/", "")).splitlines()
    kept: list[str] = []
    for line in lines:
        if _TAG.match(line):
            break
        kept.append(line.strip())
    return "\n".join(kept).strip()


def xml_doc_text(comment: str) -> str:
    """A C# XML doc comment as words: ``<summary>`` tags dropped, ``<see cref="X"/>`` read as ``X``.

    From the first block tag after the summary (``<param>``, ``<returns>``, ``<remarks>`` ...)
    on, the text is dropped, as :func:`strip_comment_markers` drops ``@param`` lines.
    """
    text = _XML_DOC_REST.sub("", comment)
    text = _XML_DOC_REF.sub(lambda m: m.group(1).rsplit(".", 1)[-1].split(":", 1)[-1], text)
    return _XML_DOC_TAG.sub("", text)


@lru_cache(maxsize=16)
def _parser(language: str) -> Parser:
    import importlib

    import tree_sitter

    module, attr, _, _ = FUNCTION_NODES[language]
    return tree_sitter.Parser(tree_sitter.Language(getattr(importlib.import_module(module), attr)()))


def doc_functions(source: str, language: str) -> list[DocFunction]:
    """Every function of ``source`` directly preceded by a comment, in source order.

    A comment belongs to the function when only whitespace, attributes or decorators lie
    between them and it ends on the line above (consecutive line comments join into one).
    Raises ``ValueError`` for a language not in :data:`FUNCTION_NODES`.
    """
    if language not in FUNCTION_NODES:
        raise ValueError(f"language must be one of {sorted(FUNCTION_NODES)}, got {language!r}")
    data = source.encode("utf-8")
    tree = _parser(language).parse(data)
    ascii_only = len(data) == len(source)

    def char(b: int) -> int:
        return b if ascii_only else len(data[:b].decode("utf-8", "ignore"))

    _, _, kinds, wrappers = FUNCTION_NODES[language]
    between = _BETWEEN_CSHARP if language == "csharp" else _BETWEEN
    found: list[DocFunction] = []
    for node in _walk(tree.root_node):
        if node.type not in kinds:
            continue
        anchor = node.parent if node.parent is not None and node.parent.type in wrappers else node
        first = anchor
        prev = anchor.prev_named_sibling
        while prev is not None and prev.type in between:
            first, prev = prev, prev.prev_named_sibling
        if prev is None or "comment" not in prev.type or _last_row(prev) < first.start_point[0] - 1:
            continue
        top = prev
        while True:
            above = top.prev_named_sibling
            if above is None or "comment" not in above.type or _last_row(above) < top.start_point[0] - 1:
                break
            top = above
        name_node = node.child_by_field_name("name") or node.child_by_field_name("declarator")
        name = (
            data[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace") if name_node else "?"
        )
        comment = data[top.start_byte : prev.end_byte].decode("utf-8", "replace")
        if not comment.startswith(DOC_PREFIXES.get(language, ("",))):
            continue
        found.append(
            DocFunction(name, char(top.start_byte), char(first.start_byte), char(node.end_byte), comment)
        )
    return found


def _last_row(node: Node) -> int:
    """The last row a node has text on (a Rust line comment ends at column 0 of the next row)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


def poly_questions(
    files: Sequence[CorpusFile],
    language: str,
    *,
    n_files: int | None = None,
    seed: int = 0,
    min_words: int = 4,
    min_file_chars: int = 500,
    max_file_chars: int = 40_000,
    max_per_file: int | None = 5,
    heldout_share: float = 0.25,
) -> QuestionSet[Document, Question]:
    """Documents (comments that became questions removed) and one question per documented function.

    ``files`` are :class:`~chunklab.datasets.corpora.code_poly.PolyFile` (or anything with
    ``language``, ``size``, ``relpath``, ``project``, ``doc_id``, ``path`` and ``read_text()``).
    Procedure: keep files of ``language`` of ``min_file_chars`` to ``max_file_chars`` bytes;
    take ``n_files`` of them (all when ``None``) with ``random.Random(seed)``, in corpus order;
    in each, every :func:`doc_functions` hit whose name has no ``test`` and does not start
    with ``_``, whose comment's first sentence (markers and tags removed) has ``min_words``
    words; drop question texts found more than once; keep ``max_per_file`` per file in source
    order; ``split`` is ``heldout`` for about ``heldout_share`` of the questions (a hash of
    the id). Document ids are the files' ``doc_id`` (``"<project>:<path>"``); question ids
    ``"<doc id>::<name>@<line>"``.
    """
    min_words = check_positive_int(min_words, "min_words")
    if max_per_file is not None:
        max_per_file = check_positive_int(max_per_file, "max_per_file")
    if not 0 <= heldout_share <= 1:
        raise ValueError(f"heldout_share must be in [0, 1], got {heldout_share!r}")
    if language not in FUNCTION_NODES:
        raise ValueError(f"language must be one of {sorted(FUNCTION_NODES)}, got {language!r}")
    eligible = [f for f in files if f.language == language and min_file_chars <= f.size <= max_file_chars]
    if n_files is not None:
        import random

        n_files = check_positive_int(n_files, "n_files")
        if n_files < len(eligible):
            picked = sorted(random.Random(seed).sample(range(len(eligible)), n_files))
            eligible = [eligible[i] for i in picked]
    parsed: list[tuple[CorpusFile, str, list[tuple[DocFunction, str]]]] = []
    for f in eligible:
        source = f.read_text()
        hits = []
        for fn in doc_functions(source, language):
            comment = xml_doc_text(fn.comment) if language == "csharp" else fn.comment
            question = first_sentence(strip_comment_markers(comment))
            if _NAME.search(fn.name) or len(question.split()) < min_words:
                continue
            hits.append((fn, question))
        if max_per_file is not None:
            hits = hits[:max_per_file]
        parsed.append((f, source, hits))
    counts = Counter(q for _, _, hits in parsed for _, q in hits)
    documents: list[Document] = []
    questions: list[Question] = []
    for f, source, hits in parsed:
        hits = [(fn, q) for fn, q in hits if counts[q] == 1]
        stripped = StrippedSource(
            source, _cut(source, hits), [(fn.comment_start, fn.start, "") for fn, _ in hits]
        )
        doc_id = f.doc_id
        meta = {"language": language, "project": f.project, "path": f.relpath}
        documents.append(Document(doc_id, stripped.text, f.path, language, f.relpath, meta))
        for fn, question in hits:
            s, e = stripped.map(fn.start), stripped.map(fn.end)
            qid = f"{doc_id}::{fn.name}@{source.count(chr(10), 0, fn.start) + 1}"
            split = "heldout" if _hash_share(qid) < heldout_share else "dev"
            questions.append(
                Question(qid, question, doc_id, [(s, e)], [stripped.text[s:e]], "function", split, False)
            )
    return QuestionSet(f"code-poly:{language}:seed{seed}", documents, questions, split_names=SPLITS)


def _cut(source: str, hits: list[tuple[DocFunction, str]]) -> str:
    """``source`` with each hit's comment (its start to the function's start) removed."""
    out: list[str] = []
    pos = 0
    for fn, _ in sorted(hits, key=lambda h: h[0].comment_start):
        out.append(source[pos : fn.comment_start])
        pos = fn.start
    out.append(source[pos:])
    return "".join(out)
