"""The lookups by id a search makes after fusion, on PostgreSQL (store/search_store.py:
places, rows, child spans, times, nodes, edges, meta), each under the reader's
`readable` CTE like every statement of `PostgresSearchStore`, which derives from
`RowReads` (store/postgres/search.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from codesift.store.filters import SearchFilters
from codesift.store.history import TimeRow
from codesift.store.postgres.conditions import _file_conditions, _files_join
from codesift.store.reader import ChunkRow, EdgeRow, NodeRow
from codesift.store.search_store import ChildSpan, ChunkPlace

__all__ = ["Reads", "RowReads", "edge_rows"]


def edge_rows(rows: Iterable[Sequence[Any]]) -> list[EdgeRow]:
    """EdgeRows of (src_id, kind, dst_name, dst_id, line, resolution) rows."""
    return [
        EdgeRow(
            int(src),
            str(kind),
            str(name),
            None if dst is None else int(dst),
            int(line),
            None if res is None else str(res),
        )
        for src, kind, name, dst, line, res in rows
    ]


class Reads:
    """What the store's read mixins run their statements with (`_rows`, which
    `PostgresSearchStore` implements)."""

    def _rows(
        self,
        sql: str,
        params: Sequence[Any],
        *,
        prepare: bool | None = None,
        binary: bool = False,
    ) -> list[Any]:
        """Rows of `sql` under the readable CTE (PostgresSearchStore's)."""
        raise NotImplementedError


class RowReads(Reads):
    """`PostgresSearchStore`'s reads by id (its `_rows` and `_path` below)."""

    def _path(self, key: str, path: str) -> str:
        """A path as shown: with its repository key when several are in view."""
        raise NotImplementedError

    def chunks_for_nodes(self, node_ids: Sequence[int], layers: Sequence[str]) -> dict[int, int]:
        if not node_ids or not layers:
            return {}
        order = {layer: i for i, layer in enumerate(layers)}
        out: dict[int, tuple[int, int]] = {}
        for node_id, chunk_id, layer in self._rows(
            "SELECT c.node_id, c.id, c.layer FROM chunks c WHERE c.part = 0"
            " AND c.layer = ANY(%s) AND c.node_id = ANY(%s)"
            " AND c.repo_id IN (SELECT id FROM readable)",
            [list(layers), list(node_ids)],
        ):
            rank = order[str(layer)]
            current = out.get(int(node_id))
            if current is None or rank < current[1]:
                out[int(node_id)] = (int(chunk_id), rank)
        return {node: chunk for node, (chunk, _) in out.items()}

    def current_chunks(self, chunk_ids: Sequence[int], filters: SearchFilters) -> set[int]:
        if not chunk_ids:
            return set()
        file_sql, file_params = _file_conditions(filters)
        return {
            int(r[0])
            for r in self._rows(
                f"SELECT c.id FROM chunks c{_files_join(filters, 'c.file_id')}"
                " JOIN chunk_vectors v ON v.chunk_id = c.id AND v.text_hash = c.text_hash"
                f" WHERE c.id = ANY(%s) AND c.repo_id IN (SELECT id FROM readable){file_sql}",
                [list(chunk_ids), *file_params],
            )
        }

    # -- after fusion --------------------------------------------------------------

    def chunk_places(self, chunk_ids: Sequence[int]) -> list[ChunkPlace]:
        if not chunk_ids:
            return []
        return [
            ChunkPlace(
                int(cid),
                None if node is None else int(node),
                str(layer),
                self._path(str(key), str(path)),
                str(language),
                bool(generated),
                str(name or ""),
            )
            for cid, node, layer, key, path, language, generated, name in self._rows(
                "SELECT c.id, c.node_id, c.layer, r.key, f.path, f.language, f.generated,"
                " n.name FROM chunks c"
                " JOIN files f ON f.id = c.file_id JOIN readable r ON r.id = c.repo_id"
                " LEFT JOIN nodes n ON n.id = c.node_id WHERE c.id = ANY(%s)",
                [list(chunk_ids)],
            )
        ]

    def chunk_rows(self, chunk_ids: Iterable[int]) -> dict[int, ChunkRow]:
        wanted = list(dict.fromkeys(chunk_ids))
        if not wanted:
            return {}
        out: dict[int, ChunkRow] = {}
        for row in self._rows(
            "SELECT c.id, r.key, f.path, f.language, c.node_id, c.layer, c.part, c.start_line,"
            " c.end_line, c.title, c.text, n.kind, n.qualified_name FROM chunks c"
            " JOIN files f ON f.id = c.file_id JOIN readable r ON r.id = c.repo_id"
            " LEFT JOIN nodes n ON n.id = c.node_id WHERE c.id = ANY(%s)",
            [wanted],
        ):
            cid, key, path, language, node, layer, part, start, end, title, text, kind, qname = row
            layer = str(layer)
            if kind is None:
                kind = "section" if layer == "doc" else "text"
            shown = self._path(str(key), str(path))
            out[int(cid)] = ChunkRow(
                int(cid),
                shown,
                str(language),
                None if node is None else int(node),
                layer,
                int(part),
                int(start),
                int(end),
                str(title),
                str(text),
                str(kind),
                str(qname or title or path),
            )
        return out

    def child_spans(self, parent_ids: Sequence[int]) -> dict[int, list[ChildSpan]]:
        if not parent_ids:
            return {}
        out: dict[int, list[ChildSpan]] = {}
        for parent, stub_start, end, start in self._rows(
            "SELECT n.parent_id, coalesce(min(c.start_line), n.start_line), n.end_line,"
            " n.start_line FROM nodes n LEFT JOIN chunks c ON c.node_id = n.id"
            " AND c.layer = 'code' WHERE n.parent_id = ANY(%s)"
            " AND n.repo_id IN (SELECT id FROM readable) GROUP BY n.id ORDER BY n.id",
            [list(parent_ids)],
        ):
            out.setdefault(int(parent), []).append(ChildSpan(int(stub_start), int(end), int(start)))
        return out

    def _times(self, table: str, ids: Iterable[int]) -> dict[int, TimeRow]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        return {
            int(i): TimeRow(int(i), created, changed, commit_no, oid, subject)
            for i, created, changed, commit_no, oid, subject in self._rows(
                "SELECT t.id, t.created, t.changed, t.changed_commit, h.oid, h.subject"
                f" FROM {table} t LEFT JOIN commits h ON h.repo_id = t.repo_id"
                " AND h.number = t.changed_commit WHERE t.id = ANY(%s)"
                " AND t.changed IS NOT NULL AND t.repo_id IN (SELECT id FROM readable)",
                [wanted],
            )
        }

    def chunk_times(self, chunk_ids: Iterable[int]) -> dict[int, TimeRow]:
        return self._times("chunks", chunk_ids)

    def node_times(self, node_ids: Iterable[int]) -> dict[int, TimeRow]:
        return self._times("nodes", node_ids)

    def node_rows(self, node_ids: Iterable[int]) -> dict[int, NodeRow]:
        wanted = list(dict.fromkeys(node_ids))
        if not wanted:
            return {}
        out: dict[int, NodeRow] = {}
        for row in self._rows(
            "SELECT n.id, r.key, f.path, f.language, n.kind, n.name, n.qualified_name,"
            " n.parent_id, n.start_line, n.end_line, n.signature, n.docstring FROM nodes n"
            " JOIN files f ON f.id = n.file_id JOIN readable r ON r.id = n.repo_id"
            " WHERE n.id = ANY(%s)",
            [wanted],
        ):
            node_id, key, path, *rest = row
            out[int(node_id)] = NodeRow(int(node_id), self._path(str(key), str(path)), *rest)
        return out

    def _edges(self, column: str, node_id: int, order: str) -> list[EdgeRow]:
        return edge_rows(
            self._rows(
                "SELECT * FROM (SELECT e.src_id, e.kind, e.dst_name, e.dst_id, e.line,"
                " e.resolution FROM edges e WHERE e.repo_id IN (SELECT id FROM readable)"
                f" AND e.{column} = %s"
                " UNION ALL SELECT n.parent_id, 'contains', n.name, n.id, n.start_line,"
                " 'local' FROM nodes n WHERE n.parent_id IS NOT NULL"
                f" AND n.repo_id IN (SELECT id FROM readable)"
                f" AND n.{'parent_id' if column == 'src_id' else 'id'} = %s) AS e"
                f" ORDER BY {order}",
                [node_id, node_id],
            )
        )

    def edges_from(self, node_id: int) -> list[EdgeRow]:
        return self._edges("src_id", node_id, "line")

    def edges_to(self, node_id: int) -> list[EdgeRow]:
        return self._edges("dst_id", node_id, "src_id, line")

    def meta(self, key: str) -> str | None:
        """`root`: the folder the one repository in view was indexed from (git
        revisions given as times are resolved there); None with several."""
        if key != "root":
            return None
        rows = self._rows("SELECT r.root FROM repos r JOIN readable USING (id)", [])
        if len(rows) != 1 or not rows[0][0]:
            return None
        return str(rows[0][0])

    def repo_counts(self) -> dict[str, dict[str, int]]:
        """Per readable repository: files, nodes, chunks and vectors."""
        out: dict[str, dict[str, int]] = {}
        for key, files, nodes, chunks, vectors in self._rows(
            "SELECT r.key,"
            " (SELECT count(*) FROM files f WHERE f.repo_id = r.id),"
            " (SELECT count(*) FROM nodes n WHERE n.repo_id = r.id),"
            " (SELECT count(*) FROM chunks c WHERE c.repo_id = r.id),"
            " (SELECT count(*) FROM chunk_vectors v WHERE v.repo_id = r.id)"
            " FROM readable r ORDER BY r.key",
            [],
        ):
            out[str(key)] = {
                "files": int(files),
                "nodes": int(nodes),
                "chunks": int(chunks),
                "vectors": int(vectors),
            }
        return out

    def file_chunks(
        self, key: str, path: str, first: int, last: int
    ) -> tuple[int, list[tuple[int, int, int, str]]] | None:
        """The file `path` of the repository `key` as the index keeps it: its line
        count and its code and doc chunks (start, end, part, text) that overlap
        lines `first`..`last`; None when no such file is readable (a repository
        the reader may not read answers as a missing one)."""
        found: int | None = None
        chunks: list[tuple[int, int, int, str]] = []
        for count, start, end, part, text in self._rows(
            "SELECT f.line_count, c.start_line, c.end_line, c.part, c.text FROM files f"
            " JOIN readable r ON r.id = f.repo_id"
            " LEFT JOIN chunks c ON c.file_id = f.id AND c.layer IN ('code', 'doc')"
            " AND c.start_line <= %s AND c.end_line >= %s"
            " WHERE r.key = %s AND f.path = %s",
            [last, first, key, path],
        ):
            found = int(count)
            if start is not None:
                chunks.append((int(start), int(end), int(part), str(text)))
        return None if found is None else (found, chunks)
