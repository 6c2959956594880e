"""Doc comments and docstrings: the comment block above a definition (or its
attributes and decorators), a file's header comment, Python docstrings, Elixir's
`@doc`; cleaned of comment markers. Used by extractor.py for every node."""

from __future__ import annotations

import re
from collections.abc import Collection

from tree_sitter import Node

__all__ = [
    "EQUATION_KINDS",
    "MAX_DOC_CHARS",
    "attached_start",
    "attribute_doc",
    "body_of",
    "header_comment",
    "inner_definition",
    "last_equation",
    "leading_comment",
    "node_text",
    "python_docstring",
]

# Node types whose first named child may be the definition (comments precede the wrapper).
_WRAPPERS = frozenset(
    {
        "export_statement",
        "decorated_definition",
        "template_declaration",
        "attributed_statement",
        "ambient_declaration",
        "field_declaration",  # C++: a struct or class declared inside a class body
    }
)
# Top-level sections whose first definition's doc comment may end the section
# before (tree-sitter-haskell keeps a comment after the imports inside them).
_SECTIONS = frozenset({"declarations"})
_BODY_TYPES = frozenset(
    {
        "block",
        "body",
        "class_body",
        "declaration_list",
        "field_declaration_list",
        "compound_statement",
        "statement_block",
        "enum_body",
        "interface_body",
        "enum_variant_list",
        "body_statement",
        "do_block",
        "template_body",
        "function_body",
        "class_declaration_body",
        "protocol_body",
        "enum_class_body",
    }
)
# `signature`: a Haskell type signature sits between the haddock and the first equation.
_SKIPPABLE_BEFORE_DOC = frozenset(
    {"attribute_item", "decorator", "annotation", "attribute", "signature"}
)
_COMMENT_PREFIX = re.compile(r"^\s*(?:///?!?|/\*\*?|\*/|\*|#+!?|--+ ?\|?|;+|%+)\s?")
MAX_DOC_CHARS = 400


def node_text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _clean_comment(raw: str) -> str:
    lines = []
    for line in raw.splitlines():
        line = _COMMENT_PREFIX.sub("", line, count=1)
        line = line.rstrip().removesuffix("*/").rstrip()
        lines.append(line)
    return "\n".join(lines).strip()


def _is_comment(node: Node) -> bool:
    return "comment" in node.type or node.type == "haddock"  # Haskell `-- |` docs


def _skippable_before_doc(node: Node) -> bool:
    """An attribute, decorator or annotation between a doc comment and its
    definition. tree-sitter-kotlin reads an annotation with arguments on a line of
    its own at the top level (`@OptIn(X::class)` above `inline fun ...`) as an
    expression starting with that annotation."""
    if node.type in _SKIPPABLE_BEFORE_DOC:
        return True
    first = node.named_children[0] if node.type == "prefix_expression" else None
    return first is not None and first.type == "annotation"


# Tags of a `/** ... */` block that describes its file or sets a tool's pragma.
_FILE_DOC_TAGS = re.compile(
    r"@(?:module|file|fileoverview|overview|packageDocumentation|license|jsx\w*)\b"
)


def _detached_doc(comment: Node, src: bytes, anchor: Node) -> bool:
    """A `/** ... */` doc comment with only blank lines between it and its
    definition: Javadoc, KDoc, JSDoc and PHPDoc attach it all the same (a licence,
    a file's own description or a pragma is not a definition's doc)."""
    text = node_text(comment, src)
    return (
        text.startswith("/**")
        and not src[comment.end_byte : anchor.start_byte].strip()
        and not _NOT_A_FILE_DOC.search(text[:400])
        and not _FILE_DOC_TAGS.search(text)
    )


