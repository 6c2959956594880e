"""Resolving TypeScript/JavaScript calls on a receiver whose class only a
function's declared signature tells (parsing/calls_script.py writes the hints):

- `*ts::<module>::make().f`: `make`'s return type (`innerFrom(x).subscribe()`
  with `function innerFrom<T>(input: ObservableInput<T>): Observable<T>`);
- `*ts::<module>::run(k,j).f`: the type of parameter `j` of the callback passed
  as argument `k` of `run` (`operate((source, subscriber) => source.subscribe())`
  with `function operate<T, R>(init: (liftedSource: Observable<T>, subscriber:
  Subscriber<R>) => void)`).

`<module>` is where the function is imported from (a path without extension, its
barrels followed); the type's name is looked up where the function is declared
(a class of that file or one it imports), then the method in that class or its
`extends` bases. Resolved: `type`. A hint may end with `|~::Klass.f`, the class
the receiver is named after (`subscriber` -> `Subscriber`): when the signature
tells nothing, the one definition of that qualified name, a `guess`. Unresolved,
the edge stays so (never linked by the name alone).
"""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

import apsw

from codesift.store.path_hints import pick_in_module, reexports_of, write_resolutions

__all__ = ["resolve_script_hints"]

_HINT = re.compile(
    r"^\*ts::(?P<place>[^:]+)::(?P<name>[\w$]+)\((?P<args>\d+,\d+)?\)\.(?P<tail>[^|]+)"
    r"(?:\|~::(?P<guess>.+))?$"
)
# `src/a::Klass.f` that path_hints.py did not find in the module: a base's `f`.
_MEMBER_HINT = re.compile(r"^(?P<place>[^*~:][^:]*)::(?P<klass>[\w$]+)\.(?P<tail>[\w$]+)$")
_TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_BASE_DEPTH = 6
_SCRIPT_EXTENSIONS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


class _Fn(NamedTuple):
    id: int
    signature: str
    file_id: int


def _closing(text: str, start: int) -> int:
    """The index of the bracket closing the one at `start` (-1: none)."""
    pairs = {"(": ")", "<": ">", "[": "]", "{": "}"}
    stack: list[str] = []
    for i in range(start, len(text)):
        ch = text[i]
        if ch in pairs and not (ch == "<" and i > 0 and text[i - 1] == "="):
            stack.append(pairs[ch])
        elif stack and ch == stack[-1] and not (ch == ">" and text[i - 1] == "="):
            stack.pop()
            if not stack:
                return i
    return -1


def _split_top(text: str) -> list[str]:
    """`a: A, b: (x: X, y: Y) => Z` -> its top-level comma-separated parts."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for i, ch in enumerate(text):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}" or (ch == ">" and text[i - 1] != "="):
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def _parameters(signature: str) -> tuple[list[str], str]:
    """A function signature's parameters and what follows them (`: R`)."""
    at = signature.find("(")
    generic = signature.find("<")
    if 0 <= generic < at:  # `function f<T extends X<Y>>(...)`
        end = _closing(signature, generic)
        at = signature.find("(", end) if end >= 0 else -1
    end = _closing(signature, at) if at >= 0 else -1
    if end < 0:
        return [], ""
    return _split_top(signature[at + 1 : end]), signature[end + 1 :]


def _type_of(declaration: str) -> str:
    """`name?: Type<X> | null` -> `Type`; `: Type` -> `Type`."""
    _, colon, typed = declaration.partition(":")
    match = _TYPE_NAME.search(typed) if colon else None
    if match is None:
        return ""
    after = typed[match.end() :].lstrip()
    if after.startswith("<"):  # `Observable<T>`: past its type arguments
        end = _closing(after, 0)
        after = after[end + 1 :].lstrip() if end >= 0 else ""
    return "" if after.startswith("[") else match.group(0)  # `Todo[]`: an array


def type_named(signature: str, args: str) -> str:
    """The type name a signature gives a call's result (`args` empty) or a
    callback's parameter (`args` "k,j")."""
    parameters, rest = _parameters(signature)
    if not args:
        return _type_of(rest)
    k, j = (int(x) for x in args.split(","))
    if k >= len(parameters):
        return ""
    callback = parameters[k].partition(":")[2].strip()
    inner, _ = _parameters(callback)
    return _type_of(inner[j]) if j < len(inner) else ""


