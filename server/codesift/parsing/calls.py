"""Calls edges: which definition makes each call (its caller) and, when the file
itself tells, which definition it reaches; otherwise the name and a hint
(a qualified name or a path the writer resolves across files, store/writer.py).

The language-independent rules are here; Python, TypeScript/JavaScript and Go
follow their own (calls_python.py, calls_script.py, calls_go.py); C and C++
leave out what is no call (calls_c.py: `#if 0` code, a prototype misread)."""

from __future__ import annotations

import bisect
from dataclasses import replace

from tree_sitter import Node

from codesift.parsing.calls_c import C_FAMILY, not_a_call
from codesift.parsing.calls_go import go_callee, go_imports
from codesift.parsing.calls_python import python_callee
from codesift.parsing.calls_script import SCRIPT_LANGUAGES, script_callee, script_imports
from codesift.parsing.model import ParsedEdge, ParsedNode
from codesift.parsing.outline import CLASS_LIKE, CallSite, Def, Import, Outline, nearest_node

__all__ = ["call_edges", "local_callee", "receiver_is_other", "resolve_local"]


def call_edges(
    calls: list[CallSite],
    outline: Outline,
    imports: list[Import],
    import_hints: dict[str, str],
    src: bytes,
    *,
    language: str,
    rel_path: str,
    prefix: str,
    resolve: bool = True,
) -> list[ParsedEdge]:
    """One calls edge per (caller, callee), at the first call site, with how its
    target was found when the file tells (`confidence`: scope, type or guess).

    `resolve=False` gives the same edges without their targets (no dst, hint or
    confidence): what a cold index writes first, so that search, whose summaries
    name the calls, need not wait for the resolution (call_pass.py fills it in)."""
    caller_at = _CallerLookup(outline.entries)
    edges: list[ParsedEdge] = []
    # -> the edge's index in `edges` and how sure its target is (_certainty)
    seen: dict[tuple[int, str], tuple[int, int]] = {}
    script = (
        script_imports(imports, import_hints, rel_path) if language in SCRIPT_LANGUAGES else None
    )
    packages = go_imports(imports) if language == "go" else {}
    for position, line, callee, callee_node in calls:
        if not callee or (language in C_FAMILY and not_a_call(callee_node)):
            continue
        caller = caller_at(position)
        earlier = seen.get((caller, callee))
        if earlier is not None and (language != "python" or earlier[1] == _SURE or not resolve):
            continue
        if not resolve:
            seen[(caller, callee)] = (len(edges), _SURE)
            edges.append(ParsedEdge(src=caller, kind="calls", dst_name=callee, line=line))
            continue
        confidence = ""
        if language == "python":
            dst, hint, confidence = python_callee(
                callee, caller, callee_node, outline, import_hints, src
            )
        elif script is not None:
            dst, hint, confidence = script_callee(callee, caller, callee_node, outline, script, src)
        elif language == "go":
            dst, hint, confidence = go_callee(
                callee, caller, callee_node, outline, packages, src, rel_path, prefix
            )
        else:
            dst, hint = None, import_hints.get(callee, "")
        if dst is None and not hint:
            dst, confidence = _guessed(language, callee, caller, callee_node, outline, src)
        if dst is not None and not confidence:
            confidence = "guess"
        edge = ParsedEdge(
            src=caller,
            kind="calls",
            dst_name=callee,
            line=line,
            dst=dst,
            dst_hint="" if dst is not None else hint,
            confidence=confidence if dst is not None else "",
        )
        _keep_surest(edges, seen, edge, _certainty(edge, confidence))
    return edges


def _guessed(
    language: str, callee: str, caller: int, callee_node: Node, outline: Outline, src: bytes
) -> tuple[int | None, str]:
    """When the language tells no more: a name defined in this file, picked by
    where it is (a bare call of it is in scope; any other, a guess)."""
    if not _guess_here(language, callee_node, src):
        return None, ""
    dst = local_callee(callee, caller, callee_node, outline, src)
    if dst is None:
        return None, ""
    bare = callee_node.parent is None or callee_node.parent.type not in _MEMBER_TYPES
    return dst, "scope" if bare and language != "go" else "guess"


def _keep_surest(
    edges: list[ParsedEdge],
    seen: dict[tuple[int, str], tuple[int, int]],
    edge: ParsedEdge,
    certainty: int,
) -> None:
    """Add the edge of a (caller, callee) seen first, or let it replace an earlier
    one it is surer of: a Python call of the name on an untyped receiver first,
    then on a typed one (`event.set()` in two loops) is the one the type tells."""
    key = (edge.src, edge.dst_name)
    earlier = seen.get(key)
    if earlier is None:
        seen[key] = (len(edges), certainty)
        edges.append(edge)
    elif certainty > earlier[1]:
        # The edge stays at the first call site (as the call pass, which writes the
        # targets into rows made without them, leaves it).
        edges[earlier[0]] = replace(edge, line=edges[earlier[0]].line)
        seen[key] = (earlier[0], certainty)


