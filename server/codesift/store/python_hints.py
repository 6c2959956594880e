"""Resolving Python calls across files the way the language does
(parsing/calls_python.py writes the hints):

- `pkg.mod.f`, an imported name or a module-qualified call that names no
  definition by its qualified name: the name is followed through the modules it
  passes (`pkg` re-exports `f` with `from .a import f` in `pkg/__init__.py`; a
  class's attribute is looked up in its bases too). Unresolved, it is left to the
  unique-name step, as before;
- `*py::pkg.mod.Klass.f`: the same walk, for a receiver whose class is known:
  the class's method, else the first base's (depth first, in the order the bases
  are written); `name()` in the walk is the class a call of `name` returns (its
  return annotation, read in its own module; without one, the call every
  `return` of its own text makes: `return create(...)`, `return cls(...)`).
  Unresolved, it stays so (an attribute set at run time, a base outside the
  project);
- `*method::f`: the one method (never a module-level function) named `f`.

A walk goes on through a module-level variable (`from .app import X` ...
`X.run()`, `mod.X.run()`, `X().run()`) to the class it holds, read from the
module's own lines: its annotation (`X: Klass`, `X: type[Klass] = ...`), else
its value (`X = Klass(...)`, `X = make(...)`: what `make` returns, `X = Other`:
what `Other` is or holds). A bare `X()` never reaches that class (calling an
instance is no construction).

Resolved by a walk: resolution `type` (`*py::`, or through a variable) or
`import`; by the name alone: `unique`. The writer (store/writer.py) resolves an
edge again when a definition of its name appears or vanishes, and when a file's
bases, imports, module-level variables or functions' return annotations change:
then every name a call could reach through them (`names_behind`: the imported name
or the variable's, the members of the old and new base classes or classes held or
returned, and of their bases), so that a call walked through a base, a re-export,
a variable or a return annotation never keeps a target that is gone or no longer
the one the walk finds. (A function's class read from its `return`s alone is not
followed so: reading every body at each re-index costs too much.)
"""

from __future__ import annotations

import re
from typing import NamedTuple

import apsw

from codesift.store.path_hints import write_resolutions
from codesift.store.rows import unpack_text

__all__ = ["Binding", "module_bindings", "names_behind", "resolve_python_hints", "structure_of"]

# How many modules, bases and return annotations one walk may pass through.
_WALK_DEPTH = 8
_RETURNS = re.compile(r"\)\s*->\s*(.+?)\s*:?\s*$")
# The same in a function's text: the header is the `def` up to the first `)` that a
# colon ending the line follows (with the annotation between them, if any).
_HEADER_RETURNS = re.compile(
    r"(?s)\bdef\s+\w+\s*\(.*?\)\s*(?:->\s*([^\n:]+?)\s*)?:[ \t]*(?:#[^\n]*)?\n"
)
_WRAPPERS = re.compile(r"^(?:Optional|type|Type|Awaitable|Coroutine\[[^,\]]*,[^,\]]*,)\[(.*)\]$")
_FIRST_NAME = re.compile(r"[A-Za-z_][\w.]*")
# A module-level binding in a module's own lines (its code chunks): `X: T`, `X: T = ...`,
# `X = make(...)`, `X = Klass[T](...)`, `X = other.Name` (an alias). Groups: the name,
# the annotation's first name (inside `type[...]`, `Optional[...]`), the value's
# dotted name and what follows it (`(` or `[`: a call; empty: an alias).
_BINDING = re.compile(
    r"(?m)^([A-Za-z_]\w*+)[ \t]*+"
    r"(?::[ \t]*+[\"']?(?:(?:typing\.)?(?:Optional|type|Type|ClassVar|Final)\[)*"
    r"([A-Za-z_][\w.]*+)[^=\n]*)?"
    r"(?:=[ \t]*+(?:await[ \t]+)?([A-Za-z_][\w.]*+)[ \t]*+(\(|\[[^\n=]*\]\(|(?=#|$)))?"
)
# A function's `return` statements (the text after `return`), and a value that is
# a call (`create(...)`, `mod.make(...)`, `cls(...)`).
_RETURN_VALUES = re.compile(r"(?m)^[ \t]+return\b[ \t]*+([^\n]*)")
_RETURNED_CALL = re.compile(r"([A-Za-z_][\w.]*+)[ \t]*+\(")
_NOT_CLASSES = frozenset(
    "None Any str int float bool bytes dict list set tuple object type Iterator Iterable"
    " Generator AsyncIterator AsyncGenerator Callable Sequence Mapping".split()
)


