"""Read helpers over the index: chunk rows with their text, nodes, edges, counts.

Everything returns small frozen records; callers never see apsw cursors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from codesift.parsing.chunks import summary_text
from codesift.store.database import scalar
from codesift.store.filters import time_conditions
from codesift.store.meta import read_meta
from codesift.store.rows import unpack_text
from codesift.timespec import TimeFilter
from codesift.tokens import compact_name, module_name

__all__ = [
    "ChunkRow",
    "EdgeRow",
    "IndexCounts",
    "NodeRow",
    "chunk_rows",
    "code_chunk_of_nodes",
    "edges_from",
    "edges_to",
    "file_stamps",
    "has_files",
    "has_vectors",
    "index_counts",
    "indexed_paths_under",
    "name_tail",
    "named_matches",
    "node_ids_in_file",
    "node_rows",
    "nodes_at_line",
    "nodes_named",
    "resolved_target",
]


@dataclass(frozen=True, slots=True)
class NodeRow:
    id: int
    path: str
    language: str
    kind: str
    name: str
    qualified_name: str
    parent_id: int | None
    start_line: int
    end_line: int
    signature: str
    docstring: str


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str
    language: str
    node_id: int | None
    layer: str
    part: int
    start_line: int
    end_line: int
    title: str
    text: str
    kind: str  # the node's kind, or "section" (doc) / "text" (line window)
    qualified_name: str


@dataclass(frozen=True, slots=True)
class EdgeRow:
    src_id: int
    kind: str
    dst_name: str
    dst_id: int | None
    line: int
    resolution: str | None


@dataclass(frozen=True, slots=True)
class IndexCounts:
    files: int
    nodes: int
    edges: int
    chunks: int
    by_language: dict[str, int]
    last_update: float | None


_NODE_COLUMNS = (
    "n.id, f.path, f.language, n.kind, n.name, n.qualified_name, n.parent_id, n.start_line,"
    " n.end_line, n.signature, n.docstring"
)


def _node(row: Any) -> NodeRow:
    return NodeRow(*row)


def _placeholders(count: int) -> str:
    return ",".join("?" * count)


def node_rows(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, NodeRow]:
    wanted = list(dict.fromkeys(ids))
    out: dict[int, NodeRow] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        for row in conn.execute(
            f"SELECT {_NODE_COLUMNS} FROM nodes n JOIN files f ON f.id = n.file_id"
            f" WHERE n.id IN ({_placeholders(len(batch))})",
            batch,
        ):
            node = _node(row)
            out[node.id] = node
    return out


_QUALIFIER_SEPARATORS = re.compile(r"::|\.|#|->|\\|/")


def nodes_named(
    conn: apsw.Connection,
    name: str,
    *,
    limit: int = 50,
    include_modules: bool = False,
    times: TimeFilter | None = None,
) -> list[NodeRow]:
    """Definitions named `name`, or whose qualified name is `name` or ends with it
    after a separator (`Pool.imap_unordered`, `Cache::evict`); case-insensitive.

    Exact-case matches come first, then qualified-name matches, then the ones in a
    file named after the name (`Widget.java`, `widget/mod.rs`), then by path.
    Looks up the last component through the name index, so it never scans.
    `times` keeps only nodes in a git time window (in the query, before the limit).
    """
    tail = name_tail(name)
    if not tail:
        return []
    kinds = "" if include_modules else " AND n.kind != 'module'"
    time_sql, time_params = time_conditions(times, "n.changed", "n.created") if times else ("", [])
    found = [
        _node(r)
        for r in conn.execute(
            f"SELECT {_NODE_COLUMNS} FROM nodes n JOIN files f ON f.id = n.file_id"
            f" WHERE n.name = ? COLLATE NOCASE{kinds}{time_sql}",
            (tail, *time_params),
        )
    ]
    return named_matches(found, name, limit=limit, include_modules=include_modules)


def name_tail(name: str) -> str:
    """The last component of a name as typed (`Pool.imap` -> `imap`)."""
    return _QUALIFIER_SEPARATORS.split(name.strip())[-1]


def named_matches(
    found: Sequence[NodeRow], name: str, *, limit: int = 50, include_modules: bool = False
) -> list[NodeRow]:
    """Of the definitions `found` whose name is `name_tail(name)` in any case, those
    `nodes_named` returns, in its order (every backend looks them up its own way)."""
    tail = name_tail(name)
    wanted = name.strip().lower()
    qualified = tail != name.strip()

    def normalized(qname: str) -> str:
        return qname.lower()

    def matches(node: NodeRow) -> bool:
        if not qualified:
            return True
        qname = normalized(node.qualified_name)
        return qname == wanted or any(
            qname.endswith(sep + wanted) for sep in (".", "::", "#", "/", "\\")
        )

    hits = [n for n in found if matches(n)]
    if include_modules and not hits:
        # A module asked for by its dotted path (`email.header`) is named by its last part.
        hits = [n for n in found if n.kind == "module" and normalized(n.qualified_name) == wanted]
    named = compact_name(tail)
    hits.sort(
        key=lambda n: (
            n.name != tail and n.qualified_name != name,
            normalized(n.qualified_name) != wanted,
            module_name(n.path) != named,  # then the file named after it (`Widget.java`)
            n.path,
            n.start_line,
        )
    )
    return hits[:limit]


_CHUNK_SQL = (
    "SELECT c.id, f.path, f.language, c.node_id, c.layer, c.part, c.start_line, c.end_line,"
    " c.title, c.text, n.kind, n.qualified_name, n.signature, n.docstring, n.parent_id"
    " FROM chunks c JOIN files f ON f.id = c.file_id LEFT JOIN nodes n ON n.id = c.node_id"
)


def chunk_rows(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, ChunkRow]:
    """Chunks by id, with their text (ast and summary texts are rebuilt from the node)."""
    wanted = list(dict.fromkeys(ids))
    raw: list[Any] = []
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        raw.extend(conn.execute(f"{_CHUNK_SQL} WHERE c.id IN ({_placeholders(len(batch))})", batch))
    context = _summary_context(conn, [row for row in raw if row[4] == "summary" and row[3]])
    out: dict[int, ChunkRow] = {}
    for row in raw:
        (
            cid,
            path,
            language,
            node_id,
            layer,
            part,
            start,
            end,
            title,
            text,
            kind,
            qname,
            signature,
            docstring,
            parent_id,
        ) = row
        layer = str(layer)
        if layer == "ast":
            body = str(signature or "")
        elif layer == "summary" and node_id is not None:
            parents, calls = context
            body = summary_text(
                str(qname),
                str(kind),
                str(signature),
                str(docstring),
                parents.get(parent_id) if parent_id is not None else None,
                calls.get(int(node_id), []),
            )
        else:
            body = unpack_text(text) if text is not None else ""
        if kind is None:
            kind = "section" if layer == "doc" else "text"
        out[int(cid)] = ChunkRow(
            int(cid),
            str(path),
            str(language),
            node_id,
            layer,
            part,
            start,
            end,
            title,
            body,
            str(kind),
            str(qname or title or path),
        )
    return out


def _summary_context(
    conn: apsw.Connection, rows: Sequence[Any]
) -> tuple[dict[int, tuple[str, str]], dict[int, list[str]]]:
    """What summary texts are built from besides the node (`summary_text`): the
    (kind, qualified name) of each parent, and the names each node calls in the
    order of their lines (then names). Read for a page of chunks at once: two
    queries a summary chunk made the static vectors' fill spend a tenth of its
    time here."""
    parent_ids = list(dict.fromkeys(int(r[14]) for r in rows if r[14] is not None))
    node_ids = list(dict.fromkeys(int(r[3]) for r in rows))
    parents: dict[int, tuple[str, str]] = {}
    calls: dict[int, list[str]] = {}
    for start in range(0, len(parent_ids), 500):
        batch = parent_ids[start : start + 500]
        for node_id, kind, qname in conn.execute(
            f"SELECT id, kind, qualified_name FROM nodes WHERE id IN ({_placeholders(len(batch))})",
            batch,
        ):
            parents[int(node_id)] = (str(kind), str(qname))
    for start in range(0, len(node_ids), 500):
        batch = node_ids[start : start + 500]
        for src_id, dst_name in conn.execute(
            "SELECT src_id, dst_name FROM edges WHERE kind = 'calls'"
            f" AND src_id IN ({_placeholders(len(batch))}) ORDER BY src_id, line, dst_name",
            batch,
        ):
            calls.setdefault(int(src_id), []).append(str(dst_name))
    return parents, calls


def code_chunk_of_nodes(
    conn: apsw.Connection, node_ids: Iterable[int], layer: str = "code"
) -> dict[int, int]:
    """node id -> id of its first chunk of `layer`."""
    wanted = list(dict.fromkeys(node_ids))
    out: dict[int, int] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        for node_id, chunk_id in conn.execute(
            f"SELECT node_id, id FROM chunks WHERE layer = ? AND part = 0"
            f" AND node_id IN ({_placeholders(len(batch))})",
            [layer, *batch],
        ):
            out.setdefault(int(node_id), int(chunk_id))
    return out


def _edges(
    conn: apsw.Connection, column: str, node_id: int, kinds: Sequence[str] | None, order: str
) -> list[EdgeRow]:
    kind_filter = f" AND kind IN ({_placeholders(len(kinds))})" if kinds else ""
    return [
        EdgeRow(*r)
        for r in conn.execute(
            "SELECT src_id, kind, dst_name, dst_id, line, resolution FROM all_edges"
            f" WHERE {column} = ?{kind_filter} ORDER BY {order}",
            [node_id, *(kinds or ())],
        )
    ]


def edges_from(
    conn: apsw.Connection, node_id: int, kinds: Sequence[str] | None = None
) -> list[EdgeRow]:
    """Outgoing edges of a node (calls, imports, inherits, contains)."""
    return _edges(conn, "src_id", node_id, kinds, "line")


def edges_to(
    conn: apsw.Connection, node_id: int, kinds: Sequence[str] | None = None
) -> list[EdgeRow]:
    """Incoming edges of a node: those resolved to it."""
    return _edges(conn, "dst_id", node_id, kinds, "src_id, line")


def index_counts(conn: apsw.Connection) -> IndexCounts:
    files = int(scalar(conn, "SELECT count(*) FROM files"))
    nodes = int(scalar(conn, "SELECT count(*) FROM nodes"))
    edges = int(scalar(conn, "SELECT count(*) FROM all_edges"))
    chunks = int(scalar(conn, "SELECT count(*) FROM chunks"))
    by_language = {
        str(lang): int(n)
        for lang, n in conn.execute(
            "SELECT language, count(*) FROM files GROUP BY language ORDER BY count(*) DESC"
        )
    }
    last_update = read_meta(conn, "last_update")
    return IndexCounts(
        files, nodes, edges, chunks, by_language, float(last_update) if last_update else None
    )


def has_files(conn: apsw.Connection) -> bool:
    """Whether the index holds any file (False for one being built the first time)."""
    return scalar(conn, "SELECT 1 FROM files LIMIT 1") is not None


def has_vectors(conn: apsw.Connection) -> bool:
    """Whether any chunk has a vector (a search then embeds its query)."""
    return conn.execute("SELECT 1 FROM embedded LIMIT 1").fetchone() is not None


def node_ids_in_file(conn: apsw.Connection, path: str) -> list[int]:
    """The ids of a file's nodes, outermost first in file order."""
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT n.id FROM nodes n JOIN files f ON f.id = n.file_id WHERE f.path = ?"
            " ORDER BY n.start_line, n.end_line DESC",
            (path,),
        )
    ]