_SURE = 3


def _certainty(edge: ParsedEdge, confidence: str) -> int:
    """How sure a Python call's target is: resolved here (3), a hint through the
    caller's own class or bases (2), another hint (1), a receiver whose type the
    file does not show (0)."""
    if edge.dst is not None:
        return _SURE
    if confidence:
        return 2
    return 0 if edge.dst_hint.startswith(("*method::", "*object::")) else 1


def _guess_here(language: str, callee_node: Node, src: bytes) -> bool:
    """Whether a call the language left unresolved may be guessed among this
    file's definitions by name: not in Python (its rules leave no such call), nor
    a script call on a chain or a call's result (`this.items_.get()`): the file's
    namesakes are rarely what such a receiver holds."""
    if language == "python":
        return False
    return language not in SCRIPT_LANGUAGES or not receiver_is_other(callee_node, src)


class _CallerLookup:
    """The innermost definition around a byte position (0, the module, when none):
    bisect the definitions' start bytes, then climb to the first one that still
    contains it."""

    def __init__(self, entries: list[Def]) -> None:
        self._entries = [e for e in entries if not e.is_scope]
        self._starts = [e.node.start_byte for e in self._entries]
        self._parent_of = {id(e): nearest_node(e.parent_entry) for e in self._entries}

    def __call__(self, position: int) -> int:
        i = bisect.bisect_right(self._starts, position) - 1
        entry: Def | None = self._entries[i] if i >= 0 else None
        while entry is not None and (
            entry.node.end_byte <= position or _in_decorators(entry.node, position)
        ):
            entry = self._parent_of[id(entry)]
        return entry.index if entry is not None else 0


def _in_decorators(node: Node, position: int) -> bool:
    """Whether `position` is in the decorators of a decorated definition (Python's
    `@app.route(...)`, TypeScript's `@Component(...) class`): a decorator runs
    where the definition is made, so its calls are the enclosing scope's, not
    the decorated definition's."""
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        return inner is not None and position < inner.start_byte
    if node.type in _DECORATED_SCRIPT:
        return any(
            child.type == "decorator" and child.start_byte <= position < child.end_byte
            for child in node.children
        )
    return False


# Script definitions whose decorators are their own children.
_DECORATED_SCRIPT = frozenset(
    {"class_declaration", "abstract_class_declaration", "export_statement", "class"}
)


def local_callee(
    callee: str, caller: int, callee_node: Node, outline: Outline, src: bytes
) -> int | None:
    """The node in this file a call reaches, if it can be told."""
    nodes = outline.nodes
    dst = resolve_local(callee, caller, nodes, outline.by_name)
    if (
        dst is not None
        and dst != caller
        and nodes[dst].parent == nodes[caller].parent
        and nodes[dst].parent
        and receiver_is_other(callee_node, src)
    ):
        # `self.entries.insert()` calls a field's method, not the class's own insert.
        return None
    if dst == caller and receiver_is_other(callee_node, src):
        return None
    return dst


# Node types that join an object and a member name (`a.b`, `a->b`, `a::b`, Ruby `a.b()`).
_MEMBER_TYPES = frozenset(
    {
        "attribute",
        "member_expression",
        "field_expression",
        "selector_expression",
        "navigation_expression",
        "member_access_expression",
        "method_invocation",
        "call",
        "dot_index_expression",
        "method_index_expression",
        "scoped_call_expression",
        "member_call_expression",
    }
)


def receiver_is_other(name_node: Node, src: bytes) -> bool:
    """True when a call's name is reached through a chain of members or a call
    result (`self.items.append()`, `get().run()`): the callee then belongs to
    that object, not to the caller's own class. A bare call or one on a single
    identifier (`self.run()`, `s.evict()` with Go's receiver `s`) is not."""
    parent = name_node.parent
    if parent is None or parent.type not in _MEMBER_TYPES:
        return False
    head = src[parent.start_byte : name_node.start_byte].decode("utf-8", "replace")
    head = head.rstrip(".:->?!&# \t\n")
    return any(sep in head for sep in (".", "->", "::", "(", "["))


def resolve_local(
    callee: str, caller: int, nodes: list[ParsedNode], by_name: dict[str, list[ParsedNode]]
) -> int | None:
    candidates = by_name.get(callee)
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0].index
    # Prefer a sibling of the caller (a method of the same class), then a top-level one.
    caller_parent = nodes[caller].parent
    for cand in candidates:
        if caller_parent is not None and cand.parent == caller_parent:
            return cand.index
    top = [c for c in candidates if c.parent == 0]
    if len(top) == 1:
        return top[0].index
    # Java/C# `new Foo()`: the type and its constructors share the name.
    types = [c for c in candidates if c.kind in CLASS_LIKE]
    if len(types) == 1 and all(
        c is types[0] or (c.kind == "constructor" and c.parent == types[0].index)
        for c in candidates
    ):
        return types[0].index
    return None
