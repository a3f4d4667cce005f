"""Per-language rules of the symbol extractor: which tags.scm to run and what we add to it.

Each official grammar wheel ships ``queries/tags.scm`` (definitions and calls); ``TagRules``
says which ones a language uses (TypeScript runs JavaScript's patterns and its own, as its
``tree-sitter.json`` does) and adds our own patterns, appended to the same query so a file is
still matched once (docs/query.md#symbols-and-symbolid-declarations,
docs/query.md#graph-the-reference-graph):

- ``@reference.import`` with ``@name`` (and ``@module``, the module path as written);
- ``@reference.inherit`` with ``@name`` (base classes, implemented interfaces);
- ``@reference.value``: a name used as a value (passed, assigned, returned), not called;
- calls for grammars whose tags.scm has none (C, C++).

``owner`` gives the container a declaration names itself (a Go method's receiver type, the
type of a Rust ``impl`` block, the scope of a C++ ``A::f``) where nesting cannot; ``widen``
turns a C declarator into its whole declaration. Swift's shipped tags.scm captures whole
classes as methods, so Swift uses patterns of our own. Scala, Elixir and Solidity run their
wheels' tags.scm with imports and base types added; Elixir's relies on ``@ignore`` patterns
(tree-sitter's tags CLI skips names they capture, py-tree-sitter does not), so its special forms
and module attributes (``def``, ``if``, ``@doc``) are dropped by name instead. Kotlin, Bash,
Haskell and Nix have no rules (their wheels ship no tags.scm).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tree_sitter import Node

__all__ = ["TagRules", "RULES", "load_tags_scm", "CLASS_KINDS"]

# Kinds whose nested functions are methods (a function in a class is a method,
# docs/query.md#symbols-and-symbolid-declarations).
CLASS_KINDS = frozenset({"class", "interface", "object", "struct", "trait", "type"})

_JS_IMPORTS = """
(import_statement (import_clause (named_imports (import_specifier name: (_) @name)))
  source: (string (string_fragment) @module)) @reference.import
(import_statement (import_clause (identifier) @name)
  source: (string (string_fragment) @module)) @reference.import
(import_statement (import_clause (namespace_import))
  source: (string (string_fragment) @name @module)) @reference.import
(import_statement . source: (string (string_fragment) @name @module)) @reference.import
(export_statement (export_clause (export_specifier name: (_) @name))
  source: (string (string_fragment) @module)) @reference.import
