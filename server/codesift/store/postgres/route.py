"""Routing reads of the shared index: what routing knows of each repository a
reader may read (its outline, README, chunk count) and its evidence
(codesift.retrieval.routing.RouteEvidence: chunks using each query term, the
terms its best chunks hold together), the grants inside every statement.

Every statement starts with the `readable` CTE: the repositories granted to the
reader's principal (directly or through a group; no principal: the database
role's own view, which row-level security may narrow), minus the keys the
caller excludes (the repositories open locally, whose local index overlays the
shared one). A repository outside it gives no row, so it never reaches a
profile, a count or a rationale.

The full-text statistics are the search's own (term_stats: chunks per lexeme,
per layer; the code layer keeps identifier tokens as the SQLite index does, the
doc layer `english` stems), so a term's count is read, not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from codesift.store.outline import OutlineFile
from codesift.store.postgres.access import readable_condition
from codesift.store.postgres.route_postings import MAX_PROBE_TERMS, RoutePostings, posting_rows
from codesift.store.postgres.search import Reader
from codesift.store.postgres.tsvector import fts_tokens, or_query

__all__ = [
    "CONNECT_TIMEOUT_SECONDS",
    "README_NAMES",
    "ROUTE_PROBE_CHUNKS",
    "RepoOutline",
    "RepoStamp",
    "SharedRouteStore",
    "with_connect_timeout",
]

# Each layer (code, doc) gives this many best chunks to a probe (as the local
# index's route_profile.ROUTE_PROBE_CHUNKS).
ROUTE_PROBE_CHUNKS = 20
# A server that cannot be reached must not hold a search for long.
CONNECT_TIMEOUT_SECONDS = 5
README_NAMES = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md")


def with_connect_timeout(dsn: str, seconds: int = CONNECT_TIMEOUT_SECONDS) -> str:
    """`dsn` with a libpq `connect_timeout` unless it sets one; `dsn` unchanged
    when libpq cannot read it (the connection then says why)."""
    try:
        if "connect_timeout" in conninfo_to_dict(dsn):
            return dsn
        return make_conninfo(dsn, connect_timeout=seconds)
    except psycopg.ProgrammingError:
        return dsn


@dataclass(frozen=True, slots=True)
class RepoStamp:
    """A readable repository: its key, the folder it was indexed from, when it
    was last written, and its code and doc chunks."""

    key: str
    root: str
    indexed_at: str
    chunks: int


@dataclass(frozen=True, slots=True)
class RepoOutline:
    key: str
    files: tuple[OutlineFile, ...]
    readme: str


def _readable(reader: Reader, exclude: Iterable[str]) -> tuple[str, list[Any]]:
    """`WITH readable AS (...)`: the ids and keys of the repositories `reader` may
    read (and asked for), `exclude` left out."""
    sql = "WITH readable AS MATERIALIZED (SELECT r.id, r.key FROM repos r WHERE true"
    params: list[Any] = []
    granted, granted_params = readable_condition(reader.principal)
    sql += granted
    params.extend(granted_params)
    if reader.repos:
        sql += " AND r.key = ANY(%s)"
        params.append(list(reader.repos))
    excluded = sorted(set(exclude))
    if excluded:
        sql += " AND NOT (r.key = ANY(%s))"
        params.append(excluded)
    return sql + ") ", params


def _one_token(word: str) -> str | None:
    tokens = [t for t in fts_tokens(word) if t]
    return tokens[0] if len(tokens) == 1 else None


def _code_lexemes(forms: Mapping[str, Sequence[str]]) -> tuple[list[tuple[str, str]], bool]:
    """(term, token) for each form of one identifier token (each pair once), and
    whether a form is a phrase of several tokens (which these pairs leave out)."""
    pairs: dict[tuple[str, str], None] = {}
    phrase = False
    for term, term_forms in forms.items():
        for form in term_forms:
            token = _one_token(form)
            if token is not None:
                pairs[(term, token)] = None
            elif [t for t in fts_tokens(form) if t]:
                phrase = True
    return list(pairs), phrase


class SharedRouteStore:
    """Routing reads on one psycopg connection (autocommit) as one `Reader`,
    the repositories `exclude` names left out. The caller owns the connection."""

    def __init__(
        self, conn: psycopg.Connection[Any], reader: Reader, exclude: Iterable[str] = ()
    ) -> None:
        self._conn = conn
        self._reader = reader
        self._exclude = tuple(sorted(set(exclude)))

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        head, head_params = _readable(self._reader, self._exclude)
        return self._conn.execute(head + sql, [*head_params, *params]).fetchall()

    def stamps(self) -> list[RepoStamp]:
        """The repositories in view, by key."""
        return [
            RepoStamp(str(key), str(root or ""), str(when or ""), int(chunks or 0))
            for key, root, when, chunks in self._rows(
                "SELECT r.key, r.root, r.indexed_at::text, (SELECT sum(s.chunks)"
                " FROM layer_stats s WHERE s.repo_id = r.id AND s.layer IN ('code', 'doc'))"
                " FROM repos r JOIN readable USING (id) ORDER BY r.key",
                [],
            )
        ]

    def outlines(self, keys: Sequence[str], readme_chars: int) -> dict[str, RepoOutline]:
        """Each repository of `keys` in view: its files with the qualified names of
        their top-level definitions (as store/outline.py reads a local index), and
        the first `readme_chars` characters of its README's chunks."""
        if not keys:
            return {}
        files: dict[str, list[OutlineFile]] = {k: [] for k in keys}
        for key, path, language, names in self._rows(
            "SELECT r.key, f.path, f.language, coalesce(array_agg(n.qualified_name"
            " ORDER BY n.start_line, n.id) FILTER (WHERE n.id IS NOT NULL), '{}')"
            " FROM readable r JOIN files f ON f.repo_id = r.id"
            " LEFT JOIN nodes n ON n.file_id = f.id AND n.kind != 'module'"
            " AND (n.parent_id IS NULL OR EXISTS (SELECT 1 FROM nodes p"
            " WHERE p.id = n.parent_id AND p.kind = 'module'))"
            " WHERE r.key = ANY(%s) GROUP BY r.key, f.path, f.language ORDER BY r.key, f.path",
            [list(keys)],
        ):
            files[str(key)].append(OutlineFile(str(path), str(language), tuple(map(str, names))))
        readmes: dict[str, dict[str, str]] = {}
        for key, path, text in self._rows(
            "SELECT r.key, f.path, string_agg(c.text, E'\\n' ORDER BY c.start_line, c.part)"
            " FROM readable r JOIN files f ON f.repo_id = r.id AND f.path = ANY(%s)"
            " JOIN chunks c ON c.file_id = f.id AND c.layer IN ('doc', 'code')"
            " WHERE r.key = ANY(%s) GROUP BY r.key, f.path",
            [list(README_NAMES), list(keys)],
        ):
            readmes.setdefault(str(key), {})[str(path)] = str(text or "")
        out: dict[str, RepoOutline] = {}
        for key in keys:
            found = readmes.get(key, {})
            readme = next((found[n] for n in README_NAMES if n in found), "")
            out[key] = RepoOutline(key, tuple(files[key]), readme[:readme_chars])
        return out

    def term_chunks(self, forms: Mapping[str, Sequence[str]]) -> dict[str, dict[str, int]]:
        """Per repository in view: for each term (a key of `forms`), the code chunks
        holding its most used form plus the doc sections holding its stem (terms no
        chunk uses left out), in one statement."""
        pairs, _ = _code_lexemes(forms)
        doc_terms = list(forms)
        out: dict[str, dict[str, int]] = {}
        if not doc_terms:
            return out
        for key, term, chunks in self._rows(
            ", q AS (SELECT * FROM unnest(%s::text[], %s::text[]) AS q(term, form)),"
            " d AS (SELECT t AS term, (ts_lexize('english_stem', t))[1] AS stem"
            " FROM unnest(%s::text[]) AS t),"
            " code AS (SELECT r.key, q.term, max(s.chunks) AS chunks FROM readable r"
            " JOIN term_stats s ON s.repo_id = r.id AND s.layer = 'code'"
            " JOIN q ON s.lexeme = q.form GROUP BY r.key, q.term),"
            " doc AS (SELECT r.key, d.term, sum(s.chunks) AS chunks FROM readable r"
            " JOIN term_stats s ON s.repo_id = r.id AND s.layer = 'doc'"
            " JOIN d ON s.lexeme = d.stem GROUP BY r.key, d.term)"
            " SELECT key, term, sum(chunks) FROM (SELECT * FROM code UNION ALL"
            " SELECT * FROM doc) AS both_layers GROUP BY key, term",
            [[t for t, _ in pairs], [f for _, f in pairs], doc_terms],
        ):
            if chunks:
                out.setdefault(str(key), {})[str(term)] = int(chunks)
        return out

    def postings(
        self, forms: Mapping[str, Sequence[str]], keys: Sequence[str] | None = None
    ) -> RoutePostings | None:
        """The postings of the terms (code: the identifier token of each of their
        forms; doc sections: their English stem) in every repository in view (or
        in `keys` only), for probes of any of them in one statement
        (store/postgres/route_postings.py). None when they cannot answer as the
        statement-per-repository probe would: a form of several tokens (a
        phrase), too many terms, or a repository whose postings were not written."""
        terms = list(forms)
        if not terms or len(terms) > MAX_PROBE_TERMS:
            return None
        pairs, phrase = _code_lexemes(forms)
        if phrase:
            return None  # only the full-text probe matches a phrase
        scope = " WHERE r.key = ANY(%s)" if keys is not None else ""
        scope_params: list[Any] = [list(keys)] if keys is not None else []
        rows = self._rows(
            ", q AS (SELECT 'code' AS layer, u.term, u.lexeme"
            " FROM unnest(%s::text[], %s::text[]) AS u(term, lexeme)"
            " UNION ALL SELECT DISTINCT 'doc', t, (ts_lexize('english_stem', t))[1]"
            " FROM unnest(%s::text[]) AS t)"
            " SELECT r.key, s.layer, q.term, s.chunk_ids, s.occurrences, s.lengths, s.chunks,"
            " coalesce(ls.chunks, 0), coalesce(ls.tokens, 0)"
            " FROM readable r JOIN term_stats s ON s.repo_id = r.id"
            " JOIN q ON s.layer = q.layer AND s.lexeme = q.lexeme"
            f" LEFT JOIN layer_stats ls ON ls.repo_id = r.id AND ls.layer = s.layer{scope}",
            [[t for t, _ in pairs], [f for _, f in pairs], terms, *scope_params],
        )
        if any(row[3] is None for row in rows):
            return None
        return RoutePostings(terms, posting_rows(rows))

    def probe(
        self,
        key: str,
        forms: Mapping[str, Sequence[str]],
        common: frozenset[str] = frozenset(),
        limit: int = ROUTE_PROBE_CHUNKS,
    ) -> list[frozenset[str]]:
        """The best `limit` code chunks and `limit` doc sections of repository `key`
        (when in view) for any of the terms, each as the set of terms it holds; a
        chunk holding `common` terms only is no candidate. From the postings when
        they can answer (`postings`), else by full-text statements."""
        if not forms:
            return []
        found = self.postings(forms, [key])
        if found is not None:
            return found.probe(key, common, limit)
        return self.probe_by_statements(key, forms, common, limit)

    def probe_by_statements(
        self,
        key: str,
        forms: Mapping[str, Sequence[str]],
        common: frozenset[str] = frozenset(),
        limit: int = ROUTE_PROBE_CHUNKS,
    ) -> list[frozenset[str]]:
        """`probe` by one full-text statement per layer, ranked by `ts_rank`: for
        phrases and for databases without postings."""
        terms = list(forms)
        if not terms:
            return []
        code = {t: or_query(list(dict.fromkeys(forms[t]))) for t in terms}
        code = {t: q for t, q in code.items() if q}
        out: list[frozenset[str]] = []
        if code:
            out += self._probe_layer(
                key,
                "code",
                [(t, "%s::tsquery", q) for t, q in code.items()],
                common,
                limit,
            )
        out += self._probe_layer(
            key,
            "doc",
            [(t, "plainto_tsquery('english', %s)", t) for t in terms],
            common,
            limit,
        )
        return out

    def _probe_layer(
        self,
        key: str,
        layer: str,
        queries: Sequence[tuple[str, str, str]],
        common: frozenset[str],
        limit: int,
    ) -> list[frozenset[str]]:
        """`queries`: (term, SQL of its tsquery with one placeholder, its text)."""
        rare = [q for q in queries if q[0] not in common] or list(queries)
        holds = ", ".join(f"c.tsv @@ {sql}" for _, sql, _ in queries)
        matches = " || ".join(f"({sql})" for _, sql, _ in rare)
        ranked = " || ".join(f"({sql})" for _, sql, _ in queries)
        rows = self._rows(
            f"SELECT {holds} FROM chunks c JOIN readable r ON r.id = c.repo_id"
            f" WHERE r.key = %s AND c.layer = %s AND c.tsv @@ ({matches})"
            f" ORDER BY ts_rank(c.tsv, {ranked}) DESC, c.id LIMIT %s",
            [
                *(text for _, _, text in queries),
                key,
                layer,
                *(text for _, _, text in rare),
                *(text for _, _, text in queries),
                limit,
            ],
        )
        return [
            frozenset(term for (term, _, _), hit in zip(queries, row, strict=True) if hit)
            for row in rows
        ]
