"""Python calls that follow the language: scopes, imports (relative ones made
absolute), the caller's class and its bases, receivers whose class is visible,
builtins."""

from __future__ import annotations

import re

from tree_sitter import Node

from codesift.parsing.outline import (
    CLASS_LIKE,
    DOTTED,
    Import,
    Outline,
    ancestors,
    enclosing_class,
    tree_definition,
)

__all__ = ["PYTHON_BUILTINS", "absolute_import", "python_callee", "python_receiver"]

# Names Python calls without an import (`len`, `next`, `set`, `open`...): a bare call
# of one that this file neither defines nor imports is the builtin, never a project
# definition of the same name (its hint says so, and resolution leaves it alone).
PYTHON_BUILTINS = frozenset(
    name for name in dir(__import__("builtins")) if not name.startswith("__")
)


def absolute_import(item: Import, package: str) -> Import:
    """`from .utils import x` in package `pkg.sub` -> `from pkg.sub.utils import x`
    (each further leading dot climbs one package)."""
    module = item.module
    if not module.startswith("."):
        return item
    dots = len(module) - len(module.lstrip("."))
    parts = package.split(".") if package else []
    base = parts[: len(parts) - (dots - 1)] if dots - 1 <= len(parts) else []
    rest = module[dots:]
    absolute = ".".join([*base, rest] if rest else base)
    return item._replace(module=absolute)


def python_receiver(name_node: Node, src: bytes) -> str | None:
    """What a Python call is made on: None for a bare call `f()`, else the
    receiver's source text (`self`, `super()`, `json`, `self.items`, `a.b`)."""
    parent = name_node.parent
    if parent is None or parent.type != "attribute":
        return None
    receiver = parent.child_by_field_name("object")
    if receiver is None:
        return ""
    return src[receiver.start_byte : receiver.end_byte].decode("utf-8", "replace")


def python_callee(
    callee: str,
    caller: int,
    callee_node: Node,
    outline: Outline,
    import_hints: dict[str, str],
    src: bytes,
) -> tuple[int | None, str]:
    """The node in this file a Python call reaches, and the hint for resolving it
    elsewhere, following the language:

    - `f()` reaches a function or class in scope (never a method): one defined here
      (the innermost scope first), else an imported name (its hint), else a builtin;
    - `self.f()` / `cls.f()` reach the caller's class's own method (else a base's,
      elsewhere); `super().f()` a base's; `Klass.f()` that class's method;
    - `mod.f()` / `a.b.f()` on an imported module or name reach that module's `f`
      (its hint: `json.dumps` never resolves to a project method `dumps`);
    - a call on any other object (`items.append()`) stays a guess by name."""
    nodes = outline.nodes
    candidates = outline.by_name.get(callee, ())
    receiver = python_receiver(callee_node, src)
    if receiver is None:
        if callee in import_hints and _imported_inside(callee, caller, outline, src):
            return None, import_hints[callee]  # a function-level import shadows the module's
        scoped = [c for c in candidates if c.kind != "method"]
        # The innermost enclosing scope that defines it (a closure), then module level.
        chain = [caller, *ancestors(caller, nodes)]
        for owner in chain:
            for cand in scoped:
                if cand.parent == owner:  # the caller itself too: recursion
                    return cand.index, ""
        top = [c for c in scoped if c.parent == 0]
        if top:
            return top[0].index, ""
        if callee in import_hints:
            return None, import_hints[callee]
        if callee in PYTHON_BUILTINS:
            return None, f"builtins.{callee}"
        return None, ""
    if receiver in ("self", "cls"):
        klass = enclosing_class(caller, nodes)
        for cand in candidates:
            if klass is not None and cand.parent == klass and cand.index != caller:
                return cand.index, ""
        if klass is not None and any(c.parent == klass and c.index == caller for c in candidates):
            return caller, ""  # recursion through self
        # Not the class's own: a base's (never a module-level function of that name).
        return _through_bases(callee, caller, outline, import_hints, src)
    if receiver == "super()":
        return _through_bases(callee, caller, outline, import_hints, src)
    typed = _receiver_type(receiver, caller, outline, src)
    if typed is not None:
        classes = [c for c in outline.by_name.get(typed, ()) if c.kind in CLASS_LIKE]
        if len(classes) == 1:  # `catalog: Catalog` ... `catalog.find()`
            for cand in candidates:
                if cand.parent == classes[0].index:
                    return cand.index, ""
            return None, ""
        type_head = typed.split(".", 1)[0]
        if type_head in import_hints:
            return None, f"{import_hints[type_head]}{typed[len(type_head) :]}.{callee}"
    head = receiver.split(".", 1)[0]
    if DOTTED.fullmatch(receiver):
        classes = [c for c in outline.by_name.get(receiver, ()) if c.kind in CLASS_LIKE]
        if len(classes) == 1:  # Klass.f()
            for cand in candidates:
                if cand.parent == classes[0].index:
                    return cand.index, ""
        if head in import_hints:
            return None, f"{import_hints[head]}{receiver[len(head) :]}.{callee}"
    return None, ""