class _Walk:
    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.reexports = reexports_of(conn)

    def function(self, place: str, name: str) -> _Fn | None:
        rows = [
            _Fn(int(i), str(s), int(f))
            for i, s, f in self.conn.execute(
                "SELECT n.id, n.signature, n.file_id FROM nodes n"
                " WHERE n.name = ? AND n.qualified_name = ?",
                (name, name),
            )
        ]
        paths = self._paths({fn.file_id for fn in rows})
        candidates = [(fn.id, paths[fn.file_id]) for fn in rows]
        found = pick_in_module(place, name, candidates, self.reexports)
        return next((fn for fn in rows if fn.id == found), None)

    def _paths(self, file_ids: set[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for file_id in file_ids:
            for (path,) in self.conn.execute("SELECT path FROM files WHERE id = ?", (file_id,)):
                out[file_id] = str(path)
        return out

    def guess(self, qualified: str) -> int | None:
        """The one definition with this qualified name (`Subscriber.next`)."""
        rows = [
            int(i)
            for (i,) in self.conn.execute(
                "SELECT id FROM nodes WHERE name = ? AND qualified_name = ?",
                (qualified.rsplit(".", 1)[-1], qualified),
            )
        ]
        return rows[0] if len(rows) == 1 else None

    def type_in_file(self, name: str, file_id: int) -> int | None:
        """A class or interface `name` of the file, else the one it imports."""
        for (node_id,) in self.conn.execute(
            "SELECT id FROM nodes WHERE file_id = ? AND name = ? AND kind IN"
            " ('class', 'interface') ORDER BY id",
            (file_id, name),
        ):
            return int(node_id)
        for dst_id, hint in self.conn.execute(
            "SELECT e.dst_id, e.dst_hint FROM edges e JOIN nodes m ON m.id = e.src_id"
            " WHERE m.file_id = ? AND m.kind = 'module' AND e.kind = 'imports'"
            " AND e.dst_name = ?",
            (file_id, name),
        ).fetchall():
            if dst_id is not None:
                return int(str(dst_id))
            found = self._imported(str(hint), name, file_id)
            if found is not None:
                return found
        return None

    def _imported(self, hint: str, name: str, file_id: int) -> int | None:
        """`../Observable.Observable` imported by a file: the class in that module."""
        module = hint.removesuffix(f".{name}")
        if not module.startswith("."):
            return None
        here = self._paths({file_id}).get(file_id, "")
        place = posixpath.normpath(posixpath.join(posixpath.dirname(here), module))
        for ext in _SCRIPT_EXTENSIONS:
            place = place.removesuffix(ext)
        rows = [
            (int(i), str(p))
            for i, p in self.conn.execute(
                "SELECT n.id, f.path FROM nodes n JOIN files f ON f.id = n.file_id"
                " WHERE n.name = ? AND n.qualified_name = ? AND n.kind IN ('class', 'interface')",
                (name, name),
            )
        ]
        return pick_in_module(place, name, rows, self.reexports)

    def method(self, klass: int, name: str, depth: int = 0) -> int | None:
        """Method `name` of class `klass` (the implementation: the last of its
        overloads), else of its bases."""
        rows = [
            int(i)
            for (i,) in self.conn.execute(
                "SELECT id FROM nodes WHERE parent_id = ? AND name = ? AND kind != 'class'"
                " ORDER BY id",
                (klass, name),
            )
        ]
        if rows:
            return rows[-1]
        if depth >= _BASE_DEPTH:
            return None
        for base in self._bases(klass):
            found = self.method(base, name, depth + 1)
            if found is not None:
                return found
        return None

    def inherited(self, hint: str) -> tuple[int | None, str]:
        match = _MEMBER_HINT.match(hint)
        if match is None:
            return None, ""
        name = match.group("klass")
        rows = [
            (int(i), str(p))
            for i, p in self.conn.execute(
                "SELECT n.id, f.path FROM nodes n JOIN files f ON f.id = n.file_id"
                " WHERE n.name = ? AND n.qualified_name = ? AND n.kind IN ('class', 'interface')",
                (name, name),
            )
        ]
        klass = pick_in_module(match.group("place"), name, rows, self.reexports)
        found = None if klass is None else self.method(klass, match.group("tail"))
        return (found, "import") if found is not None else (None, "")

    def _bases(self, klass: int) -> list[int]:
        """The classes `klass` extends: resolved edges, else their import hints
        (this pass may come before the edges' own resolution)."""
        rows = self.conn.execute(
            "SELECT e.dst_id, e.dst_name, e.dst_hint, n.file_id FROM edges e"
            " JOIN nodes n ON n.id = e.src_id WHERE e.src_id = ? AND e.kind = 'inherits'"
            " ORDER BY e.line",
            (klass,),
        ).fetchall()
        bases: list[int] = []
        for dst_id, name, hint, file_id in rows:
            if dst_id is not None:
                bases.append(int(str(dst_id)))
                continue
            found = self._imported(str(hint), str(name), int(str(file_id)))
            if found is not None:
                bases.append(found)
        return bases

    def resolve(self, hint: str) -> tuple[int | None, str]:
        if not hint.startswith("*ts::"):
            return self.inherited(hint)
        match = _HINT.match(hint)
        if match is None or "." in match.group("tail"):
            return None, ""
        function = self.function(match.group("place"), match.group("name"))
        typed = (
            "" if function is None else type_named(function.signature, match.group("args") or "")
        )
        klass = (
            None if function is None or not typed else self.type_in_file(typed, function.file_id)
        )
        found = None if klass is None else self.method(klass, match.group("tail"))
        if found is not None:
            return found, "type"
        guess = match.group("guess")
        return (self.guess(guess), "guess") if guess else (None, "")


def resolve_script_hints(conn: apsw.Connection, where: str) -> int:
    """Resolve the unresolved edges matching `where` with a `*ts::` hint
    (resolution `type`, or `guess`) or a `place::Klass.f` hint whose class
    inherits `f` (resolution `import`); returns how many were resolved."""
    rows = conn.execute(
        "SELECT src_id, kind, dst_name, dst_hint FROM edges"
        f" WHERE {where} AND edges.resolution IS NULL AND (substr(edges.dst_hint, 1, 5) = '*ts::'"
        "  OR (edges.kind = 'calls' AND instr(edges.dst_hint, '::') > 1"
        "      AND substr(edges.dst_hint, 1, 1) NOT IN ('*', '~')))"
    ).fetchall()
    walk = _Walk(conn)
    targets: dict[str, tuple[int | None, str]] = {}
    updates: list[tuple[str, int, int, str, str]] = []
    for src, kind, name, raw in rows:
        hint = str(raw)
        if hint not in targets:
            targets[hint] = walk.resolve(hint)
        target, how = targets[hint]
        if target is not None and target != src:
            updates.append((how, target, int(str(src)), str(kind), str(name)))
    return write_resolutions(conn, updates)
