"""JavaScript and TypeScript calls that follow the language.

- `f()` / `new X()`: a function or class in scope in this file (the innermost
  enclosing scope first); else an imported name, through its ES module import
  (named, aliased `{a as b}`, default) or `require`: a path hint
  (`src/util/format::format`) that the writer resolves in the imported file; else,
  in a module (a file that imports), a global (`setTimeout`, a parameter
  called as a function), never linked to a project definition by its name;
- `this.f()` reaches the caller's class's method, else a base's (`extends`),
  in this file or through the base's import; `super.f()` a base's;
- `X.f()` on a class of this file or an imported one reaches its static method;
  `ns.f()` on `import * as ns` reaches the module's `f`;
- `obj.f()` / `this.obj.f()` whose class is visible (a parameter or variable
  annotation `p: Parser`, `const p = new Parser()`, a field's annotation or the
  constructor's `this.p = new Parser()`, a parameter property
  `constructor(private p: Parser)`) reaches that class's method;
- a receiver named after a class (`subscriber.next()`, its type inferred from a
  callback's signature): that class's method when the project has one such
  class with it, a guess (`~::Subscriber.next`); else a guess by name (its
  confidence says so).

Hints: `<path>::<qualified name>` where path is the imported module's path from
the workspace root without its extension (store/writer.py tries the script
extensions and `/index`). A hint starting with `*` is never resolved by name
alone (store/writer.py).
"""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

from tree_sitter import Node

from codesift.parsing.outline import CLASS_LIKE, Import, Outline, ancestors, tree_definition

__all__ = ["SCRIPT_LANGUAGES", "ScriptImports", "script_callee", "script_imports"]

SCRIPT_LANGUAGES = frozenset({"javascript", "typescript", "tsx", "jsx"})
_SCRIPT_EXTENSIONS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
_IDENT = r"[A-Za-z_$][\w$]*"
# The runtime's global objects (`Math.max()` is not the project's `max`).
_GLOBAL_OBJECTS = frozenset(
    "Array ArrayBuffer Atomics BigInt Boolean Buffer DataView Date Error Intl JSON Map Math"
    " Number Object Promise Proxy Reflect RegExp Set String Symbol URL WeakMap WeakRef WeakSet"
    " console document globalThis localStorage location navigator performance process"
    " window".split()
)
# Methods of the runtime's own objects (functions, arrays, strings, promises, events).
_BUILTIN_METHODS = frozenset(
    "apply bind call charAt charCodeAt concat endsWith every exec fill filter find findIndex"
    " flat flatMap forEach hasOwnProperty includes indexOf join lastIndexOf localeCompare map match"
    " padEnd padStart pop push reduce reduceRight replace reverse shift slice some sort splice"
    " split startsWith substring test toFixed toLowerCase toString toUpperCase trim unshift"
    " valueOf then catch finally addEventListener removeEventListener dispatchEvent"
    " preventDefault stopPropagation".split()
)
# What a receiver is: `this`, `super`, a name, or `this.name`.
_THIS_FIELD = re.compile(rf"this\.(#?{_IDENT})")
_IDENT_RE = re.compile(_IDENT)
_EXTENDS = re.compile(rf"\bextends\s+({_IDENT}(?:\.{_IDENT})*)")


class Callee(NamedTuple):
    dst: int | None
    hint: str
    confidence: str  # scope, type or guess when dst is set


class _Bound(NamedTuple):
    base: str  # the module's path from the workspace root, without extension
    name: str  # the name imported ('' for a default or namespace import)


class ScriptImports(NamedTuple):
    """Local names bound by the file's imports of relative modules, the hints of
    the names it imports from packages, and whether the file is a module
    (imports anything: then a name neither defined nor imported is a global)."""

    bound: dict[str, _Bound]
    packages: dict[str, str]
    is_module: bool
    base: str = ""  # this file's own module path, without extension


def _module_base(module: str, rel_path: str) -> str | None:
    """`./util/format.js` imported from `src/a.ts` -> `src/util/format`."""
    if not module.startswith("."):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel_path), module))
    if joined.startswith(".."):
        return None
    for ext in _SCRIPT_EXTENSIONS:
        if joined.endswith(ext):
            return joined[: -len(ext)]
    return joined


def script_imports(
    imports: list[Import], import_hints: dict[str, str], rel_path: str
) -> ScriptImports:
    bound: dict[str, _Bound] = {}
    for item in imports:
        base = _module_base(item.module, rel_path)
        local = item.alias or item.name
        if base is None or not local or local in bound:
            continue
        bound[local] = _Bound(base, item.name)
    packages = {name: hint for name, hint in import_hints.items() if name not in bound}
    own = _module_base(f"./{posixpath.basename(rel_path)}", rel_path) or ""
    return ScriptImports(bound, packages, bool(imports), own)


