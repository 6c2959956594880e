"""Retrieval streams: each returns chunk ids ranked best first, with raw scores.

lexical      FTS5 bm25 over code chunks, and ast chunks (signatures) when asked
             for (identifier-split, unstemmed; a plural query word is searched in
             its singular too); raw score is -bm25 (higher is better)
lexical_doc  FTS5 bm25 over markdown sections (porter stemming)
symbol       trigram similarity of the query's identifiers to definition names;
             raw score in [0, 1], exact names 1.0 (1.5 with the qualified name),
             a little more in the query's case and for a longer definition
vector       cosine kNN over chunk embeddings (sqlite-vec, or the copy a long-running
             process keeps in memory: vector_index.py); raw score 1 - distance

Filters (languages, path globs, layers, and git time: as_of / since / until on
the chunk's or node's created and last-changed times) are applied inside each
stream's SQL, before the candidate cap; the vector stream passes the time filter
to the KNN as a chunk-id constraint, so its k nearest all pass it.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from codesift.history.timespec import TimeFilter
from codesift.retrieval.query import (
    QueryAnalysis,
    fts_or_query,
    fts_quote,
    trigrams,
    with_singulars,
)
from codesift.retrieval.vector_index import VectorIndex

__all__ = [
    "Ranked",
    "StreamFilters",
    "chunks_for_nodes",
    "lexical_doc_stream",
    "lexical_stream",
    "resident_vector_stream",
    "scored_terms",
    "symbol_stream",
    "vector_stream",
]

Ranked = list[tuple[int, float]]


@dataclass(frozen=True, slots=True)
class StreamFilters:
    layers: tuple[str, ...]
    languages: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    times: TimeFilter = field(default_factory=TimeFilter)

    def files_join(self, file_id: str) -> str:
        """` JOIN files f ON f.id = <file_id>` when a language or path filter needs
        the files table (`file_sql`), else nothing: the join costs a lookup per row."""
        return f" JOIN files f ON f.id = {file_id}" if self.languages or self.paths else ""

    def file_sql(self, alias: str = "f") -> tuple[str, list[object]]:
        """SQL conditions (prefixed with AND) on the files table, and their parameters."""
        sql = ""
        params: list[object] = []
        if self.languages:
            sql += f" AND {alias}.language IN ({','.join('?' * len(self.languages))})"
            params.extend(self.languages)
        if self.paths:
            ors = []
            for pattern in self.paths:
                glob = pattern.replace("**/", "*").replace("**", "*")
                if "/" in pattern:
                    ors.append(f"{alias}.path GLOB ?")
                    params.append(glob.lstrip("/"))
                else:
                    # A pattern without a slash matches the file name in any folder.
                    ors.append(f"({alias}.path GLOB ? OR {alias}.path GLOB ?)")
                    params.extend([glob, f"*/{glob}"])
            sql += " AND (" + " OR ".join(ors) + ")"
        return sql, params


# Document frequencies of terms, per (database file, FTS table): counting a very
# common term's rows costs as much as a bm25 pass over them, so each is counted once
# per process. They only decide which terms are too common to score (below); a count
# that drifts as files change moves that decision only for terms near the boundary.
_DF_CACHE_LIMIT = 100_000
_df_lock = threading.Lock()
_df_cache: dict[tuple[str, str, str], int] = {}


# Below this many rows a term is never left out for being common (but see max_df).
COMMON_TERM_MIN_ROWS = 2000


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
    term is cheap). When every term is that common, all are kept."""
    if len(terms) < 2:
        return list(terms)
    rows = _cached_count(conn, table, None)

    def common(term: str) -> bool:
        count = _cached_count(conn, table, term)
        return 2 * count >= rows or (count >= max_df * rows and count >= COMMON_TERM_MIN_ROWS)

    kept = [t for t in terms if not common(t)]
    return kept or list(terms)


# Plural query words are searched in their singular form too (`with_singulars`).
PLURAL_VARIANTS = True


