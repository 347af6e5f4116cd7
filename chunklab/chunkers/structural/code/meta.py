"""What a code chunk says about itself: kind, names, headings, doc comment (and Python docstrings).

:class:`Describer` is the metadata half of the code chunker in
:mod:`chunklab.chunkers.structural.code`; it reads the pieces the walk made. Python through
tree-sitter gets what the ``ast`` path gives: the ``docstring`` (the first statement of a
function, class or module when it is a string literal, cleaned as :func:`ast.get_docstring`
cleans it) and the ``decorators``.
"""

from __future__ import annotations

import ast
import inspect
from typing import TYPE_CHECKING, Any

from chunklab.chunkers.structural.code.names import (
    Definition,
    clean_doc,
    definition,
    native_qualname,
    qualify,
)
from chunklab.chunkers.structural.code.treesitter import definition_nodes

if TYPE_CHECKING:
    from tree_sitter import Node

    from chunklab.chunkers.structural.code.languages import LanguageSpec
    from chunklab.chunkers.structural.code.pieces import Group, Piece

__all__ = ["Describer", "python_decorators", "python_docstring"]

_BODY_HINTS = ("body", "block", "declaration_list")  # nodes whose children are members or statements
_STRINGS = ("string", "concatenated_string")


_BODIES: dict[str, bool] = {}
_UNSEEN = object()


def _is_body(node_type: str) -> bool:
    """Whether nodes of this type hold members or statements (``class_body``, ``block`` ...)."""
    known = _BODIES.get(node_type)
    if known is None:
        known = _BODIES[node_type] = any(hint in node_type for hint in _BODY_HINTS)
    return known


def python_docstring(node: Node, text_of) -> str | None:
    """The docstring of a Python ``function_definition``, ``class_definition`` or ``module`` node."""
    body = node if node.type == "module" else node.child_by_field_name("body")
    if body is None:
        return None
    first = None
    for i in range(body.named_child_count):  # not named_children: a class body holds many
        first = body.named_child(i)
        if first.type != "comment":
            break
    if first is None or first.type != "expression_statement" or first.named_child_count != 1:
        return None
    literal = first.named_children[0]
    if literal.type not in _STRINGS:
        return None
    try:
        value = ast.literal_eval(text_of(literal))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None  # an f-string, or a literal the grammar accepted and Python does not
    return inspect.cleandoc(value) if isinstance(value, str) else None


def python_decorators(node: Node, text_of) -> list[str]:
    """The decorators of a Python definition (without the ``@``), as the ``ast`` path lists them."""
    parent = node.parent
    if parent is None or parent.type != "decorated_definition":
        return []
    out = []
    for c in parent.named_children:
        if c.type == "decorator":
            src = text_of(c).strip()
            out.append(src[1:].strip() if src.startswith("@") else src)
    return out


