"""Go calls that follow the language.

- `f()`: a function of this file; else one of the package's other files (a hint
  into the file's folder: `internal/cache/::cache.f`); Go's builtins (`len`,
  `append`, `panic`...) are never linked to a project definition;
- `pkg.F()` through the file's imports: a hint `*<import path>/::pkg.F` that the
  writer resolves in the folder the import path names (its last segments), and
  never by the name alone (`http.Error` is not the project's `Error`);
- `s.f()` on the method's receiver (`func (s *Server) ...`) reaches the
  receiver type's method, here or in the package's other files;
- `x.f()` whose type is visible (a parameter `x *Server`, `x pkg.Client`, a
  local `x := &Server{...}` or `var x Server`) reaches that type's method, in
  the package or through the import; an imported type's method outside the
  project is never linked by name (`r.Context()` on an `*http.Request`);
- any other receiver stays a guess by name.
"""

from __future__ import annotations

import posixpath
import re

from tree_sitter import Node

from codesift.parsing.outline import CLASS_LIKE, Import, Outline, tree_definition

__all__ = ["GO_BUILTINS", "go_callee", "go_imports"]

GO_BUILTINS = frozenset(
    "append cap clear close complex copy delete imag len make max min new panic print"
    " println real recover".split()
)
_IDENT = r"[A-Za-z_]\w*"
_TYPE = rf"\*?(?:\[\])?({_IDENT}(?:\.{_IDENT})?)"


def go_imports(imports: list[Import]) -> dict[str, tuple[str, str]]:
    """Local package name -> (import path, the package's own name): `nh
    "net/http"` binds nh to net/http's `http`; a bare import binds its last
    segment, without a `/vN` major version."""
    bound: dict[str, tuple[str, str]] = {}
    for item in imports:
        path = item.module
        if not path or item.alias in ("_", "."):
            continue
        segments = path.split("/")
        last = segments[-1]
        if re.fullmatch(r"v\d+", last) and len(segments) > 1:
            last = segments[-2]
        package = last.removeprefix("go-").replace("-", "").replace(".", "")
        bound.setdefault(item.alias or package, (path, package))
    return bound


def _folder(rel_path: str) -> str:
    folder = posixpath.dirname(rel_path)
    return f"{folder}/" if folder else "./"


def _receiver(name_node: Node, src: bytes) -> str | None:
    parent = name_node.parent
    if parent is None or parent.type != "selector_expression":
        return None
    operand = parent.child_by_field_name("operand")
    if operand is None:
        return ""
    return src[operand.start_byte : operand.end_byte].decode("utf-8", "replace")


def _method_here(type_name: str, callee: str, outline: Outline) -> int | None:
    types = [c for c in outline.by_name.get(type_name, ()) if c.kind in CLASS_LIKE]
    if len(types) != 1:
        return None
    for cand in outline.by_name.get(callee, ()):
        if cand.parent == types[0].index:
            return cand.index
    return None


# Declarations a scope's text shows, each pattern finding every name at once (one
# pass per scope, not a compiled pattern per call).
_TYPE_NAME = rf"{_IDENT}(?:\.{_IDENT})?"
_NAMES = rf"((?:{_IDENT}[ \t]*,[ \t]*)*{_IDENT})"
_PARAMETERS = re.compile(rf"[(,]\s*{_NAMES}[ \t]+\*?(?:\[\])?({_TYPE_NAME})")
_COMPOSITE = re.compile(rf"\b({_IDENT})\s*:=\s*&?({_TYPE_NAME})\s*{{")
_VAR = re.compile(rf"\bvar\s+({_IDENT})\s+\*?(?:\[\])?({_TYPE_NAME})")
_FIELDS = re.compile(rf"(?m)^[ \t]*{_NAMES}[ \t]+\*?(?:\[\])?({_TYPE_NAME})")
_EMBEDDED = re.compile(rf"(?m)^[ \t]*\*?({_IDENT})[ \t]*(?://.*)?$")
_IDENT_RE = re.compile(_IDENT)


