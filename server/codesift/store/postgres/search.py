"""The PostgreSQL answers to a search's reads (store/search_store.py), with the
reader's grants inside every statement.

lexical  the BM25 that FTS5 computes locally (each term's frequency in a
         chunk, the chunk's token count, the term's document frequency among
         the chunks the reader may see), from each term's postings in
         term_stats (chunk ids, occurrences, chunk lengths per repository),
         scored here with numpy; with a language, path or time filter, or a
         phrase, from the full-text search of the chunks themselves (the
         `simple` tsvectors of the SQLite index's own tokens for code and
         signatures, `english` for doc sections; ts_rank_cd of each query term
         gives its frequency). Terms in half the chunks or more are left out,
         as locally
symbol   exact names in any case, and names by pg_trgm similarity (GIN), the
         most similar first; the shared symbol stream
         scores them and keeps those at its threshold (0.3)
vector   pgvector cosine kNN with 1 - distance: exact over the vectors in view
         when they are few (EXACT_KNN_MAX), else the HNSW index of their size;
         with models given, only the vectors those models made (nothing is
         compared when no repository in view holds any)

Access control: a store reads as one `Reader` (a principal, or the database
role's own view, and optionally some repository keys). Every statement, the
streams and every lookup by id after fusion, starts with the `readable` CTE
(the repositories the principal is granted, directly or through a group) and
keeps only rows of those repositories, so a principal never sees a row, a count
or a neighbour of a repository it may not read, whatever ids it asks for.

Filters (languages, path globs, git time) are conditions of each statement,
before its LIMIT. User text is always bound as a parameter; tsquery literals are
built from folded tokens with quoting (tsvector.py).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

from codesift.store.filters import SearchFilters
from codesift.store.postgres.access import readable_condition
from codesift.store.postgres.conditions import (
    LEXICAL_RANK,
    MAX_TRIGRAM_PATTERNS,
    RANK_NORMALIZATION,
    SYMBOL_THRESHOLD,
    Reader,
    _file_conditions,
    _files_join,
    _time_conditions,
    candidate_threshold,
    glob_regex,
    kept_lexical_terms,
    lexical_score_sql,
    shared_trigram_patterns,
)
from codesift.store.postgres.literal_reads import LiteralReads
from codesift.store.postgres.row_reads import RowReads
from codesift.store.postgres.schema import ID_SPAN
from codesift.store.postgres.tsvector import or_query
from codesift.store.search_store import (
    ResidentVectors,
    ScoredChunk,
    SymbolCandidate,
)

__all__ = [
    "LEXICAL_RANK",
    "RANK_NORMALIZATION",
    "PostgresSearchStore",
    "Reader",
    "candidate_threshold",
    "glob_regex",
    "shared_trigram_patterns",
]

# Up to this many vectors in view, the vector stream compares the query with each
# (exact); above, it walks the HNSW index.
EXACT_KNN_MAX = 50_000
# pgvector HNSW candidate list: at least this, and at least k.
EF_SEARCH_MIN = 200

# A tsquery of one lexeme, as PostgreSQL prints it.
_ONE_LEXEME = re.compile(r"'(?:[^']|'')*'")

_df_lock = threading.Lock()
_df_cache: dict[tuple[str, ...], int] = {}
_DF_CACHE_LIMIT = 100_000


class PostgresSearchStore(RowReads, LiteralReads):
    """A search's reads (`SearchStore`) on one psycopg connection (autocommit),
    as one `Reader`. The caller owns and closes the connection. `model` (a model
    id, or several), when given, keeps the vector streams to the vectors those
    models made: a query vector means nothing against another model's vectors,
    so a repository with none of them contributes no vector hits."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        reader: Reader,
        model: str | Sequence[str] | None = None,
    ) -> None:
        self._conn = conn
        self._reader = reader
        self._models: tuple[str, ...] | None = (
            None if model is None else (model,) if isinstance(model, str) else tuple(model)
        )
        self._scope_key = f"{conn.info.dsn}|{reader.principal}|{','.join(reader.repos)}"
        self._qualify: bool | None = None
        self._similarity_threshold: float | None = None  # pg_trgm's, as last set here

    @property
    def connection(self) -> psycopg.Connection[Any]:
        return self._conn

    # -- access control ------------------------------------------------------------

    def _readable(self) -> tuple[str, list[Any]]:
        """`WITH readable AS (...)`: the ids of the repositories this reader may
        read (and asked for), and its parameters."""
        sql = "WITH readable AS MATERIALIZED (SELECT r.id, r.key FROM repos r WHERE true"
        params: list[Any] = []
        granted, granted_params = readable_condition(self._reader.principal)
        sql += granted
        params.extend(granted_params)
        if self._reader.repos:
            sql += " AND r.key = ANY(%s)"
            params.append(list(self._reader.repos))
        return sql + ") ", params

    def _rows(
        self,
        sql: str,
        params: Sequence[Any],
        *,
        prepare: bool | None = None,
        binary: bool = False,
    ) -> list[Any]:
        """Rows of `sql` (which may refer to `readable`), the readable CTE first
        (`prepare`: psycopg's, None preparing a statement run often; `binary`:
        values in PostgreSQL's binary form, not as text)."""
        head, head_params = self._readable()
        cursor = self._conn.execute(
            head + sql, [*head_params, *params], prepare=prepare, binary=binary
        )
        return cursor.fetchall()

    def readable_repos(self) -> list[str]:
        """The keys of the repositories this reader may read, in key order."""
        return [str(r[0]) for r in self._rows("SELECT key FROM readable ORDER BY key", [])]

    def _qualified(self) -> bool:
        """Whether paths are shown with their repository key (several in view)."""
        if self._qualify is None:
            self._qualify = len(self.readable_repos()) > 1
        return self._qualify

    def _path(self, key: str, path: str) -> str:
        return f"{key}/{path}" if self._qualified() else path

    # -- cancellation --------------------------------------------------------------

    def interrupt(self) -> None:
        self._conn.cancel_safe()

    @contextmanager
    def checking(self, cancelled: Callable[[], bool] | None, steps: int) -> Iterator[None]:
        # A cancel reaches the server through interrupt(); nothing to poll here.
        yield

    def sync_resident(self, index: ResidentVectors) -> None:
        return None  # vectors stay in the database: the kNN runs there

    # -- streams -------------------------------------------------------------------

    def _cached(self, key: tuple[str, ...], sql: str, params: Sequence[Any]) -> int:
        """The integer `sql` returns (run under the readable CTE), cached per
        process and reader: document frequencies move the ranking only a little
        as files change, as in the SQLite store."""
        key = (self._scope_key, *key)
        with _df_lock:
            found = _df_cache.get(key)
        if found is not None:
            return found
        value = int(self._rows(sql, params)[0][0] or 0)
        with _df_lock:
            if len(_df_cache) >= _DF_CACHE_LIMIT:
                _df_cache.clear()
            _df_cache[key] = value
        return value

    def _count(self, layer: str, query: str, tsquery: str) -> int:
        """Chunks of `layer` the reader may see that match `query`, counted (for
        what the statistics do not hold: a phrase, a stemmed doc term)."""
        return self._cached(
            ("df", layer, query),
            "SELECT count(*) FROM chunks c WHERE c.layer = %s"
            f" AND c.tsv @@ {tsquery} AND c.repo_id IN (SELECT id FROM readable)",
            [layer, query],
        )

    def _lexemes(self, layer: str, queries: Sequence[str]) -> dict[str, str | None]:
        """Per tsquery literal of `queries`, the one lexeme it searches ('' for
        none: a stop word), or None for a phrase. Doc terms are stemmed by
        PostgreSQL's `english` configuration, as the doc tsvectors are."""
        if layer != "doc":
            return {
                q: None if " <-> " in q else q[1:-1].replace("''", "'").replace("\\\\", "\\")
                for q in queries
            }
        out: dict[str, str | None] = {}
        for q, parsed in self._conn.execute(
            "SELECT q, to_tsquery('english', q)::text FROM unnest(%s::text[]) AS q",
            [list(queries)],
        ).fetchall():
            text = str(parsed or "")
            if not text:
                out[str(q)] = ""
            elif _ONE_LEXEME.fullmatch(text):
                out[str(q)] = text[1:-1].replace("''", "'").replace("\\\\", "\\")
            else:
                out[str(q)] = None
        return out

    def _document_frequencies(
        self, layer: str, queries: Sequence[str], tsquery: str, lexemes: dict[str, str | None]
    ) -> dict[str, int]:
        """Per tsquery literal of `queries`, the chunks of `layer` the reader may see
        that match it: one-lexeme terms from term_stats, phrases counted."""
        single = {q: lexeme for q, lexeme in lexemes.items() if lexeme}
        counts = {q: 0 for q, lexeme in lexemes.items() if lexeme is not None}
        if single:
            found: dict[str, int] = {}
            for lexeme, chunks in self._rows(
                "SELECT t.lexeme, sum(t.chunks) FROM term_stats t WHERE t.layer = %s"
                " AND t.lexeme = ANY(%s) AND t.repo_id IN (SELECT id FROM readable)"
                " GROUP BY t.lexeme",
                [layer, list(set(single.values()))],
            ):
                found[str(lexeme)] = int(chunks)
            for q, lexeme in single.items():
                counts[q] = found.get(lexeme, 0)
        for q in queries:
            if q not in counts:
                counts[q] = self._count(layer, q, tsquery)
        return counts

    def _postings_hits(
        self,
        layer: str,
        kept: Sequence[str],
        lexemes: dict[str, str | None],
        idf: Sequence[float],
        mean_tokens: float,
        cap: int,
    ) -> list[ScoredChunk] | None:
        """The best `cap` chunks by BM25 over the kept terms' postings (term_stats,
        the readable repositories' rows only), as the SQL ranking orders them
        (score, then id); None when a repository's postings are not written yet."""
        wanted = list({str(lexemes[q]) for q in kept})
        # Per lexeme, each readable repository's arrays, joined and converted once.
        parts: dict[str, tuple[list[int], list[bytes], list[bytes], list[bytes]]] = {}
        for lexeme, repo_id, ids, occurrences, lengths in self._rows(
            "SELECT t.lexeme, t.repo_id, t.chunk_ids, t.occurrences, t.lengths"
            " FROM term_stats t WHERE t.layer = %s AND t.lexeme = ANY(%s)"
            " AND t.repo_id IN (SELECT id FROM readable)",
            [layer, wanted],
            # The arrays as they are stored: as text, bytea is hex, twice the
            # bytes, encoded by the server and decoded here.
            binary=True,
        ):
            if ids is None or occurrences is None or lengths is None:
                return None
            repos, id_bytes, tf_bytes, length_bytes = parts.setdefault(
                str(lexeme), ([], [], [], [])
            )
            repos.append(int(repo_id))
            id_bytes.append(bytes(ids))
            tf_bytes.append(bytes(occurrences))
            length_bytes.append(bytes(lengths))
        postings: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}
        for lexeme, (repos, id_bytes, tf_bytes, length_bytes) in parts.items():
            local: npt.NDArray[np.int64] = np.frombuffer(b"".join(id_bytes), dtype=">i4").astype(
                np.int64
            )
            base: npt.NDArray[np.int64] = np.repeat(
                np.array(repos, dtype=np.int64) * ID_SPAN, [len(b) // 4 for b in id_bytes]
            )
            tokens = np.frombuffer(b"".join(length_bytes), dtype=">i4").astype(np.float64)
            tf = np.frombuffer(b"".join(tf_bytes), dtype=">i2").astype(np.float64)
            tokens[tokens < 0] = mean_tokens
            # tf * (k1 + 1) / (tf + k1 * (1 - b + b * tokens / mean tokens))
            postings[lexeme] = (
                local + base,
                tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * tokens / mean_tokens)),
            )
        id_parts: list[npt.NDArray[np.int64]] = []
        score_parts: list[npt.NDArray[np.float64]] = []
        for q, weight in zip(kept, idf, strict=True):
            found = postings.get(str(lexemes[q]))
            if found is not None:
                id_parts.append(found[0])
                score_parts.append(weight * found[1])
        if not id_parts:
            return []
        ids_all = np.concatenate(id_parts)
        scores_all = np.concatenate(score_parts)
        # Each chunk's terms summed in the order of `kept` (a stable sort by id).
        order = np.argsort(ids_all, kind="stable")
        ids_sorted = ids_all[order]
        starts = np.flatnonzero(np.concatenate(([True], ids_sorted[1:] != ids_sorted[:-1])))
        chunk_ids = ids_sorted[starts]
        sums = np.add.reduceat(scores_all[order], starts)
        if len(sums) > cap:
            # Every chunk scoring at least the cap-th best, ties included.
            floor = np.partition(sums, len(sums) - cap)[len(sums) - cap]
            keep = np.flatnonzero(sums >= floor)
            chunk_ids, sums = chunk_ids[keep], sums[keep]
        best = np.lexsort((chunk_ids, -sums))[:cap]
        return [(int(chunk_ids[i]), float(sums[i])) for i in best]

    def _layer_size(self, layer: str) -> tuple[int, float]:
        """Chunks of `layer` the reader may see, and their mean token count."""
        rows = self._rows(
            "SELECT sum(s.chunks), sum(s.tokens) FROM layer_stats s WHERE s.layer = %s"
            " AND s.repo_id IN (SELECT id FROM readable)",
            [layer],
        )
        chunks, tokens = (int(rows[0][0] or 0), int(rows[0][1] or 0)) if rows else (0, 0)
        return chunks, (tokens / chunks if chunks else 1.0)

    def term_counts(self, layer: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """As the SQLite store counts them, among the chunks this reader may see."""
        if layer not in ("code", "ast", "doc"):
            return 0, dict.fromkeys(terms, 0)
        total, _ = self._layer_size(layer)
        by_term = {t: or_query([t]) for t in terms}
        queries = [q for q in dict.fromkeys(by_term.values()) if q]
        if not queries or total == 0:
            return total, dict.fromkeys(terms, 0)
        tsquery = "to_tsquery('english', %s)" if layer == "doc" else "%s::tsquery"
        counts = self._document_frequencies(layer, queries, tsquery, self._lexemes(layer, queries))
        return total, {t: counts.get(q, 0) if q else 0 for t, q in by_term.items()}

    def lexical_hits(
        self,
        layer: str,
        terms: Sequence[str],
        filters: SearchFilters,
        cap: int,
        max_df: float = 0.5,
    ) -> list[ScoredChunk]:
        """Full-text matches of any term, best first.

        The score is the BM25 that the SQLite index's FTS5 computes (k1 1.2, b 0.75,
        its IDF), read from PostgreSQL's full-text index: ts_rank_cd of a one-term
        query (no normalization) is 0.1 per occurrence, so it gives each term's
        frequency in the chunk; the chunk's token count and the terms' document
        frequencies among the chunks this reader may see do the rest. With
        LEXICAL_RANK = "cd", the score is plain ts_rank_cd per term (normalized by
        length, saturated) weighted by the same IDF."""
        if layer not in ("code", "ast", "doc") or not terms:
            return []
        tsquery = "to_tsquery('english', %s)" if layer == "doc" else "%s::tsquery"
        queries = [q for q in dict.fromkeys(or_query([t]) for t in terms) if q]
        if not queries:
            return []
        total, mean_tokens = self._layer_size(layer)
        if total == 0:
            return []
        lexemes = self._lexemes(layer, queries)
        counts = self._document_frequencies(layer, queries, tsquery, lexemes)
        kept = kept_lexical_terms(queries, counts, total, max_df)
        if not kept:
            return []
        idf = [max(1e-6, math.log((total - counts[q] + 0.5) / (counts[q] + 0.5))) for q in kept]
        file_sql, file_params = _file_conditions(filters)
        time_sql, time_params = _time_conditions(filters.times, "c.changed", "c.created")
        if (
            LEXICAL_RANK == "bm25"
            and not file_sql
            and not time_sql
            and all(lexemes.get(q) for q in kept)
        ):
            hits = self._postings_hits(layer, kept, lexemes, idf, mean_tokens, cap)
            if hits is not None:
                return hits
        score = lexical_score_sql(len(kept), tsquery, mean_tokens)
        tf_sql, score_sql, length_sql = score.tf_sql, score.score_sql, score.length_sql
        score_params: list[Any] = list(idf)
        length_params = list(score.length_params)
        rows = self._rows(
            f"SELECT id, {score_sql} AS s FROM (SELECT c.id, {tf_sql}{length_sql}"
            f" FROM chunks c{_files_join(filters, 'c.file_id')}"
            f" WHERE c.layer = %s AND c.tsv @@ {tsquery}"
            f" AND c.repo_id IN (SELECT id FROM readable){file_sql}{time_sql}"
            # OFFSET 0 keeps the planner from inlining the term frequencies into the
            # score, where each would be computed (and the tsvector read) twice or
            # more per row: 3.4x faster on the Python stdlib.
            " OFFSET 0) AS m ORDER BY s DESC, id LIMIT %s",
            [
                *score_params,
                *kept,
                *length_params,
                layer,
                " | ".join(kept),
                *file_params,
                *time_params,
                cap,
            ],
        )
        return [(int(cid), float(score)) for cid, score in rows]

    def symbol_candidates(
        self, probe: str, filters: SearchFilters, limit: int, threshold: float | None = None
    ) -> list[SymbolCandidate]:
        file_sql, file_params = _file_conditions(filters)
        time_sql, time_params = _time_conditions(filters.times, "n.changed", "n.created")
        lowered = probe.lower()
        # Names only, as the local index's trigram table holds them: the streams
        # score a candidate by its name, so one found by its qualified name alone
        # never passes, and such matches (30,000 for `json` over 1M chunks) made
        # the statement 2-3x slower and pushed similar names out of its LIMIT.
        similar = ""
        similar_params: list[Any] = []
        if len(probe) >= 3:
            cut = candidate_threshold(lowered, threshold or SYMBOL_THRESHOLD)
            self._set_similarity_threshold(cut)
            similar = " OR lower(n.name) %% %s"
            similar_params = [lowered]
            patterns = shared_trigram_patterns(lowered, threshold) if threshold else None
            if patterns and len(patterns) <= MAX_TRIGRAM_PATTERNS and not self._reader.repos:
                # Only names holding one of the probe's own trigrams can reach the
                # caller's threshold; pg_trgm's padded ones alone (a name starting
                # with `t` for `type`) rechecked 100,000 names over 1M chunks. Not
                # for a search over some repositories: there the planner, which
                # expects next to no rows from the patterns, left the repository
                # out of the index scan (`Redis` in sidekiq: 6 -> 28 ms).
                similar = (
                    " OR (lower(n.name) %% %s AND ("
                    + " OR ".join(["lower(n.name) LIKE %s"] * len(patterns))
                    + "))"
                )
                similar_params += patterns
        rows = self._rows(
            "SELECT n.id, n.name, n.qualified_name, n.kind, n.start_line, n.end_line"
            f" FROM nodes n{_files_join(filters, 'n.file_id')}"
            f" WHERE (lower(n.name) = %s{similar})"
            f" AND n.repo_id IN (SELECT id FROM readable){file_sql}{time_sql}"
            " ORDER BY lower(n.name) = %s DESC, similarity(lower(n.name), %s) DESC, n.id"
            " LIMIT %s",
            [
                lowered,
                *similar_params,
                *file_params,
                *time_params,
                lowered,
                lowered,
                limit + 50,
            ],
            # Planned for each probe: a plan kept for all (psycopg prepares a
            # statement run five times) ignored how common its trigrams are
            # (`date` over one repository: 5 -> 50 ms).
            prepare=False,
        )
        return [
            SymbolCandidate(int(i), str(name), str(qname), str(kind), int(start), int(end))
            for i, name, qname, kind, start, end in rows
        ]

    def _set_similarity_threshold(self, cut: float) -> None:
        """pg_trgm's threshold for `%` on this connection (set only when it changes)."""
        if self._similarity_threshold != cut:
            self._conn.execute(f"SET pg_trgm.similarity_threshold = {cut}")
            self._similarity_threshold = cut

    def _knn(
        self, query: npt.NDArray[np.float32], layers: Sequence[str], k: int, filters: SearchFilters
    ) -> list[ScoredChunk]:
        dims = int(query.shape[0])
        if not layers or dims == 0 or not query.any():
            return []
        literal = "[" + ",".join(f"{v:g}" for v in query.astype(np.float32).tolist()) + "]"
        time_sql, time_params = _time_conditions(filters.times, "c.changed", "c.created")
        in_time = (
            f" AND v.chunk_id IN (SELECT c.id FROM chunks c WHERE c.changed IS NOT NULL{time_sql})"
            if time_sql
            else ""
        )
        # How many vectors the kNN would compare: those of the repositories in
        # view that list one of the query's models (repos.embedding_model).
        repos_sql = "SELECT id FROM readable"
        repo_params: list[Any] = []
        model_sql = ""
        model_params: list[Any] = []
        if self._models is not None:
            if not self._models:
                return []
            repos_sql = (
                "SELECT r.id FROM repos r WHERE r.id IN (SELECT id FROM readable)"
                " AND string_to_array(r.embedding_model, ',') && %s::text[]"
            )
            repo_params = [list(self._models)]
            model_sql = " AND v.model = ANY(%s)"
            model_params = [list(self._models)]
        distance = f"v.embedding::vector({dims}) <=> %s::vector({dims})"
        in_view = int(
            self._rows(
                f"SELECT count(*) FROM chunk_vectors v WHERE v.repo_id IN ({repos_sql})"
                f" AND v.dims = {dims}",
                repo_params,
            )[0][0]
        )
        if in_view == 0:  # no vector of this size (and these models) in view
            return []
        exact = in_view <= EXACT_KNN_MAX
        with self._conn.transaction():
            if exact:
                # A few repositories' vectors: comparing them all is exact and faster
                # than walking the HNSW graph of every repository's vectors for the
                # few that pass the repository filter. Read by repository (the
                # bitmap of chunk_vectors_repo): the planner's average repository
                # size made it scan the whole table for three small repositories
                # beside a large one (80 ms instead of 5 over 115,000 vectors).
                self._conn.execute("SET LOCAL enable_indexscan = off")
                self._conn.execute("SET LOCAL enable_seqscan = off")
            else:
                ef_search = min(1000, max(EF_SEARCH_MIN, k))
                self._conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")
                self._conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            # The models as a condition on the vectors only: a condition on their
            # repositories made the planner walk them instead of the HNSW index
            # (70-90 ms instead of 3-5 ms over 115,000 vectors). Never prepared: a
            # plan kept from one mode (exact or HNSW) would ignore the other's
            # settings (an HNSW plan without its iterative scan returns too few).
            rows = self._rows(
                f"SELECT v.chunk_id, {distance} AS d FROM chunk_vectors v"
                f" WHERE v.dims = {dims} AND v.layer = ANY(%s)"
                f" AND v.repo_id IN (SELECT id FROM readable){model_sql}{in_time}"
                " ORDER BY d LIMIT %s",
                [literal, list(layers), *model_params, *time_params, k],
                prepare=False,
            )
        return [(int(cid), 1.0 - float(d)) for cid, d in rows]

    def nearest_chunks(
        self, query_vector: bytes, layers: Sequence[str], k: int, filters: SearchFilters
    ) -> list[ScoredChunk]:
        """The int8 query vector (the local index's form) as floats: the cosine
        of int8 vectors is the cosine of those floats."""
        query = np.frombuffer(query_vector, dtype=np.int8).astype(np.float32)
        return self._knn(query, layers, k, filters)

    def resident_nearest(
        self,
        index: ResidentVectors,
        query: npt.NDArray[np.float32],
        layers: Sequence[str],
        k: int,
        filters: SearchFilters,
    ) -> list[ScoredChunk]:
        return self._knn(query, layers, k, filters)
