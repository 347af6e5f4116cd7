"""Structural chunking of source code in any language a tree-sitter grammar wheel covers.

The cAST idea (Zhang et al., 2025): walk the syntax tree from the top; a node within budget is
one piece, a node over budget is split at its children's boundaries, and neighbouring pieces
are merged greedily up to the budget. Pieces tile the file (each child's span runs to the next
child's start; a child that starts its line takes the line's indentation, comments and
attributes right above a node go with it), so nothing is lost and ``source[start:end]`` is
exactly the text. Tree-sitter reports UTF-8 byte offsets; they are converted to character
offsets exactly (:class:`chunklab.chunkers.structural.code.treesitter.ByteToChar`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

from chunklab._validate import check_choice, renamed_keyword
from chunklab.chunk import Chunk, make_chunk
from chunklab.chunkers.structural._common import (
    check_max_size,
    check_source,
    fallback_chunks,
    resolve_doc_id,
    retokenized_oversize,
)
from chunklab.chunkers.structural.code.errors import (
    FALLBACK_ERROR_SHARE,
    ParseErrors,
    find_parse_errors,
    mark_error_chunks,
)
from chunklab.chunkers.structural.code.languages import GRAMMARS, LANGUAGES, LanguageSpec
from chunklab.chunkers.structural.code.meta import Describer
from chunklab.chunkers.structural.code.names import Definition
from chunklab.chunkers.structural.code.pieces import Group, Piece
from chunklab.chunkers.structural.code.treesitter import ByteToChar, GrammarMissing, encode_for_parser, parse
from chunklab.documents import decode_bytes, detect_format
from chunklab.text import NONSPACE, LineIndex
from chunklab.units import UnitIndex, check_unit, unit_params

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["CODE_LANGUAGES", "chunk_code", "php_grammar"]

#: the languages :func:`chunk_code` chunks by their syntax (document kinds)
CODE_LANGUAGES = tuple(LANGUAGES)
_BLANKS = re.compile(r"[ \t\f\v]*")
#: C++ in a file of kind C (a ``.h`` header is C or C++): parsed as C++ first, as C if that fails.
#: Both patterns start with a literal, so ``re`` skips to candidates at memchr speed.
_CPP_LINE = re.compile(
    r"\n[ \t]*(?:namespace\b|template[ \t]*<|class[ \t]+\w|(?:public|private|protected)[ \t]*:)"
)
_SCOPE = re.compile(r"::(?=\w)")
_PHP_TAG = re.compile(r"<\?(?:php\b|=|\s)", re.I)  # without one, a .php file is all code (``php_only``)
_RETRY_SHARE = 0.05  # ... when C++ leaves more than this share of the bytes in error regions
_MAX_DEPTH = 200  # deeper than this, an oversize node is cut by lines (no recursion limit hit)


@renamed_keyword("max_chars", "max_size")
def chunk_code(
    source: str | bytes,
    language: str = "auto",
    max_size: int = 1500,
    path: str | None = None,
    *,
    doc_id: str | None = None,
    unit: str = "chars",
    engine: str = "auto",
    min_chars: int = 200,
) -> list[Chunk]:
    """Chunk source code along its syntax tree, each chunk at most ``max_size`` (in ``unit``).

    ``language`` is one of :data:`CODE_LANGUAGES`, or ``"auto"``: from the extension of
    ``path``, else the ``#!`` line. Python goes to :func:`chunk_python` (``ast``) unless
    ``engine="tree-sitter"`` (``min_chars`` applies to ``ast`` only). Each chunk's metadata
    has ``kind``, ``name``, ``qualname`` (``Class.method``, Go ``(*T).M``, Rust ``Type.method``
    inside an ``impl``), ``defines`` (every function, method and type whose start the chunk
    holds, in source order, each once, qualified the language's own way: ``Basket::add`` in
    Rust and C++, ``App\\Basket::add`` in PHP, ``Shop::Basket#add`` in Ruby, ``Basket.add``
    elsewhere; see :mod:`chunklab.chunkers.structural.code.languages`; a definition split
    across chunks is named in the one holding its start, the others carry it in ``qualname``
    and ``headings``), ``headings`` (the enclosing types and functions), the ``docstring``
    (doc comment kept with its definition; Python's docstring and decorators as the ``ast``
    path gives them), ``language`` and lines. Where tree-sitter could not parse a region, the
    rest of the file is still chunked on syntax and the region is an atom (cut by lines when
    over budget): every chunk of such a file has ``parse_errors`` (``count``, ``first_line``,
    ``share`` of the bytes), and the chunks that cover a region have ``parse_error`` and
    ``parse_error_line``. A file more than half error (``FALLBACK_ERROR_SHARE``), in no known
    language, or whose bytes do not decode falls back to recursive splitting (``fallback``).
    PHP with no ``<?php`` (or ``<?=``) tag is all code: it is parsed with the ``php_only``
    grammar (``grammar`` says so), where the tag grammar would read it as HTML text.
    C that looks like C++ (a ``.h`` header often is) is parsed with the C++ grammar, and with
    the C one too if C++ leaves over 5% of its bytes in error; ``grammar`` then says which won.
    """
    check_source(source, "source")
    max_size = check_max_size(max_size)
    check_unit(unit)
    check_choice(language, ("auto", *CODE_LANGUAGES), "language")
    check_choice(engine, ("auto", "tree-sitter"), "engine")
    if path is not None and not isinstance(path, str):
        path = str(path)
    doc_id = resolve_doc_id(doc_id, path)
    if language == "auto":
        language = detect_format(path, source[:4096])
    params = {"format": "code", "language": language, "max_chars": max_size, **unit_params(unit)}
    extra: dict[str, object] = {"path": path, "language": language}
    if isinstance(source, (bytes, bytearray)):
        text, _enc, problem = decode_bytes(bytes(source), language)
        if problem:
            return fallback_chunks(text, max_size, doc_id, params, problem, extra, unit)
    else:
        text = source
    if language not in LANGUAGES:
        reason = f"not a known programming language (kind {language!r})"
        return fallback_chunks(text, max_size, doc_id, params, reason, extra, unit)
    if language == "python" and engine == "auto":
        from chunklab.chunkers.structural.python import chunk_python

        return chunk_python(text, max_size, min_chars, path, doc_id=doc_id, unit=unit)
    if not text.strip():
        return []
    data = encode_for_parser(text)
    grammar = "cpp" if language == "c" and looks_like_cpp(text) else language  # a .h may be C++
    if language == "php":
        grammar = php_grammar(text)
    try:
        root = parse(grammar, data).root_node
    except GrammarMissing as exc:
        return fallback_chunks(text, max_size, doc_id, params, str(exc), extra, unit)
    except (ValueError, MemoryError) as exc:  # tree-sitter gave up
        return fallback_chunks(text, max_size, doc_id, params, f"tree-sitter: {exc}", extra, unit)
    chunker = _CodeChunker(text, GRAMMARS[grammar], language, max_size, unit, doc_id, params, path)
    chunker.grammar = grammar
    errors = chunker.errors_in(root, len(data))
    if errors is not None and grammar == "cpp" and language == "c" and errors.share > _RETRY_SHARE:  # C?
        c_root = parse(language, data).root_node
        c_errors = chunker.errors_in(c_root, len(data))
        if c_errors is None or (c_errors.share, len(c_errors.spans)) < (errors.share, len(errors.spans)):
            root, errors, chunker.spec, chunker.grammar = c_root, c_errors, LANGUAGES[language], language
    if errors is not None and errors.share > FALLBACK_ERROR_SHARE:
        reason = (
            f"tree-sitter could not parse {language}: {errors.share:.0%} of the file in ERROR "
            f"nodes (over {FALLBACK_ERROR_SHARE:.0%}; first at line {errors.first_line})"
        )
        extra["parse_errors"] = errors.summary()
        return fallback_chunks(text, max_size, doc_id, params, reason, extra, unit)
    return chunker.run(root, errors)


def looks_like_cpp(text: str) -> bool:
    """Whether C source shows C++: a line opening a namespace, template, class or access label; ``a::b``."""
    if _CPP_LINE.search("\n" + text[:200]) or _CPP_LINE.search(text):
        return True
    return any(m.start() and text[m.start() - 1].isidentifier() for m in _SCOPE.finditer(text))


def php_grammar(text: str) -> str:
    """``"php"`` for PHP that opens a tag (``<?php``, ``<?=``), else ``"php_only"``: all of it is code."""
    return "php" if _PHP_TAG.search(text) else "php_only"


def _has_sound_child(node: Node) -> bool:
    """Whether an ERROR node holds syntax tree-sitter recovered (then it is split at its children)."""
    return any(c.is_named and c.child_count and not c.has_error for c in node.children)


class _CodeChunker(Describer):
    def __init__(self, text, spec: LanguageSpec, language, max_size, unit, doc_id, params, path) -> None:
        self.text = text
        self.spec = spec
        self.language = language
        self.max = max_size
        self.unit = unit
        self.doc_id = doc_id
        self.params = params
        self.path = path
        self.char = ByteToChar(text)
        self.lines = LineIndex(text, universal=True)
        self.count = UnitIndex(text, unit).count
        self._indent: dict[int, int] = {}
        self.grammar = language  # "cpp" for C the C++ grammar parsed better
        self._docstrings: dict[int, str | None] = {}  # Python: a definition's docstring by node id
        self._definitions: dict[int, Definition | None] = {}  # definition_of's, by node id

    def errors_in(self, root: Node, n_bytes: int) -> ParseErrors | None:
        """The error regions of the tree ``root`` of this text (:func:`find_parse_errors`)."""
        return find_parse_errors(root, self.char, self.lines.line_of, n_bytes, self.spec.comments)

    def line_start(self, s: int) -> tuple[int, bool]:
        """``s`` moved back to its line's start when only blanks come before it (and whether so)."""
        starts = self.lines.starts
        line = bisect_right(starts, s) - 1
        ls = starts[line]
        indent = self._indent.get(line)
        if indent is None:  # where the line's first non-blank character is (no slicing of long lines)
            indent = self._indent[line] = _BLANKS.match(self.text, ls).end()  # type: ignore[union-attr]
        if s <= indent:
            return ls, True
        return s, False

    # -- the walk ----------------------------------------------------------------------
    def run(self, root: Node, errors: ParseErrors | None) -> list[Chunk]:
        pieces = self.merge_across_levels(self.split(root, 0, len(self.text), [], 0))
        return self.emit(pieces, root, errors)

    def split(
        self,
        node: Node,
        lo: int,
        hi: int,
        inside: list[Definition],
        depth: int,
        docs: list[Node] | None = None,
    ) -> list[Piece]:
        """cAST: ``[lo, hi)`` (``node``'s span) as pieces: children within budget merged, others split."""
        groups = self.groups(node, lo, hi) if depth < _MAX_DEPTH else []
        if not groups or (len(groups) == 1 and groups[0].owner is None):
            return self.line_pieces(lo, hi, inside)
        if docs:  # comments above a node that is not a definition document its first child
            groups[0].docs = [*docs, *groups[0].docs]
        out: list[Piece] = []
        cur: Piece | None = None
        partial = bool(inside)
        for g in groups:
            if self.count(g.s, g.e) <= self.max:
                if cur is not None and self.count(cur.s, g.e) <= self.max:
                    cur.groups.append(g)
                    cur.e = g.e
                    continue
                if cur is not None:
                    out.append(cur)
                cur = Piece(g.s, g.e, [g], inside, partial)
                continue
            if cur is not None:
                out.append(cur)
                cur = None
            out.extend(self.descend(g, inside, depth))
        if cur is not None:
            out.append(cur)
        return out

    def merge_across_levels(self, pieces: list[Piece]) -> list[Piece]:
        """Neighbours within the same definitions merged when together within budget.

        ``split`` flushes before it descends into a node over budget, so the pieces before and after
        a split (or from two levels of one split node, such as a macro's token trees) can be small.
        """
        out: list[Piece] = []
        for p in pieces:
            q = out[-1] if out else None
            if (
                q is not None
                and not (q.oversize or p.oversize)
                and len(q.inside) == len(p.inside)
                and all(a.node == b.node for a, b in zip(q.inside, p.inside))
                and self.count(q.s, p.e) <= self.max
            ):
                q.e = p.e
                q.groups = [*q.groups, *p.groups]
                q.partial = q.partial or p.partial
                continue
            out.append(p)
        return out

    def descend(self, g: Group, inside: list[Definition], depth: int) -> list[Piece]:
        """Split one group over budget at its owner's children (a definition joins the path)."""
        owner = g.owner
        if owner is None or owner.child_count == 0 or (owner.is_error and not _has_sound_child(owner)):
            return self.line_pieces(g.s, g.e, inside)  # an error region over budget: cut by lines
        d = self.definition_of(owner)
        if d is not None and inside and inside[-1].node == d.node:
            d = None  # a wrapper (export, template) already named it
        if d is None:
            return self.split(owner, g.s, g.e, inside, depth + 1, g.docs)
        pieces = self.split(owner, g.s, g.e, [*inside, d], depth + 1)
        if pieces:
            pieces[0].head_docs = g.docs  # the first piece holds the signature: it names the definition
        return pieces

    def groups(self, node: Node, lo: int, hi: int) -> list[Group]:
        """The children of ``node`` as groups tiling ``[lo, hi)``.

        The hot loop of the walk (every child of every node over budget): ``line_start`` is
        inlined, byte offsets are taken as they are in an ASCII file, and the previous child's
        end is read only when a comment or attribute group needs it.
        """
        comments, attach = self.spec.comments, self.spec.attach
        char = None if self.char.ascii else self.char
        text, starts, indents = self.text, self.lines.starts, self._indent
        out: list[Group] = []
        cur: Group | None = None
        prev: Node | None = None
        for child in node.children:
            s = child.start_byte if char is None else char(child.start_byte)
            if s >= hi:
                break
            t = child.type
            attachable = t in comments or t in attach
            line = bisect_right(starts, s) - 1
            indent = indents.get(line)
            if indent is None:  # where the line's first non-blank character is (no slicing of long lines)
                indent = indents[line] = _BLANKS.match(text, starts[line]).end()  # type: ignore[union-attr]
            starts_line = s <= indent
            if cur is not None and not starts_line and (attachable or not child.is_named):
                pass  # a trailing comment or token joins the group before
            elif (
                cur is not None
                and cur.owner is None
                and prev is not None  # set whenever cur is
                and text.count("\n", prev.end_byte if char is None else char(prev.end_byte), s) <= 1
            ):
                pass  # directly under a comment or attribute: documented by it
            else:
                cur = Group(max(lo, starts[line] if starts_line else s), None)
                out.append(cur)
            if attachable and cur.owner is None:
                if t in comments:
                    cur.docs.append(child)
            elif cur.owner is None:
                cur.owner = child
            prev = child
        if not out:
            return []
        out[0].s = lo
        for a, b in zip(out, out[1:]):
            a.e = b.s
        out[-1].e = hi
        return [g for g in out if g.e > g.s]

    def line_pieces(self, lo: int, hi: int, inside: list[Definition]) -> list[Piece]:
        """``[lo, hi)`` cut at line starts to the budget; a single line over it is an oversize piece."""
        starts = self.lines.starts
        cuts = [lo, *starts[bisect_right(starts, lo) : bisect_right(starts, hi - 1)], hi]
        out: list[Piece] = []
        s = lo
        prev = lo
        for cut in cuts[1:]:
            if self.count(s, cut) > self.max and prev > s:
                out.append(Piece(s, prev, [], inside, True))
                s = prev
            prev = cut
        out.append(Piece(s, hi, [], inside, True))
        for p in out:
            p.oversize = self.count(p.s, p.e) > self.max
        return out

    # -- chunks ------------------------------------------------------------------------
    def emit(self, pieces: list[Piece], root: Node, errors: ParseErrors | None) -> list[Chunk]:
        text = self.text
        line_of = self.lines.line_of
        bounds: list[tuple[int, int]] = []
        metas: list[dict[str, Any]] = []
        def_starts, def_names = self.defined_names(root)
        for p in pieces:
            s, e = self.trim(p.s, p.e)
            if e <= s:
                continue
            meta = self.describe(p, root)
            meta.update(
                strategy="structural",
                params=self.params,
                index=len(metas),
                language=self.language,
                path=self.path,
                line_start=line_of(s),
                line_end=line_of(e - 1),
                defines=list(
                    dict.fromkeys(def_names[bisect_left(def_starts, s) : bisect_left(def_starts, e)])
                ),
            )
            if self.grammar != self.language:
                meta["grammar"] = self.grammar
            if p.oversize:
                meta["oversize"] = True
                meta["oversize_reason"] = f"a single line over max_chars={self.max} in unit {self.unit!r}"
            elif self.unit != "chars":  # in characters a piece within budget is within it alone
                meta.update(retokenized_oversize(text[s:e], self.max, self.unit))
            bounds.append((s, e))
            metas.append(meta)
        if errors is not None:
            mark_error_chunks(bounds, metas, errors, line_of)
        return [make_chunk(text, s, e, self.doc_id, m) for (s, e), m in zip(bounds, metas)]

    def trim(self, s: int, e: int) -> tuple[int, int]:
        """Blank lines off the front (indentation kept) and whitespace off the end."""
        text = self.text
        m = NONSPACE.search(text, s, e)  # no copy of the piece: it is sliced once, for the chunk
        if m is None:
            return s, s
        while text[e - 1].isspace():
            e -= 1
        return max(s, self.line_start(m.start())[0]), e
