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
  return annotation, read in its own module). Unresolved, it stays so (an
  attribute set at run time, a base outside the project);
- `*method::f`: the one method (never a module-level function) named `f`.

Resolved by a walk: resolution `type` (`*py::`) or `import`; by the name alone:
`unique`. The writer (store/writer.py) resolves an edge again when a definition
of its name appears or vanishes, and when a file's bases or imports change: then
every name a call could reach through them (`names_behind`: the imported name,
the members of the old and new base classes and of their bases), so that a call
walked through a base or a re-export never keeps a target that is gone or no
longer the one the walk finds.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import apsw

from codesift.store.path_hints import write_resolutions
from codesift.store.rows import unpack_text

__all__ = ["names_behind", "resolve_python_hints", "structure_of"]

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
_NOT_CLASSES = frozenset(
    "None Any str int float bool bytes dict list set tuple object type Iterator Iterable"
    " Generator AsyncIterator AsyncGenerator Callable Sequence Mapping".split()
)


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
        if found is None and dot and depth < _WALK_DEPTH:
            owner = self.find(head, depth + 1)
            found = None if owner is None else self.member(owner, tail, depth + 1)
        elif found is None and qualified.endswith("()"):
            function = self.find(qualified[:-2], depth + 1)
            found = None if function is None else self.returned(function, depth + 1)
        self._by_qualified[qualified] = found
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
            return None
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

    def _header(self, function: _Node) -> str:
        """The start of a function's own text (its first code chunk): the whole
        header of a signature too long to be kept."""
        for (text,) in self.conn.execute(
            "SELECT text FROM chunks WHERE node_id = ? AND layer = 'code' ORDER BY part LIMIT 1",
            (function[0],),
        ):
            return unpack_text(text) if text is not None else ""
        return ""

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
            self._only_methods[name] = int(rows[0][0]) if len(rows) == 1 else None
        return self._only_methods[name]


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
        return found.id, "type" if typed else "import"
    return None, ""


# -- what a changed base or re-export makes stale -----------------------------------------

Structure = set[tuple[str, str, str, str]]


def structure_of(conn: apsw.Connection, file_id: int) -> Structure:
    """A file's inherits and imports edges as (source, kind, name, target): the
    target is the hint, or the local definition's qualified name."""
    return {
        (str(source), str(kind), str(name), str(target or ""))
        for source, kind, name, target in conn.execute(
            "SELECT s.qualified_name, e.kind, e.dst_name,"
            " CASE WHEN e.dst_hint != '' THEN e.dst_hint ELSE d.qualified_name END"
            " FROM edges e JOIN nodes s ON s.id = e.src_id LEFT JOIN nodes d ON d.id = e.dst_id"
            " WHERE s.file_id = ? AND e.kind IN ('inherits', 'imports')",
            (file_id,),
        )
    }


def names_behind(conn: apsw.Connection, changed: Structure) -> set[str]:
    """The names whose calls elsewhere may now resolve otherwise, for inherits and
    imports edges that appeared or went (`changed`): an import's name (a package's
    re-export of it); every member of a base class or an imported class, and of
    its bases (`self.f()` in a subclass walks them)."""
    walk = _Walk(conn)
    names: set[str] = set()
    seen: set[int] = set()
    for _source, kind, name, target in changed:
        if kind == "imports":
            names.add(name)
        found = walk.find(target) if target else None
        if found is not None and found.kind == "class":  # a base, or a class re-exported
            names |= walk.member_names(found, seen)
    return names