def nodes_at_line(conn: apsw.Connection, path: str, line: int) -> list[tuple[int, str, int]]:
    """(id, name, start line) of the nodes of `path` spanning `line`, innermost first."""
    return [
        (int(node_id), str(name), int(start))
        for node_id, name, start in conn.execute(
            "SELECT n.id, n.name, n.start_line FROM nodes n JOIN files f ON f.id ="
            " n.file_id WHERE f.path = ? AND n.start_line <= ? AND n.end_line >= ?"
            " ORDER BY n.start_line DESC, n.end_line",
            (path, line, line),
        )
    ]


def resolved_target(conn: apsw.Connection, src_id: int, name: str) -> int | None:
    """The node an edge from `src_id` to `name` was resolved to (calls first)."""
    row = conn.execute(
        "SELECT dst_id FROM edges WHERE src_id = ? AND dst_name = ? AND dst_id IS NOT NULL"
        " ORDER BY kind = 'calls' DESC LIMIT 1",
        (src_id, name),
    ).fetchone()
    return None if row is None else int(row[0])


def indexed_paths_under(conn: apsw.Connection, folder: str) -> list[str]:
    """Indexed paths inside the folder `folder` (relative, no trailing slash)."""
    prefix = folder.rstrip("/") + "/"
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT path FROM files WHERE path >= ? AND path < ?", (prefix, prefix[:-1] + "0")
        )
    ]


def file_stamps(conn: apsw.Connection, paths: Sequence[str]) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) as indexed, for those of `paths` in the index."""
    out: dict[str, tuple[int, int]] = {}
    for start in range(0, len(paths), 500):
        batch = list(paths[start : start + 500])
        for path, size, mtime in conn.execute(
            f"SELECT path, size, mtime_ns FROM files WHERE path IN ({_placeholders(len(batch))})",
            batch,
        ):
            out[str(path)] = (int(size), int(mtime))
    return out