def _first_types(pattern: re.Pattern[str], text: str) -> dict[str, str]:
    """name -> the type of its first match of `pattern` (a list of names shares it)."""
    found: dict[str, str] = {}
    for match in pattern.finditer(text):
        for name in match.group(1).split(","):
            found.setdefault(name.strip(), match.group(2))
    return found


def _text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _scope_types(caller: int, outline: Outline, src: bytes) -> list[dict[str, str]]:
    """The caller's variables and their types, in order of preference: its own
    parameters (the receiver too), a function literal's, `x := &T{`, `var x T`."""
    key = ("go-locals", caller)
    facts = outline.scope_facts.get(key)
    if facts is None:
        definition = tree_definition(caller, outline) if caller else None
        facts = []
        if definition is not None:
            text = _text(definition, src)
            body = definition.child_by_field_name("body")
            header = text if body is None else text[: body.start_byte - definition.start_byte]
            facts = [
                _first_types(_PARAMETERS, header),
                _first_types(_PARAMETERS, text),
                _first_types(_COMPOSITE, text),
                _first_types(_VAR, text),
            ]
        outline.scope_facts[key] = facts
    return list(facts)


def _visible_type(receiver: str, caller: int, outline: Outline, src: bytes) -> str | None:
    """The type a Go variable visibly holds: the method's receiver or a
    parameter (`s *Server`, `a, b pkg.T`), `x := &T{`, `x := T{`, `var x T`."""
    if _IDENT_RE.fullmatch(receiver) is None:
        return None
    for found in _scope_types(caller, outline, src):
        if receiver in found:
            return found[receiver]
    return None


def _field_type(receiver: str, caller: int, outline: Outline, src: bytes) -> str | None:
    """`s.cache` where `s` holds a struct of this file: the field's type."""
    head, _, field = receiver.partition(".")
    if not field or _IDENT_RE.fullmatch(field) is None:
        return None
    owner = _visible_type(head, caller, outline, src)
    structs = [c for c in outline.by_name.get(owner or "", ()) if c.kind in CLASS_LIKE]
    if len(structs) != 1:
        return None
    key = ("go-fields", structs[0].index)
    facts = outline.scope_facts.get(key)
    if facts is None:
        definition = tree_definition(structs[0].index, outline)
        text = "" if definition is None else _text(definition, src)
        # An embedded field is named by its type: `s.Base.Get()` with `Base` (or `*Base`).
        embedded = {match.group(1): match.group(1) for match in _EMBEDDED.finditer(text)}
        facts = (_first_types(_FIELDS, text), embedded)
        outline.scope_facts[key] = facts
    named, embedded = facts
    return named.get(field) or embedded.get(field)


def go_callee(
    callee: str,
    caller: int,
    callee_node: Node,
    outline: Outline,
    packages: dict[str, tuple[str, str]],
    src: bytes,
    rel_path: str,
    package: str,
) -> tuple[int | None, str, str]:
    """(node in this file, hint, confidence) of a Go call."""
    receiver = _receiver(callee_node, src)
    folder = _folder(rel_path)
    if receiver is None:
        here = [c for c in outline.by_name.get(callee, ()) if c.parent == 0]
        if any(c.kind in CLASS_LIKE for c in here):
            return None, f"*conversion::{callee}", ""  # `T(x)` converts, it calls nothing
        functions = [c for c in here if c.kind != "method"]
        if functions:
            return functions[0].index, "", "scope"
        if callee in GO_BUILTINS:
            return None, f"*builtin/::{callee}", ""
        return None, f"{folder}::{package}.{callee}" if package else "", ""
    if receiver in packages:  # pkg.F()
        path, name = packages[receiver]
        return None, f"*{path}/::{name}.{callee}", ""
    typed = _visible_type(receiver, caller, outline, src) or _field_type(
        receiver, caller, outline, src
    )
    if typed is None:
        return None, "", ""
    head, _, rest = typed.partition(".")
    if rest:
        imported = packages.get(head)
        if imported is None:
            return None, "", ""
        return None, f"*{imported[0]}/::{imported[1]}.{rest}.{callee}", ""
    found = _method_here(typed, callee, outline)
    if found is not None:
        return found, "", "type"
    return None, f"{folder}::{package}.{typed}.{callee}" if package else "", ""
