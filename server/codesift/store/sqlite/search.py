"""The SQLite answers to a search's reads (store/search_store.py): FTS5 bm25 for
the lexical streams, the FTS5 trigram index of names for the symbol stream,
sqlite-vec for the vector streams, and the row lookups a search makes after
fusion.

Filters go inside each statement (store/filters.py), before its LIMIT. Table
names in the SQL are fixed strings chosen here, never user text; user text is
always bound, and quoted before it reaches MATCH.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from codesift.store.database import scalar
from codesift.store.filters import (
    PATH_HIT_LAYERS,
    SearchFilters,
    file_conditions,
    files_join,
    like_suffix,
    path_hit_order,
    time_conditions,
)
from codesift.store.history import TimeRow, time_rows
from codesift.store.meta import read_meta
from codesift.store.names import fts_or_query, fts_quote, trigrams
from codesift.store.reader import ChunkRow, EdgeRow, NodeRow, chunk_rows, edges_from, edges_to
from codesift.store.reader import node_rows as read_node_rows
from codesift.store.search_store import (
    ChildSpan,
    ChunkPlace,
    ResidentVectors,
    ScoredChunk,
    SymbolCandidate,
)
from codesift.store.sqlite.chunk_facts import ChunkFacts

__all__ = [
    "COMMON_TERM_MIN_ROWS",
    "FTS_TABLES",
    "NAME_POSTINGS_BUDGET",
    "SqliteSearchStore",
    "name_candidates_by_trigrams",
    "scored_terms",
    "telling_trigrams",
]

# The FTS5 table of each layer that has one (summaries are searched by vector only).
FTS_TABLES = {"code": "code_fts", "ast": "ast_fts", "doc": "doc_fts"}

# Document frequencies of terms, per (database file, FTS table): counting a very
# common term's rows costs as much as a bm25 pass over them, so each is counted once
# per process. They only decide which terms are too common to score (below); a count
# that drifts as files change moves that decision only for terms near the boundary.
_DF_CACHE_LIMIT = 100_000
_df_lock = threading.Lock()
_df_cache: dict[tuple[str, str, str], int] = {}

# Below this many rows a term is never left out for being common (but see max_df).
COMMON_TERM_MIN_ROWS = 2000

# Name candidates are counted over a name's rarest trigrams whose postings add up to
# at most this many (the rarest one always). A trigram like `est` (of `test_...`:
# in 44% of the Python stdlib's names) says little about which name is meant, yet
# counting its postings was most of the symbol stream's time; the rare trigrams,
# where words join (`ngf`, `leh` in TimedRotatingFileHandler), are the ones that
# similar names share.
NAME_POSTINGS_BUDGET = 6000

_BATCH = 500


def _cached_count(conn: apsw.Connection, table: str, term: str | None) -> int:
    """Rows of `table` containing `term` (all rows for None), cached."""
    # An in-memory database has no file name to key it by (and an id() is reused
    # once its connection is gone): it is counted every time.
    filename = str(conn.filename)
    key = (filename, table, term or "")
    with _df_lock:
        found = _df_cache.get(key) if filename else None
    if found is not None:
        return found
    if term is None:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    else:
        row = conn.execute(
            f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (fts_quote(term),)
        ).fetchone()
    count = int(row[0]) if row else 0
    if not filename:
        return count
    with _df_lock:
        if len(_df_cache) >= _DF_CACHE_LIMIT:
            _df_cache.clear()
        _df_cache[key] = count
    return count


def _cached_counts(conn: apsw.Connection, table: str, terms: Sequence[str]) -> dict[str, int]:
    """`_cached_count` of each of `terms`: the cache read under one lock (a
    feedback search asks for some sixty words at once)."""
    filename = str(conn.filename)
    if not filename:
        return {term: _cached_count(conn, table, term) for term in terms}
    with _df_lock:
        found = {t: _df_cache.get((filename, table, t)) for t in terms}
    return {t: _cached_count(conn, table, t) if n is None else n for t, n in found.items()}


def scored_terms(
    conn: apsw.Connection, table: str, terms: Sequence[str], max_df: float = 0.5
) -> list[str]:
    """The terms worth scoring: those found in fewer than `max_df` of the rows.

    FTS5's bm25 clamps the IDF of a term found in at least half the rows to 1e-6, so
    such a term (`self`, `def`, `return` in Python) changes no ranking but makes bm25
    visit most of the index; at 0.5, leaving it out keeps the scores (to within
    1e-5). A lower `max_df` also leaves out terms that still weigh a little (at 0.1
    an IDF of at most ~2.2 against ~7 for a rare term), which changes the order of
    the tail but costs bm25 far fewer rows; only a term in at least
    `COMMON_TERM_MIN_ROWS` rows is common enough for that (in a small index every
    term is cheap). When every term found is that common, all are kept.

    Terms no row holds (a query word's variant that is no word here) are left out
    as well, when another term remains: such a term matches no row and adds exactly
    0.0 to every row's bm25 (its frequency is 0), so the scores and their order are
    the same to the bit, but bm25 still visits it for every row it scores (~15% of
    the lexical stream's time over the Python stdlib)."""
    if len(terms) < 2:
        return list(terms)
    rows = _cached_count(conn, table, None)
    counts = _cached_counts(conn, table, terms)

    def common(term: str) -> bool:
        count = counts[term]
        return 2 * count >= rows or (count >= max_df * rows and count >= COMMON_TERM_MIN_ROWS)

    kept = [t for t in terms if not common(t)]
    # When only terms no row holds are left, every term is kept rather than none
    # that matches.
    if not any(counts[t] for t in kept):
        kept = list(terms)
    present = [t for t in kept if counts[t] or _indexed_since(conn, table, t)]
    return present or kept


def _indexed_since(conn: apsw.Connection, table: str, term: str) -> bool:
    """Whether `term`, counted in no row of `table` when its count was cached, is in
    a row now (the counts are cached for the process: a word indexed since then
    must be searched). A found term's count is dropped from the cache, to be
    counted again."""
    if (
        conn.execute(
            f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 1", (fts_quote(term),)
        ).fetchone()
        is None
    ):
        return False
    with _df_lock:
        _df_cache.pop((str(conn.filename), table, term), None)
    return True


def telling_trigrams(conn: apsw.Connection, tris: list[str]) -> list[str]:
    """The rarest of `tris` within NAME_POSTINGS_BUDGET postings, in sorted order."""
    if len(tris) < 2:
        return tris
    counted = sorted((_cached_count(conn, "names_fts", tri), tri) for tri in tris)
    kept: list[str] = []
    total = 0
    for count, tri in counted:
        if kept and total + count > NAME_POSTINGS_BUDGET:
            break
        kept.append(tri)
        total += count
    return sorted(kept)


def _postings(conn: apsw.Connection, tri: str) -> npt.NDArray[np.int64]:
    """The ids of the names holding trigram `tri`. Read as one string that numpy
    parses: ~2x faster than a row at a time through Python (the symbol stream
    reads a few thousand per trigram)."""
    text = scalar(
        conn, "SELECT group_concat(rowid) FROM names_fts WHERE names_fts MATCH ?", (fts_quote(tri),)
    )
    if not text:
        return np.zeros(0, np.int64)
    return np.fromstring(text, dtype=np.int64, sep=",")


def name_candidates_by_trigrams(conn: apsw.Connection, name: str, limit: int) -> list[int]:
    """Node ids sharing the most of `name`'s telling trigrams (FTS5 trigram index;
    its rarest ones: `telling_trigrams`).

    Ordered by how many they share, ties by the first (sorted) trigram they share,
    then by id. Each trigram's postings are read as they are (a few thousand ids at
    most, within NAME_POSTINGS_BUDGET) and counted with numpy: the same order as a
    GROUP BY over their UNION ALL in SQL, in ~20% less time (its sorter was most of
    the work). The caller scores the candidates on all their trigrams.
    """
    tris = telling_trigrams(conn, trigrams(name))
    if not tris:
        return []
    postings = [_postings(conn, tri) for tri in tris]
    ids = np.concatenate(postings)
    if not len(ids):
        return []
    trigram_of = np.repeat(np.arange(len(tris)), [len(p) for p in postings])
    # `first`: where each id occurs first, i.e. with the first trigram it shares.
    unique, first, counts = np.unique(ids, return_index=True, return_counts=True)
    order = np.lexsort((unique, trigram_of[first], -counts))[:limit]
    found: list[int] = unique[order].tolist()
    return found


class SqliteSearchStore:
    """A search's reads (`SearchStore`) on one apsw connection, which the caller
    owns and closes. Given `facts`, chunk places and the current-vector checks are
    read through that cache (store/sqlite/chunk_facts.py): only for a connection
    that never writes, whose reads then see every commit the cache sees."""

    def __init__(self, conn: apsw.Connection, facts: ChunkFacts | None = None) -> None:
        self._conn = conn
        self._facts = facts

    @property
    def connection(self) -> apsw.Connection:
        """The connection this store reads through (for its owner, e.g. to close
        it; streams call the methods)."""
        return self._conn

    # -- cancellation (used by the search that runs streams on this store) ---------

    def interrupt(self) -> None:
        """Stop the statement running on this connection (from another thread)."""
        self._conn.interrupt()

    @contextmanager
    def checking(self, cancelled: Callable[[], bool] | None, steps: int) -> Iterator[None]:
        """While inside, SQLite calls `cancelled` every `steps` VM steps and stops
        the statement when it returns True (an interrupt reaches only a statement
        already running; this also catches one that starts just after a cancel)."""
        if cancelled is None:
            yield
            return
        self._conn.set_progress_handler(cancelled, steps)
        try:
            yield
        finally:
            self._conn.set_progress_handler(None)

    def sync_resident(self, index: ResidentVectors) -> None:
        index.sync(self._conn)

    # -- streams -------------------------------------------------------------------

    def lexical_hits(
        self,
        layer: str,
        terms: Sequence[str],
        filters: SearchFilters,
        cap: int,
        max_df: float = 0.5,
    ) -> list[ScoredChunk]:
        """bm25 over the layer's FTS5 table, best first; the score is -bm25.

        Each table holds one layer, so without language, path or time filters the
        ranking needs no other table: the join to chunks and files, which costs a
        lookup per matching row, is made only to filter."""
        table = FTS_TABLES.get(layer)
        if table is None or not terms:
            return []
        conn = self._conn
        match = fts_or_query(scored_terms(conn, table, terms, max_df))
        file_sql, params = file_conditions(filters)
        time_sql, time_params = time_conditions(filters.times, "c.changed", "c.created")
        if not file_sql and not time_sql:
            rows: list[Any] = conn.execute(
                f"SELECT rowid, bm25({table}) AS s FROM {table} WHERE {table} MATCH ?"
                " ORDER BY s, rowid LIMIT ?",
                (match, cap),
            ).fetchall()
        else:
            rows = conn.execute(
                f"SELECT c.id, bm25({table}) AS s FROM {table}"
                f" JOIN chunks c ON c.id = {table}.rowid JOIN files f ON f.id = c.file_id"
                f" WHERE {table} MATCH ?{file_sql}{time_sql} ORDER BY s, c.id LIMIT ?",
                [match, *params, *time_params, cap],
            ).fetchall()
        return [(int(cid), -float(score)) for cid, score in rows]

    def phrase_hits(
        self, layer: str, phrase: str, filters: SearchFilters, cap: int
    ) -> list[ScoredChunk]:
        """An FTS5 phrase query (the quoted text: its tokens in order), bm25 order."""
        table = FTS_TABLES.get(layer)
        if table is None or layer == "doc" or not any(c.isalnum() for c in phrase):
            return []
        match = fts_quote(phrase)
        file_sql, params = file_conditions(filters)
        time_sql, time_params = time_conditions(filters.times, "c.changed", "c.created")
        rows: list[Any] = self._conn.execute(
            f"SELECT c.id, bm25({table}) AS s FROM {table}"
            f" JOIN chunks c ON c.id = {table}.rowid JOIN files f ON f.id = c.file_id"
            f" WHERE {table} MATCH ?{file_sql}{time_sql} ORDER BY s, c.id LIMIT ?",
            [match, *params, *time_params, cap],
        ).fetchall()
        return [(int(cid), -float(score)) for cid, score in rows]

    def path_hits(
        self, path: str, filters: SearchFilters, cap: int, line: int = 0
    ) -> list[ScoredChunk]:
        layers = [layer for layer in PATH_HIT_LAYERS if layer in filters.layers]
        if not layers or not path:
            return []
        file_sql, params = file_conditions(filters)
        time_sql, time_params = time_conditions(filters.times, "c.changed", "c.created")
        rows: list[Any] = self._conn.execute(
            "SELECT c.id, f.path, c.layer, c.start_line, c.part, c.end_line FROM files f"
            " JOIN chunks c ON c.file_id = f.id"
            " WHERE (f.path = ? COLLATE NOCASE OR f.path LIKE ? ESCAPE '\\')"
            f" AND c.layer IN ({','.join('?' * len(layers))}){file_sql}{time_sql}",
            [path, like_suffix(path), *layers, *params, *time_params],
        ).fetchall()
        return path_hit_order(path, rows, cap, line)

    def term_counts(self, layer: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        table = FTS_TABLES.get(layer)
        if table is None:
            return 0, dict.fromkeys(terms, 0)
        conn = self._conn
        return _cached_count(conn, table, None), {t: _cached_count(conn, table, t) for t in terms}

    def symbol_candidates(
        self, probe: str, filters: SearchFilters, limit: int, threshold: float | None = None
    ) -> list[SymbolCandidate]:
        # `threshold` is not needed here: the trigram table finds names by the
        # trigrams they share, so every name it returns shares one.
        conn = self._conn
        ids = set(
            int(r[0])
            for r in conn.execute("SELECT id FROM nodes WHERE name = ? COLLATE NOCASE", (probe,))
        )
        if len(probe) >= 3:
            ids.update(name_candidates_by_trigrams(conn, probe, limit))
        if not ids:
            return []
        id_list = list(ids)
        file_sql, params = file_conditions(filters)
        time_sql, time_params = time_conditions(filters.times, "n.changed", "n.created")
        return [
            SymbolCandidate(int(node_id), str(name), str(qname), str(kind), int(start), int(end))
            for node_id, name, qname, kind, start, end in conn.execute(
                "SELECT n.id, n.name, n.qualified_name, n.kind, n.start_line, n.end_line"
                f" FROM nodes n{files_join(filters, 'n.file_id')}"
                f" WHERE n.id IN ({','.join('?' * len(id_list))}){file_sql}{time_sql}",
                [*id_list, *params, *time_params],
            )
        ]

    def chunks_for_nodes(self, node_ids: Sequence[int], layers: Sequence[str]) -> dict[int, int]:
        out: dict[int, tuple[int, int]] = {}
        order = {layer: i for i, layer in enumerate(layers)}
        for start in range(0, len(node_ids), _BATCH):
            batch = list(node_ids[start : start + _BATCH])
            for node_id, chunk_id, layer in self._conn.execute(
                "SELECT node_id, id, layer FROM chunks WHERE part = 0"
                f" AND layer IN ({','.join('?' * len(layers))})"
                f" AND node_id IN ({','.join('?' * len(batch))})",
                [*layers, *batch],
            ):
                rank = order[str(layer)]
                current = out.get(int(node_id))
                if current is None or rank < current[1]:
                    out[int(node_id)] = (int(chunk_id), rank)
        return {node: chunk for node, (chunk, _) in out.items()}

    def nearest_chunks(
        self, query_vector: bytes, layers: Sequence[str], k: int, filters: SearchFilters
    ) -> list[ScoredChunk]:
        """sqlite-vec kNN: layers are a metadata column, and the time window a
        chunk-id constraint, so the k nearest all pass both."""
        time_sql, time_params = time_conditions(filters.times, "changed", "created")
        in_time = (
            f" AND chunk_id IN (SELECT id FROM chunks WHERE changed IS NOT NULL{time_sql})"
            if time_sql
            else ""
        )
        hits: list[Any] = self._conn.execute(
            "SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH vec_int8(?)"
            f" AND k = ? AND layer IN ({','.join('?' * len(layers))}){in_time}",
            [query_vector, k, *layers, *time_params],
        ).fetchall()
        return [(int(cid), 1.0 - float(d)) for cid, d in hits]

    def resident_nearest(
        self,
        index: ResidentVectors,
        query: npt.NDArray[np.float32],
        layers: Sequence[str],
        k: int,
        filters: SearchFilters,
    ) -> list[ScoredChunk]:
        time_sql, time_params = time_conditions(filters.times, "changed", "created")
        allowed = None
        if time_sql:
            allowed = np.fromiter(
                (
                    int(r[0])
                    for r in self._conn.execute(
                        f"SELECT id FROM chunks WHERE changed IS NOT NULL{time_sql}", time_params
                    )
                ),
                np.int64,
            )
        return index.search(self._conn, query, k, layers, allowed)

    def current_chunks(self, chunk_ids: Sequence[int], filters: SearchFilters) -> set[int]:
        # Language and path filters make it a question about the files too: asked.
        generation = (
            self._facts.generation() if self._facts is not None and not filters.on_files else None
        )
        if generation is None:
            return self._current_chunks(chunk_ids, filters)
        known = generation.current
        missing = [c for c in chunk_ids if c not in known]
        if missing:
            found = self._current_chunks(missing, filters)
            for c in missing:
                known[c] = c in found
        return {c for c in chunk_ids if known[c]}

    def _current_chunks(self, chunk_ids: Sequence[int], filters: SearchFilters) -> set[int]:
        file_sql, params = file_conditions(filters)
        return {
            int(r[0])
            for r in self._conn.execute(
                f"SELECT c.id FROM chunks c{files_join(filters, 'c.file_id')}"
                " JOIN embedded e ON e.chunk_id = c.id AND e.text_hash = c.text_hash"
                f" WHERE c.id IN ({','.join('?' * len(chunk_ids))}){file_sql}",
                [*chunk_ids, *params],
            )
        }

    # -- after fusion --------------------------------------------------------------

    def chunk_places(self, chunk_ids: Sequence[int]) -> list[ChunkPlace]:
        if not chunk_ids:
            return []
        generation = self._facts.generation() if self._facts is not None else None
        if generation is None:
            return self._chunk_places(chunk_ids)
        known = generation.places
        missing = [c for c in chunk_ids if c not in known]
        if missing:
            for place in self._chunk_places(missing):
                known[place.chunk_id] = place
        # In id order, each once, as the statement returns them.
        return [known[c] for c in sorted(set(chunk_ids)) if c in known]

    def _chunk_places(self, chunk_ids: Sequence[int]) -> list[ChunkPlace]:
        # The columns are typed (INTEGER PRIMARY KEY, TEXT NOT NULL, coalesce to
        # text): only `generated`, an integer, needs converting.
        return [
            ChunkPlace(cid, node, layer, path, language, bool(generated), name)
            for cid, node, layer, path, language, generated, name in self._conn.execute(
                "SELECT c.id, c.node_id, c.layer, f.path, f.language, f.generated,"
                " coalesce(n.name, '') FROM chunks c JOIN files f ON f.id = c.file_id"
                " LEFT JOIN nodes n ON n.id = c.node_id"
                f" WHERE c.id IN ({','.join('?' * len(chunk_ids))})",
                list(chunk_ids),
            )
        ]

    def chunk_rows(self, chunk_ids: Iterable[int]) -> dict[int, ChunkRow]:
        return chunk_rows(self._conn, chunk_ids)

    def child_spans(self, parent_ids: Sequence[int]) -> dict[int, list[ChildSpan]]:
        if not parent_ids:
            return {}
        out: dict[int, list[ChildSpan]] = {}
        for parent, stub_start, end, start in self._conn.execute(
            "SELECT n.parent_id, coalesce(min(c.start_line), n.start_line), n.end_line,"
            " n.start_line FROM nodes n LEFT JOIN chunks c ON c.node_id = n.id"
            f" AND c.layer = 'code' WHERE n.parent_id IN ({','.join('?' * len(parent_ids))})"
            " GROUP BY n.id ORDER BY n.id",
            list(parent_ids),
        ):
            out.setdefault(int(parent), []).append(ChildSpan(int(stub_start), int(end), int(start)))
        return out

    def chunk_times(self, chunk_ids: Iterable[int]) -> dict[int, TimeRow]:
        return time_rows(self._conn, "chunks", chunk_ids)

    def node_rows(self, node_ids: Iterable[int]) -> dict[int, NodeRow]:
        return read_node_rows(self._conn, node_ids)

    def edges_from(self, node_id: int) -> list[EdgeRow]:
        return edges_from(self._conn, node_id)

    def edges_to(self, node_id: int) -> list[EdgeRow]:
        return edges_to(self._conn, node_id)

    def meta(self, key: str) -> str | None:
        return read_meta(self._conn, key)
