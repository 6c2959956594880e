"""Python calls that follow the language: scopes, imports (relative ones made
absolute), the caller's class and its bases, receivers whose class is visible,
builtins.

What a call cannot be told from this file alone it leaves to the writer as a
hint (store/python_hints.py resolves them across files):

- `pkg.mod.f` (an imported name, a module-qualified call): the definition of
  that qualified name, following a package's re-exports (`from .a import f` in
  `pkg/__init__.py`);
- `*py::pkg.mod.Klass.f` (a receiver whose class is known: `self`, an
  annotation, a constructor): the class's method, else its bases'; never a
  function of that name elsewhere;
- `*py::pkg.mod.make().f`: the method `f` of the class `make`'s return
  annotation names;
- `*method::f` (a receiver the file does not type): the one method named `f`
  in the project, never a module-level function;
- `*object::f` (a method of Python's own types on an untyped receiver:
  `.items()`, `.append()`, `.split()`) and `*global::f` (a bare call of a name
  neither defined nor imported here: a parameter, a local): never resolved."""

from __future__ import annotations

import re
import sys
from typing import NamedTuple

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
from codesift.parsing.python_facts import (
    MAPPING_VALUE_METHODS,
    SEQUENCE_ELEMENT_METHODS,
    ScopeType,
    element_type,
    field_type,
    imported_inside,
    receiver_type,
    star_imports,
    text_of,
)

__all__ = [
    "PYTHON_BUILTINS",
    "PyCallee",
    "absolute_import",
    "python_callee",
    "python_receiver",
]

# Names Python calls without an import (`len`, `next`, `set`, `open`...): a bare call
# of one that this file neither defines nor imports is the builtin, never a project
# definition of the same name (its hint says so, and resolution leaves it alone).
PYTHON_BUILTINS = frozenset(
    name for name in dir(__import__("builtins")) if not name.startswith("__")
)
# Methods of Python's own containers and strings: on a receiver whose type the
# file does not show, `.items()`, `.append()`, `.split()` are those types'.
_OBJECT_METHODS = frozenset(
    name
    for kind in (dict, list, str, set, frozenset, tuple, bytes, bytearray)
    for name in dir(kind)
    if not name.startswith("_")
)
_STDLIB = frozenset(sys.stdlib_module_names)
# A type as call resolution reads it: `Klass`, `mod.Klass`, `make`, `make().open`.
_TYPE_TEXT = re.compile(r"[A-Za-z_]\w*(?:(?:\(\))?\.[A-Za-z_]\w*)*")


class PyCallee(NamedTuple):
    dst: int | None
    hint: str
    # scope or type when dst is set; type for a hint that walks the caller's own
    # class and bases (`self.f()`, `super().f()`), which the writer resolves
    confidence: str


_NONE = PyCallee(None, "", "")


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
    receiver = _receiver_node(name_node)
    if receiver is None:
        parent = name_node.parent
        return "" if parent is not None and parent.type == "attribute" else None
    return text_of(receiver, src)


def _receiver_node(name_node: Node) -> Node | None:
    parent = name_node.parent
    if parent is None or parent.type != "attribute":
        return None
    return parent.child_by_field_name("object")


class _Call(NamedTuple):
    """One call being resolved: its name, the calling node and the file."""

    callee: str
    caller: int
    outline: Outline
    hints: dict[str, str]
    src: bytes
    at: int  # the byte offset of the call's name


def python_callee(
    callee: str,
    caller: int,
    callee_node: Node,
    outline: Outline,
    import_hints: dict[str, str],
    src: bytes,
) -> PyCallee:
    """The node in this file a Python call reaches (with how it was found), or
    the hint for resolving it elsewhere (the module docstring), following the
    language:

    - `f()` reaches a function or class in scope (never a method): one defined here
      (the innermost scope first, the last definition of a name), else an imported
      name, else a builtin;
    - `self.f()` / `cls.f()` reach the caller's class's own method, else a base's;
      `super().f()` a base's; `Klass.f()` that class's method;
    - `obj.f()` whose class is visible (an annotation, a constructor assigned to
      it, a field set in the class, a class attribute set to a name, a called
      function's return annotation) reaches that class's method; `self.field()`
      calls what the field holds (`self.Validator = create(...)`), a method's
      result otherwise;
    - `mod.f()` / `a.b.f()` on an imported module or name reach that module's `f`
      (`json.dumps` never resolves to a project method `dumps`);
    - a call on any other object stays a guess by name among methods."""
    call = _Call(callee, caller, outline, import_hints, src, callee_node.start_byte)
    receiver = python_receiver(callee_node, src)
    if receiver is not None and receiver not in _OWN_RECEIVERS:
        return _object_callee(call, receiver, _receiver_node(callee_node))
    # `f()`, `self.f()`, `super().f()`: the same answer wherever the caller makes it.
    known = outline.scope_facts.setdefault(("callees", caller), {})
    found: PyCallee | None = known.get((callee, receiver))
    if found is None:
        if receiver is None:
            found = _bare_callee(call)
        elif receiver == "super()":
            found = _super_callee(call)
        else:
            found = _self_callee(call)
        known[(callee, receiver)] = found
    return found