class Describer:
    """Metadata of pieces; the chunker provides ``spec``, ``language``, ``text``, ``char``, ``count``."""

    spec: LanguageSpec
    language: str
    grammar: str
    text: str
    _docstrings: dict[int, str | None]
    _definitions: dict[int, Definition | None]

    def text_of(self, node: Node) -> str:
        return self.text[self.char(node.start_byte) : self.char(node.end_byte)]  # type: ignore[attr-defined]

    def definition_of(self, node: Node, node_type: str | None = None) -> Definition | None:
        """:func:`definition` of ``node``, once per node: the walk, the pieces' metadata and
        ``defines`` each ask for the same definitions (a file's own nodes: ids are unique in it)."""
        key = node.id
        found = self._definitions.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = self._definitions[key] = definition(node, self.spec, self.text_of, node_type)
        return found  # type: ignore[return-value]

    def definitions_in(self, node: Node, levels: int) -> list[Definition]:
        """The definition ``node`` makes, else those ``levels`` deep inside it (a class body's methods).

        Only bodies and blocks are looked into: expressions and statements hold no members.
        """
        t = node.type
        if t in self.spec.definitions or t in self.spec.wrappers:
            d = self.definition_of(node, t)
            if d is not None:
                return [d]
        if levels == 0 or not _is_body(t):
            return []
        return [d for c in node.named_children if c.child_count for d in self.definitions_in(c, levels - 1)]

    def defined_names(self, root: Node) -> tuple[list[int], list[str]]:
        """Every named definition under ``root``: its start (a character offset) and qualified name.

        In source order, each name spelled by :func:`native_qualname`. A namespace declared by a
        statement (PHP ``namespace App;``, C# ``namespace App;``) holds what follows it in its block.
        """
        starts: list[int] = []
        names: list[str] = []
        stack: list[tuple[int, Definition, bool]] = []  # (end byte, definition, namespace statement)
        for node in definition_nodes(self.grammar, root):
            d = self.definition_of(node)
            if d is None or d.name == "<anonymous>":
                continue
            start = node.start_byte
            while stack and stack[-1][0] <= start:
                stack.pop()
            names.append(native_qualname(d, [e[1] for e in stack], self.spec))
            starts.append(self.char(start))  # type: ignore[attr-defined]
            end = node.end_byte
            statement = d.kind == "namespace" and node.child_by_field_name("body") is None
            if statement:
                while stack and stack[-1][2]:  # the namespace before ends here
                    stack.pop()
                end = node.parent.end_byte if node.parent is not None else end
            stack.append((end, d, statement))
        return starts, names

    def comments_above(self, node: Node) -> list[Node]:
        """The comment siblings right above ``node`` (no blank line between): its doc comment."""
        out: list[Node] = []
        sib = node.prev_sibling
        char = self.char  # type: ignore[attr-defined]
        top = char(node.start_byte)
        while sib is not None and sib.type in self.spec.comments:
            end = char(sib.end_byte)
            if self.text.count("\n", end, top) > 1:
                break
            out.append(sib)
            top = char(sib.start_byte)
            sib = sib.prev_sibling
        return out[::-1]

    def describe(self, p: Piece, root: Node) -> dict[str, Any]:
        """Kind, names, headings and doc comment of a piece, from the definitions it holds."""
        found: list[tuple[int, Definition, Group]] = []
        inside = p.inside
        count = self.count  # type: ignore[attr-defined]
        for g in p.groups:
            if g.owner is not None:
                for d in self.definitions_in(g.owner, 2):
                    if not (inside and inside[-1].node == d.node):
                        found.append((count(g.s, g.e), d, g))
        meta: dict[str, Any] = {}
        docs: list[Node] = []
        main = None
        if found and p.head_docs is None:
            _size, main, group = max(found, key=lambda t: t[0])
            kind, qual = qualify(main, inside)
            names = [qualify(d, inside)[1] for _n, d, _g in found]
            docs = group.docs if main.node == group.owner or len(found) == 1 else []
            if not docs and main.node != group.owner:
                docs = self.comments_above(main.node)
            meta.update(
                kind=kind, name=main.name, qualname=qual, headings=[*(d.name for d in inside), main.name]
            )
            if len(names) > 1:
                meta["names"] = names
        elif inside:
            kind, qual = qualify(inside[-1], inside[:-1])
            meta.update(kind=kind, name=inside[-1].name, qualname=qual, headings=[d.name for d in inside])
            docs = p.head_docs or []
            if found:
                meta["names"] = [qualify(d, inside)[1] for _n, d, _g in found]
        else:
            meta.update(kind="module", name="<module>", qualname="<module>", headings=[])
        named = main if main is not None else (inside[-1] if inside else None)
        if named is not None and named.receiver is not None:
            meta["receiver" if named.node.type == "method_declaration" else "trait"] = named.receiver
        if p.partial and (not found or p.head_docs is not None):
            meta["partial"] = True
        if self.language == "python":
            self._python_meta(meta, named, p, root, docs)
            return meta
        doc = "\n".join(t for t in map(self.text_of, docs) if not t.startswith("#!"))
        meta["docstring"] = clean_doc(doc) if doc else None
        return meta

    def _python_meta(
        self, meta: dict[str, Any], named: Definition | None, p: Piece, root: Node, docs: list[Node]
    ) -> None:
        """The docstring (else the comment above) and decorators, as the ``ast`` path has them."""
        if named is not None:
            doc = self._docstrings.get(named.node.id, _UNSEEN)
            if doc is _UNSEEN:  # the pieces of a definition split up ask for it again
                doc = self._docstrings[named.node.id] = python_docstring(named.node, self.text_of)
            meta["decorators"] = python_decorators(named.node, self.text_of)
        else:
            doc = python_docstring(root, self.text_of) if p.s == 0 else None
            meta["decorators"] = []
        if doc is None and docs:
            raw = "\n".join(t for t in map(self.text_of, docs) if not t.startswith("#!"))
            doc = clean_doc(raw) if raw else None
        meta["docstring"] = doc
