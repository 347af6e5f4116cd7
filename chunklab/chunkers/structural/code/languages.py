"""The languages :func:`chunklab.chunkers.structural.code.chunk_code` knows, as data.

Each :class:`LanguageSpec` names its grammar wheel and the syntax-node types that matter: the
definitions (node type -> kind), the comment nodes (kept with what follows them as its doc
comment), other nodes that belong to the definition after them (Rust attributes, decorators),
and wrappers whose inner node is the definition (``export``, ``template<...>``, decorators).
File extensions are not here: :data:`chunklab.documents.EXTENSIONS` is the one table, and a
document kind is a key of :data:`LANGUAGES`; :data:`GRAMMARS` adds the grammars a kind may be
parsed with besides its own (PHP without its ``<?php`` tag).

``separators`` spell a qualified name the language's own way (``metadata["defines"]``): the
first joins enclosing scopes (namespaces, modules, types), the second puts a function under the
type (or Ruby module) that holds it. Python, JavaScript, TypeScript, Java, C#, Go, C and Bash:
``Basket.add`` (Go ``Basket.Add`` / ``(*Basket).Add`` by the receiver); Rust and C++:
``shop::Basket::add``; PHP: ``App\\Models\\Basket::add``; Ruby: ``Shop::Basket#add``, and
``Shop::Basket.create`` for ``def self.create``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

__all__ = ["GRAMMARS", "LANGUAGES", "LanguageSpec"]

_C_LIKE_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})


@dataclass(frozen=True)
class LanguageSpec:
    """What the code chunker needs to know about one language's grammar."""

    module: str
    function: str = "language"
    definitions: dict[str, str] = field(default_factory=dict)
    comments: frozenset[str] = _C_LIKE_COMMENTS
    attach: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()
    doc_prefixes: tuple[str, ...] = ("/**", "///", "//!", "//", "/*")
    separators: tuple[str, str] = (".", ".")  # between scopes, before a type's function


_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "lexical_declaration": "function",  # only `const f = () => ...` (see code._definition)
    "variable_declaration": "function",
}
_TS_DEFS = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "type_alias_declaration": "type",
    "internal_module": "namespace",
    "module": "namespace",
    "function_signature": "function",
    "abstract_method_signature": "method",
}
_JS_WRAPPERS = frozenset({"export_statement"})
_C_DEFS = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "type_definition": "type",
}
_CPP_DEFS = {
    **_C_DEFS,
    "class_specifier": "class",
    "namespace_definition": "namespace",
}
_JAVA_DEFS = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "annotation_type_declaration": "interface",
    "method_declaration": "method",
    "constructor_declaration": "method",
}
_CSHARP_DEFS = {
    **_JAVA_DEFS,
    "struct_declaration": "struct",
    "namespace_declaration": "namespace",
    "file_scoped_namespace_declaration": "namespace",
    "property_declaration": "property",
    "destructor_declaration": "method",
    "operator_declaration": "method",
}

#: document kind -> its language
LANGUAGES: dict[str, LanguageSpec] = {
    "javascript": LanguageSpec("tree_sitter_javascript", definitions=_JS_DEFS, wrappers=_JS_WRAPPERS),
    "typescript": LanguageSpec(
        "tree_sitter_typescript", "language_typescript", definitions=_TS_DEFS, wrappers=_JS_WRAPPERS
    ),
    "tsx": LanguageSpec(
        "tree_sitter_typescript", "language_tsx", definitions=_TS_DEFS, wrappers=_JS_WRAPPERS
    ),
    "go": LanguageSpec(
        "tree_sitter_go",
        definitions={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_declaration": "type",
        },
    ),
    "rust": LanguageSpec(
        "tree_sitter_rust",
        definitions={
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "macro_definition": "macro",
        },
        attach=frozenset({"attribute_item"}),
        separators=("::", "::"),
    ),
    "java": LanguageSpec("tree_sitter_java", definitions=_JAVA_DEFS),
    "c": LanguageSpec("tree_sitter_c", definitions=_C_DEFS),
    "cpp": LanguageSpec(
        "tree_sitter_cpp",
        definitions=_CPP_DEFS,
        wrappers=frozenset({"template_declaration"}),
        separators=("::", "::"),
    ),
    "csharp": LanguageSpec("tree_sitter_c_sharp", definitions=_CSHARP_DEFS),
    "ruby": LanguageSpec(
        "tree_sitter_ruby",
        definitions={"method": "method", "singleton_method": "method", "class": "class", "module": "module"},
        doc_prefixes=("#",),
        separators=("::", "#"),
    ),
    "php": LanguageSpec(
        "tree_sitter_php",
        "language_php",
        definitions={
            "function_definition": "function",
            "method_declaration": "method",
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "namespace_definition": "namespace",
        },
        doc_prefixes=("/**", "//", "#", "/*"),
        separators=("\\", "::"),
    ),
    "bash": LanguageSpec(
        "tree_sitter_bash", definitions={"function_definition": "function"}, doc_prefixes=("#",)
    ),
    "python": LanguageSpec(
        "tree_sitter_python",
        definitions={"function_definition": "function", "class_definition": "class"},
        wrappers=frozenset({"decorated_definition"}),
        doc_prefixes=("#",),
    ),
}

#: grammar -> its language: each kind's own grammar, and PHP source without ``<?php`` (the wheel's
#: ``language_php_only``: the whole file is code, where ``language_php`` reads it as HTML text)
GRAMMARS: dict[str, LanguageSpec] = {
    **LANGUAGES,
    "php_only": replace(LANGUAGES["php"], function="language_php_only"),
}