_OWN_RECEIVERS = frozenset({"self", "cls", "super()"})


def _bare_callee(call: _Call) -> PyCallee:
    callee, caller, outline, hints = call.callee, call.caller, call.outline, call.hints
    if callee in hints and imported_inside(callee, caller, outline, call.src):
        return PyCallee(None, hints[callee], "")  # a function-level import shadows
    found = _in_scope(callee, caller, outline)
    if found is not None:
        return PyCallee(found, "", "scope")
    if callee in hints:
        return PyCallee(None, hints[callee], "")
    if callee in PYTHON_BUILTINS:
        return PyCallee(None, f"builtins.{callee}", "")
    if star_imports(outline, call.src):
        return _NONE  # it may come from `from x import *`: a guess by name
    # Neither defined nor imported: a parameter, a local, a global set at run time.
    return PyCallee(None, f"*global::{callee}", "")


def _in_scope(name: str, caller: int, outline: Outline) -> int | None:
    """A function or class `name` visible from `caller`: the innermost enclosing
    scope that defines it (a closure; the caller itself: recursion), then module
    level; of several definitions in one scope, the last (it rebinds the name)."""
    scoped = [c for c in outline.by_name.get(name, ()) if c.kind != "method"]
    if not scoped:
        return None
    for owner in [caller, *ancestors(caller, outline.nodes)]:
        mine = [c.index for c in scoped if c.parent == owner]
        if mine:
            return mine[-1]
    top = [c.index for c in scoped if c.parent == 0]
    return top[-1] if top else None


def _self_callee(call: _Call) -> PyCallee:
    klass = enclosing_class(call.caller, call.outline.nodes)
    if klass is None:
        return PyCallee(None, f"*method::{call.callee}", "")
    return _method_of_class(klass, call, skip=call.caller)


def _method_of_class(klass: int, call: _Call, *, skip: int = -1) -> PyCallee:
    """`call.callee` as a method of class `klass` (this file's): its own, else a
    base's (the writer walks the bases across files)."""
    own = [c.index for c in call.outline.by_name.get(call.callee, ()) if c.parent == klass]
    others = [index for index in own if index != skip]
    if others:
        return PyCallee(others[-1], "", "type")
    if own:
        return PyCallee(own[-1], "", "type")  # recursion through self
    # Unresolved here, but by the class's own bases: as sure as a type.
    return PyCallee(None, f"*py::{call.outline.nodes[klass].qualified_name}.{call.callee}", "type")


def _super_callee(call: _Call) -> PyCallee:
    """`super().f()`: the first base of the caller's class, in source order, that
    is defined here or imported (the writer walks on from it)."""
    klass = enclosing_class(call.caller, call.outline.nodes)
    for base in _bases(klass, call):
        local = _local_class(base, call.outline)
        if local is not None:
            return _method_of_class(local, call)
        qualified = _imported(base, call.hints)
        if qualified:
            return PyCallee(None, f"*py::{qualified}.{call.callee}", "type")
    # No base of the project's: `object`'s, a builtin's (`Exception`) or unknown.
    return PyCallee(None, f"builtins.super.{call.callee}", "")


def _bases(klass: int | None, call: _Call) -> list[str]:
    definition = None if klass is None else tree_definition(klass, call.outline)
    bases = None if definition is None else definition.child_by_field_name("superclasses")
    if bases is None:
        return []
    names = []
    for base in bases.named_children:
        if base.type == "subscript":  # `AsyncFile[AnyStr]`: the generic class itself
            base = base.child_by_field_name("value") or base
        names.append(text_of(base, call.src))
    return [name for name in names if DOTTED.fullmatch(name)]


def _local_class(name: str, outline: Outline) -> int | None:
    classes = [c for c in outline.by_name.get(name, ()) if c.kind in CLASS_LIKE]
    return classes[-1].index if classes else None


def _imported(dotted: str, hints: dict[str, str]) -> str:
    """The qualified name an imported dotted name stands for (`mod.Klass` with
    `from pkg import mod` -> `pkg.mod.Klass`), or ''."""
    head = dotted.split(".", 1)[0]
    if head not in hints:
        return ""
    return f"{hints[head]}{dotted[len(head) :]}"


def _object_callee(call: _Call, receiver: str, receiver_node: Node | None) -> PyCallee:
    """A call on anything but `self`, `cls` and `super()`."""
    typed = _typed_receiver(call, receiver, receiver_node)
    if typed is not None:
        return typed
    if DOTTED.fullmatch(receiver):
        head = receiver.split(".", 1)[0]
        local = _local_class(receiver, call.outline)
        if local is not None:  # Klass.f()
            return _method_of_class(local, call)
        qualified = _imported(receiver, call.hints)
        if qualified:  # mod.f(), a.b.f() through an import
            return PyCallee(None, f"{qualified}.{call.callee}", "")
        if head in _STDLIB and not call.outline.by_name.get(head):
            return PyCallee(None, f"{receiver}.{call.callee}", "")  # os.path.join
    if call.callee in _OBJECT_METHODS and not call.outline.by_name.get(call.callee):
        return PyCallee(None, f"*object::{call.callee}", "")
    return PyCallee(None, f"*method::{call.callee}", "")


