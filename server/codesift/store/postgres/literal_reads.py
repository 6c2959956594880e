"""Reads of text as written and of files by path on PostgreSQL (store/search_store.py:
`phrase_hits` for the exact stream, `path_hits` for the path stream), each under the
reader's `readable` CTE like every statement of `PostgresSearchStore`, which derives
from `LiteralReads` (store/postgres/search.py)."""

from __future__ import annotations

from codesift.store.filters import PATH_HIT_LAYERS, SearchFilters, like_suffix, path_hit_order
from codesift.store.postgres.conditions import _file_conditions, _files_join, _time_conditions
from codesift.store.postgres.row_reads import Reads
from codesift.store.postgres.tsvector import or_query
from codesift.store.search_store import ScoredChunk

__all__ = ["LiteralReads"]


class LiteralReads(Reads):
    """`PostgresSearchStore`'s reads of a line, a quoted text or a file's path."""

    def phrase_hits(
        self, layer: str, phrase: str, filters: SearchFilters, cap: int
    ) -> list[ScoredChunk]:
        """The phrase as a tsquery of its tokens, each followed by the next (`<->`),
        over the positions the SQLite index's tokens have; the densest match first."""
        if layer not in ("code", "ast"):
            return []
        query = or_query([phrase])
        if not query:
            return []
        file_sql, file_params = _file_conditions(filters)
        time_sql, time_params = _time_conditions(filters.times, "c.changed", "c.created")
        rows = self._rows(
            "SELECT c.id, ts_rank_cd(c.tsv, %s::tsquery, 1) AS s"
            f" FROM chunks c{_files_join(filters, 'c.file_id')}"
            " WHERE c.layer = %s AND c.tsv @@ %s::tsquery"
            f" AND c.repo_id IN (SELECT id FROM readable){file_sql}{time_sql}"
            " ORDER BY s DESC, c.id LIMIT %s",
            [query, layer, query, *file_params, *time_params, cap],
        )
        return [(int(cid), float(score)) for cid, score in rows]

    def path_hits(
        self, path: str, filters: SearchFilters, cap: int, line: int = 0
    ) -> list[ScoredChunk]:
        """Paths compared without case (`ILIKE`), in the readable repositories."""
        layers = [layer for layer in PATH_HIT_LAYERS if layer in filters.layers]
        if not layers or not path:
            return []
        file_sql, file_params = _file_conditions(filters)
        time_sql, time_params = _time_conditions(filters.times, "c.changed", "c.created")
        rows = self._rows(
            "SELECT c.id, f.path, c.layer, c.start_line, c.part, c.end_line FROM files f"
            " JOIN chunks c ON c.file_id = f.id"
            " WHERE (lower(f.path) = lower(%s) OR f.path ILIKE %s)"
            " AND c.layer = ANY(%s) AND f.repo_id IN (SELECT id FROM readable)"
            f"{file_sql}{time_sql}",
            [path, like_suffix(path), layers, *file_params, *time_params],
        )
        return path_hit_order(path, rows, cap, line)
