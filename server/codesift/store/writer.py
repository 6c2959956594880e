"""The one writer: replaces a file's rows, deletes files, resolves edges.

Callers wrap each batch in a transaction (`with conn:`); a file's rows and its
`files` row change together, so an interrupted run never records a file as
indexed unless all of its rows are there.

Ids of nodes and chunks are stable: derived from the file path, the node's
qualified name and kind (and an ordinal for duplicates), so an unchanged
function keeps its id across re-indexing and edges that point at it from other
files stay valid.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import apsw

from codesift.parsing.model import ParsedFile
from codesift.store.database import scalar
from codesift.tokens import code_index_text

__all__ = [
    "ChunkPayload",
    "FileMeta",
    "FileRowCounts",
    "IndexWriter",
    "chunk_payloads",
    "pack_text",
    "stable_id",
    "unpack_text",
]

_ID_MASK = (1 << 63) - 1
_FTS_TABLES = ("code_fts", "doc_fts", "names_fts")
# SQL for the last component of edges.dst_hint (after its last '.', ':' or '\'):
# rtrim strips every character that is not a separator from the right.
_HINT_TAIL = (
    "substr(edges.dst_hint, length(rtrim(edges.dst_hint, replace(replace(replace("
    "edges.dst_hint, '.', ''), ':', ''), '\\', ''))) + 1)"
)


def stable_id(key: str) -> int:
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _ID_MASK or 1


# Chunk texts longer than this are stored zlib-compressed (about 2.4x smaller).
COMPRESS_ABOVE = 160


def pack_text(text: str) -> str | bytes:
    if len(text) <= COMPRESS_ABOVE:
        return text
    return zlib.compress(text.encode("utf-8"), 1)


def unpack_text(value: str | bytes) -> str:
    if isinstance(value, bytes):
        return zlib.decompress(value).decode("utf-8")
    return value


def text_hash(text: str) -> int:
    """A signed 64-bit hash of a chunk's text (fits an SQLite integer)."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True, slots=True)
class ChunkPayload:
    """What the store keeps of one chunk, computed away from the database (in a
    worker process during bulk builds): the stored text, its hash, and the text
    for the full-text index (None when the chunk is not in one)."""

    stored: str | bytes | None
    text_hash: int
    fts_table: str | None  # "code_fts", "doc_fts" or None
    fts_body: str | None


def chunk_payloads(parsed: ParsedFile) -> list[ChunkPayload]:
    out: list[ChunkPayload] = []
    for chunk in parsed.chunks:
        digest = text_hash(chunk.text)
        if chunk.layer == "doc":
            out.append(ChunkPayload(pack_text(chunk.text), digest, "doc_fts", chunk.text))
        elif chunk.layer == "code":
            body = chunk.text
            if chunk.node is not None and chunk.part == 0:
                # A doc comment kept outside the chunk's lines is indexed with them.
                doc = parsed.nodes[chunk.node].docstring
                if doc and doc[:60] not in body:
                    body = f"{body}\n{doc}"
            out.append(
                ChunkPayload(pack_text(chunk.text), digest, "code_fts", code_index_text(body))
            )
        elif chunk.layer == "ast":
            # ast and summary texts are rebuilt from the node row on read
            out.append(ChunkPayload(None, digest, "code_fts", code_index_text(chunk.text)))
        else:
            # summary chunks are for the vector stream; their words are in the code chunk
            out.append(ChunkPayload(None, digest, None, None))
    return out


@dataclass(frozen=True, slots=True)
class FileMeta:
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    language: str
    line_count: int
    invalid_utf8: bool = False


@dataclass(frozen=True, slots=True)
class FileRowCounts:
    nodes: int
    edges: int
    chunks: int
    node_ids: tuple[int, ...] = ()


