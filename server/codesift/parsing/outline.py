"""The outline of one parsed file that its edges resolve against: the
definitions and scopes the queries tagged, the nodes made of them, and the
lookups (by name, by tree-sitter node) every language's call rules share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tree_sitter import Node

from codesift.parsing.model import ParsedNode

__all__ = [
    "CLASS_LIKE",
    "DOTTED",
    "CallSite",
    "Def",
    "Import",
    "Outline",
    "ancestors",
    "enclosing_class",
    "last_component",
    "nearest_node",
    "tree_definition",
]

CLASS_LIKE = frozenset(
    {"class", "struct", "interface", "trait", "enum", "union", "module", "namespace", "type"}
)
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(slots=True)
class Def:
    kind: str
    name: str
    node: Node
    name_node: Node
    receiver: str = ""
    is_scope: bool = False
    index: int = -1  # index in the output node list; -1 for scopes
    parent_entry: Def | None = None


class CallSite(NamedTuple):
    start: int  # byte offset of the callee's name
    line: int
    callee: str  # the name's last component
    name_node: Node  # kept to look at the call's receiver when resolution needs it


class Import(NamedTuple):
    module: str
    name: str
    alias: str
    line: int
    is_path: bool  # a quoted module ("net/http", <stdio.h>), not a dotted name


@dataclass(slots=True)
class Outline:
    """The file's nodes and the lookups its edges resolve against."""

    nodes: list[ParsedNode]
    entries: list[Def]  # definitions and scopes, by position
    index_by_ts_id: dict[int, int] = field(default_factory=dict)  # tree-sitter id -> node
    by_name: dict[str, list[ParsedNode]] = field(default_factory=dict)
    types_by_name: dict[str, int] = field(default_factory=dict)
    # What call resolution reads from a scope's source, found once per scope:
    # (role, node index) -> name -> type, or the names a function imports.
    scope_facts: dict[tuple[str, int], Any] = field(default_factory=dict)
    entry_by_index: dict[int, Def] = field(default_factory=dict)


def last_component(name: str) -> str:
    if name.isidentifier():
        return name
    for sep in ("::", ".", "\\", "->", "#"):
        head, found, tail = name.rpartition(sep)
        if found and (head or sep != "#"):  # `#name` is a JS private name, not a path
            name = tail
    return name.strip()


def nearest_node(entry: Def | None) -> Def | None:
    """`entry` or its closest enclosing definition that is a node (scopes are not)."""
    while entry is not None and entry.is_scope:
        entry = entry.parent_entry
    return entry


def tree_definition(index: int, outline: Outline) -> Node | None:
    """The tree-sitter definition (without its decorators) of node `index`."""
    if not outline.entry_by_index:
        outline.entry_by_index = {e.index: e for e in reversed(outline.entries)}
    entry = outline.entry_by_index.get(index)
    if entry is None:
        return None
    definition = entry.node
    if definition.type == "decorated_definition":
        definition = definition.child_by_field_name("definition") or definition
    return definition


def ancestors(index: int, nodes: list[ParsedNode]) -> list[int]:
    out: list[int] = []
    parent = nodes[index].parent if index else None
    while parent:
        out.append(parent)
        parent = nodes[parent].parent
    out.append(0)
    return out


def enclosing_class(index: int, nodes: list[ParsedNode]) -> int | None:
    for owner in [index, *ancestors(index, nodes)]:
        if owner and nodes[owner].kind in CLASS_LIKE:
            return owner
    return None
