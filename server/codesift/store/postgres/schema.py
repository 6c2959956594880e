"""The shared index's schema in PostgreSQL: ordered migrations, each applied in its
own transaction and recorded in `schema_migrations`, as for SQLite
(store/migrations.py). Never edit a released step; append a new one.

One database holds many repositories. Every row of the index belongs to one
`repos` row (its `key`: remote slug and branch, or a name given); node and chunk
ids are the local index's ids offset by the repository's id (`global_id`), so
edges between files stay right while only changed files are rewritten.

Tables
  repos        one row per repository key: where it was indexed from, the
               embedding model of its vectors and their dimensions
  files        per repository and path: language, content hash and the digest of
               everything mirrored for the file (a changed digest: rewritten)
  nodes        definitions, with git created / last-changed times
  edges        node -> node or unresolved name (containment is nodes.parent_id)
  chunks       retrieval text (stored whole: ast and summary texts as built), git
               times, and `tsv`: the `simple` tsvector of the SQLite index's own
               identifier-split tokens for code and ast chunks, `english` for docs
  chunk_vectors  one vector per chunk (pgvector; cosine HNSW per dimension count)
  commits      the commits that last changed nodes and chunks
  layer_stats, term_stats  full-text statistics per repository: chunks and
               tokens per layer; per lexeme the chunks holding it and its
               postings (chunk ids, occurrences, chunk lengths): the lexical
               stream's BM25
  principals   users and groups; memberships (user in group); grants (principal
               may read repository)
  delegates    database roles that may read as another principal (a search
               service); see access.py
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ID_SPAN",
    "MAX_REPO_ID",
    "MIGRATIONS",
    "IdRangeError",
    "PgMigration",
    "check_id_range",
    "ensure_vector_index",
    "global_id",
    "migrate",
    "repo_of",
    "schema_version",
]

# Node and chunk ids of repository r are r * ID_SPAN + the local index's id, in a
# bigint: repository ids run from 1 to MAX_REPO_ID, local ids below ID_SPAN.
ID_SPAN = 1 << 40
MAX_REPO_ID = ((1 << 63) - 1) // ID_SPAN  # 8,388,607


class IdRangeError(ValueError):
    """A repository id or a local id outside what a bigint id can hold."""


def global_id(repo_id: int, local_id: int) -> int:
    return repo_id * ID_SPAN + local_id


def check_id_range(repo_id: int, largest_local_id: int) -> None:
    """IdRangeError unless every id `global_id(repo_id, 0..largest_local_id)` fits
    a bigint; checked before anything of a repository is written."""
    if not 1 <= repo_id <= MAX_REPO_ID:
        raise IdRangeError(f"repository id {repo_id} is outside 1..{MAX_REPO_ID}")
    if not 0 <= largest_local_id < ID_SPAN:
        raise IdRangeError(
            f"the local index has an id ({largest_local_id}) of {ID_SPAN} or more:"
            " rebuild it (codesift index --rebuild) before writing it into the shared index"
        )


def repo_of(global_row_id: int) -> int:
    """The repository id a node or chunk id belongs to."""
    return global_row_id // ID_SPAN


@dataclass(frozen=True, slots=True)
class PgMigration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[PgMigration, ...] = (
    PgMigration(
        1,
        "initial schema",
        """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE TABLE repos (
            id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            key text NOT NULL UNIQUE,
            root text NOT NULL DEFAULT '',
            embedding_model text,
            dims integer,
            indexed_at timestamptz
        );
        CREATE TABLE files (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            repo_id integer NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            path text NOT NULL,
            language text NOT NULL,
            content_hash text NOT NULL,
            digest text NOT NULL,
            line_count integer NOT NULL,
            UNIQUE (repo_id, path)
        );
        CREATE TABLE commits (
            repo_id integer NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            number integer NOT NULL,
            oid text NOT NULL,
            time bigint NOT NULL,
            subject text NOT NULL,
            PRIMARY KEY (repo_id, number)
        );
        CREATE TABLE nodes (
            id bigint PRIMARY KEY,
            repo_id integer NOT NULL,
            file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            parent_id bigint,
            kind text NOT NULL,
            name text NOT NULL,
            qualified_name text NOT NULL,
            start_line integer NOT NULL,
            end_line integer NOT NULL,
            signature text NOT NULL,
            docstring text NOT NULL,
            created bigint,
            changed bigint,
            changed_commit integer
        );
        CREATE INDEX nodes_file ON nodes(file_id);
        CREATE INDEX nodes_parent ON nodes(parent_id) WHERE parent_id IS NOT NULL;
        CREATE INDEX nodes_name_ci ON nodes(lower(name));
        CREATE INDEX nodes_name_trgm ON nodes USING gin (lower(name) gin_trgm_ops);
        CREATE INDEX nodes_qname_trgm ON nodes USING gin (lower(qualified_name) gin_trgm_ops);
        CREATE TABLE edges (
            src_id bigint NOT NULL,
            repo_id integer NOT NULL,
            file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            kind text NOT NULL,
            dst_name text NOT NULL,
            dst_id bigint,
            dst_hint text NOT NULL DEFAULT '',
            line integer NOT NULL,
            resolution text,
            PRIMARY KEY (src_id, kind, dst_name)
        );
        CREATE INDEX edges_file ON edges(file_id);
        CREATE INDEX edges_dst ON edges(dst_id, kind) WHERE dst_id IS NOT NULL;
        CREATE TABLE chunks (
            id bigint PRIMARY KEY,
            repo_id integer NOT NULL,
            file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            node_id bigint,
            layer text NOT NULL,
            part integer NOT NULL DEFAULT 0,
            start_line integer NOT NULL,
            end_line integer NOT NULL,
            title text NOT NULL DEFAULT '',
            text text NOT NULL,
            text_hash bigint NOT NULL,
            created bigint,
            changed bigint,
            changed_commit integer,
            tsv tsvector
        );
        CREATE INDEX chunks_file ON chunks(file_id);
        CREATE INDEX chunks_node ON chunks(node_id) WHERE node_id IS NOT NULL;
        CREATE INDEX chunks_repo_changed ON chunks(repo_id, changed);
        CREATE INDEX chunks_tsv_code ON chunks USING gin (tsv) WHERE layer = 'code';
        CREATE INDEX chunks_tsv_ast ON chunks USING gin (tsv) WHERE layer = 'ast';
        CREATE INDEX chunks_tsv_doc ON chunks USING gin (tsv) WHERE layer = 'doc';
        -- Untyped `vector`: repositories may use models of other sizes; each size
        -- gets its own HNSW index over the cast column (ensure_vector_index).
        CREATE TABLE chunk_vectors (
            chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            repo_id integer NOT NULL,
            layer text NOT NULL,
            dims integer NOT NULL,
            text_hash bigint NOT NULL,
            embedding vector NOT NULL
        );
        CREATE TABLE principals (
            id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            name text NOT NULL UNIQUE,
            kind text NOT NULL CHECK (kind IN ('user', 'group'))
        );
        CREATE TABLE memberships (
            group_id integer NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
            member_id integer NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
            PRIMARY KEY (group_id, member_id)
        );
        CREATE TABLE grants (
            principal_id integer NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
            repo_id integer NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            PRIMARY KEY (principal_id, repo_id)
        );
        CREATE INDEX grants_repo ON grants(repo_id);
        """,
    ),
    PgMigration(
        2,
        "token counts",
        """
        -- Tokens in each chunk's full-text body, as the local index's tokenizer
        -- counts them: the length in the lexical stream's BM25 (search.py). Every
        -- file is written again by the next run to fill them.
        ALTER TABLE chunks ADD COLUMN tokens integer;
        UPDATE files SET digest = '';
        """,
    ),
    PgMigration(
        3,
        "full-text statistics",
        """
        -- Per repository and layer: chunks and their tokens (the BM25 length
        -- normalization), and per lexeme the chunks holding it (document
        -- frequency), so a search reads them instead of counting matches. Filled
        -- by the next run of each repository (mirror.refresh_statistics).
        CREATE TABLE layer_stats (
            repo_id integer NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            layer text NOT NULL,
            chunks bigint NOT NULL,
            tokens bigint NOT NULL,
            PRIMARY KEY (repo_id, layer)
        );
        CREATE TABLE term_stats (
            layer text NOT NULL,
            lexeme text NOT NULL,
            repo_id integer NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            chunks integer NOT NULL,
            PRIMARY KEY (layer, lexeme, repo_id)
        );
        CREATE INDEX term_stats_repo ON term_stats(repo_id);
        UPDATE repos SET indexed_at = NULL;
        """,
    ),
    PgMigration(
        4,
        "vectors by repository",
        """
        -- The vector stream counts the vectors in view, and compares the query
        -- with each of them when they are few (search.py EXACT_KNN_MAX).
        CREATE INDEX chunk_vectors_repo ON chunk_vectors(repo_id, dims);
        """,
    ),
    PgMigration(
        5,
        "full-text and name indexes by repository",
        """
        -- GIN indexes led by the repository (btree_gin), so a search over a few
        -- repositories reads only their postings: a short name probe over one
        -- repository of a 935k-chunk database went from 1.3 s to a few ms. An
        -- index led by repo_id also serves searches over every repository.
        CREATE EXTENSION IF NOT EXISTS btree_gin;
        CREATE INDEX nodes_repo_name_trgm ON nodes
            USING gin (repo_id, lower(name) gin_trgm_ops);
        CREATE INDEX nodes_repo_qname_trgm ON nodes
            USING gin (repo_id, lower(qualified_name) gin_trgm_ops);
        DROP INDEX nodes_name_trgm;
        DROP INDEX nodes_qname_trgm;
        CREATE INDEX chunks_repo_tsv_code ON chunks USING gin (repo_id, tsv) WHERE layer = 'code';
        CREATE INDEX chunks_repo_tsv_ast ON chunks USING gin (repo_id, tsv) WHERE layer = 'ast';
        CREATE INDEX chunks_repo_tsv_doc ON chunks USING gin (repo_id, tsv) WHERE layer = 'doc';
        DROP INDEX chunks_tsv_code;
        DROP INDEX chunks_tsv_ast;
        DROP INDEX chunks_tsv_doc;
        """,
    ),
    PgMigration(
        6,
        "vector models",
        """
        -- Which model made each vector: a local index may hold a fast model's
        -- vectors for some chunks while a better one replaces them.
        -- repos.embedding_model lists the models of a repository's vectors.
        ALTER TABLE chunk_vectors ADD COLUMN model text NOT NULL DEFAULT '';
        UPDATE chunk_vectors v SET model = coalesce(r.embedding_model, '')
            FROM repos r WHERE r.id = v.repo_id;
        """,
    ),
    PgMigration(
        7,
        "term postings",
        """
        -- Each term's postings in a repository beside its document frequency:
        -- the chunks holding it (local ids, chunk id - repo id * 2^40, ascending),
        -- its occurrences in each and each chunk's token count, as big-endian
        -- int4 / int2 / int4 arrays. The lexical stream computes BM25 from them
        -- instead of reading every matching chunk's tsvector (search.py: 0.6 s
        -- to tens of ms over 1M chunks). Rebuilt here from the tsvectors;
        -- mirror.refresh_statistics keeps them.
        ALTER TABLE term_stats ADD COLUMN chunk_ids bytea,
            ADD COLUMN occurrences bytea, ADD COLUMN lengths bytea;
        SET LOCAL work_mem = '256MB';
        DELETE FROM term_stats;
        INSERT INTO term_stats (layer, lexeme, repo_id, chunks, chunk_ids, occurrences, lengths)
            SELECT c.layer, u.lexeme, c.repo_id, count(*),
                string_agg(int4send((c.id - c.repo_id::bigint * 1099511627776)::integer),
                    ''::bytea ORDER BY c.id),
                string_agg(int2send(coalesce(array_length(u.positions, 1), 1)::smallint),
                    ''::bytea ORDER BY c.id),
                string_agg(int4send(coalesce(c.tokens, -1)), ''::bytea ORDER BY c.id)
            FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u
            WHERE c.tsv IS NOT NULL AND c.layer IN ('code', 'ast', 'doc')
            GROUP BY c.repo_id, c.layer, u.lexeme;
        """,
    ),
    PgMigration(
        8,
        "generated files",
        """
        -- Files whose header says a tool generated them (parsing/generated.py);
        -- prose queries rank them like vendored code. Mirrored from the local
        -- index, whose next run reads every file again to tell.
        ALTER TABLE files ADD COLUMN generated boolean NOT NULL DEFAULT false;
        """,
    ),
    PgMigration(
        9,
        "safe operation",
        """
        -- Repository ids are drawn at random once per key (jobs.repo_id_for):
        -- an id says nothing of how many repositories there are, and runs no
        -- longer consume ids. The job columns tell an interrupted indexing job
        -- (job_started_at set, no job holding the key's lock) from a finished one.
        ALTER TABLE repos ADD COLUMN job_started_at timestamptz,
            ADD COLUMN job_root text, ADD COLUMN job_host text, ADD COLUMN job_pid integer;
        -- Database roles entitled to read as another principal (a search service).
        CREATE TABLE delegates (role text PRIMARY KEY);
        -- Whether the role that logged in may read as any principal: a superuser,
        -- a BYPASSRLS role, a member of the tables' owner, or a delegate.
        CREATE OR REPLACE FUNCTION codesift_reads_for_others() RETURNS boolean
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
            SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = session_user
                    AND (rolsuper OR rolbypassrls))
                OR pg_has_role(session_user,
                    (SELECT relowner FROM pg_class WHERE oid = 'repos'::regclass), 'MEMBER')
                OR EXISTS (SELECT 1 FROM delegates d WHERE d.role = session_user) $$;
        -- The repositories the principal `who` may read (its grants and its
        -- groups'); an error for a role that may not read as someone else.
        CREATE OR REPLACE FUNCTION codesift_readable_for(who text) RETURNS SETOF integer
            LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
            BEGIN
                IF who IS DISTINCT FROM session_user::text
                        AND NOT codesift_reads_for_others() THEN
                    RAISE EXCEPTION 'the database role % may not read as another principal',
                        session_user
                        USING ERRCODE = 'insufficient_privilege',
                        HINT = 'codesift team delegate ROLE, run by the indexing role';
                END IF;
                RETURN QUERY SELECT g.repo_id FROM grants g JOIN principals p ON p.name = who
                    WHERE g.principal_id = p.id OR g.principal_id IN
                        (SELECT m.group_id FROM memberships m WHERE m.member_id = p.id);
            END $$;
        -- Row-level security's view (access.enable_row_security): the repositories
        -- of the principal named as the role that logged in; every repository for
        -- a role that reads for others (its searches join the principal's grants).
        CREATE OR REPLACE FUNCTION codesift_readable_repos() RETURNS SETOF integer
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
            SELECT r.id FROM repos r WHERE codesift_reads_for_others()
            UNION
            SELECT g.repo_id FROM grants g JOIN principals p ON p.id = g.principal_id
            WHERE p.name = session_user OR p.id IN (SELECT m.group_id FROM memberships m
                JOIN principals u ON u.id = m.member_id WHERE u.name = session_user) $$;
        -- The principal named as the role that logged in, and its groups.
        CREATE OR REPLACE FUNCTION codesift_own_principals() RETURNS SETOF integer
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
            SELECT p.id FROM principals p WHERE p.name = session_user
            UNION
            SELECT m.group_id FROM memberships m JOIN principals u ON u.id = m.member_id
            WHERE u.name = session_user $$;
        """,
    ),
    PgMigration(
        10,
        "web tokens",
        """
        -- Bearer tokens of `codesift web` (store/postgres/tokens.py): only the
        -- SHA-256 of each secret is kept; each token reads as one principal.
        CREATE TABLE web_tokens (
            name text PRIMARY KEY,
            principal text NOT NULL,
            secret_sha256 text NOT NULL UNIQUE,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        -- A search service's role reads no table of access control: it asks
        -- which token a secret's hash is, one row or none.
        CREATE OR REPLACE FUNCTION codesift_web_token(sha256 text)
            RETURNS TABLE (name text, principal text)
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
            SELECT t.name, t.principal FROM web_tokens t WHERE t.secret_sha256 = sha256 $$;
        CREATE OR REPLACE FUNCTION codesift_web_tokens_exist() RETURNS boolean
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
            SELECT EXISTS (SELECT 1 FROM web_tokens) $$;
        """,
    ),
)


def migrate(conn: Any) -> int:
    """Apply the migrations not yet recorded, each in its own transaction; returns
    the schema version. Concurrent callers wait on an advisory lock."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version integer PRIMARY KEY, name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())"
    )
    conn.commit()
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(4346540)")  # "CSFT"
        done = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}
    for step in MIGRATIONS:
        if step.version in done:
            continue
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(4346540)")
            again = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = %s", (step.version,)
            ).fetchone()
            if again is None:
                conn.execute(step.sql)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (step.version, step.name),
                )
    return MIGRATIONS[-1].version


def schema_version(conn: Any) -> int:
    """The highest migration applied (0 for an empty database)."""
    row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    return int(row[0]) if row else 0


def ensure_vector_index(conn: Any, dims: int) -> None:
    """The cosine HNSW indexes over the vectors of `dims` dimensions (made once):
    one over every layer, and one over the doc sections' alone. Doc vectors are
    a few percent of a repository's: the doc stream's kNN over the first index
    visits many summaries for each doc section it keeps (110 ms a search at
    115,000 vectors; 10 ms over the second)."""
    dims = int(dims)
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw_{dims} ON chunk_vectors"
        f" USING hnsw ((embedding::vector({dims})) vector_cosine_ops) WHERE dims = {dims}"
    )
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw_{dims}_doc ON chunk_vectors"
        f" USING hnsw ((embedding::vector({dims})) vector_cosine_ops)"
        f" WHERE dims = {dims} AND layer = 'doc'"
    )
