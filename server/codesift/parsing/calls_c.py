"""C and C++ call sites that are no calls (parsing/calls.py asks before making
an edge):

- code the preprocessor never compiles: the body of `#if 0` (and the `#else`
  of `#if 1`), where old versions and disabled variants are kept;
- a header's prototype behind an API macro (`LZ4LIB_API LZ4_stream_t*
  LZ4_createStream(void);`, `XXH_PUBLIC_API XXH_errorcode
  XXH64_freeState(XXH64_state_t* s);`): tree-sitter reads the macro and the
  type as a declaration missing its `;`, then the prototype as an expression
  statement holding a call. C has no statement at file scope, so such a "call"
  is the function's own declaration.
"""

from __future__ import annotations

from tree_sitter import Node

__all__ = ["C_FAMILY", "not_a_call"]

C_FAMILY = frozenset({"c", "cpp"})
_CONDITIONALS = frozenset({"preproc_if", "preproc_elif"})
_BRANCHES = frozenset({"preproc_else", "preproc_elif"})
# What may stand between a file-scope declaration and the file: `extern "C" {...}`.
_SCOPES = frozenset({"declaration_list", "linkage_specification"})


def not_a_call(name_node: Node) -> bool:
    """Whether the call whose callee name is `name_node` is dead code or a
    misread prototype (see the module docstring)."""
    return _in_dead_branch(name_node) or _misread_prototype(name_node)


def _in_dead_branch(node: Node) -> bool:
    child = node
    parent = node.parent
    while parent is not None:
        if parent.type in _CONDITIONALS:
            value = _constant(parent.child_by_field_name("condition"))
            if value is not None:
                in_alternative = child.type in _BRANCHES and child == parent.child_by_field_name(
                    "alternative"
                )
                if value == 0 and not in_alternative:
                    return True  # the body of `#if 0`
                if value != 0 and in_alternative:
                    return True  # the `#else` of `#if 1`
        child, parent = parent, parent.parent
    return False


def _constant(condition: Node | None) -> int | None:
    if condition is None or condition.type != "number_literal" or condition.text is None:
        return None
    try:
        return int(condition.text.decode("ascii", "replace").rstrip("uUlL"), 0)
    except ValueError:
        return None


def _misread_prototype(node: Node) -> bool:
    """An expression statement at file scope right after a declaration whose
    `;` is missing (the API macro and the return type read as a declaration)."""
    statement = node.parent
    while statement is not None and statement.type != "expression_statement":
        if statement.type in ("compound_statement", "function_definition", "initializer_list"):
            return False
        statement = statement.parent
    if statement is None or not _at_file_scope(statement):
        return False
    before = statement.prev_named_sibling
    if before is None or before.type != "declaration":
        return False
    last = before.child(before.child_count - 1) if before.child_count else None
    return last is not None and last.type == ";" and last.is_missing


def _at_file_scope(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "translation_unit":
            return True
        if not (parent.type.startswith("preproc_") or parent.type in _SCOPES):
            return False
        parent = parent.parent
    return False
