"""The shared index's search statistics after a mirror run: the GIN indexes'
pending entries merged, and each repository's full-text statistics (layer_stats,
term_stats) recomputed."""

from __future__ import annotations

from typing import Any

import psycopg

from codesift.store.postgres.schema import global_id

__all__ = ["FTS_LAYERS", "merge_pending_entries", "refresh_statistics"]

# The GIN indexes (trigrams of names, full-text vectors) of the tables a search
# reads by them.
_GIN_INDEXES_SQL = (
    "SELECT i.indexrelid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
    " JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'gin'"
    " AND i.indrelid IN ('nodes'::regclass, 'chunks'::regclass)"
)


def merge_pending_entries(pg: psycopg.Connection[Any]) -> None:
    """Move the entries this run added to the GIN indexes of nodes and chunks from
    their pending lists into the indexes. Rows written go to a GIN index's pending
    list (fastupdate), which every search through that index reads whole until
    autovacuum merges it, and autovacuum waits for a tenth of the table to change:
    after a mirror run that rewrote 119 files (4,400 nodes) of 1.16M chunks, the
    symbol statement scoped to one repository took 3x as long. Skipped (with the
    entries left for autovacuum) when this role may not maintain the indexes."""
    try:
        with pg.transaction():
            pg.execute(f"SELECT gin_clean_pending_list(g.indexrelid) FROM ({_GIN_INDEXES_SQL}) g")
    except psycopg.errors.InsufficientPrivilege:
        pass


# The layers with a full-text vector, and the statistics a search reads of them.
FTS_LAYERS = ("code", "ast", "doc")


# Each term's postings in one repository (schema migration 7): local chunk ids
# ascending, occurrences and chunk token counts (-1: not counted), big-endian.
_POSTINGS_SQL = (
    "SELECT c.layer, u.lexeme, count(*),"
    " string_agg(int4send((c.id - %s)::integer), ''::bytea ORDER BY c.id),"
    " string_agg(int2send(coalesce(array_length(u.positions, 1), 1)::smallint), ''::bytea"
    " ORDER BY c.id),"
    " string_agg(int4send(coalesce(c.tokens, -1)), ''::bytea ORDER BY c.id)"
    " FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u"
    " WHERE c.repo_id = %s AND c.layer = ANY(%s) AND c.tsv IS NOT NULL"
    " GROUP BY c.layer, u.lexeme"
)


def refresh_statistics(pg: psycopg.Connection[Any], repo_id: int) -> int:
    """Recompute the repository's full-text statistics (layer_stats, and
    term_stats: per lexeme its chunks and postings) and write the rows that
    differ; returns how many were written. Run inside a transaction."""
    written = 0
    repo_id = int(repo_id)
    # The postings are grouped and ordered in memory rather than on disk.
    pg.execute("SET LOCAL work_mem = '256MB'")
    pg.execute(
        "CREATE TEMP TABLE IF NOT EXISTS new_term_postings (layer text, lexeme text,"
        " chunks integer, chunk_ids bytea, occurrences bytea, lengths bytea)"
        " ON COMMIT DELETE ROWS"
    )
    pg.execute(
        f"INSERT INTO new_term_postings {_POSTINGS_SQL}",
        (global_id(repo_id, 0), repo_id, list(FTS_LAYERS)),
    )
    cur = pg.execute(
        "DELETE FROM term_stats t WHERE t.repo_id = %s AND NOT EXISTS (SELECT 1 FROM"
        " new_term_postings n WHERE n.layer = t.layer AND n.lexeme = t.lexeme"
        " AND n.chunks = t.chunks AND n.chunk_ids = t.chunk_ids"
        " AND n.occurrences = t.occurrences AND n.lengths = t.lengths)",
        (repo_id,),
    )
    written += cur.rowcount
    cur = pg.execute(
        "INSERT INTO term_stats (layer, lexeme, repo_id, chunks, chunk_ids, occurrences, lengths)"
        " SELECT n.layer, n.lexeme, %s, n.chunks, n.chunk_ids, n.occurrences, n.lengths"
        " FROM new_term_postings n ON CONFLICT (layer, lexeme, repo_id) DO NOTHING",
        (repo_id,),
    )
    written += cur.rowcount
    pg.execute("DELETE FROM layer_stats WHERE repo_id = %s", (repo_id,))
    cur = pg.execute(
        "INSERT INTO layer_stats (repo_id, layer, chunks, tokens)"
        " SELECT %s, layer, count(*), coalesce(sum(tokens), 0) FROM chunks"
        " WHERE repo_id = %s AND layer = ANY(%s) GROUP BY layer",
        (repo_id, repo_id, list(FTS_LAYERS)),
    )
    written += cur.rowcount
    pg.execute("DELETE FROM new_term_postings")
    return written
