"""Routing evidence read from an index: how many chunks use each query term (from
the FTS5 vocabulary, no chunk is read) and which query terms the index's best
matching chunks hold together (one full-text probe).

The code index (code_fts) keeps words as written, identifiers whole and split; the
doc index (doc_fts) keeps porter stems. A term is looked up in the code index under
each of the forms the caller gives (`retries`, `retry`) and in the doc index under
its porter stem, computed by SQLite's own porter tokenizer so that both sides stem
alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import apsw
import numpy as np
import numpy.typing as npt

from codesift.store.names import fts_quote

__all__ = ["ROUTE_PROBE_CHUNKS", "IndexEvidence", "chunk_total", "probe_terms", "term_chunks"]

# Each index (code, doc) gives this many best chunks (FTS5 bm25) to a probe.
ROUTE_PROBE_CHUNKS = 20
_VOCAB = {"code": "codesift_route_code_vocab", "doc": "codesift_route_doc_vocab"}
_HITS_FUNCTION = "codesift_route_hits"


def chunk_total(conn: apsw.Connection) -> int:
    """The number of chunks the code and doc indexes hold (the size routing's term
    shares are taken of)."""
    row = conn.execute("SELECT count(*) FROM chunks WHERE layer IN ('code', 'doc')").fetchone()
    return int(row[0]) if row else 0


def _ensure_vocab(conn: apsw.Connection) -> None:
    """fts5vocab tables over the code and doc indexes in this connection's temp
    schema (nothing is written to the index; a query-only reader is let through for
    the temp schema only)."""
    try:
        conn.execute(f"SELECT 1 FROM temp.{_VOCAB['doc']} LIMIT 0").fetchall()
        return
    except apsw.SQLError:
        pass
    row = conn.execute("PRAGMA query_only").fetchone()
    query_only = bool(row and int(row[0]))
    if query_only:
        conn.execute("PRAGMA query_only=0")
    try:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_VOCAB['code']}"
            " USING fts5vocab(main, code_fts, row)"
        )
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_VOCAB['doc']}"
            " USING fts5vocab(main, doc_fts, row)"
        )
    finally:
        if query_only:
            conn.execute("PRAGMA query_only=1")


def _stems(conn: apsw.Connection, words: Sequence[str]) -> dict[str, str]:
    tokenizer = conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
    out: dict[str, str] = {}
    for word in words:
        tokens = list(tokenizer(word.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None))
        # (start, end, token); a word the doc index splits (`read_line`) has no one stem
        only = tokens[0] if len(tokens) == 1 else None
        if isinstance(only, tuple) and len(only) >= 3:
            out[word] = str(only[2])
    return out


def _vocab_counts(conn: apsw.Connection, table: str, words: Sequence[str]) -> dict[str, int]:
    if not words:
        return {}
    marks = ",".join("?" * len(words))
    return {
        str(term): int(doc)
        for term, doc in conn.execute(
            f"SELECT term, doc FROM temp.{table} WHERE term IN ({marks})", tuple(words)
        )
    }


def term_chunks(conn: apsw.Connection, forms: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """For each term (a key of `forms`): the code chunks holding its most used form
    plus the doc sections holding its stem (terms no chunk uses are left out)."""
    _ensure_vocab(conn)
    words = sorted({f for fs in forms.values() for f in fs})
    code = _vocab_counts(conn, _VOCAB["code"], words)
    stems = _stems(conn, list(forms))
    doc = _vocab_counts(conn, _VOCAB["doc"], sorted(set(stems.values())))
    out: dict[str, int] = {}
    for term, term_forms in forms.items():
        count = max((code.get(f, 0) for f in term_forms), default=0)
        count += doc.get(stems.get(term, ""), 0)
        if count:
            out[term] = count
    return out


def _phrase_hits(api: apsw.FTS5ExtensionApi, *args: apsw.SQLiteValue) -> int:
    """FTS5 auxiliary function: a bit mask of the query's phrases the row holds."""
    mask = 0
    for phrase in range(api.phrase_count):
        if api.phrase_columns(phrase):
            mask |= 1 << phrase
    return mask