def _bm25_stream(
    conn: apsw.Connection,
    table: str,
    analysis: QueryAnalysis,
    filters: StreamFilters,
    cap: int,
    max_df: float = 0.5,
) -> Ranked:
    """bm25 over one FTS5 table (a fixed name, never user text), best first.

    Each table holds one layer, so without language, path or time filters the
    ranking needs no other table: the join to chunks and files, which costs a
    lookup per matching row, is made only to filter."""
    if not analysis.terms:
        return []
    terms = analysis.terms
    if PLURAL_VARIANTS and table != "doc_fts":  # the doc table stems (porter) itself
        terms = with_singulars(terms)
    match = fts_or_query(scored_terms(conn, table, terms, max_df))
    file_sql, params = filters.file_sql()
    time_sql, time_params = filters.times.sql("c.changed", "c.created")
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


def lexical_stream(
    conn: apsw.Connection,
    analysis: QueryAnalysis,
    filters: StreamFilters,
    cap: int,
    max_df: float = 0.5,
) -> Ranked:
    """bm25 over code chunks and, when asked for, signatures (the ast layer, a
    table of its own); the two rankings merged by score."""
    ranked: Ranked = []
    for table, layer in (("code_fts", "code"), ("ast_fts", "ast")):
        if layer in filters.layers:
            ranked += _bm25_stream(conn, table, analysis, filters, cap, max_df)
    if "code" in filters.layers and "ast" in filters.layers:
        ranked.sort(key=lambda hit: (-hit[1], hit[0]))
    return ranked[:cap]


def lexical_doc_stream(
    conn: apsw.Connection, analysis: QueryAnalysis, filters: StreamFilters, cap: int
) -> Ranked:
    if "doc" not in filters.layers:
        return []
    return _bm25_stream(conn, "doc_fts", analysis, filters, cap)


CharTrigrams = set[tuple[str, str, str]]


def _char_trigrams(text: str) -> CharTrigrams:
    """The trigrams of `text` as character triples (built in C by zip: ~40% faster
    than slicing, and the symbol stream builds one set per candidate name)."""
    return set(zip(text, text[1:], text[2:], strict=False))


def _similarity(query: str, query_trigrams: CharTrigrams, name: str) -> float:
    """Jaccard similarity of trigram sets; 1.0 for the same name in any case.
    `query` is lower-case and `query_trigrams` its `_char_trigrams`."""
    n = name.lower()
    if query == n:
        return 1.0
    nt = _char_trigrams(n)
    if not query_trigrams or not nt:
        return 0.0
    shared = len(query_trigrams & nt)
    return shared / (len(query_trigrams) + len(nt) - shared)


# Name candidates are counted over a name's rarest trigrams whose postings add up to
# at most this many (the rarest one always). A trigram like `est` (of `test_...`:
# in 44% of the Python stdlib's names) says little about which name is meant, yet
# counting its postings was most of the symbol stream's time; the rare trigrams,
# where words join (`ngf`, `leh` in TimedRotatingFileHandler), are the ones that
# similar names share.
NAME_POSTINGS_BUDGET = 6000


def _telling_trigrams(conn: apsw.Connection, tris: list[str]) -> list[str]:
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


def _name_candidates(conn: apsw.Connection, name: str, limit: int) -> list[int]:
    """Node ids sharing the most of `name`'s telling trigrams (FTS5 trigram index;
    its rarest ones: `_telling_trigrams`).

    Counted in SQL: a trigram can still match thousands of names, too many to count
    in Python. Ties keep the order in which the ids first appear: by the first
    (sorted) trigram they share, then by id. Candidates are then scored on all
    their trigrams (`_similarity`).
    """
    tris = _telling_trigrams(conn, trigrams(name))
    if not tris:
        return []
    postings = " UNION ALL ".join(
        f"SELECT rowid AS id, {i} AS t FROM names_fts WHERE names_fts MATCH ?"
        for i in range(len(tris))
    )
    return [
        int(r[0])
        for r in conn.execute(
            f"SELECT id FROM ({postings}) GROUP BY id ORDER BY count(*) DESC, min(t), id LIMIT ?",
            [*(fts_quote(tri) for tri in tris), limit],
        )
    ]