def leading_comment(node: Node, src: bytes) -> tuple[str, int]:
    """The doc comment right above a definition, cleaned, and the 1-based line it
    starts on (0 when there is none)."""
    target = node
    while True:
        prev = target.prev_named_sibling
        anchor = target  # the comment must end right above the skipped attributes
        while prev is not None and _skippable_before_doc(prev):
            anchor = prev
            prev = prev.prev_named_sibling
        if prev is not None and "comment" not in prev.type:
            # tree-sitter-kotlin puts the comments after a package/import header
            # inside that header: take them when they are its last tokens.
            # (`child(count - 1)`: `children[-1]` made a Node of every child on the way.)
            tail = prev
            while tail.child_count and not _is_comment(tail):
                tail = tail.child(tail.child_count - 1)
            if _is_comment(tail):
                prev = tail
        if prev is not None and _is_comment(prev):
            break
        parent = target.parent
        # The first statement of a body: Ruby keeps the comment above it outside the
        # body (`module M` / `# doc` / `class A` puts the comment before body_statement).
        if parent is not None and (
            parent.type in _WRAPPERS
            or (prev is None and (parent.type in _BODY_TYPES or parent.type in _SECTIONS))
        ):
            target = parent
            continue
        return "", 0
    comments: list[str] = []
    expected_row = anchor.start_point[0]
    if prev.end_point[0] < expected_row - 1 and _detached_doc(prev, src, anchor):
        expected_row = prev.end_point[0] + 1
    while prev is not None and _is_comment(prev) and prev.end_point[0] >= expected_row - 1:
        before = prev.prev_sibling
        if (
            before is not None
            and before.end_point[0] == prev.start_point[0]
            and prev.end_point[0] < expected_row
        ):
            break  # a trailing comment of the line above, not a doc
        comments.append(node_text(prev, src))
        expected_row = prev.start_point[0]
        prev = prev.prev_named_sibling
    comments.reverse()
    if not comments:
        return "", 0
    return _clean_comment("\n".join(comments))[:MAX_DOC_CHARS], expected_row + 1


# A comment block at the top of a file that is not the file's description: licences,
# editor and tool directives, shebangs.
_NOT_A_FILE_DOC = re.compile(
    r"copyright|licen[cs]e|spdx-|all rights reserved|-\*-|vim?:|eslint|prettier|@ts-|"
    r"go:build|\+build|clang-format|nolint|pylint|generated|do not edit|^!|"
    r"frozen_string_literal|coding[:=]|^\s*@(?:file|flow|jsx|format)\b",
    re.IGNORECASE,
)
# Top-level nodes that may stand between a file's first comments and its code.
_HEADER_CLAUSES = frozenset(
    {
        "package_clause",
        "package_declaration",
        "package_header",
        "inner_attribute_item",
        "shebang",
        "hash_bang_line",
    }
)


def header_comment(root: Node, src: bytes, def_rows: Collection[int]) -> str:
    """A file's description in languages without module docstrings: the first
    comment block at its top (before its first statement other than a package
    clause) that is not a licence, a shebang, a tool directive or the doc comment
    of a definition starting right below it (`def_rows`: 0-based rows where
    definitions start)."""
    blocks: list[list[Node]] = []
    for child in root.children:
        if _is_comment(child):
            if blocks and child.start_point[0] <= blocks[-1][-1].end_point[0] + 1:
                blocks[-1].append(child)
            else:
                blocks.append([child])
        elif child.type not in _HEADER_CLAUSES:
            below = blocks[-1][-1].end_point[0] + 1 if blocks else -1
            if below == child.start_point[0] and below in def_rows:
                blocks.pop()  # the first definition's own doc comment
            break
    for block in blocks:
        raw = "\n".join(node_text(c, src) for c in block)
        if raw.startswith("#!"):
            raw = raw.split("\n", 1)[1] if "\n" in raw else ""
        cleaned = _clean_comment(raw)
        if cleaned and not _NOT_A_FILE_DOC.search(cleaned[:400]):
            return cleaned[:MAX_DOC_CHARS]
    return ""


def inner_definition(node: Node) -> Node:
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        if inner is not None:
            return inner
    return node