def _receiver(name_node: Node, src: bytes) -> str | None:
    """None for a bare call or `new X()`; else the receiver's source text."""
    parent = name_node.parent
    if parent is None or parent.type != "member_expression":
        return None
    obj = parent.child_by_field_name("object")
    if obj is None:
        return ""
    return src[obj.start_byte : obj.end_byte].decode("utf-8", "replace")


def _class_methods(klass: int, callee: str, outline: Outline) -> int | None:
    """The class's method `callee` (of overloads, the implementation: the last)."""
    found = [
        c.index for c in outline.by_name.get(callee, ()) if c.parent == klass and c.kind != "class"
    ]
    return found[-1] if found else None


def _local_class(name: str, outline: Outline) -> int | None:
    classes = [c for c in outline.by_name.get(name, ()) if c.kind in CLASS_LIKE]
    return classes[0].index if len(classes) == 1 else None


def _enclosing_class(index: int, outline: Outline) -> int | None:
    for owner in [index, *ancestors(index, outline.nodes)]:
        if owner and outline.nodes[owner].kind == "class":
            return owner
    return None


def _bases(klass: int, outline: Outline, src: bytes) -> list[str]:
    """The class's `extends` base, as written (`Base`, `ns.Base`)."""
    definition = tree_definition(klass, outline)
    if definition is None:
        return []
    if definition.type not in ("class_declaration", "abstract_class_declaration", "class"):
        for child in definition.named_children:  # export / lexical declarations around it
            if child.type in ("class_declaration", "abstract_class_declaration", "class"):
                definition = child
                break
    for child in definition.named_children:
        if child.type == "class_heritage":
            text = src[child.start_byte : child.end_byte].decode("utf-8", "replace")
            match = _EXTENDS.search(text)
            return [match.group(1)] if match else []
    return []


def _method_of_type(
    type_name: str,
    callee: str,
    outline: Outline,
    imports: ScriptImports,
    src: bytes,
    seen: frozenset[int] = frozenset(),
) -> tuple[int | None, str]:
    """`callee` as a method of the class `type_name` (or of its bases): the node
    in this file, or a hint into the class's module."""
    head, _, rest = type_name.partition(".")
    if not rest:
        klass = _local_class(head, outline)
        if klass is not None and klass not in seen:
            found = _class_methods(klass, callee, outline)
            if found is not None:
                return found, ""
            for base in _bases(klass, outline, src):
                dst, hint = _method_of_type(base, callee, outline, imports, src, seen | {klass})
                if dst is not None or hint:
                    return dst, hint
            return None, ""
    bound = imports.bound.get(head)
    if bound is None:
        return None, ""
    if rest:  # ns.Klass: a namespace import's class
        return None, f"{bound.base}::{rest}.{callee}" if bound.name == "" else ""
    return None, f"{bound.base}::{bound.name or head}.{callee}"


# Declarations a scope's text shows, each pattern finding every name at once (one
# pass per scope, not a compiled pattern per call): `name: Type` (a parameter,
# variable, field or parameter property) and `name = new Type(`; for members,
# `this.name` too.
_TYPE_NAME = rf"{_IDENT}(?:\.{_IDENT})?"
_ANNOTATED = rf"\s*[!?]?\s*:\s*(?:readonly\s+)?({_TYPE_NAME})"
_CONSTRUCTED = rf"\s*(?::[^=;\n]+)?=\s*new\s+({_TYPE_NAME})"
_LOCAL_LEAD = r"(?<![\w$.])"
_MEMBER_LEAD = r"(?:this\.|(?<![\w$.]))"
_DECLARED = {
    False: (
        re.compile(rf"{_LOCAL_LEAD}(#?{_IDENT}){_ANNOTATED}"),
        re.compile(rf"{_LOCAL_LEAD}(#?{_IDENT}){_CONSTRUCTED}"),
    ),
    True: (
        re.compile(rf"{_MEMBER_LEAD}(#?{_IDENT}){_ANNOTATED}"),
        re.compile(rf"{_MEMBER_LEAD}(#?{_IDENT}){_CONSTRUCTED}"),
    ),
}