class Binding(NamedTuple):
    """A module-level variable's binding: the first name of its annotation, or
    the dotted name of its value, `called` or not (an alias)."""

    annotation: str
    value: str
    called: bool


class _Node(NamedTuple):
    id: int
    kind: str
    parent: int | None
    signature: str
    file: int


class _Walk:
    """Lookups by qualified name over one index, cached for one resolution pass."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self._by_qualified: dict[str, _Node | None] = {}
        self._members: dict[tuple[int, str], _Node | None] = {}
        self._by_id: dict[int, _Node | None] = {}
        self._only_methods: dict[str, int | None] = {}
        self._bindings: dict[int, dict[str, Binding]] = {}
        self._values: dict[str, _Node | None] = {}
        self._by_body: dict[int, _Node | None] = {}
        # Qualified names found through a module-level variable's type (the edge's
        # resolution says `type`, as for a typed receiver).
        self.through_variable: set[str] = set()

    def _row(self, where: str, args: tuple[object, ...]) -> list[_Node]:
        return [
            _Node(int(i), str(k), None if p is None else int(p), str(s), int(f))
            for i, k, p, s, f in self.conn.execute(
                "SELECT id, kind, parent_id, signature, file_id FROM nodes WHERE " + where, args
            )
        ]

    def node_id(self, node_id: int) -> _Node | None:
        if node_id not in self._by_id:
            rows = self._row("id = ?", (node_id,))
            self._by_id[node_id] = rows[0] if rows else None
        return self._by_id[node_id]

    def find(self, qualified: str, depth: int = 0) -> _Node | None:
        """The node `qualified` names, directly or through the walk."""
        if qualified in self._by_qualified:
            return self._by_qualified[qualified]
        self._by_qualified[qualified] = None  # a cycle finds nothing
        name = qualified.rsplit(".", 1)[-1]
        rows = self._row("name = ? AND qualified_name = ?", (name.removesuffix("()"), qualified))
        found = rows[-1] if rows else None
        head, dot, tail = qualified.rpartition(".")
        if found is None and depth < _WALK_DEPTH and (dot or qualified.endswith("()")):
            if qualified.endswith("()"):  # what calling it makes
                head = qualified[:-2]
                function = self.value(head, depth + 1)
                found = None if function is None else self.returned(function, depth + 1)
            else:
                owner = self.value(head, depth + 1)
                found = None if owner is None else self.member(owner, tail, depth + 1)
            if found is not None and head in self.through_variable:
                self.through_variable.add(qualified)
        self._by_qualified[qualified] = found
        return found

    def value(self, qualified: str, depth: int = 0) -> _Node | None:
        """What a walk goes on from (an attribute's owner, a callee): the node
        `qualified` names, else the class a module-level variable of that name
        holds (`X = make(...)`, `X = Klass()`, `X: Klass`, `X = Other`), through
        the re-exports of the modules it passes. Never the answer of a walk
        itself: `X()` on an instance is no call of its class."""
        found = self.find(qualified, depth)
        if found is not None or depth >= _WALK_DEPTH:
            return found
        if qualified in self._values:
            return self._values[qualified]
        self._values[qualified] = None  # a cycle finds nothing
        module_name, dot, name = qualified.rpartition(".")
        module = self.find(module_name, depth + 1) if dot else None
        if module is not None and module.kind == "module":
            found = self._variable(module, name, depth + 1)
        if found is not None:
            self.through_variable.add(qualified)
        self._values[qualified] = found
        return found

    def _variable(self, module: _Node, name: str, depth: int) -> _Node | None:
        """The class module-level variable `name` of `module` holds, or its
        re-export's (`from .a import X` in a package)."""
        binding = self.bindings_of(module).get(name)
        if binding is None:
            for (dst_hint,) in self.conn.execute(
                "SELECT dst_hint FROM edges WHERE src_id = ? AND kind = 'imports'"
                " AND dst_name = ? AND dst_hint != ''",
                (module.id, name),
            ).fetchall():
                found = self.value(str(dst_hint), depth + 1)
                if found is not None:
                    return found
            return None
        return self.binding_class(module, binding, depth)

    def binding_class(self, module: _Node, binding: Binding, depth: int = 0) -> _Node | None:
        """The class a binding of module `module` gives its variable: the class its
        annotation names, else its value's (a class; a function called: what it
        returns; another variable: what that holds)."""
        annotation, value, called = binding
        if annotation:
            found = self._in_module(module, annotation, depth)
            return found if found is not None and found.kind == "class" else None
        found = self._in_module(module, value, depth)
        if found is None or found.kind == "class":
            return found
        if called and found.kind in ("function", "method"):
            return self.returned(found, depth + 1)
        return None

    def _in_module(self, module: _Node, dotted: str, depth: int) -> _Node | None:
        """A dotted name as `module`'s code reads it: a definition of the module,
        a name it imports, or one of its variables (each step through the walk)."""
        owner: _Node | None = module
        path = self.qualified_of(module)
        for part in dotted.split("."):
            if owner is None or not path:
                return None
            path = f"{path}.{part}"
            owner = self.value(path, depth + 1)
        return owner

    def qualified_of(self, node: _Node) -> str:
        for (qualified,) in self.conn.execute(
            "SELECT qualified_name FROM nodes WHERE id = ?", (node.id,)
        ):
            return str(qualified)
        return ""

    def bindings_of(self, module: _Node) -> dict[str, Binding]:
        """name -> (annotation, value, called) of a module's top-level bindings,
        read from its own lines (the module's code chunks); the first one of a
        name (an annotation first)."""
        found = self._bindings.get(module.id)
        if found is None:
            found = {}
            for (text,) in self.conn.execute(
                "SELECT text FROM chunks WHERE node_id = ? AND layer = 'code' ORDER BY part",
                (module.id,),
            ):
                found.update(
                    (name, binding)
                    for name, binding in module_bindings(unpack_text(text) if text else "").items()
                    if name not in found
                )
            self._bindings[module.id] = found
        return found

    def member(self, owner: _Node, name: str, depth: int) -> _Node | None:
        """Attribute `name` of a module or class node (`name()`: what calling
        it returns)."""
        if name.endswith("()"):
            function = self.member(owner, name[:-2], depth)
            return None if function is None else self.returned(function, depth + 1)
        key = (owner[0], name)
        if key in self._members:
            return self._members[key]
        self._members[key] = None
        found = next(iter(self._row("parent_id = ? AND name = ?", (owner[0], name))[-1:]), None)
        if found is None and depth < _WALK_DEPTH:
            found = self._through_edges(owner, name, depth)
        self._members[key] = found
        return found

    def _through_edges(self, owner: _Node, name: str, depth: int) -> _Node | None:
        """A module's re-export of `name`, or a class's base's `name`."""
        if owner[1] == "module":
            for dst_id, hint in self.conn.execute(
                "SELECT dst_id, dst_hint FROM edges WHERE src_id = ? AND kind = 'imports'"
                " AND dst_name = ?",
                (owner[0], name),
            ):
                target = self.node_id(int(dst_id)) if dst_id is not None else None
                if target is None and hint:
                    target = self.find(str(hint), depth + 1)
                if target is not None:
                    return target
            return None
        bases = self.conn.execute(
            "SELECT dst_id, dst_hint FROM edges WHERE src_id = ? AND kind = 'inherits'"
            " ORDER BY line",
            (owner[0],),
        ).fetchall()
        for dst_id, hint in bases:
            base = self.node_id(int(dst_id)) if dst_id is not None else None
            if base is None and hint:
                base = self.find(str(hint), depth + 1)
            found = None if base is None else self.member(base, name, depth + 1)
            if found is not None:
                return found
        return None

    def returned(self, function: _Node, depth: int) -> _Node | None:
        """The class a call of `function` makes: a class itself, else the class
        its return annotation names, looked up in the function's module."""
        if function[1] != "function" and function[1] != "method":
            return function
        match = _RETURNS.search(function[3])
        if match is None and function[3].endswith("…"):  # a long signature, cut short
            match = _HEADER_RETURNS.search(self._header(function))
        if match is None or match.group(1) is None:
            return self._returned_by_body(function, depth)
        annotation = match.group(1).strip().strip("\"'")
        while (inner := _WRAPPERS.match(annotation)) is not None:
            annotation = inner.group(1).strip().strip("\"'")
        first = _FIRST_NAME.match(annotation)
        if first is None or first.group(0) in _NOT_CLASSES:
            return None
        typed = first.group(0)
        if typed == "Self" and function[1] == "method" and function[2] is not None:
            return self.node_id(function[2])
        module = self._module_of(function)
        if module is None:
            return None
        owner: _Node | None = module
        for part in typed.split("."):
            owner = None if owner is None else self.member(owner, part, depth + 1)
        return owner if owner is not None and owner[1] == "class" else None

    def _returned_by_body(self, function: _Node, depth: int) -> _Node | None:
        """For a function without a return annotation: the class it makes when
        every `return` in its own text (nested definitions are not in it) returns
        a call of one name (`return create(...)`, `return cls(...)`)."""
        if function.id in self._by_body:
            return self._by_body[function.id]
        self._by_body[function.id] = None  # a cycle finds nothing
        callees = set()
        for (text,) in self.conn.execute(
            "SELECT text FROM chunks WHERE node_id = ? AND layer = 'code' ORDER BY part",
            (function.id,),
        ):
            body = unpack_text(text) if text is not None else ""
            for value in _RETURN_VALUES.findall(body) if "return" in body else ():
                called = _RETURNED_CALL.match(value)
                callees.add(called.group(1) if called else "")
        found = None
        callee = next(iter(callees)) if len(callees) == 1 else ""
        if callee == "cls" and function.kind == "method" and function.parent is not None:
            found = self.node_id(function.parent)
        elif callee and depth < _WALK_DEPTH:
            module = self._module_of(function)
            found = None if module is None else self._in_module(module, callee, depth + 1)
            if found is not None and found.kind != "class":
                same = found.id == function.id
                found = None if same else self.returned(found, depth + 1)
        self._by_body[function.id] = found
        return found

    def _header(self, function: _Node) -> str:
        """The start of a function's own text (its first code chunk): the whole
        header of a signature too long to be kept."""
        for (text,) in self.conn.execute(
            "SELECT text FROM chunks WHERE node_id = ? AND layer = 'code' ORDER BY part LIMIT 1",
            (function[0],),
        ):
            return unpack_text(text) if text is not None else ""
        return ""

    def functions_of(self, file_id: int) -> list[_Node]:
        return self._row("file_id = ? AND kind IN ('function', 'method')", (file_id,))

    def modules_of(self, file_id: int) -> list[_Node]:
        return self._row("file_id = ? AND kind = 'module'", (file_id,))

    def _module_of(self, node: _Node) -> _Node | None:
        rows = self._row("file_id = ? AND kind = 'module'", (node[4],))
        return rows[0] if rows else None

    def member_names(self, klass: _Node, seen: set[int], depth: int = 0) -> set[str]:
        """The names defined in a class and in its bases (each class once)."""
        if klass.id in seen or depth > _WALK_DEPTH:
            return set()
        seen.add(klass.id)
        rows = self.conn.execute("SELECT name FROM nodes WHERE parent_id = ?", (klass.id,))
        names = {str(name) for (name,) in rows}
        for dst_id, hint in self.conn.execute(
            "SELECT dst_id, dst_hint FROM edges WHERE src_id = ? AND kind = 'inherits'",
            (klass.id,),
        ).fetchall():
            base = self.node_id(int(dst_id)) if dst_id is not None else None
            if base is None and hint:
                base = self.find(str(hint))
            if base is not None:
                names |= self.member_names(base, seen, depth + 1)
        return names

    def only_method(self, name: str) -> int | None:
        """The id of the one method named `name`; None when there are none or several
        (asked once per name: a cold index of the standard library asks ~15,000
        times for ~2,300 names, `get` among them, which has hundreds)."""
        if name not in self._only_methods:
            rows = self.conn.execute(
                "SELECT id FROM nodes WHERE name = ? AND kind = 'method' LIMIT 2", (name,)
            ).fetchall()
            only = rows[0][0] if len(rows) == 1 else None
            self._only_methods[name] = only if isinstance(only, int) else None
        return self._only_methods[name]


def module_bindings(text: str) -> dict[str, Binding]:
    """name -> (annotation, value, called) of the top-level bindings in a
    module's text (`X: T` / `X: type[T] = ...`: annotation `T`; `X = make(...)`:
    value `make`, called; `X = Other`: value `Other`, an alias). The first
    binding of a name; an annotation wins over a value."""
    found: dict[str, Binding] = {}
    if "=" not in text and ":" not in text:
        return found
    for match in _BINDING.finditer(text):
        name, annotation, value, after = match.groups()
        if annotation in _NOT_CLASSES or annotation in ("Final", "ClassVar"):
            annotation = None
        if not annotation and not value:
            continue
        earlier = found.get(name)
        if earlier is None or (annotation and not earlier.annotation):
            found[name] = Binding(annotation or "", value or "", bool(value and after))
    return found


def resolve_python_hints(conn: apsw.Connection, where: str) -> int:
    """Resolve the unresolved Python edges matching `where` whose hint is
    dotted, `*py::` or `*method::`; returns how many were resolved."""
    rows = conn.execute(
        "SELECT edges.src_id, edges.kind, edges.dst_name, edges.dst_hint FROM edges"
        " JOIN nodes s ON s.id = edges.src_id JOIN files f ON f.id = s.file_id"
        f" WHERE {where} AND edges.resolution IS NULL AND edges.dst_hint != ''"
        " AND f.language = 'python' AND instr(edges.dst_hint, '/') = 0"
        " AND (instr(edges.dst_hint, ':') = 0 OR substr(edges.dst_hint, 1, 5) = '*py::'"
        "      OR substr(edges.dst_hint, 1, 9) = '*method::')"
    ).fetchall()
    walk = _Walk(conn)
    updates: list[tuple[str, int, int, str, str]] = []
    for src, kind, name, raw in rows:
        target, how = _resolve(walk, str(raw))
        if target is not None and target != src:
            updates.append((how, target, int(str(src)), str(kind), str(name)))
    return write_resolutions(conn, updates)


def _resolve(walk: _Walk, hint: str) -> tuple[int | None, str]:
    if hint.startswith("*method::"):
        return walk.only_method(hint[9:]), "unique"
    typed = hint.startswith("*py::")
    qualified = hint[5:] if typed else hint
    found = walk.find(qualified)
    if found is not None and found.kind != "module":
        return found.id, "type" if typed or qualified in walk.through_variable else "import"
    return None, ""


# -- what a changed base or re-export makes stale -----------------------------------------

Structure = set[tuple[str, str, str, str]]


def structure_of(conn: apsw.Connection, file_id: int) -> Structure:
    """A file's inherits and imports edges as (source, kind, name, target): the
    target is the hint, or the local definition's qualified name; its
    module-level variables as (name, `binds`, name, the class each holds); its
    functions' return annotations as (function, `returns`, '', the class)."""
    found = {
        (str(source), str(kind), str(name), str(target or ""))
        for source, kind, name, target in conn.execute(
            "SELECT s.qualified_name, e.kind, e.dst_name,"
            " CASE WHEN e.dst_hint != '' THEN e.dst_hint ELSE d.qualified_name END"
            " FROM edges e JOIN nodes s ON s.id = e.src_id LEFT JOIN nodes d ON d.id = e.dst_id"
            " WHERE s.file_id = ? AND e.kind IN ('inherits', 'imports')",
            (file_id,),
        )
    }
    walk = _Walk(conn)
    for module in walk.modules_of(file_id):
        for name, binding in walk.bindings_of(module).items():
            held = walk.binding_class(module, binding)
            found.add((name, "binds", name, walk.qualified_of(held) if held else ""))
    # Functions' return annotations (what `f().g()` elsewhere walks through); the
    # calls their bodies return are left out: reading every body costs a re-index
    # of the standard library ~2.6 CPU-s.
    for function in walk.functions_of(file_id):
        if "->" not in function.signature and not function.signature.endswith("…"):
            continue
        made = walk.returned(function, 0)
        if made is not None:
            found.add((walk.qualified_of(function), "returns", "", walk.qualified_of(made)))
    return found


def names_behind(conn: apsw.Connection, changed: Structure) -> set[str]:
    """The names whose calls elsewhere may now resolve otherwise, for inherits and
    imports edges and variable bindings that appeared or went (`changed`): an
    import's or a variable's name (a package's re-export of it); every member of a
    base class, an imported class or the class a variable holds, and of its bases
    (`self.f()` in a subclass walks them, `X.f()` the variable's class)."""
    walk = _Walk(conn)
    names: set[str] = set()
    seen: set[int] = set()
    for _source, kind, name, target in changed:
        if kind in ("imports", "binds"):
            names.add(name)
        found = walk.value(target) if target else None
        if found is not None and found.kind == "class":  # a base, or a class re-exported
            names |= walk.member_names(found, seen)
    return names
