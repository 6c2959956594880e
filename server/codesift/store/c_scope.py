"""C's linkage for calls the caller's own file did not resolve (store/writer.py
runs this after the unique-name step).

A `static` function defined in a `.c` file is visible in that file only (and
in a file that `#include`s that `.c` file, as lz4hc.c includes lz4.c): it is
never the callee of a call written in another file. So

- an edge the unique-name step linked to a static function of another file
  that the caller's file does not include is unlinked;
- a call left unresolved because several files define the name is linked when
  exactly one of those definitions is visible from the caller's file: not
  static, or static in the caller's own file or in a file it includes. A
  header's prototype does not count (the call reaches the definition), as in
  the unique-name step.

Both keep the confidence `unique` (found by its name, among the definitions
the language lets the call reach). "static" is read from the signature (it
starts with `static`, as `static inline` does).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import cast

import apsw

__all__ = ["C_HEADER_SUFFIXES", "resolve_c_scope"]

C_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".h++")
_C_LANGUAGES = "('c', 'cpp')"
# src_id, dst_name, dst_id, resolution, the source's file, a candidate's id, file,
# path, and whether it is static
_Row = tuple[int, str, int | None, str | None, int, int, int, str, int]


def resolve_c_scope(conn: apsw.Connection, where: str) -> int:
    """Apply C's static linkage to the calls `where` selects (an SQL condition on
    `edges`); the number of edges changed."""
    rows = conn.execute(
        f"""SELECT edges.src_id, edges.dst_name, edges.dst_id, edges.resolution,
                   s.file_id, t.id, t.file_id, tf.path, t.signature LIKE 'static%'
            FROM edges
            JOIN nodes s ON s.id = edges.src_id
            JOIN files sf ON sf.id = s.file_id AND sf.language IN {_C_LANGUAGES}
            JOIN nodes t ON t.name = edges.dst_name AND t.kind != 'module'
            JOIN files tf ON tf.id = t.file_id
            WHERE {where} AND edges.kind = 'calls'
              AND (edges.resolution IS NULL OR edges.resolution = 'unique')"""
    ).fetchall()
    if not rows:
        return 0
    # (source, name) -> its edge's target and resolution, the source's file, and
    # the candidates: (node, file, path, static)
    edges: dict[tuple[int, str], tuple[int | None, str | None, int]] = {}
    candidates: dict[tuple[int, str], list[tuple[int, int, str, bool]]] = defaultdict(list)
    for row in rows:
        src, name, dst, resolution, src_file, node, file_id, path, static = cast(_Row, row)
        key = (src, name)
        edges[key] = (dst, resolution, src_file)
        if not str(path).endswith(C_HEADER_SUFFIXES):
            candidates[key].append((node, file_id, str(path), bool(static)))
    includes = _includes(conn, {file_id for _, _, file_id in edges.values()})
    unlink: list[tuple[int, str]] = []
    link: list[tuple[int, int, str]] = []
    for key, (dst, resolution, src_file) in edges.items():
        seen = includes.get(src_file, ())
        visible = [
            node
            for node, file_id, path, static in candidates.get(key, ())
            if not static or file_id == src_file or _included(path, seen)
        ]
        wrong = resolution == "unique" and any(
            c[0] == dst and c[0] not in visible for c in candidates.get(key, ())
        )  # linked to a static function of another file
        if (resolution is None or wrong) and len(visible) == 1 and visible[0] != key[0]:
            link.append((visible[0], *key))
        elif wrong:
            unlink.append(key)
    # In the caller's transaction (the indexer's resolve step).
    conn.executemany(
        "UPDATE edges SET dst_id = NULL, resolution = NULL"
        " WHERE src_id = ? AND kind = 'calls' AND dst_name = ?",
        unlink,
    )
    conn.executemany(
        "UPDATE edges SET dst_id = ?, resolution = 'unique'"
        " WHERE src_id = ? AND kind = 'calls' AND dst_name = ?",
        link,
    )
    return len(unlink) + len(link)


def _includes(conn: apsw.Connection, files: set[int]) -> dict[int, tuple[str, ...]]:
    """The `#include`d paths of each file (as written: `lz4.c`, `brotli/decode.h`)."""
    out: dict[int, list[str]] = defaultdict(list)
    for file_id in files:
        for (name,) in conn.execute(
            "SELECT e.dst_name FROM nodes m JOIN edges e ON e.src_id = m.id"
            " WHERE m.file_id = ? AND m.kind = 'module' AND e.kind = 'imports'",
            (file_id,),
        ):
            out[file_id].append(str(name))
    return {file_id: tuple(names) for file_id, names in out.items()}


def _included(path: str, includes: tuple[str, ...]) -> bool:
    for written in includes:
        name = posixpath.normpath(written.lstrip("./")) if written else ""
        if name and (path == name or path.endswith("/" + name)):
            return True
    return False