# Separators of qualified names: `::` (Rust, C++, Ruby, PHP methods), Ruby's instance
# `#`, `->`, and PHP's namespace `\`, all read as `.`.
_QUALIFIER = re.compile(r"::|#|->|\\")
# At most this much more for an exact name match with a long body (256 lines or more)
# than for a one-liner: below EXACT_CASE_BONUS, so case decides first.
SPAN_BONUS = 0.04
# Added to an exact name match (1.0, or 1.5 when the qualified name matches too) whose
# case is the query's: small, so it only orders names that differ in case.
EXACT_CASE_BONUS = 0.1


def symbol_stream(
    conn: apsw.Connection,
    analysis: QueryAnalysis,
    filters: StreamFilters,
    cap: int,
    threshold: float = 0.3,
) -> Ranked:
    """Definitions whose names match the query's identifiers, as chunks of the
    first requested layer among code, ast and summary."""
    wanted_layers = [layer for layer in ("code", "ast", "summary") if layer in filters.layers]
    if not wanted_layers:
        return []
    if analysis.symbol_like:
        probes = [analysis.symbol_tail]
    else:
        probes = [word for word in analysis.identifiers if len(word) >= 3]
    if not probes:
        return []
    qualified = _QUALIFIER.sub(".", analysis.symbol).lower() if analysis.symbol_like else ""
    scores: dict[int, float] = {}
    for probe in probes:
        ids = set(
            int(r[0])
            for r in conn.execute("SELECT id FROM nodes WHERE name = ? COLLATE NOCASE", (probe,))
        )
        if len(probe) >= 3:
            ids.update(_name_candidates(conn, probe, 400))
        if not ids:
            continue
        id_list = list(ids)
        file_sql, params = filters.file_sql()
        time_sql, time_params = filters.times.sql("n.changed", "n.created")
        rows: list[Any] = conn.execute(
            f"SELECT n.id, n.name, n.qualified_name, n.kind, n.start_line, n.end_line FROM nodes n"
            f"{filters.files_join('n.file_id')}"
            f" WHERE n.id IN ({','.join('?' * len(id_list))}){file_sql}{time_sql}",
            [*id_list, *params, *time_params],
        ).fetchall()
        lowered = probe.lower()
        probe_trigrams = _char_trigrams(lowered)
        for node_id, name, qname, kind, start, end in rows:
            score = _similarity(lowered, probe_trigrams, str(name))
            if score < threshold:
                continue
            if qualified and score == 1.0:
                # `Pool.imap_unordered`: the qualified name must end with what was typed.
                normalized = _QUALIFIER.sub(".", str(qname)).lower()
                if normalized == qualified or normalized.endswith("." + qualified):
                    score = 1.5
                elif "." in qualified:
                    score = 0.9
            if score >= 1.0 and str(name) == probe:
                # The name as typed beats a look-alike in another case: `ParseInt`
                # is Go's exported strconv.ParseInt, not one of many `parseInt`s.
                score += EXACT_CASE_BONUS
            if score >= 1.0:
                # Among definitions of the same name, the one with a body beats a
                # one-line alias, forward declaration, stub or extension shim.
                lines = max(1, int(end) - int(start) + 1)
                score += SPAN_BONUS * min(1.0, math.log2(1 + lines) / 8)
            if kind == "module" and not analysis.symbol_like:
                score *= 0.5
            node_id = int(node_id)
            if score > scores.get(node_id, 0.0):
                scores[node_id] = score
    if not scores:
        return []
    ranked_nodes = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:cap]
    chunk_of = chunks_for_nodes(conn, [n for n, _ in ranked_nodes], wanted_layers)
    return [(chunk_of[n], s) for n, s in ranked_nodes if n in chunk_of]