class IndexWriter:
    """Writes index rows through one connection. Not thread-safe: one per writer thread."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def file_id(self, path: str) -> int | None:
        row = self.conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        return int(row[0]) if row else None

    def node_keys_of(self, file_id: int) -> set[tuple[str, int]]:
        return {
            (r[0], r[1])
            for r in self.conn.execute("SELECT name, id FROM nodes WHERE file_id = ?", (file_id,))
        }

    def _delete_rows(self, file_id: int) -> None:
        conn = self.conn
        conn.execute(
            "DELETE FROM code_fts WHERE rowid IN "
            "(SELECT id FROM chunks WHERE file_id = ? AND layer != 'doc')",
            (file_id,),
        )
        conn.execute(
            "DELETE FROM doc_fts WHERE rowid IN "
            "(SELECT id FROM chunks WHERE file_id = ? AND layer = 'doc')",
            (file_id,),
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

    def delete_file(self, path: str) -> set[str]:
        """Remove a file and its rows; return the names of the nodes it defined."""
        file_id = self.file_id(path)
        if file_id is None:
            return set()
        names = {name for name, _ in self.node_keys_of(file_id)}
        self._delete_rows(file_id)
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return names

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

    def replace_file(
        self,
        meta: FileMeta,
        parsed: ParsedFile,
        payloads: list[ChunkPayload] | None = None,
    ) -> tuple[FileRowCounts, set[str]]:
        """Replace every row of `meta.path` with `parsed` (and its chunk payloads,
        computed here when not given).

        Returns the row counts and the set of node names that appeared or
        disappeared (edges elsewhere that point at those names need resolving).
        """
        conn = self.conn
        file_id = self.file_id(meta.path)
        old_keys: set[tuple[str, int]] = set()
        now = time.time()
        if file_id is not None:
            old_keys = self.node_keys_of(file_id)
            self._delete_rows(file_id)
        # One upsert for new and known files: an update keeps the file's row id.
        file_id = int(
            scalar(
                conn,
                "INSERT INTO files (path, size, mtime_ns, content_hash, language, line_count,"
                " parse_errors, invalid_utf8, indexed_at) VALUES (?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT(path) DO UPDATE SET size=excluded.size,"
                " mtime_ns=excluded.mtime_ns, content_hash=excluded.content_hash,"
                " language=excluded.language, line_count=excluded.line_count,"
                " parse_errors=excluded.parse_errors, invalid_utf8=excluded.invalid_utf8,"
                " indexed_at=excluded.indexed_at RETURNING id",
                (
                    meta.path,
                    meta.size,
                    meta.mtime_ns,
                    meta.content_hash,
                    meta.language,
                    meta.line_count,
                    parsed.errors,
                    int(meta.invalid_utf8),
                    now,
                ),
            )
        )

        salt = ""
        for attempt in range(3):
            try:
                with conn:  # a savepoint: an id collision retries the file with salted ids
                    node_ids = self._insert_nodes(file_id, meta.path, parsed, salt)
                    edge_count = self._insert_edges(parsed, node_ids)
                    chunk_count = self._insert_chunks(
                        file_id, meta.path, parsed, node_ids, salt, payloads
                    )
                break
            except apsw.ConstraintError:
                if attempt == 2:
                    raise
                salt = f"\0salt{attempt + 1}"
        new_keys = {(n.name, node_ids[n.index]) for n in parsed.nodes}
        # Names whose definitions appeared, vanished or changed id: edges elsewhere
        # that point at them must be resolved again.
        touched = {name for name, _ in old_keys.symmetric_difference(new_keys)}
        return FileRowCounts(len(node_ids), edge_count, chunk_count, tuple(node_ids)), touched

    def _insert_nodes(self, file_id: int, path: str, parsed: ParsedFile, salt: str) -> list[int]:
        ids: list[int] = []
        seen: dict[str, int] = {}
        rows = []
        names_rows = []
        for node in parsed.nodes:
            base = f"{path}\0{node.kind}\0{node.qualified_name}"
            ordinal = seen.get(base, 0)
            seen[base] = ordinal + 1
            node_id = stable_id(f"{base}\0{ordinal}{salt}")
            ids.append(node_id)
            rows.append(
                (
                    node_id,
                    file_id,
                    node.kind,
                    node.name,
                    node.qualified_name,
                    node.start_line,
                    node.end_line,
                    node.signature,
                    node.docstring,
                )
            )
            names_rows.append((node_id, node.name))
        parent_rows = [
            (ids[node.parent], ids[node.index]) for node in parsed.nodes if node.parent is not None
        ]
        self.conn.executemany(
            "INSERT INTO nodes (id, file_id, kind, name, qualified_name, start_line, end_line,"
            " signature, docstring) VALUES (?,?,?,?,?,?,?,?,?)",
            rows,
        )
        self.conn.executemany("UPDATE nodes SET parent_id = ? WHERE id = ?", parent_rows)
        self.conn.executemany("INSERT INTO names_fts (rowid, name) VALUES (?,?)", names_rows)
        return ids

    def _insert_edges(self, parsed: ParsedFile, node_ids: list[int]) -> int:
        rows = [
            (
                node_ids[edge.src],
                edge.kind,
                node_ids[edge.dst] if edge.dst is not None else None,
                edge.dst_name,
                edge.dst_hint,
                edge.line,
                "local" if edge.dst is not None else None,
            )
            for edge in parsed.edges
            if edge.kind != "contains"  # stored as nodes.parent_id
        ]
        self.conn.executemany(
            "INSERT OR IGNORE INTO edges (src_id, kind, dst_id, dst_name, dst_hint, line,"
            " resolution) VALUES (?,?,?,?,?,?,?)",
            rows,
        )
        return len(rows)

    def _insert_chunks(
        self,
        file_id: int,
        path: str,
        parsed: ParsedFile,
        node_ids: list[int],
        salt: str,
        payloads: list[ChunkPayload] | None,
    ) -> int:
        if payloads is None:
            payloads = chunk_payloads(parsed)
        rows = []
        fts: dict[str, list[tuple[int, str]]] = {"code_fts": [], "doc_fts": []}
        seen: dict[str, int] = {}
        for chunk, payload in zip(parsed.chunks, payloads, strict=True):
            node_id = node_ids[chunk.node] if chunk.node is not None else None
            owner = str(node_id) if node_id is not None else f"{path}\0{chunk.title}"
            base = f"{owner}\0{chunk.layer}\0{chunk.part}"
            ordinal = seen.get(base, 0)
            seen[base] = ordinal + 1
            chunk_id = stable_id(f"{base}\0{ordinal}{salt}")
            rows.append(
                (
                    chunk_id,
                    file_id,
                    node_id,
                    chunk.layer,
                    chunk.part,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.title,
                    payload.stored,
                    payload.text_hash,
                )
            )
            if payload.fts_table is not None and payload.fts_body is not None:
                fts[payload.fts_table].append((chunk_id, payload.fts_body))
        self.conn.executemany(
            "INSERT INTO chunks (id, file_id, node_id, layer, part, start_line, end_line, title,"
            " text, text_hash) VALUES (?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        self.conn.executemany("INSERT INTO code_fts (rowid, body) VALUES (?,?)", fts["code_fts"])
        self.conn.executemany("INSERT INTO doc_fts (rowid, body) VALUES (?,?)", fts["doc_fts"])
        return len(rows)

    def run_marker(self) -> bool:
        """True when an earlier run started writing and never finished."""
        row = self.conn.execute("SELECT 1 FROM meta WHERE key = 'run_in_progress'").fetchone()
        return row is not None

    def set_run_marker(self, running: bool) -> None:
        """Mark (or unmark) a run in progress; call inside the caller's transaction,
        so the mark is committed together with the first rows it covers."""
        if running:
            self.conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('run_in_progress', ?)",
                (f"{time.time():.3f}",),
            )
        else:
            self.conn.execute("DELETE FROM meta WHERE key = 'run_in_progress'")

    def set_fts_automerge(self, enabled: bool) -> None:
        """Defer (False) or resume (True) FTS5 segment merging; bulk builds defer it."""
        level = 4 if enabled else 0
        with self.conn:
            for table in _FTS_TABLES:
                self.conn.execute(
                    f"INSERT INTO {table}({table}, rank) VALUES ('automerge', ?)", (level,)
                )

    def compact(self) -> None:
        """Merge FTS segments and rebuild the file without free space (outside a transaction)."""
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
        """Resolve calls/inherits/imports edges that are not resolved locally.

        With neither argument, every such edge. Otherwise only edges whose target
        name is in `names` (definitions of that name appeared, vanished or changed
        id) or whose source node is in `sources` (edges just written). An import
        hint that names a qualified node wins; otherwise a name defined exactly
        once in the index.
        """
        conn = self.conn
        if names is None and sources is None:
            where = "edges.resolution IS NOT 'local'"
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
            # Names the revisited edges point at: the touched names and the targets of
            # the touched sources' edges (only these need the unique-name count).
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS wanted_names (name TEXT PRIMARY KEY)")
            conn.execute("DELETE FROM temp.wanted_names")
            conn.execute("INSERT INTO temp.wanted_names SELECT name FROM temp.touched_names")
            conn.executemany(
                "INSERT OR IGNORE INTO temp.wanted_names"
                " SELECT dst_name FROM edges WHERE src_id = ? AND resolution IS NOT 'local'",
                [(i,) for i in source_list],
            )
            where = (
                "edges.resolution IS NOT 'local' AND ("
                "edges.dst_name IN (SELECT name FROM temp.touched_names)"
                " OR edges.src_id IN (SELECT id FROM temp.touched_sources))"
            )
            name_filter = "AND name IN (SELECT name FROM temp.wanted_names)"
        conn.execute(f"UPDATE edges SET dst_id = NULL, resolution = NULL WHERE {where}")
        conn.execute(
            f"""UPDATE edges SET dst_id = n.id, resolution = 'hint' FROM nodes n
                WHERE {where} AND edges.dst_hint != ''
                  -- through the name index: the hint's last component is the node's name
                  AND n.name = {_HINT_TAIL} AND n.qualified_name = edges.dst_hint"""
        )
        conn.execute(
            f"""UPDATE edges SET dst_id = u.id, resolution = 'unique'
                FROM (SELECT name, min(id) AS id FROM nodes
                      WHERE kind != 'module' {name_filter}
                      GROUP BY name HAVING count(*) = 1) AS u
                WHERE {where} AND edges.resolution IS NULL AND edges.dst_name = u.name
                  -- a call that did not resolve in its own file is not a self-call
                  AND u.id != edges.src_id"""
        )
        return int(conn.changes())
