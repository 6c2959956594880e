"""The shared index's `NodeStore` (store/ports.py): definitions by name, similar
names, nodes and their edges for the engine's symbol lookup and graph walk, as
one reader.

Every statement runs under the search store's `readable` CTE (search.py: the
repositories the reader's principal is granted, directly or through a group,
and asked for) and keeps only rows of those repositories, in the same SQL that
selects them: an edge of a readable repository is read, but a node at its other
end in a repository the reader may not read is not found, so a walk neither
shows it nor follows the edge. Names are bound as parameters and compared with
`=`, never LIKE: `%`, `_` and quotes in a name are plain characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from codesift.store.filters import SearchFilters, time_conditions
from codesift.store.history import TimeRow
from codesift.store.ports import NameRow
from codesift.store.postgres.row_reads import edge_rows
from codesift.store.postgres.search import PostgresSearchStore
from codesift.store.reader import EdgeRow, NodeRow, name_tail, named_matches
from codesift.timespec import TimeFilter

__all__ = ["PostgresNodeStore"]

# Definitions of one name read before the qualified-name match and the limit
# (nodes_named): a name defined more often than this in the readable
# repositories keeps its first ones by repository and path.
NAMED_ROWS = 2000
# Definitions of similar names (pg_trgm, most similar first) `similar_names` reads.
SIMILAR_ROWS = 400
# The chunk layers a similar name's definition is looked up in (the broad ones).
_NAME_LAYERS = ("code", "summary", "doc")


class PostgresNodeStore:
    """`NodeStore` over the shared index as the reader of `store` (its
    connection and its grants)."""

    def __init__(self, store: PostgresSearchStore) -> None:
        self.store = store

    def _edges(
        self, column: str, node_id: int, kinds: Sequence[str] | None, order: str
    ) -> list[EdgeRow]:
        wanted = list(kinds or ())
        kind_sql = " AND e.kind = ANY(%s)" if wanted else ""
        params: list[object] = [node_id, *([wanted] if wanted else [])]
        sql = (
            "SELECT e.src_id, e.kind, e.dst_name, e.dst_id, e.line, e.resolution FROM edges e"
            f" WHERE e.repo_id IN (SELECT id FROM readable) AND e.{column} = %s{kind_sql}"
        )
        if not wanted or "contains" in wanted:
            # Containment is nodes.parent_id, as in the local index's all_edges view.
            end = "parent_id" if column == "src_id" else "id"
            sql += (
                " UNION ALL SELECT n.parent_id, 'contains', n.name, n.id, n.start_line, 'local'"
                " FROM nodes n WHERE n.parent_id IS NOT NULL"
                f" AND n.repo_id IN (SELECT id FROM readable) AND n.{end} = %s"
            )
            params.append(node_id)
        return edge_rows(self.store._rows(f"SELECT * FROM ({sql}) AS e ORDER BY {order}", params))

    def edges_from(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        return self._edges("src_id", node_id, kinds, "line")

    def edges_to(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        return self._edges("dst_id", node_id, kinds, "src_id, line")

    def node_rows(self, node_ids: Iterable[int]) -> dict[int, NodeRow]:
        return self.store.node_rows(node_ids)

    def similar_names(self, tail: str, times: TimeFilter | None = None) -> list[NameRow]:
        """Names similar to `tail` by pg_trgm (the shared symbol stream's lookup,
        search.py), inside the window already, most similar first."""
        filters = SearchFilters(_NAME_LAYERS, times=times or TimeFilter())
        found = self.store.symbol_candidates(tail, filters, SIMILAR_ROWS)
        return [(c.node_id, c.name, c.qualified_name, c.kind) for c in found]

    def node_times(self, node_ids: Iterable[int]) -> dict[int, TimeRow]:
        return self.store.node_times(node_ids)

    def nodes_in_time(self, node_ids: Iterable[int], window: TimeFilter) -> set[int]:
        wanted = list(dict.fromkeys(node_ids))
        if not wanted:
            return set()
        time_sql, time_params = time_conditions(window, "n.changed", "n.created", mark="%s")
        return {
            int(r[0])
            for r in self.store._rows(
                "SELECT n.id FROM nodes n WHERE n.id = ANY(%s)"
                f" AND n.repo_id IN (SELECT id FROM readable){time_sql}",
                [wanted, *time_params],
            )
        }

    def nodes_named(
        self,
        name: str,
        *,
        limit: int = 50,
        include_modules: bool = False,
        times: TimeFilter | None = None,
    ) -> list[NodeRow]:
        """What store/reader.nodes_named returns for the local index, among the
        repositories the reader may read: definitions named `name` in any case, or
        whose qualified name ends with it after a separator; exact case first."""
        tail = name_tail(name)
        if not tail:
            return []
        kinds = "" if include_modules else " AND n.kind <> 'module'"
        time_sql, time_params = (
            time_conditions(times, "n.changed", "n.created", mark="%s") if times else ("", [])
        )
        ids = [
            int(r[0])
            for r in self.store._rows(
                "SELECT n.id FROM nodes n JOIN files f ON f.id = n.file_id"
                " JOIN readable r ON r.id = n.repo_id"
                f" WHERE lower(n.name) = lower(%s){kinds}{time_sql}"
                " ORDER BY r.key, f.path, n.start_line LIMIT %s",
                [tail, *time_params, NAMED_ROWS],
            )
        ]
        rows = self.store.node_rows(ids)
        found = [rows[i] for i in ids if i in rows]
        return named_matches(found, name, limit=limit, include_modules=include_modules)
