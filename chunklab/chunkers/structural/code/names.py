"""Definitions in a tree-sitter syntax tree: their kind, name and qualified name, and doc comments.

Used by :mod:`chunklab.chunkers.structural.code`. ``definition(node, spec, text_of)`` says whether
a syntax node defines something (a function, a class, a Go method, a Rust ``impl`` ...) and names
it; ``qualify`` joins a name to its enclosing types (``Class.method``, Go ``(*T).M`` / ``T.M``,
``Type.method`` inside a Rust ``impl Trait for Type``); ``native_qualname`` spells it the language's
own way (``Basket::add`` in Rust, :attr:`LanguageSpec.separators`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from chunklab.chunkers.structural.code.languages import LanguageSpec

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Definition", "clean_doc", "definition", "native_qualname", "qualify"]

TYPE_KINDS = frozenset({"class", "struct", "interface", "impl", "trait", "record", "enum", "union"})
_MEMBER_OWNERS = TYPE_KINDS | {"module"}  # a function directly inside one is its member (Ruby ``Mod#f``)
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "class"}
)
_C_NAME_NODES = frozenset(
    {"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name"}
)
_GENERIC_ARGS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_DOC_LINE = re.compile(r"^\s*(?:/\*\*+|/\*!?|\*+/|\*(?!/)|///?!?|#+|\*/)?[ \t]?", re.M)

TextOf = Callable[["Node"], str]


class Definition(NamedTuple):
    """A definition: its kind (``function``, ``method``, ``class`` ...), name, and the named node."""

    kind: str
    name: str
    node: Node
    receiver: str | None = None  # Go: ``*T`` or ``T``; Rust impl: the implemented trait


def definition(
    node: Node, spec: LanguageSpec, text_of: TextOf, node_type: str | None = None
) -> Definition | None:
    """The definition ``node`` makes (seen through wrappers like ``export``), else None.

    ``node_type`` is ``node.type`` when the caller has it already (each read builds a string).
    """
    t = node.type if node_type is None else node_type
    for _ in range(4):
        if t not in spec.wrappers:
            break
        inner = node.child_by_field_name("declaration") or node.child_by_field_name("definition")
        if inner is None:
            named = [c for c in node.named_children if c.type not in spec.comments]
            inner = named[-1] if named else None
        if inner is None:
            return None
        node = inner
        t = node.type
    kind = spec.definitions.get(t)
    if kind is None or not node.is_named:
        return None
    if t in ("lexical_declaration", "variable_declaration"):
        return _js_variable(node, text_of)
    if t in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        if node.child_by_field_name("body") is None:
            return None  # a forward declaration or a use, not a definition
        name_node = node.child_by_field_name("name")
        return Definition(kind, text_of(name_node) if name_node else "<anonymous>", node)
    if t == "function_definition" and node.child_by_field_name("declarator") is not None:
        return Definition(kind, _c_declarator_name(node, text_of), node)
    if t == "type_definition":
        return Definition(kind, _c_declarator_name(node, text_of), node)
    if t == "type_declaration":  # Go: type T struct {...}
        spec_node = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
        if spec_node is None:
            return None
        name_node = spec_node.child_by_field_name("name")
        body = spec_node.child_by_field_name("type")
        sub = {"struct_type": "struct", "interface_type": "interface"}.get(body.type if body else "", "type")
        return Definition(sub, text_of(name_node) if name_node else "<anonymous>", node)
    if t == "method_declaration" and node.child_by_field_name("receiver") is not None:
        return _go_method(node, text_of)
    if t == "impl_item":
        ty = node.child_by_field_name("type")
        trait = node.child_by_field_name("trait")
        name = _strip_generics(text_of(ty)) if ty else "<impl>"
        return Definition(kind, name, node, _strip_generics(text_of(trait)) if trait else None)
    name_node = node.child_by_field_name("name")
    name = text_of(name_node) if name_node is not None else "<anonymous>"
    if t == "singleton_method":  # Ruby: def self.name
        obj = node.child_by_field_name("object")
        if obj is not None and text_of(obj) != "self":
            name = f"{text_of(obj)}.{name}"
    return Definition(kind, name, node)


def qualify(d: Definition, enclosing: list[Definition]) -> tuple[str, str]:
    """The kind seen in context (a function inside a type is a ``method``) and the qualified name."""
    kind = d.kind
    if d.receiver is not None and d.kind == "method" and d.node.type == "method_declaration":
        recv = d.receiver
        return kind, (f"({recv}).{d.name}" if recv.startswith("*") else f"{recv}.{d.name}")
    owners = [e.name for e in enclosing]
    if kind == "function" and enclosing and enclosing[-1].kind in TYPE_KINDS:
        kind = "method"
    return kind, ".".join([*owners, d.name])


def native_qualname(d: Definition, enclosing: list[Definition], spec: LanguageSpec) -> str:
    """``d``'s name qualified by its ``enclosing`` definitions with the language's own separators.

    The scopes join with ``spec.separators[0]``; a function right inside a type (or a Ruby
    module) joins with ``spec.separators[1]``: ``shop::Basket::add`` (Rust, C++),
    ``App\\Basket::add`` (PHP), ``Shop::Basket#add`` (Ruby; ``Basket.create`` for
    ``def self.create``), ``Basket.add`` elsewhere. A Go method is named by its receiver as
    :func:`qualify` names it.
    """
    if d.receiver is not None and d.node.type == "method_declaration":
        return qualify(d, enclosing)[1]
    if not enclosing:
        return d.name
    scope, member = spec.separators
    if d.node.type == "singleton_method":
        sep = "."
    elif d.kind in ("function", "method") and enclosing[-1].kind in _MEMBER_OWNERS:
        sep = member
    else:
        sep = scope
    return scope.join(e.name for e in enclosing) + sep + d.name


def clean_doc(raw: str) -> str:
    """A doc comment's text without its markers (``/** * */``, ``///``, ``//``, ``#``)."""
    lines = [_DOC_LINE.sub("", line, count=1).rstrip() for line in raw.splitlines()]
    text = "\n".join(lines).strip()
    return text[:-2].rstrip() if text.endswith("*/") else text