def body_of(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in node.named_children:
        if child.type in _BODY_TYPES:
            return child
    return None


def python_docstring(node: Node, src: bytes) -> str:
    body = node if node.type == "module" else body_of(inner_definition(node))
    if body is None:
        return ""
    # The first statement: `named_child(i)` makes no Node of the statements after it
    # (`named_children` made one of every statement in the body).
    for i in range(body.named_child_count):
        child = body.named_child(i)
        if child.type == "comment":
            continue
        string = child
        if child.type == "expression_statement" and child.named_child_count == 1:
            string = child.named_child(0)
        if string.type == "string":
            parts = [c for c in string.named_children if c.type == "string_content"]
            raw = "".join(node_text(p, src) for p in parts)
            return _dedent_doc(raw)[:MAX_DOC_CHARS]
        return ""
    return ""


def _dedent_doc(raw: str) -> str:
    lines = raw.expandtabs().splitlines()
    if not lines:
        return ""
    indents = [len(x) - len(x.lstrip()) for x in lines[1:] if x.strip()]
    cut = min(indents) if indents else 0
    out = [lines[0].strip()] + [x[cut:].rstrip() for x in lines[1:]]
    return "\n".join(out).strip()


# The node kinds of a Haskell function's equations after its first.
EQUATION_KINDS = ("function", "bind")
_ATTACHED_BEFORE = frozenset({"attribute_item", "decorator", "annotation", "attribute"})
_ELIXIR_ATTACHED = frozenset({"spec", "impl", "deprecated"})


def _elixir_attribute(sibling: Node, src: bytes) -> str:
    """`doc` for `@doc "..."`, `spec` for `@spec ...`; "" for anything else."""
    if sibling.type != "unary_operator" or not node_text(sibling, src).startswith("@"):
        return ""
    operand = sibling.child_by_field_name("operand")
    target = operand.child_by_field_name("target") if operand is not None else None
    return node_text(target, src) if target is not None else ""


def _is_attached(sibling: Node, name: str, src: bytes) -> bool:
    if sibling.type in _ATTACHED_BEFORE:
        return True
    if sibling.type == "signature":
        named = sibling.child_by_field_name("name")
        return named is not None and node_text(named, src) == name
    return _elixir_attribute(sibling, src) in _ELIXIR_ATTACHED


def attached_start(node: Node, name: str, src: bytes) -> int:
    """The definition's first line, counting the attributes written above it."""
    first = node
    prev = node.prev_named_sibling
    while prev is not None and _is_attached(prev, name, src):
        first = prev
        prev = prev.prev_named_sibling
    return first.start_point[0] + 1


def last_equation(node: Node, name: str, src: bytes) -> Node:
    """A Haskell function's last equation (`f [] = ..` / `f (x:xs) = ..`): its node is
    the first one, its lines run to the last."""
    last = node
    after = node.next_named_sibling
    while after is not None and after.type in EQUATION_KINDS:
        named = after.child_by_field_name("name")
        if named is None or node_text(named, src) != name:
            break
        last = after
        after = after.next_named_sibling
    return last


def attribute_doc(node: Node, src: bytes) -> tuple[str, int]:
    """Elixir `@doc` attributes above a definition (among its `@spec`/`@impl`): the
    doc text and the 1-based line the first one starts on (0 when there is none)."""
    text, line = "", 0
    prev = node.prev_named_sibling
    while prev is not None:
        attribute = _elixir_attribute(prev, src)
        if attribute == "doc":  # `@doc """..."""`, `@doc false`, `@doc since: "1.0"`
            arguments = prev.named_children[0].named_children[-1]
            parts = [
                c
                for s in arguments.named_children
                if s.type in ("string", "sigil")  # `@doc ~S"""..."""`
                for c in s.named_children
            ]
            raw = "".join(node_text(p, src) for p in parts if p.type == "quoted_content")
            text = _dedent_doc(raw)[:MAX_DOC_CHARS] or text
            line = prev.start_point[0] + 1
        elif attribute not in _ELIXIR_ATTACHED:
            break
        prev = prev.prev_named_sibling
    return text, line
