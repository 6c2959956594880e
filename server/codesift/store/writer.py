"""The one writer: replaces a file's rows, deletes files, and resolves edges across
files (store/edge_resolution.py).

Callers wrap each batch in a transaction (`with conn:`); a file's rows and its
`files` row change together, so an interrupted run never records a file as
indexed unless all of its rows are there.

Ids of nodes and chunks are allocated in insertion order (the next integer
above the largest id), and a re-indexed file keeps the ids of the nodes and
chunks it still has (matched by kind, qualified name and position among
namesakes; chunks by their node, layer and part). So an unchanged function keeps
its id, edges that point at it from other files stay valid, and its vectors stay
attached to its chunks; while a bulk build inserts every B-tree and full-text
index in rowid order, which is about four times faster and a third smaller than
scattered ids.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import apsw

from codesift.parsing.model import EXTRACTION_VERSION
from codesift.store.database import scalar
from codesift.store.edge_resolution import resolve_edges
from codesift.store.indexed_files import (
    EXTRACTION_KEY,
    extraction_is,
    indexed_files,
    run_in_progress,
    skipped_files,
)
from codesift.store.meta import read_meta, write_meta
from codesift.store.python_hints import names_behind, structure_of
from codesift.store.row_ids import ChunkKey, NodeKey, allocate_ids, keys_of_chunks, keys_of_nodes
from codesift.store.rows import FTS_AST, FTS_CODE, FTS_DOC, EdgeRow, FileMeta, FileRows, NodeRow
from codesift.store.vector_stamps import bump_vectors_removed

__all__ = ["FileChange", "IndexWriter", "insert_edges"]

# meta key: the parsing version every indexed file was parsed by.
_EXTRACTION_KEY = EXTRACTION_KEY
_FTS_TABLES = ("code_fts", "ast_fts", "doc_fts", "names_fts")
# The full-text table of each chunk layer that has one.
_FTS_OF_LAYER = (("code_fts", "code"), ("ast_fts", "ast"), ("doc_fts", "doc"))


@dataclass(slots=True)
class FileChange:
    """What replacing (or deleting) one file did.

    `touched_names`: names whose definitions appeared, vanished or changed id;
    edges elsewhere that point at those names must be resolved again.
    `orphaned_sources`: nodes in other files with an edge to a node that is gone;
    their edges must be resolved again too (this catches aliased imports, whose
    written name differs from the definition's).
    """

    nodes: int = 0
    edges: int = 0
    chunks: int = 0
    node_ids: tuple[int, ...] = ()
    touched_names: set[str] = field(default_factory=set)
    orphaned_sources: set[int] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class _OldRows:
    node_ids: dict[NodeKey, int]
    node_names: dict[int, str]
    chunk_ids: dict[ChunkKey, int]


def insert_edges(conn: apsw.Connection, edges: list[EdgeRow], node_ids: list[int]) -> int:
    """Insert a file's edge rows (node references by position, `node_ids` their ids)."""
    params = [
        (
            node_ids[src],
            kind,
            node_ids[dst] if dst >= 0 else None,
            dst_name,
            dst_hint,
            line,
            (confidence or "scope") if dst >= 0 else None,
        )
        for src, kind, dst, dst_name, dst_hint, line, confidence in edges
    ]
    conn.executemany(
        "INSERT OR IGNORE INTO edges (src_id, kind, dst_id, dst_name, dst_hint, line,"
        " resolution) VALUES (?,?,?,?,?,?,?)",
        params,
    )
    return len(params)


class IndexWriter:
    """Writes index rows through one connection. Not thread-safe: one per writer thread."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        # Outside git, a file's nodes and chunks are dated by its modification time:
        # written with the rows, instead of a second pass over them (history/update.py).
        self.times_from_mtime = False
        # Whether rows were deleted or replaced since the last compaction (`compact`).
        self._removed_rows = False

    def file_id(self, path: str) -> int | None:
        row = self.conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        return int(row[0]) if row else None

    def known_files(self) -> dict[str, tuple[int, int]]:
        """Every indexed file's (size, mtime_ns), by path."""
        return indexed_files(self.conn)

    def skipped_files(self) -> dict[str, tuple[int, int, str]]:
        """Every file left out when last read: (size, mtime_ns, reason), by path."""
        return skipped_files(self.conn)

    def extraction_current(self) -> bool:
        """Whether the indexed files were parsed by this version of parsing
        (parsing/model.py, EXTRACTION_VERSION). An index with no file is current."""
        return extraction_is(self.conn, EXTRACTION_VERSION)

    def record_extraction(self) -> None:
        """Note that every indexed file was parsed by this version of parsing."""
        if read_meta(self.conn, _EXTRACTION_KEY) != str(EXTRACTION_VERSION):
            write_meta(self.conn, _EXTRACTION_KEY, str(EXTRACTION_VERSION))

    def content_hash(self, path: str) -> str | None:
        """The content hash the file was indexed with, or None when it is not indexed."""
        value = scalar(self.conn, "SELECT content_hash FROM files WHERE path = ?", (path,))
        return None if value is None else str(value)

    def file_count(self) -> int:
        return int(scalar(self.conn, "SELECT count(*) FROM files"))

    def record_update(self, root: str) -> None:
        """Note that the index of the folder `root` was updated now (meta
        `last_update` and `root`; inside the caller's transaction)."""
        write_meta(self.conn, "last_update", f"{time.time():.3f}")
        write_meta(self.conn, "root", root)

    def _old_rows(self, file_id: int) -> _OldRows:
        conn = self.conn
        old_nodes = [
            (int(r[0]), str(r[1]), str(r[2]), str(r[3]))
            for r in conn.execute(
                "SELECT id, kind, qualified_name, name FROM nodes WHERE file_id = ?"
                " ORDER BY start_line, id",
                (file_id,),
            )
        ]
        node_keys = keys_of_nodes((kind, qname) for _, kind, qname, _ in old_nodes)
        key_of_node = {row[0]: key for row, key in zip(old_nodes, node_keys, strict=True)}
        old_chunks = [
            (int(r[0]), r[1], str(r[2]), int(r[3]), str(r[4]))
            for r in conn.execute(
                "SELECT id, node_id, layer, part, title FROM chunks WHERE file_id = ? ORDER BY id",
                (file_id,),
            )
        ]
        chunk_keys = keys_of_chunks(
            (key_of_node.get(node_id) if node_id is not None else title, layer, part)
            for _, node_id, layer, part, title in old_chunks
        )
        return _OldRows(
            node_ids={key: row[0] for row, key in zip(old_nodes, node_keys, strict=True)},
            node_names={row[0]: row[3] for row in old_nodes},
            chunk_ids={key: row[0] for row, key in zip(old_chunks, chunk_keys, strict=True)},
        )

    def _delete_rows(self, file_id: int) -> None:
        conn = self.conn
        self._removed_rows = True
        for table, layer in _FTS_OF_LAYER:
            conn.execute(
                f"DELETE FROM {table} WHERE rowid IN "
                "(SELECT id FROM chunks WHERE file_id = ? AND layer = ?)",
                (file_id, layer),
            )
        conn.execute(
            "DELETE FROM names_fts WHERE rowid IN (SELECT id FROM nodes WHERE file_id = ?)",
            (file_id,),
        )
        conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        conn.execute(
            "DELETE FROM edges WHERE src_id IN (SELECT id FROM nodes WHERE file_id = ?)",
            (file_id,),
        )
        conn.execute("DELETE FROM nodes WHERE file_id = ?", (file_id,))

    def _forget(self, removed_nodes: Iterable[int], removed_chunks: Iterable[int]) -> set[int]:
        """Drop the vectors of chunks that are gone (their ids may be given to new
        chunks) and return the nodes elsewhere with edges to nodes that are gone."""
        conn = self.conn
        chunk_params = [(chunk_id,) for chunk_id in removed_chunks]
        if chunk_params:
            conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", chunk_params)
            before = conn.total_changes()
            conn.executemany("DELETE FROM embedded WHERE chunk_id = ?", chunk_params)
            if conn.total_changes() != before:
                bump_vectors_removed(conn)
        sources: set[int] = set()
        for node_id in removed_nodes:
            sources.update(
                row[0]
                for row in conn.execute("SELECT src_id FROM edges WHERE dst_id = ?", (node_id,))
            )
        return sources

    def delete_file(self, path: str) -> FileChange:
        """Remove a file and its rows."""
        file_id = self.file_id(path)
        if file_id is None:
            return FileChange()
        old = self._old_rows(file_id)
        self._delete_rows(file_id)
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
        orphaned = self._forget(old.node_names, old.chunk_ids.values())
        return FileChange(touched_names=set(old.node_names.values()), orphaned_sources=orphaned)

    def record_skipped(self, path: str, size: int, mtime_ns: int, reason: str) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO skipped_files (path, size, mtime_ns, reason) VALUES (?,?,?,?)",
            (path, size, mtime_ns, reason),
        )

    def forget_skipped(self, path: str) -> None:
        self.conn.execute("DELETE FROM skipped_files WHERE path = ?", (path,))

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Record a new mtime for a file whose content hash did not change."""
        self.conn.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
        )

    def replace_file(self, meta: FileMeta, rows: FileRows) -> FileChange:
        """Replace every row of `meta.path` with `rows` (inside the caller's transaction)."""
        conn = self.conn
        file_id = self.file_id(meta.path)
        old = _OldRows({}, {}, {})
        # Taken before the old rows go, so a new id never equals a kept one.
        next_node = int(scalar(conn, "SELECT coalesce(max(id), 0) FROM nodes")) + 1
        next_chunk = int(scalar(conn, "SELECT coalesce(max(id), 0) FROM chunks")) + 1
        # A Python file's bases and imports before: calls elsewhere walk them.
        structure = structure_of(conn, file_id) if meta.language == "python" and file_id else None
        if file_id is not None:
            old = self._old_rows(file_id)
            self._delete_rows(file_id)
        now = time.time()
        dated = self.times_from_mtime
        values = (
            meta.size,
            meta.mtime_ns,
            meta.content_hash,
            meta.language,
            meta.line_count,
            rows.errors,
            int(meta.invalid_utf8),
            int(meta.generated),
            int(rows.calls_pending),
            now,
            now if dated else None,
        )
        # A plain INSERT or UPDATE without RETURNING: RETURNING opens a statement
        # savepoint, at which every FTS5 table flushes its pending terms into a new
        # segment, once per file (a third of a bulk build's write time went there).
        # An update keeps the file's row id.
        if file_id is None:
            conn.execute(
                "INSERT INTO files (size, mtime_ns, content_hash, language, line_count,"
                " parse_errors, invalid_utf8, generated, calls_pending, indexed_at, history_at,"
                " path) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, meta.path),
            )
            file_id = int(conn.last_insert_rowid())
        else:
            conn.execute(
                "UPDATE files SET size = ?, mtime_ns = ?, content_hash = ?, language = ?,"
                " line_count = ?, parse_errors = ?, invalid_utf8 = ?, generated = ?,"
                " calls_pending = ?, indexed_at = ?, history_at = ? WHERE id = ?",
                (*values, file_id),
            )
        when = meta.mtime_ns // 1_000_000_000 if dated else None
        commit = 0 if dated else None  # 0: a file-time fallback (migration 4)
        # Keys match a re-read file's rows to their old ids; a new file's ids simply
        # follow on (most of a first index: the keys cost ~0.3 CPU-s on 227k chunks).
        node_keys = (
            keys_of_nodes((n[0], n[2]) for n in rows.nodes) if old.node_ids or old.chunk_ids else []
        )
        node_ids = (
            allocate_ids(node_keys, old.node_ids, next_node)
            if old.node_ids
            else list(range(next_node, next_node + len(rows.nodes)))
        )
        self._insert_nodes(file_id, rows.nodes, node_ids, when, commit)
        edge_count = self._insert_edges(rows, node_ids)
        chunk_ids = self._insert_chunks(
            file_id, rows, node_keys, node_ids, old, next_chunk, when, commit
        )

        if rows.vectors:  # computed with the rows (embedding/row_vectors.py)
            self._insert_row_vectors(rows, chunk_ids, kept=bool(old.chunk_ids))
        kept_nodes = set(node_ids)
        kept_chunks = set(chunk_ids)
        orphaned = self._forget(
            (i for i in old.node_names if i not in kept_nodes),
            (i for i in old.chunk_ids.values() if i not in kept_chunks),
        )
        old_pairs = {(name, node_id) for node_id, name in old.node_names.items()}
        new_pairs = {(n[1], node_id) for n, node_id in zip(rows.nodes, node_ids, strict=True)}
        touched = {name for name, _ in old_pairs ^ new_pairs}
        if structure is not None:
            # A base or a re-export that changed: the names calls reach through it.
            touched |= names_behind(conn, structure ^ structure_of(conn, file_id))
        return FileChange(
            nodes=len(node_ids),
            edges=edge_count,
            chunks=len(chunk_ids),
            node_ids=tuple(node_ids),
            touched_names=touched,
            orphaned_sources=orphaned - kept_nodes,
        )

    def _insert_row_vectors(self, rows: FileRows, chunk_ids: list[int], *, kept: bool) -> None:
        """Store the vectors computed with a file's rows, except over a vector its
        chunk already has of the same text (`kept`: the file had chunks before,
        whose ids its unchanged chunks keep; that vector may be MiniLM's)."""
        from codesift.store.vectors import embedded_hashes, insert_vectors  # numpy: only then

        chunks = rows.chunks
        new = [(chunk_ids[at], chunks[at][1], blob, chunks[at][7]) for at, blob in rows.vectors]
        if kept:
            current = embedded_hashes(self.conn, [chunk_id for chunk_id, _, _, _ in new])
            new = [row for row in new if current.get(row[0]) != row[3]]
        if new:
            insert_vectors(self.conn, new, rows.vector_model, replace=kept)

    def _insert_nodes(
        self,
        file_id: int,
        nodes: list[NodeRow],
        ids: list[int],
        when: int | None,
        commit: int | None,
    ) -> None:
        conn = self.conn
        conn.executemany(
            "INSERT INTO nodes (id, file_id, parent_id, kind, name, qualified_name, start_line,"
            " end_line, signature, docstring, created, created_commit, changed, changed_commit)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    node_id,
                    file_id,
                    None if n[3] < 0 else ids[n[3]],
                    n[0],
                    n[1],
                    n[2],
                    n[4],
                    n[5],
                    n[6],
                    n[7],
                    when,
                    commit,
                    when,
                    commit,
                )
                for n, node_id in zip(nodes, ids, strict=True)
            ],
        )
        conn.executemany(
            "INSERT INTO names_fts (rowid, name) VALUES (?,?)",
            [(node_id, n[1]) for n, node_id in zip(nodes, ids, strict=True)],
        )

    def _insert_edges(self, rows: FileRows, node_ids: list[int]) -> int:
        return insert_edges(self.conn, rows.edges, node_ids)

    def _insert_chunks(
        self,
        file_id: int,
        rows: FileRows,
        node_keys: list[NodeKey],
        node_ids: list[int],
        old: _OldRows,
        next_chunk: int,
        when: int | None,
        commit: int | None,
    ) -> list[int]:
        if old.chunk_ids:
            keys = keys_of_chunks(
                (node_keys[c[0]] if c[0] >= 0 else c[5], c[1], c[2]) for c in rows.chunks
            )
            ids = allocate_ids(keys, old.chunk_ids, next_chunk)
        else:
            ids = list(range(next_chunk, next_chunk + len(rows.chunks)))
        conn = self.conn
        conn.executemany(
            "INSERT INTO chunks (id, file_id, node_id, layer, part, start_line, end_line, title,"
            " text, text_hash, created, changed, changed_commit)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    chunk_id,
                    file_id,
                    node_ids[c[0]] if c[0] >= 0 else None,
                    c[1],
                    c[2],
                    c[3],
                    c[4],
                    c[5],
                    c[6],
                    c[7],
                    when,
                    when,
                    commit,
                )
                for c, chunk_id in zip(rows.chunks, ids, strict=True)
            ],
        )
        for table, fts in (("code_fts", FTS_CODE), ("ast_fts", FTS_AST), ("doc_fts", FTS_DOC)):
            conn.executemany(
                f"INSERT INTO {table} (rowid, body) VALUES (?,?)",
                [(i, c[9]) for c, i in zip(rows.chunks, ids, strict=True) if c[8] == fts],
            )
        return ids

    def run_marker(self) -> bool:
        """True when an earlier run started writing and never finished."""
        return run_in_progress(self.conn)

    def set_run_marker(self, running: bool) -> None:
        """Mark (or unmark) a run in progress; call inside the caller's transaction,
        so the mark is committed together with the first rows it covers."""
        write_meta(self.conn, "run_in_progress", f"{time.time():.3f}" if running else None)

    def set_fts_automerge(self, enabled: bool) -> None:
        """Defer (False) or resume (True) FTS5 segment merging; bulk builds defer it."""
        level = 4 if enabled else 0
        with self.conn:
            for table in _FTS_TABLES:
                self.conn.execute(
                    f"INSERT INTO {table}({table}, rank) VALUES ('automerge', ?)", (level,)
                )

    def compact(self) -> None:
        """Merge FTS segments and rebuild the file without free space (outside a
        transaction), when this writer removed rows since it last compacted.

        A build that only added rows (a new index, or one a killed build left) has no
        space to reclaim and no deleted rows in its FTS segments: merging them into
        one and rewriting the file cost about a fifth of the writer's time on the
        stdlib copy (1 s), for a file 5% smaller and no faster search (the segments
        stay few: FTS5's crisis merges bound them). Automatic merging, on again after
        the build, merges them as later updates come.
        """
        if not self._removed_rows:
            return
        self._removed_rows = False
        with self.conn:
            for table in _FTS_TABLES:
                self.conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        self.conn.execute("VACUUM")
        # VACUUM in WAL mode writes the whole database through the WAL: fold it back
        # and truncate it so the index does not occupy twice its size on disk.
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def resolve_edges(
        self, names: Iterable[str] | None = None, sources: Iterable[int] | None = None
    ) -> int:
        """Resolve the calls/inherits/imports edges that are not resolved locally
        (store/edge_resolution.py `resolve_edges`)."""
        return resolve_edges(self.conn, names, sources)
