"""Imports and inherits edges of one parsed file (calls edges: calls.py)."""

from __future__ import annotations

from tree_sitter import Node

from codesift.parsing.languages import LanguageSpec
from codesift.parsing.model import ParsedEdge
from codesift.parsing.outline import CLASS_LIKE, Def, Import, Outline, last_component

__all__ = ["import_edges", "inherit_edges"]

_SCRIPT_EXTENSIONS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


def _import_tail(target: str) -> str:
    """The local-looking name of an import path: its last segment (`net/http` ->
    `http`, `<sys/stat.h>` -> `stat.h`), without a script extension
    (`./util/format.js` -> `format`) since those are bound by their stem."""
    stem = target.rstrip("/").rsplit("/", 1)[-1] or target
    for ext in _SCRIPT_EXTENSIONS:
        if stem.endswith(ext) and len(stem) > len(ext):
            return stem[: -len(ext)]
    return stem


def import_edges(
    imports: list[Import], spec: LanguageSpec
) -> tuple[list[ParsedEdge], dict[str, str]]:
    """One imports edge per imported target, and the qualified name each local name
    stands for (the hint a call or base of that name carries when it stays unresolved)."""
    edges: list[ParsedEdge] = []
    hints: dict[str, str] = {}
    sep = _import_separator(spec)
    python = spec.qualifier == "python_module"
    seen: set[tuple[str, str]] = set()
    for module, imported, alias, line, is_path in imports:
        target = imported or module
        if not target:
            continue
        hint = f"{module}{sep}{imported}" if module and imported else target
        short = (
            _import_tail(target)
            if (is_path or "/" in target) and not imported
            else (last_component(target))
        )
        if python and not imported and not alias:
            # `import a.b.c` binds `a` (the package), never `c`: `a.b.c.f()` is
            # written through the head.
            head = target.split(".", 1)[0]
            hints.setdefault(head, head)
        else:
            hints.setdefault(alias or short, hint)
        if (target, hint) in seen:
            continue
        seen.add((target, hint))
        edges.append(ParsedEdge(src=0, kind="imports", dst_name=short, line=line, dst_hint=hint))
    return edges, hints


def _import_separator(spec: LanguageSpec) -> str:
    if spec.qualifier == "python_module":
        return "."
    if spec.qualifier == "package":
        return spec.package_separator
    return spec.separator


# -- inherits --------------------------------------------------------------------------


def inherit_edges(
    inherits: list[tuple[Node, str]], outline: Outline, import_hints: dict[str, str]
) -> list[ParsedEdge]:
    """One inherits edge per base class / implemented interface of a node."""
    scopes = [e for e in outline.entries if e.is_scope]
    edges: list[ParsedEdge] = []
    for name_node, base in inherits:
        if not base:
            continue
        owner = _enclosing_index(name_node, outline.index_by_ts_id) or _scope_owner(
            name_node, scopes, outline.types_by_name
        )
        if owner == 0:
            continue
        candidates = [n for n in outline.by_name.get(base, ()) if n.kind in CLASS_LIKE]
        dst = candidates[0].index if len(candidates) == 1 else None
        if dst == owner:  # `@behaviour App.Policy` inside `defmodule Policy`: another Policy
            dst = None
        edges.append(
            ParsedEdge(
                src=owner,
                kind="inherits",
                dst_name=base,
                line=name_node.start_point[0] + 1,
                dst=dst,
                dst_hint="" if dst is not None else _base_hint(name_node, base, import_hints),
            )
        )
    return edges


def _base_hint(name_node: Node, base: str, import_hints: dict[str, str]) -> str:
    """The qualified name a base stands for through the file's imports: its own
    (`from m import Base`), or its head's for a dotted Python base (`abc.Base`
    with `from pkg import abc` -> `pkg.abc.Base`)."""
    written = name_node.parent
    if base in import_hints or written is None or written.type != "attribute":
        return import_hints.get(base, "")
    text = (written.text or b"").decode("utf-8", "replace")
    head = text.split(".", 1)[0]
    return f"{import_hints[head]}{text[len(head) :]}" if head in import_hints else ""


def _enclosing_index(node: Node, index_by_ts_id: dict[int, int]) -> int:
    """The node index of the closest definition around a tree-sitter node (0: none)."""
    walker: Node | None = node.parent
    while walker is not None:
        idx = index_by_ts_id.get(walker.id)
        if idx is not None:
            return idx
        walker = walker.parent
    return 0


def _scope_owner(node: Node, scopes: list[Def], types_by_name: dict[str, int]) -> int:
    """The type a scope (`impl Trait for Type`, `extension Type: P`) names, if in this file."""
    inner: Def | None = None
    for scope in scopes:
        contains = scope.node.start_byte <= node.start_byte <= node.end_byte <= scope.node.end_byte
        if contains and (inner is None or scope.node.start_byte >= inner.node.start_byte):
            inner = scope
    return types_by_name.get(last_component(inner.name), 0) if inner is not None else 0