def _declared(owner: int, outline: Outline, src: bytes, *, member: bool) -> list[dict[str, str]]:
    """name -> the type of its first declaration of each kind in node `owner`."""
    key = ("script-members" if member else "script-locals", owner)
    facts = outline.scope_facts.get(key)
    if facts is None:
        definition = tree_definition(owner, outline)
        text = "" if definition is None else _text(definition, src)
        facts = []
        for pattern in _DECLARED[member]:
            found: dict[str, str] = {}
            for match in pattern.finditer(text):
                found.setdefault(match.group(1), match.group(2))
            facts.append(found)
        outline.scope_facts[key] = facts
    return list(facts)


def _visible_type(receiver: str, caller: int, outline: Outline, src: bytes) -> str | None:
    """The class a variable or `this.field` visibly holds (a capitalised name): a
    variable declared in the caller or in a function around it (a closure's)."""
    field = _THIS_FIELD.fullmatch(receiver)
    if field is not None:
        klass = _enclosing_class(caller, outline)
        owners = [] if klass is None else [klass]
        name = field.group(1)
    elif _IDENT_RE.fullmatch(receiver) is not None:
        owners = [o for o in [caller, *ancestors(caller, outline.nodes)] if o]
        name = receiver
    else:
        return None
    for owner in owners:
        if field is None and owner != caller and outline.nodes[owner].kind == "class":
            break  # a class's members are no variables of its methods
        for found in _declared(owner, outline, src, member=field is not None):
            typed = found.get(name)
            if typed and typed[0].isupper():
                return typed
    return None


def _text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def script_callee(
    callee: str,
    caller: int,
    callee_node: Node,
    outline: Outline,
    imports: ScriptImports,
    src: bytes,
) -> Callee:
    receiver = _receiver(callee_node, src)
    if receiver is None:
        return _bare_callee(callee, caller, outline, imports)
    if receiver in ("this", "super"):
        return _this_callee(receiver, callee, caller, outline, imports, src)
    if receiver in _GLOBAL_OBJECTS and receiver not in imports.bound:
        return Callee(None, f"*global::{receiver}.{callee}", "")
    bound = imports.bound.get(receiver)
    if bound is not None and bound.name == "":  # ns.f() on `import * as ns` (or a default)
        return Callee(None, f"{bound.base}::{callee}", "")
    typed = receiver if _local_class(receiver, outline) is not None or bound else None
    typed = typed or _visible_type(receiver, caller, outline, src)
    if typed is not None:
        found = _typed_callee(typed, callee, outline, imports, src)
        if found is not None:
            return found
    untyped = _untyped_callee(receiver, callee, outline, imports)
    declared = _declared_by_signature(callee_node, caller, outline, imports)
    if not declared:
        return untyped
    # The signature first; else the class the receiver is named after (a guess).
    if untyped.dst is not None:
        fallback = f"|~::{outline.nodes[untyped.dst].qualified_name}"
    else:
        fallback = f"|{untyped.hint}" if untyped.hint.startswith("~::") else ""
    return Callee(None, f"{declared}.{callee}{fallback}", "")


def _bare_callee(callee: str, caller: int, outline: Outline, imports: ScriptImports) -> Callee:
    """`f()` / `new X()`: in scope in this file, else imported, else a global."""
    found = _in_scope(callee, caller, outline)
    if found is not None:
        return Callee(found, "", "scope")
    bound = imports.bound.get(callee)
    if bound is not None:
        return Callee(None, f"{bound.base}::{bound.name or callee}", "")
    if callee in imports.packages:
        return Callee(None, imports.packages[callee], "")
    if imports.is_module:
        return Callee(None, f"*global::{callee}", "")
    return Callee(None, "", "")


def _in_scope(name: str, caller: int, outline: Outline) -> int | None:
    """A function or class `name` of the innermost scope around `caller` that
    defines one (of overloads, the implementation: the last)."""
    scoped = [c for c in outline.by_name.get(name, ()) if c.kind != "method"]
    for owner in [caller, *ancestors(caller, outline.nodes)]:
        mine = [cand.index for cand in scoped if cand.parent == owner]
        if mine:
            return mine[-1]
    return None


def _this_callee(
    receiver: str, callee: str, caller: int, outline: Outline, imports: ScriptImports, src: bytes
) -> Callee:
    """`this.f()`: the caller's class's method, else a base's; `super.f()` a base's."""
    klass = _enclosing_class(caller, outline)
    if klass is None:
        return Callee(None, "", "")
    if receiver == "this":
        found = _class_methods(klass, callee, outline)
        if found is not None:
            return Callee(found, "", "type")
    for base in _bases(klass, outline, src):
        dst, hint = _method_of_type(base, callee, outline, imports, src, frozenset({klass}))
        if dst is not None or hint:
            return Callee(dst, hint, "type" if dst is not None else "")
    return Callee(None, "", "")