def chunks_for_nodes(
    conn: apsw.Connection, node_ids: Sequence[int], layers: Sequence[str]
) -> dict[int, int]:
    """node id -> its part-0 chunk in the first of `layers` it has."""
    out: dict[int, tuple[int, int]] = {}
    order = {layer: i for i, layer in enumerate(layers)}
    for start in range(0, len(node_ids), 500):
        batch = list(node_ids[start : start + 500])
        for node_id, chunk_id, layer in conn.execute(
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


def vector_stream(
    conn: apsw.Connection,
    query_vector: bytes,
    filters: StreamFilters,
    cap: int,
) -> Ranked:
    """Nearest chunks to an int8 query vector, among the requested layers.

    Layer filtering happens inside the KNN (a metadata column), and so does the
    time filter (a chunk-id constraint: sqlite-vec scores only those chunks);
    language and path filters, and vectors made stale by an edit, are removed
    afterwards from a larger k so the cap still fills.
    """
    layers, k, time_sql, time_params = _knn_plan(filters, cap)
    if not layers:
        return []
    in_time = (
        f" AND chunk_id IN (SELECT id FROM chunks WHERE changed IS NOT NULL{time_sql})"
        if time_sql
        else ""
    )
    hits: list[Any] = conn.execute(
        "SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH vec_int8(?)"
        f" AND k = ? AND layer IN ({','.join('?' * len(layers))}){in_time}",
        [query_vector, k, *layers, *time_params],
    ).fetchall()
    return _current_hits(conn, [(int(cid), 1.0 - float(d)) for cid, d in hits], filters, cap)


def resident_vector_stream(
    conn: apsw.Connection,
    index: VectorIndex,
    query: npt.NDArray[np.float32],
    filters: StreamFilters,
    cap: int,
) -> Ranked:
    """`vector_stream` over the vectors held in memory (retrieval/vector_index.py):
    the same filters and the same checks, a float32 query."""
    layers, k, time_sql, time_params = _knn_plan(filters, cap)
    if not layers:
        return []
    allowed = None
    if time_sql:
        allowed = np.fromiter(
            (
                int(r[0])
                for r in conn.execute(
                    f"SELECT id FROM chunks WHERE changed IS NOT NULL{time_sql}", time_params
                )
            ),
            np.int64,
        )
    hits = index.search(conn, query, k, layers, allowed)
    return _current_hits(conn, hits, filters, cap)


def _knn_plan(filters: StreamFilters, cap: int) -> tuple[list[str], int, str, list[object]]:
    """What a kNN asks for: the requested layers that have vectors; k, larger when
    language or path filters will drop hits afterwards; and the time filter's SQL
    conditions (with parameters) on chunks."""
    layers = [layer for layer in filters.layers if layer in ("code", "summary", "doc")]
    file_sql, _ = filters.file_sql()
    k = min(4096, cap * (3 if file_sql else 1) + 50)
    time_sql, time_params = filters.times.sql("changed", "created")
    return layers, k, time_sql, time_params


def _current_hits(
    conn: apsw.Connection, hits: list[tuple[int, float]], filters: StreamFilters, cap: int
) -> Ranked:
    """Hits whose chunk still has the text its vector came from and passes the
    language and path filters, best first, at most `cap`."""
    if not hits:
        return []
    file_sql, params = filters.file_sql()
    score = dict(hits)
    ids = list(score)
    kept = {
        int(r[0])
        for r in conn.execute(
            f"SELECT c.id FROM chunks c{filters.files_join('c.file_id')}"
            " JOIN embedded e ON e.chunk_id = c.id AND e.text_hash = c.text_hash"
            f" WHERE c.id IN ({','.join('?' * len(ids))}){file_sql}",
            [*ids, *params],
        )
    }
    ranked = [(cid, score[cid]) for cid in ids if cid in kept]
    ranked.sort(key=lambda item: (-item[1], item[0]))
    return ranked[:cap]