def _any(phrases: Sequence[tuple[str, str]]) -> str:
    return "(" + " OR ".join(fts_quote(word) for word, _ in phrases) + ")"


def _probe_index(
    conn: apsw.Connection,
    table: str,
    phrases: Sequence[tuple[str, str]],
    common: frozenset[str],
    limit: int,
) -> list[frozenset[str]]:
    """The best `limit` rows of `table` for the (word, term) phrases, each as the
    set of terms it holds. A row holding `common` terms only is no candidate
    (scoring every row of a large index that holds a word used all over it is
    what makes a probe slow); common terms still count in the rows found."""
    if not phrases:
        return []
    rare = [p for p in phrases if p[1] not in common]
    usual = [p for p in phrases if p[1] in common]
    if rare and usual:
        # FTS5 numbers phrases in the order they appear; AND binds before OR.
        query = f"{_any(usual)} AND {_any(rare)} OR {_any(rare)}"
        order = [*usual, *rare, *rare]
    else:
        query = _any(phrases)
        order = list(phrases)
    rows = conn.execute(
        f"SELECT {_HITS_FUNCTION}({table}) FROM {table} WHERE {table} MATCH ?"
        " ORDER BY rank LIMIT ?",
        (query, limit),
    )
    out: list[frozenset[str]] = []
    for (mask,) in rows:
        bits = int(mask)
        out.append(frozenset(term for i, (_, term) in enumerate(order) if bits >> i & 1))
    return out


def probe_terms(
    conn: apsw.Connection,
    forms: Mapping[str, Sequence[str]],
    common: frozenset[str] = frozenset(),
    limit: int = ROUTE_PROBE_CHUNKS,
) -> list[frozenset[str]]:
    """The best `limit` code chunks and `limit` doc sections for any of the terms
    (FTS5 bm25 of the index; rows holding `common` terms only left out), each as
    the set of terms it holds."""
    conn.register_fts5_function(_HITS_FUNCTION, _phrase_hits)
    code = [(f, term) for term, term_forms in forms.items() for f in dict.fromkeys(term_forms)]
    doc = [(term, term) for term in forms]  # the doc index stems the query itself
    return _probe_index(conn, "code_fts", code, common, limit) + _probe_index(
        conn, "doc_fts", doc, common, limit
    )


class IndexEvidence:
    """Routing evidence (codesift.retrieval.routing.RouteEvidence, and RouteTopics
    when `topics` is given: what reads the index's topic centroids, e.g.
    codesift.store.route_centroids.cached_centroids; RouteNeighbours when
    `neighbours` and `minilm` are: e.g. route_centroids.neighbour_similarity and
    vectors_are_minilm) read through an
    open connection to an index."""

    def __init__(
        self,
        conn: apsw.Connection,
        topics: Callable[[], npt.NDArray[np.float32] | None] | None = None,
        neighbours: Callable[[npt.NDArray[np.float32]], float | None] | None = None,
        minilm: Callable[[], bool] | None = None,
    ) -> None:
        self.conn = conn
        self._topics = topics
        self._neighbours = neighbours
        self._minilm = minilm

    def minilm_vectors(self) -> bool:
        return self._minilm() if self._minilm is not None else False

    def topics(self) -> npt.NDArray[np.float32] | None:
        return self._topics() if self._topics is not None else None

    def neighbours(self, query_vector: npt.NDArray[np.float32]) -> float | None:
        return self._neighbours(query_vector) if self._neighbours is not None else None

    def term_chunks(self, forms: Mapping[str, Sequence[str]]) -> Mapping[str, int]:
        return term_chunks(self.conn, forms)

    def probe(
        self, forms: Mapping[str, Sequence[str]], common: frozenset[str] = frozenset()
    ) -> Sequence[frozenset[str]]:
        return probe_terms(self.conn, forms, common)