def _imported_inside(name: str, caller: int, outline: Outline, src: bytes) -> bool:
    """Whether the calling function itself imports `name` (`from x import name`
    inside its body), which shadows a definition of that name in the module."""
    if not caller:
        return False
    key = ("imports", caller)
    names = outline.scope_facts.get(key)
    if names is None:
        definition = tree_definition(caller, outline)
        names = set()
        if definition is not None:
            for match in _INDENTED_IMPORT.finditer(_text(definition, src)):
                names.update(_WORD_RUN.findall(match.group(1)))
        outline.scope_facts[key] = names
    return name in names


def _through_bases(
    callee: str, caller: int, outline: Outline, import_hints: dict[str, str], src: bytes
) -> tuple[int | None, str]:
    """`super().f()`: the first base of the caller's class, in source order, that
    is defined here with a method `f` (the node), or is imported (a hint to its `f`)."""
    klass = enclosing_class(caller, outline.nodes)
    definition = None if klass is None else tree_definition(klass, outline)
    bases = None if definition is None else definition.child_by_field_name("superclasses")
    if bases is None:
        return None, ""
    for base in bases.named_children:
        name = src[base.start_byte : base.end_byte].decode("utf-8", "replace")
        if not DOTTED.fullmatch(name):
            continue
        local = [c for c in outline.by_name.get(name, ()) if c.kind in CLASS_LIKE]
        if len(local) == 1:
            for cand in outline.by_name.get(callee, ()):
                if cand.parent == local[0].index:
                    return cand.index, ""
            continue
        head = name.split(".", 1)[0]
        if head in import_hints:
            return None, f"{import_hints[head]}{name[len(head) :]}.{callee}"
    return None, ""


# The patterns call resolution reads types with, each finding every name of a
# scope at once (one pass per scope, not one compiled pattern per call).
_IDENT = r"[^\W\d]\w*"
_INDENTED_IMPORT = re.compile(r"(?m)^\s+(?:from\s+\S+\s+)?import\s([^\n]*)")
_WORD_RUN = re.compile(r"\w+")
_ANNOTATION = r"\s*:\s*[\"']?(?:Optional\[)?([A-Za-z_][\w.]*)"
_CONSTRUCTED = r"\s*(?::[^=\n]+)?=\s*([A-Z][\w.]*)\("
# The type is read in a lookahead, so that a match consumes no more than the name
# and never hides the next name from the scan.
_PARAMETER_TYPE = re.compile(rf"(?:^|[(,\s])({_IDENT})(?={_ANNOTATION})")
_LOCAL_CONSTRUCTED = re.compile(rf"(?m)^\s*({_IDENT})(?={_CONSTRUCTED})")
_FIELD_TYPES = (  # in order of preference
    re.compile(rf"self\.({_IDENT})(?={_CONSTRUCTED})"),
    re.compile(rf"self\.({_IDENT})(?={_ANNOTATION})"),
    re.compile(rf"(?m)^\s+({_IDENT})(?={_ANNOTATION})"),
)


def _text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _first_types(pattern: re.Pattern[str], text: str) -> dict[str, str]:
    """name -> the type of its first match of `pattern` in `text`."""
    found: dict[str, str] = {}
    for match in pattern.finditer(text):
        found.setdefault(match.group(1), match.group(2))
    return found


def _receiver_type(receiver: str, caller: int, outline: Outline, src: bytes) -> str | None:
    """The class a receiver visibly holds: for a variable of the calling function,
    a parameter's annotation (`catalog: Catalog`, `"Catalog"`, `Optional[Catalog]`)
    or an assignment of a constructor call (`catalog = Catalog(...)`); for
    `self.field`, the field's constructor call or annotation in its class
    (`self.lock = Lock()`, `self.lock: Lock`, `lock: Lock` in the class body)."""
    if receiver.startswith("self.") and receiver[5:].isidentifier():
        return _field_type(receiver[5:], caller, outline, src)
    if not caller or not receiver.isidentifier():
        return None
    key = ("locals", caller)
    facts = outline.scope_facts.get(key)
    if facts is None:
        facts = ({}, {})
        definition = tree_definition(caller, outline)
        if definition is not None:
            parameters = definition.child_by_field_name("parameters")
            body = definition.child_by_field_name("body")
            facts = (
                {} if parameters is None else _first_types(_PARAMETER_TYPE, _text(parameters, src)),
                {} if body is None else _first_types(_LOCAL_CONSTRUCTED, _text(body, src)),
            )
        outline.scope_facts[key] = facts
    annotated, constructed = facts
    return annotated.get(receiver) or constructed.get(receiver)


def _field_type(field_name: str, caller: int, outline: Outline, src: bytes) -> str | None:
    klass = enclosing_class(caller, outline.nodes)
    if klass is None:
        return None
    key = ("fields", klass)
    facts = outline.scope_facts.get(key)
    if facts is None:
        definition = tree_definition(klass, outline)
        text = "" if definition is None else _text(definition, src)
        facts = [_first_types(pattern, text) for pattern in _FIELD_TYPES]
        outline.scope_facts[key] = facts
    for types in facts:
        if field_name in types:
            return str(types[field_name])
    return None