def _strip_generics(name: str) -> str:
    prev = None
    while prev != name:
        prev, name = name, _GENERIC_ARGS.sub("", name)
    return name.strip()


def _js_variable(node: Node, text_of: TextOf) -> Definition | None:
    """``const f = () => ...`` / ``var C = class {...}``: a function (or class) by its variable."""
    decls = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(decls) != 1:
        return None
    value = decls[0].child_by_field_name("value")
    name = decls[0].child_by_field_name("name")
    if value is None or name is None or value.type not in _FUNCTION_VALUES:
        return None
    return Definition("class" if value.type == "class" else "function", text_of(name), node)


def _c_declarator_name(node: Node, text_of: TextOf) -> str:
    """The declared name of a C/C++ function or typedef, through pointer and function declarators."""
    d = node.child_by_field_name("declarator")
    for _ in range(16):
        if d is None:
            return "<anonymous>"
        if d.type in _C_NAME_NODES or d.type in ("type_identifier", "primitive_type"):
            return text_of(d)
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in d.named_children if c.type in _C_NAME_NODES or "declarator" in c.type]
            nxt = named[0] if named else None
        d = nxt
    return "<anonymous>"


def _go_method(node: Node, text_of: TextOf) -> Definition:
    """A Go method with its receiver type: ``*T`` for a pointer receiver, else ``T``."""
    name_node = node.child_by_field_name("name")
    name = text_of(name_node) if name_node is not None else "<anonymous>"
    receiver = node.child_by_field_name("receiver")
    recv = "?"
    params = receiver.named_children if receiver is not None else []
    param = next((c for c in params if c.type == "parameter_declaration"), None)
    if param is not None:
        ty = param.child_by_field_name("type")
        if ty is not None:
            pointer = ty.type == "pointer_type"
            base = ty.named_children[0] if pointer and ty.named_children else ty
            recv = ("*" if pointer else "") + _strip_generics(text_of(base))
    return Definition("method", name, node, recv)
