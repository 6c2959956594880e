"""Edges resolved across files: the calls, inherits and imports edges a file could not
resolve itself, linked to their definitions once the index holds every file.

An import hint that names a qualified node wins; then the path, Python and script
hints (store/path_hints.py, python_hints.py, script_hints.py); then a name defined
exactly once in the index (outside C/C++ headers); then C scopes (c_scope.py). The
writer (store/writer.py) calls this after its batches.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import apsw

from codesift.store.c_scope import resolve_c_scope
from codesift.store.path_hints import resolve_path_hints
from codesift.store.python_hints import resolve_python_hints
from codesift.store.script_hints import resolve_script_hints

__all__ = ["resolve_edges"]

# SQL for the last component of edges.dst_hint (after its last '.', ':' or '\'):
# rtrim strips every character that is not a separator from the right.
_HINT_TAIL = (
    "substr(edges.dst_hint, length(rtrim(edges.dst_hint, replace(replace(replace("
    "edges.dst_hint, '.', ''), ':', ''), '\\', ''))) + 1)"
)
# A C/C++ header file, by its path (parsing/extractor.py HEADER_SUFFIXES).
_HEADER_FILE = (
    "("
    + " OR ".join(
        f"files.path LIKE '%{suffix}'" for suffix in (".h", ".hh", ".hpp", ".hxx", ".h++")
    )
    + ")"
)
# Edges whose written name is not the hinted definition's name (`import foo as bar`);
# the same expression as the partial index edges_aliased (migration 3), so it is used.
_ALIASED = f"dst_hint != '' AND dst_name != {_HINT_TAIL.replace('edges.', '')}"
# A Python edge (dotted hint, no path) whose hint starts with a standard-library
# module or `builtins` that is no folder or module name of the project's Python
# files (temp.python_tops): `json.dumps`, `os.path.join`, `builtins.next`. (Any
# other unknown first name may be the project's own package seen from inside it,
# a workspace opened on a subfolder: such edges may still resolve by name.)
_OUTSIDE_PYTHON_HINT = (
    "edges.dst_hint != '' AND instr(edges.dst_hint, '/') = 0"
    " AND instr(edges.dst_hint, ':') = 0 AND instr(edges.dst_hint, char(92)) = 0"
    " AND substr(edges.dst_hint, 1, instr(edges.dst_hint || '.', '.') - 1)"
    " IN (SELECT name FROM temp.python_outside)"
    " AND EXISTS (SELECT 1 FROM nodes s JOIN files f ON f.id = s.file_id"
    " WHERE s.id = edges.src_id AND f.language = 'python')"
)
# Edges this writer resolves (or leaves unresolved): not those the file itself
# resolved (scope, type, guess; `local` in indexes made before confidences).
_RESOLVED_HERE = (
    "(coalesce(edges.resolution, '') IN ('', 'import', 'unique', 'hint')"
    # a hint this writer walked to its target (a receiver's class and its bases)
    " OR (edges.resolution = 'type' AND edges.dst_hint != ''))"
)
# What Python reaches without the project: its standard library and builtins.
_PYTHON_OUTSIDE = frozenset(sys.stdlib_module_names) | {"builtins"}


def resolve_edges(
    conn: apsw.Connection,
    names: Iterable[str] | None = None,
    sources: Iterable[int] | None = None,
) -> int:
    """Resolve calls/inherits/imports edges that are not resolved locally.

    With neither argument, every such edge. Otherwise only edges whose target
    name is in `names` (definitions of that name appeared, vanished or changed
    id) or whose source node is in `sources` (edges just written). An import
    hint that names a qualified node wins; otherwise a name defined exactly
    once in the index.
    """
    if names is None and sources is None:
        where = _RESOLVED_HERE
        name_filter = ""
    else:
        name_list = sorted(set(names or ()))
        source_list = sorted(set(sources or ()))
        if not name_list and not source_list:
            return 0
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS touched_names (name TEXT PRIMARY KEY)")
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS touched_sources (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.touched_names")
        conn.execute("DELETE FROM temp.touched_sources")
        conn.executemany(
            "INSERT OR IGNORE INTO temp.touched_names VALUES (?)", [(n,) for n in name_list]
        )
        conn.executemany(
            "INSERT OR IGNORE INTO temp.touched_sources VALUES (?)",
            [(i,) for i in source_list],
        )
        # An aliased call points at a name other than the one it is written with.
        conn.execute(
            "INSERT OR IGNORE INTO temp.touched_sources SELECT src_id FROM edges"
            f" WHERE {_ALIASED} AND {_HINT_TAIL.replace('edges.', '')}"
            " IN (SELECT name FROM temp.touched_names)"
        )
        # Names the revisited edges point at: the touched names and the targets of
        # the touched sources' edges (only these need the unique-name count).
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS wanted_names (name TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM temp.wanted_names")
        conn.execute("INSERT INTO temp.wanted_names SELECT name FROM temp.touched_names")
        conn.executemany(
            "INSERT OR IGNORE INTO temp.wanted_names"
            f" SELECT dst_name FROM edges WHERE src_id = ? AND {_RESOLVED_HERE}",
            [(i,) for i in source_list],
        )
        where = (
            f"{_RESOLVED_HERE} AND ("
            "edges.dst_name IN (SELECT name FROM temp.touched_names)"
            " OR edges.src_id IN (SELECT id FROM temp.touched_sources))"
        )
        name_filter = "AND name IN (SELECT name FROM temp.wanted_names)"
    conn.execute(f"UPDATE edges SET dst_id = NULL, resolution = NULL WHERE {where}")
    conn.execute(
        f"""UPDATE edges SET dst_id = n.id, resolution = 'import' FROM nodes n
            WHERE {where} AND edges.dst_hint != ''
              -- through the name index: the hint's last component is the node's name
              AND n.name = {_HINT_TAIL} AND n.qualified_name = edges.dst_hint"""
    )
    resolve_path_hints(conn, where)
    resolve_python_hints(conn, where)
    resolve_script_hints(conn, where)
    # The standard library's modules that are no folder or module name of the
    # project's Python files: a Python edge whose hint starts with one
    # (`json.dumps`, `builtins.next`) reaches outside the project and is never
    # linked to a definition by its name alone.
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS python_outside (name TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.python_outside")
    segments: set[str] = set()
    for (path,) in conn.execute("SELECT path FROM files WHERE language = 'python'"):
        parts = str(path).split("/")
        parts[-1] = parts[-1].rsplit(".", 1)[0]
        segments.update(parts)
    conn.executemany(
        "INSERT OR IGNORE INTO temp.python_outside VALUES (?)",
        [(name,) for name in sorted(_PYTHON_OUTSIDE - segments)],
    )
    node_filter = name_filter.replace("name IN", "nodes.name IN")
    # A name defined once outside C/C++ headers resolves to that definition even
    # when a header declares it too (a prototype, an in-class method declaration).
    conn.execute(
        f"""UPDATE edges SET dst_id = u.id, resolution = 'unique'
            FROM (SELECT name, CASE WHEN sum(NOT header) = 1
                                    THEN min(CASE WHEN NOT header THEN id END)
                                    WHEN sum(NOT header) = 0 AND count(*) = 1
                                    THEN min(id) END AS id
                  FROM (SELECT nodes.name, nodes.id, {_HEADER_FILE} AS header
                        FROM nodes JOIN files ON files.id = nodes.file_id
                        WHERE nodes.kind != 'module' {node_filter})
                  GROUP BY name HAVING id IS NOT NULL) AS u
            WHERE {where} AND edges.resolution IS NULL AND edges.dst_name = u.name
              -- a call that did not resolve in its own file is not a self-call
              AND u.id != edges.src_id
              AND substr(edges.dst_hint, 1, 1) != '*'
              AND NOT ({_OUTSIDE_PYTHON_HINT})"""
    )
    changed = int(conn.changes())
    return changed + resolve_c_scope(conn, where)