def _typed_callee(
    typed: str, callee: str, outline: Outline, imports: ScriptImports, src: bytes
) -> Callee | None:
    dst, hint = _method_of_type(typed, callee, outline, imports, src)
    if dst is not None or hint:
        return Callee(dst, hint, "type" if dst is not None else "")
    head = typed.split(".", 1)[0]
    if _local_class(head, outline) is None and head not in imports.bound:
        # A type neither defined here nor imported from the project: the
        # runtime's (`Map`, `Set`, `Promise`) or a package's.
        return Callee(None, f"*global::{typed}.{callee}", "")
    return None


def _untyped_callee(receiver: str, callee: str, outline: Outline, imports: ScriptImports) -> Callee:
    if callee in _BUILTIN_METHODS and not outline.by_name.get(callee):
        # `fn.call(...)`, `items.push(...)` on a receiver of unknown type: the
        # runtime's own, not a project method that happens to share the name.
        return Callee(None, f"*global::{callee}", "")
    if _IDENT_RE.fullmatch(receiver) and receiver[0].islower() and receiver not in imports.bound:
        # `subscriber.next()` with `subscriber` of a type the code does not show (a
        # callback's parameter): the class its name names, if the project has one
        # such class with that method; a guess (store/path_hints.py).
        named = f"{receiver[0].upper()}{receiver[1:]}"
        klass = _local_class(named, outline)
        found = None if klass is None else _class_methods(klass, callee, outline)
        if found is not None:
            return Callee(found, "", "guess")
        return Callee(None, f"~::{named}.{callee}", "")
    return Callee(None, "", "")


# Functions whose parameters are a scope's own (a callback's parameters).
_FUNCTION_TYPES = frozenset({"arrow_function", "function_expression", "function"})


def _declared_by_signature(
    callee_node: Node, caller: int, outline: Outline, imports: ScriptImports
) -> str:
    """A receiver whose type a function's declared signature gives (the writer
    reads it, store/script_hints.py): a call's result, `make().f()`
    (`*ts::<module>::make()`), or an untyped parameter of a callback passed to a
    function, `run((a, b) => b.f())` (`*ts::<module>::run(k,j)`: parameter j of
    argument k)."""
    member = callee_node.parent
    receiver = None if member is None else member.child_by_field_name("object")
    if receiver is None:
        return ""
    if receiver.type == "call_expression":
        function = receiver.child_by_field_name("function")
        place = _function_place(function, caller, outline, imports)
        return f"{place}()" if place else ""
    if receiver.type != "identifier":
        return ""
    name = receiver.text.decode("utf-8", "replace") if receiver.text else ""
    walker = receiver.parent
    while walker is not None:
        if walker.type in _FUNCTION_TYPES:
            position = _parameter_position(walker, name)
            if position is not None:
                return _callback_of(walker, position, caller, outline, imports)
        walker = walker.parent
    return ""


def _parameter_position(function: Node, name: str) -> int | None:
    """The index of `function`'s untyped parameter `name` (None: it has none)."""
    single = function.child_by_field_name("parameter")
    if single is not None:
        return 0 if single.text == name.encode() else None
    parameters = function.child_by_field_name("parameters")
    if parameters is None:
        return None
    for index, parameter in enumerate(parameters.named_children):
        pattern = parameter.child_by_field_name("pattern") or parameter
        if pattern.type == "identifier" and pattern.text == name.encode():
            return None if parameter.child_by_field_name("type") is not None else index
    return None


def _callback_of(
    function: Node, position: int, caller: int, outline: Outline, imports: ScriptImports
) -> str:
    arguments = function.parent
    call = None if arguments is None else arguments.parent
    if arguments is None or call is None or arguments.type != "arguments":
        return ""
    if call.type != "call_expression":
        return ""
    index = next((i for i, a in enumerate(arguments.named_children) if a == function), -1)
    place = _function_place(call.child_by_field_name("function"), caller, outline, imports)
    return f"{place}({index},{position})" if place and index >= 0 else ""


def _function_place(
    function: Node | None, caller: int, outline: Outline, imports: ScriptImports
) -> str:
    """`*ts::<module>::<name>` for a called function imported or of this file."""
    if function is None or function.type != "identifier" or not function.text:
        return ""
    name = function.text.decode("utf-8", "replace")
    bound = imports.bound.get(name)
    if bound is not None and bound.name:
        return f"*ts::{bound.base}::{bound.name}"
    found = _in_scope(name, caller, outline)
    if found is not None and outline.nodes[found].parent == 0 and imports.base:
        return f"*ts::{imports.base}::{outline.nodes[found].qualified_name}"
    return ""
