"""Resolving edges whose hint names where the target is: `<place>::<qualified name>`
(parsing/calls_script.py, parsing/calls_go.py).

The place is one of:

- a module path without its extension (`src/util/format`): the file with a
  script extension, or its `/index` file (an ES module import); when the
  definition is not there, the files that file re-exports (`export * from`,
  `export { f } from`: a barrel), up to three barrels deep;
- a folder ending in `/` (`internal/cache/`, `./` for the root): a file directly
  in it (the other files of a Go package);
- `*` and an import path ending in `/` (`*github.com/acme/app/store/`): a folder
  whose trailing segments are the import path's (the most of them wins; a
  standard-library path such as `net/http` only its very folder); a Go import.

`~` (`~::Subscriber.next`) is no place: the one definition with that
qualified name in the index, resolved as a `guess` (a script receiver named
after its class).

A hint starting with `*` is never resolved by the target's name alone when this
fails (store/writer.py's unique-name step leaves it). `*global::name` (a
script's global: a builtin, a callback parameter), `*builtin/::name` (Go's
builtins) and `*conversion::T` (a Go conversion) are never resolved.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable
from typing import NamedTuple, cast

import apsw

__all__ = [
    "Resolution",
    "module_files",
    "pick_in_module",
    "reexports_of",
    "resolve_path_hints",
    "write_resolutions",
]

# How many barrels (files that only re-export) an import may pass through.
_BARREL_DEPTH = 3
_SCRIPT_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")


class _Hint(NamedTuple):
    mode: str  # file, folder, import
    place: str
    qualified: str
    tail: str


def _parse(hint: str) -> _Hint | None:
    place, found, qualified = hint.partition("::")
    if not found or not qualified or place in ("*global", "*builtin/", "*conversion"):
        return None
    tail = qualified.rsplit(".", 1)[-1]
    if place == "~":
        return _Hint("guess", "", qualified, tail)
    if place.startswith("*"):
        if not place.endswith("/"):
            return None
        return _Hint("import", place[1:-1], qualified, tail)
    if place.endswith("/"):
        return _Hint("folder", "" if place == "./" else place[:-1], qualified, tail)
    return _Hint("file", place, qualified, tail)


def _suffix_segments(folder: str, import_path: str) -> int:
    """How many trailing segments of `folder` and `import_path` agree (-1: the
    folder is no suffix of the import path)."""
    if not folder:
        return 0
    ours = folder.split("/")
    theirs = import_path.split("/")
    if len(ours) > len(theirs) or theirs[-len(ours) :] != ours:
        return -1
    return len(ours)


def module_files(place: str) -> set[str]:
    """The files an import of module path `place` may mean."""
    files = {f"{place}{ext}" for ext in _SCRIPT_EXTENSIONS}
    files |= {f"{place}/index{ext}" for ext in _SCRIPT_EXTENSIONS}
    files.add(place)
    return files


def _pick(
    hint: _Hint,
    candidates: list[tuple[int, str]],
    reexports: Callable[[str], list[str]] | None = None,
) -> int | None:
    if hint.mode == "file":
        return _pick_in_module(hint.place, candidates, reexports)
    if hint.mode == "guess":
        return candidates[0][0] if len(candidates) == 1 else None
    if hint.mode == "folder":
        found = [node for node, path in candidates if posixpath.dirname(path) == hint.place]
        return min(found) if found else None
    return _pick_in_package(hint.place, candidates)


def _pick_in_module(
    place: str,
    candidates: list[tuple[int, str]],
    reexports: Callable[[str], list[str]] | None,
) -> int | None:
    """The candidate in a file the module path `place` may mean, or in a file
    it re-exports (a barrel: `export * from './x'`, `export { f } from './x'`),
    a few levels deep."""
    files = module_files(place)
    found = [node for node, path in candidates if path in files]
    seen = set(files)
    frontier = set(files)
    for _ in range(_BARREL_DEPTH):
        if found or reexports is None or not frontier:
            break
        nearer: set[str] = set()
        for path in frontier:
            for module in reexports(path):
                nearer |= module_files(module) - seen
        seen |= nearer
        frontier = nearer
        found = [node for node, path in candidates if path in nearer]
    # TypeScript overloads: the signatures come first, the implementation last.
    return max(found) if found else None


def _pick_in_package(place: str, candidates: list[tuple[int, str]]) -> int | None:
    """The candidate in the folder whose path agrees with the import path
    `place` on the most trailing segments (a standard library's path, without a
    dot in its first segment, only in that very folder)."""
    standard = "." not in place.split("/", 1)[0]
    best: list[int] = []
    best_score = -1
    for node, path in candidates:
        folder = posixpath.dirname(path)
        if standard and folder != place:
            continue
        score = _suffix_segments(folder, place)
        if score > best_score:
            best, best_score = [node], score
        elif score == best_score and score >= 0:
            best.append(node)
    if best_score < 0 or not best:
        return None
    return min(best)


def reexports_of(conn: apsw.Connection) -> Callable[[str], list[str]]:
    """A reader of the module paths a script file re-exports from (its imports
    edges of a relative module: an ES module's `export ... from` and imports
    alike), cached for one resolution pass."""
    reexported: dict[str, list[str]] = {}

    def reexports(path: str) -> list[str]:
        """The module paths file `path` re-exports from (its imports edges of a
        relative module: an ES module's `export ... from` and imports alike)."""
        if path not in reexported:
            modules = []
            for name, raw in conn.execute(
                "SELECT e.dst_name, e.dst_hint FROM edges e JOIN nodes n ON n.id = e.src_id"
                " JOIN files f ON f.id = n.file_id"
                " WHERE f.path = ? AND n.kind = 'module' AND e.kind = 'imports'",
                (path,),
            ):
                module = str(raw)
                if module.endswith(f".{name}") and not module.endswith(f"/{name}"):
                    module = module[: -len(str(name)) - 1]
                if module.startswith("."):
                    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), module))
                    for ext in (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"):
                        joined = joined.removesuffix(ext)
                    modules.append(joined)
            reexported[path] = modules
        return reexported[path]

    return reexports


def pick_in_module(
    place: str,
    qualified: str,
    candidates: list[tuple[int, str]],
    reexports: Callable[[str], list[str]],
) -> int | None:
    """Of `candidates` (node, path) named `qualified`, the one module `place`
    (a path without extension) defines or re-exports."""
    tail = qualified.rsplit(".", 1)[-1]
    return _pick(_Hint("file", place, qualified, tail), candidates, reexports)


def resolve_path_hints(conn: apsw.Connection, where: str) -> int:
    """Resolve the unresolved edges matching `where` whose hint names a place;
    returns how many were resolved (resolution `import`)."""
    rows = conn.execute(
        "SELECT src_id, kind, dst_name, dst_hint FROM edges"
        f" WHERE {where} AND edges.resolution IS NULL AND instr(edges.dst_hint, '::') > 0"
    ).fetchall()
    hints = {str(hint): _parse(str(hint)) for *_, hint in rows}
    tails = sorted({h.tail for h in hints.values() if h is not None})
    if not tails:
        return 0
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS hint_names (name TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.hint_names")
    conn.executemany("INSERT OR IGNORE INTO temp.hint_names VALUES (?)", [(t,) for t in tails])
    by_qualified: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for node_id, qualified, path in conn.execute(
        "SELECT n.id, n.qualified_name, f.path FROM nodes n JOIN files f ON f.id = n.file_id"
        " WHERE n.name IN (SELECT name FROM temp.hint_names) AND n.kind != 'module'"
    ):
        by_qualified[str(qualified)].append((int(node_id), str(path)))
    reexports = reexports_of(conn)

    targets: dict[str, int | None] = {}
    updates: list[tuple[str, int, int, str, str]] = []
    for src, kind, name, raw_hint in rows:
        hint = str(raw_hint)
        parsed = hints[hint]
        if parsed is None:
            continue
        if hint not in targets:
            targets[hint] = _pick(parsed, by_qualified.get(parsed.qualified, []), reexports)
        target = targets[hint]
        if target is not None and target != src:
            how = "guess" if parsed.mode == "guess" else "import"
            updates.append((how, target, cast(int, src), str(kind), str(name)))
    return write_resolutions(conn, updates)


# (resolution, target node id, source node id, edge kind, called name) of an edge
Resolution = tuple[str, int, int, str, str]


def write_resolutions(conn: apsw.Connection, updates: list[Resolution]) -> int:
    """Point each edge at the definition it resolved to; returns how many."""
    conn.executemany(
        "UPDATE edges SET resolution = ?, dst_id = ?"
        " WHERE src_id = ? AND kind = ? AND dst_name = ?",
        updates,
    )
    return len(updates)
