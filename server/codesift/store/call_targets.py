"""The call pass's rows: files whose calls edges wait for the pass, and writing
them (call_pass.py runs the pass).

A large index run leaves each file's calls to the pass (`files.calls_pending = 1`,
migration 11): a new index without their call sites at all, so its summary chunks
do not name the calls yet; an index that has vectors with the calls edges' names
and lines but no targets, so its summaries keep their text and vectors
(parsing/model.py CallSites). The pass parses such a file again, resolves its
calls as an ordinary index run would and writes its calls edges whole, with the
text hashes of its summaries that name calls (`calls_pending = 2`); cross-file
resolution (IndexWriter.resolve_edges) follows the last file, and then every file
is complete (`0`, `finish_calls`).
"""

from __future__ import annotations

from dataclasses import dataclass

import apsw

from codesift.store.database import scalar
from codesift.store.meta import read_meta, write_meta
from codesift.store.rows import EdgeRow, text_hash

__all__ = [
    "PendingCalls",
    "calls_owed",
    "calls_pending_count",
    "clear_calls_owed",
    "finish_calls",
    "has_vectors",
    "leave_to_next_index",
    "mark_calls_owed",
    "pending_call_files",
    "targets_pending_count",
    "write_file_calls",
]

# (kind, qualified name, start line) of a node, in the file's order.
NodeSpot = tuple[str, str, int]


@dataclass(frozen=True, slots=True)
class PendingCalls:
    file_id: int
    path: str
    content_hash: str
    language: str


# Set by an index run that writes calls without targets, cleared by the pass once
# every edge is resolved across files: a pass killed after its last file but
# before that resolution is still owed.
_OWED = "calls_pass_owed"


def mark_calls_owed(conn: apsw.Connection) -> None:
    write_meta(conn, _OWED, "1")


def clear_calls_owed(conn: apsw.Connection) -> None:
    write_meta(conn, _OWED, "0")


def calls_owed(conn: apsw.Connection) -> bool:
    """Whether the call pass has work left (files, or the resolution after them)."""
    return read_meta(conn, _OWED) == "1" or calls_pending_count(conn) > 0


def calls_pending_count(conn: apsw.Connection) -> int:
    """Files whose calls are not complete yet: their targets, or the resolution
    across files that follows the last file, are still to come."""
    return int(scalar(conn, "SELECT count(*) FROM files WHERE calls_pending != 0") or 0)


def targets_pending_count(conn: apsw.Connection) -> int:
    """Files whose calls edges still wait for their targets."""
    return int(scalar(conn, "SELECT count(*) FROM files WHERE calls_pending = 1") or 0)


def has_vectors(conn: apsw.Connection) -> bool:
    """Whether the index keeps any chunk vectors: a large run over it then writes
    its calls edges' names (parsing/model.py CallSites "names"), which its
    summaries' texts, and so those vectors, depend on."""
    return conn.execute("SELECT 1 FROM embedded LIMIT 1").fetchone() is not None


def finish_calls(conn: apsw.Connection) -> None:
    """After the resolution across files: every file's calls are complete."""
    conn.execute("UPDATE files SET calls_pending = 0 WHERE calls_pending != 0")
    clear_calls_owed(conn)


def pending_call_files(conn: apsw.Connection) -> list[PendingCalls]:
    return [
        PendingCalls(int(r[0]), str(r[1]), str(r[2]), str(r[3]))
        for r in conn.execute(
            "SELECT id, path, content_hash, language FROM files WHERE calls_pending = 1 ORDER BY id"
        )
    ]


def leave_to_next_index(conn: apsw.Connection, file_id: int) -> None:
    """A file that changed on disk since it was indexed: the next index run parses
    it whole, even when its content is by then back to what was indexed (its stamp
    and hash are forgotten, as migration 9 does)."""
    conn.execute(
        "UPDATE files SET calls_pending = 0, mtime_ns = -1, content_hash = '' WHERE id = ?",
        (file_id,),
    )


def write_file_calls(
    conn: apsw.Connection,
    file_id: int,
    nodes: list[NodeSpot],
    calls: list[EdgeRow],
    summaries: list[tuple[int, str]],
) -> list[tuple[int, int, str]] | None:
    """Write a file's calls edges whole (`calls`: as an index run makes them, node
    references by position in `nodes`), replacing those written without targets,
    and the text hashes of its summary chunks that name calls (`summaries`: node
    position, text); clear its mark. Returns the (chunk id, new text hash, text) of
    the summaries whose text changed; None, writing nothing, when the index's nodes of
    the file are not those of `nodes` (it was written by another parse)."""
    from codesift.store.writer import insert_edges  # not for a cold `callers`

    ids = _node_ids(conn, file_id, nodes)
    if ids is None:
        return None
    conn.execute(
        "DELETE FROM edges WHERE kind = 'calls'"
        " AND src_id IN (SELECT id FROM nodes WHERE file_id = ?)",
        (file_id,),
    )
    insert_edges(conn, calls, ids)
    changed: list[tuple[int, int, str]] = []
    for position, text in summaries:
        digest = text_hash(text)
        chunk_id = scalar(
            conn,
            "SELECT id FROM chunks WHERE node_id = ? AND layer = 'summary' AND text_hash != ?",
            (ids[position], digest),
        )
        if chunk_id is not None:
            changed.append((int(chunk_id), digest, text))
    conn.executemany(
        "UPDATE chunks SET text_hash = ? WHERE id = ?", [(d, c) for c, d, _ in changed]
    )
    # 2: edges written, the resolution across files still to come (finish_calls).
    conn.execute("UPDATE files SET calls_pending = 2 WHERE id = ?", (file_id,))
    return changed


def _node_ids(conn: apsw.Connection, file_id: int, nodes: list[NodeSpot]) -> list[int] | None:
    """The id of each of `nodes` in the index, or None when they differ."""
    by_spot: dict[NodeSpot, list[int]] = {}
    count = 0
    for node_id, kind, qualified_name, start_line in conn.execute(
        "SELECT id, kind, qualified_name, start_line FROM nodes WHERE file_id = ? ORDER BY id",
        (file_id,),
    ):
        by_spot.setdefault((str(kind), str(qualified_name), int(start_line)), []).append(
            int(node_id)
        )
        count += 1
    if count != len(nodes):
        return None
    ids: list[int] = []
    for spot in nodes:
        found = by_spot.get(spot)
        if not found:
            return None
        ids.append(found.pop(0))
    return ids