(call_expression function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @name @module))
  (#eq? @_require "require")) @reference.import
(arguments (identifier) @name @reference.value)
(variable_declarator value: (identifier) @name @reference.value)
(assignment_expression right: (identifier) @name @reference.value)
(return_statement (identifier) @name @reference.value)
(pair value: (identifier) @name @reference.value)
"""

_JS_EXTRA = (
    _JS_IMPORTS
    + """
(class_heritage [(identifier) @name
                 (member_expression property: (property_identifier) @name)]) @reference.inherit
"""
)

_TS_EXTRA = (
    _JS_IMPORTS
    + """
(internal_module name: (identifier) @name) @definition.module
(import_require_clause source: (string (string_fragment) @name @module)) @reference.import
(extends_clause value: [(identifier) @name
                        (member_expression property: (property_identifier) @name)])
  @reference.inherit
(implements_clause [(type_identifier) @name
                    (generic_type name: (type_identifier) @name)
                    (nested_type_identifier name: (type_identifier) @name)]) @reference.inherit
(extends_type_clause type: [(type_identifier) @name
                            (generic_type name: (type_identifier) @name)
                            (nested_type_identifier name: (type_identifier) @name)])
  @reference.inherit
"""
)

_PYTHON_EXTRA = """
(import_statement name: [(dotted_name) @name
                         (aliased_import name: (dotted_name) @name)]) @reference.import
(import_from_statement module_name: (_) @module
  name: [(dotted_name) @name (aliased_import name: (dotted_name) @name)]) @reference.import
(import_from_statement module_name: (_) @module (wildcard_import) @name) @reference.import
(class_definition superclasses: (argument_list
  [(identifier) @name
   (attribute attribute: (identifier) @name)
   (subscript value: [(identifier) @name
                      (attribute attribute: (identifier) @name)])])) @reference.inherit
([(argument_list (identifier) @name)
  (keyword_argument value: (identifier) @name)
  (default_parameter value: (identifier) @name)
  (typed_default_parameter value: (identifier) @name)
  (assignment right: (identifier) @name)
  (return_statement (identifier) @name)] @reference.value)
(decorator [(identifier) @name
            (attribute attribute: (identifier) @name)] @reference.value)
"""

_GO_EXTRA = """
(import_spec path: (interpreted_string_literal
  (interpreted_string_literal_content) @name @module)) @reference.import
"""

_RUST_EXTRA = """
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(use_declaration argument: (scoped_identifier path: (_) @module name: (identifier) @name))
  @reference.import
(use_declaration argument: (identifier) @name @module) @reference.import
(use_declaration argument: (use_as_clause path: [
  (identifier) @name @module
  (scoped_identifier path: (_) @module name: (identifier) @name)])) @reference.import
(scoped_use_list path: (_) @module list: (use_list (identifier) @name)) @reference.import
"""

_JAVA_EXTRA = """
(import_declaration (scoped_identifier scope: (_) @module name: (identifier) @name) .)
  @reference.import
(import_declaration (scoped_identifier) @module (asterisk) @name) @reference.import
(superclass [(type_identifier) @name (generic_type (type_identifier) @name)]) @reference.inherit
(super_interfaces (type_list [(type_identifier) @name (generic_type (type_identifier) @name)]))
  @reference.inherit
(extends_interfaces (type_list [(type_identifier) @name (generic_type (type_identifier) @name)]))
  @reference.inherit
"""

_C_EXTRA = """
(call_expression function: [(identifier) @name
                            (field_expression field: (field_identifier) @name)]) @reference.call
(preproc_include path: [(system_lib_string) @name @module
                        (string_literal (string_content) @name @module)]) @reference.import
"""

_CPP_EXTRA = (
    _C_EXTRA
    + """
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(base_class_clause [(type_identifier) @name
                    (qualified_identifier name: (type_identifier) @name)]) @reference.inherit
"""
)

_CSHARP_EXTRA = """
(base_list [(identifier) @name (generic_name (identifier) @name)
            (qualified_name name: (identifier) @name)]) @reference.inherit
(using_directive [(identifier) (qualified_name)] @name @module) @reference.import
"""

_RUBY_EXTRA = """
(superclass [(constant) @name (scope_resolution name: (constant) @name)]) @reference.inherit
(call method: (identifier) @_require
  arguments: (argument_list . (string (string_content) @name @module))
  (#match? @_require "^require(_relative)?$")) @reference.import
"""

# Ruby's tags.scm tags every bare identifier a call and relies on a ``(#is-not? local)``
# predicate that py-tree-sitter does not evaluate, so locals and parameters became calls:
# keep bare constants, as references.
_RUBY_PATCH = (
    ("[(identifier) (constant)] @name @reference.call", "(constant) @name @reference.value"),
)

_PHP_EXTRA = """
(function_call_expression function: (name) @name) @reference.call
(base_clause [(name) @name (qualified_name (name) @name .)]) @reference.inherit
(class_interface_clause [(name) @name (qualified_name (name) @name .)]) @reference.inherit
(namespace_use_clause (qualified_name prefix: (_) @module (name) @name .)) @reference.import
"""

_SWIFT_RULES = """
(class_declaration name: (type_identifier) @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(call_expression . [(simple_identifier) @name
                    (navigation_expression suffix: (navigation_suffix
                      suffix: (simple_identifier) @name))]) @reference.call
(inheritance_specifier inherits_from: (user_type (type_identifier) @name)) @reference.inherit
(import_declaration (identifier) @name @module) @reference.import
"""

_SCALA_EXTRA = """
(function_declaration name: (identifier) @name) @definition.function
(call_expression function: (field_expression field: (identifier) @name)) @reference.call
(extends_clause [(type_identifier) @name
                 (generic_type type: (type_identifier) @name)]) @reference.inherit
(import_declaration (identifier) @name .) @reference.import
(import_declaration (namespace_selectors [(identifier) @name
                                          (arrow_renamed_identifier name: (identifier) @name)]))
  @reference.import
"""

_ELIXIR_EXTRA = """
(call target: (identifier) @_kw (arguments . (alias) @name @module)
  (#any-of? @_kw "alias" "import" "require" "use")) @reference.import
(call target: (identifier) @_kw (arguments . (alias) @name)
  (#eq? @_kw "defimpl")) @definition.module
"""

# The names tags.scm's ``@ignore`` patterns mean to skip: special forms and the definition
# macros (``def``, ``if``, ``case``), and the usual module attributes (``@doc``, ``@spec``).
_ELIXIR_IGNORED = frozenset((
    "def", "defp", "defdelegate", "defguard", "defguardp", "defmacro", "defmacrop", "defn",
    "defnp", "defmodule", "defprotocol", "defimpl", "defstruct", "defexception",
    "defoverridable", "alias", "case", "cond", "else", "for", "if", "import", "quote", "raise",
    "receive", "require", "reraise", "super", "throw", "try", "unless", "unquote",
    "unquote_splicing", "use", "with", "fn", "doc", "moduledoc", "typedoc", "spec", "type",
    "typep", "opaque", "callback", "macrocallback", "impl", "behaviour", "derive", "deprecated",
    "since", "compile", "dialyzer", "on_load", "external_resource", "optional_callbacks",
    "before_compile", "after_compile", "on_definition",
))  # fmt: skip

_SOLIDITY_EXTRA = """
(modifier_definition name: (identifier) @name) @definition.function
(inheritance_specifier ancestor: (user_defined_type (identifier) @name .)) @reference.inherit
(import_directive import_name: (_) @name source: (string) @module) @reference.import
(import_directive . source: (string) @name @module .) @reference.import
"""

_DECLARATOR_WRAPPERS = frozenset(
    {
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
    }
)
_DECLARATIONS = frozenset({"function_definition", "declaration", "field_declaration"})


def _widen_declarator(node: Node) -> Node:
    """A C/C++ ``function_declarator`` -> the declaration or definition holding it."""
    outer = node
    while outer.parent is not None and outer.parent.type in _DECLARATOR_WRAPPERS:
        outer = outer.parent
    if outer.parent is not None and outer.parent.type in _DECLARATIONS:
        return outer.parent
    return node


def _type_name(node: Node | None) -> str | None:
    """The bare name of a type node (``*Recv[T]`` -> ``Recv``, ``Foo<T>`` -> ``Foo``)."""
    while node is not None:
        if node.type in ("type_identifier", "identifier", "namespace_identifier"):
            return (node.text or b"").decode("utf-8", "replace")
        inner = node.child_by_field_name("type") or node.child_by_field_name("name")
        if inner is None and node.named_child_count:
            inner = node.named_children[0]
        node = inner
    return None


def _go_owner(node: Node) -> str | None:
    """A Go method's receiver type."""
    if node.type != "method_declaration":
        return None
    receiver = node.child_by_field_name("receiver")
    for param in receiver.named_children if receiver is not None else ():
        if param.type == "parameter_declaration":
            return _type_name(param.child_by_field_name("type"))
    return None


def _rust_owner(node: Node) -> str | None:
    """The type of the ``impl`` block a Rust function sits in."""
    body = node.parent
    if body is None or body.type != "declaration_list":
        return None
    block = body.parent
    if block is None or block.type != "impl_item":
        return None
    return _type_name(block.child_by_field_name("type"))


def _cpp_owner(node: Node) -> str | None:
    """The scope of a C++ out-of-class definition ``void A::f()``."""
    for child in node.named_children:
        if child.type == "function_declarator":
            declarator = child.child_by_field_name("declarator")
            if declarator is not None and declarator.type == "qualified_identifier":
                return _type_name(declarator.child_by_field_name("scope"))
    return None


@dataclass(frozen=True)
class TagRules:
    """How one language's tags are extracted.

    ``grammars`` are the wheels whose tags.scm is run (in order), ``extra`` our own patterns;
    ``demote_methods`` turns a tags.scm "method" that is not in a class into a "function"
    (Rust tags every ``fn`` in a ``declaration_list`` a method, ``mod`` bodies included).
    """

    grammars: tuple[str, ...] = ()
    extra: str = ""
    owner: Callable[[Node], str | None] | None = None
    widen: Callable[[Node], Node] | None = None
    demote_methods: bool = False
    patch: tuple[tuple[str, str], ...] = ()
    ignore_refs: frozenset[str] = frozenset()

    def query_text(self) -> str:
        """The whole query: the grammars' tags.scm (patched) and our patterns."""
        text = "\n".join([*(load_tags_scm(module) for module in self.grammars), self.extra])
        for old, new in self.patch:
            text = text.replace(old, new)
        return text


RULES: dict[str, TagRules] = {
    "python": TagRules(
        ("tree_sitter_python",), _PYTHON_EXTRA, ignore_refs=frozenset({"self", "cls"})
    ),
    "javascript": TagRules(("tree_sitter_javascript",), _JS_EXTRA),
    "typescript": TagRules(("tree_sitter_javascript", "tree_sitter_typescript"), _TS_EXTRA),
    "tsx": TagRules(("tree_sitter_javascript", "tree_sitter_typescript"), _TS_EXTRA),
    "go": TagRules(("tree_sitter_go",), _GO_EXTRA, owner=_go_owner),
    "rust": TagRules(("tree_sitter_rust",), _RUST_EXTRA, owner=_rust_owner, demote_methods=True),
    "java": TagRules(("tree_sitter_java",), _JAVA_EXTRA),
    "c": TagRules(("tree_sitter_c",), _C_EXTRA, widen=_widen_declarator),
    "cpp": TagRules(("tree_sitter_cpp",), _CPP_EXTRA, owner=_cpp_owner, widen=_widen_declarator),
    "csharp": TagRules(("tree_sitter_c_sharp",), _CSHARP_EXTRA),
    "ruby": TagRules(("tree_sitter_ruby",), _RUBY_EXTRA, patch=_RUBY_PATCH),
    "php": TagRules(("tree_sitter_php",), _PHP_EXTRA),
    "lua": TagRules(("tree_sitter_lua",)),
    "swift": TagRules((), _SWIFT_RULES),
    "scala": TagRules(("tree_sitter_scala",), _SCALA_EXTRA),
    "elixir": TagRules(("tree_sitter_elixir",), _ELIXIR_EXTRA, ignore_refs=_ELIXIR_IGNORED),
    "solidity": TagRules(("tree_sitter_solidity",), _SOLIDITY_EXTRA),
}

# The c-sharp wheel installs its queries beside the package, under the distribution's name.
_QUERY_DIRS = {"tree_sitter_c_sharp": "tree_sitter_c-sharp"}


def load_tags_scm(module: str) -> str:
    """The text of a grammar wheel's ``queries/tags.scm``; raises ``FileNotFoundError``."""
    mod = importlib.import_module(module)
    text = getattr(mod, "TAGS_QUERY", None)
    if isinstance(text, str):
        return text
    candidates = [resources.files(module) / "queries" / "tags.scm"]
    if module in _QUERY_DIRS and mod.__file__:
        root = Path(mod.__file__).resolve().parent.parent
        candidates.append(root / _QUERY_DIRS[module] / "queries" / "tags.scm")
    for candidate in candidates:
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise FileNotFoundError(f"{module} ships no queries/tags.scm")