def _typed_receiver(call: _Call, receiver: str, receiver_node: Node | None) -> PyCallee | None:
    """A receiver whose class the file shows: a variable's or field's type, or a
    call (`make().f()`, `Klass(...).f()`) whose result's class is known."""
    if receiver_node is not None and receiver_node.type == "call":
        function = receiver_node.child_by_field_name("function")
        typed: ScopeType | None = (
            None if function is None else ScopeType(text_of(function, call.src), True)
        )
    else:
        typed = receiver_type(receiver, call.caller, call.outline, call.src, call.at)
    if typed is None or not _TYPE_TEXT.fullmatch(typed.text):
        return None
    if not typed.called and typed.text in PYTHON_BUILTINS:  # `items: dict` ... `items.get()`
        return PyCallee(None, f"builtins.{typed.text}.{call.callee}", "")
    local, qualified = _qualified_type(call, typed)
    if local is not None:
        return _method_of_class(local, call)
    return PyCallee(None, f"*py::{qualified}.{call.callee}", "") if qualified else None


def _qualified_type(call: _Call, typed: ScopeType, depth: int = 0) -> tuple[int | None, str]:
    """The class of this file a type names (its node), or the path the writer
    walks to it (`pkg.mod.Klass`, `pkg.mod.make()`: what `make` returns)."""
    suffix = "()" if typed.called else ""
    container, _, method = typed.text.rpartition(".")
    one = method in SEQUENCE_ELEMENT_METHODS or method in MAPPING_VALUE_METHODS
    if typed.called and one and depth < 3:  # `self.waiters.pop()`, `self.table.get()`
        element = element_type(container, method, call.caller, call.outline, call.src)
        if element is not None:
            return _qualified_type(call, element, depth + 1)
    if "()." in typed.text and depth < 3:  # `make().open()`: what `open` returns
        first, _, rest = typed.text.partition("().")
        path = _path_of(call, _qualified_type(call, ScopeType(first, True), depth + 1))
        return None, f"{path}.{rest}{suffix}" if path else ""
    head, _, rest = typed.text.partition(".")
    if head in ("self", "cls"):
        return None, _member_path(call, rest, suffix, depth)
    nodes = call.outline.nodes
    found = _in_scope(head, call.caller, call.outline) if typed.called else None
    local = _local_class(head, call.outline) if found is None else found
    if local is not None and nodes[local].kind not in CLASS_LIKE:  # a function here
        return None, f"{nodes[local].qualified_name}(){'.' + rest + suffix if rest else ''}"
    if local is not None:
        return (local, "") if not rest else (None, f"{nodes[local].qualified_name}.{rest}{suffix}")
    qualified = _imported(typed.text, call.hints)
    if qualified:
        return None, f"{qualified}{suffix}"
    if depth < 3 and head.isidentifier():
        return None, _through_variable(call, typed, depth)
    return None, ""


def _through_variable(call: _Call, typed: ScopeType, depth: int) -> str:
    """The path of a type written through a variable of the scope (`pattern.match`
    with `pattern = re.compile()`)."""
    head, _, rest = typed.text.partition(".")
    inner = receiver_type(head, call.caller, call.outline, call.src, call.at)
    path = "" if inner is None else _path_of(call, _qualified_type(call, inner, depth + 1))
    if path and rest:
        return f"{path}.{rest}{'()' if typed.called else ''}"
    if path.endswith("()") and typed.called and not rest:
        # `Validator = create(...)` ... `Validator(schema).f()`: calling what a
        # function returned (a class) makes that class's instance.
        return path
    return ""


def _path_of(call: _Call, found: tuple[int | None, str]) -> str:
    index, path = found
    return call.outline.nodes[index].qualified_name if index is not None else path


def _member_path(call: _Call, rest: str, suffix: str, depth: int) -> str:
    """`self.field.f`, `self.prop.f`, `self.make()`: the path from the caller's
    class (a field's type, a method's return)."""
    klass = enclosing_class(call.caller, call.outline.nodes)
    if klass is None or not rest or depth >= 3:
        return ""
    first, _, more = rest.partition(".")
    field = field_type(first, call.caller, call.outline, call.src)
    if not more and (field is None or field.text.startswith("self.")):
        # a method or a property (what it returns), else a base's attribute
        return f"{call.outline.nodes[klass].qualified_name}.{first}{suffix}"
    if not more and field is not None:  # `self.Validator(...)`: what the field holds
        path = _path_of(call, _qualified_type(call, field, depth + 1))
        return f"{path}{suffix}" if path else ""
    path = "" if field is None else _path_of(call, _qualified_type(call, field, depth + 1))
    return f"{path}.{more}{suffix}" if path else ""
