"""Schema migrations: ordered steps, each applied in its own transaction and
recorded in `schema_migrations`. Never edit a released step; append a new one.

Tables
  files     one row per indexed file: path, size, mtime, content hash, language
  skipped_files  files read once and found not indexable, with their size and mtime
  nodes     definitions (ids in insertion order, kept across re-indexing: writer.py)
  edges     node -> node (dst_id) or node -> unresolved name (dst_name, dst_hint);
            the all_edges view adds `contains` edges from nodes.parent_id
  chunks    retrieval text with a layer: code, ast, summary, doc
  code_fts  FTS5 over code chunk text (identifier-split, no stemming)
  ast_fts   the same over ast chunks (signatures), searched only when asked for
  doc_fts   FTS5 with porter stemming over markdown sections
  names_fts FTS5 trigram over node names (qualified names are scored on the candidates)
  chunk_vectors, embedded  int8 embeddings of chunks (sqlite-vec), the text they came
            from and the write that stored them (store/vector_stamps.py)
  history_commits, history_files  line-level git history (see codesift.history)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIGRATIONS", "Migration"]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def _git_history_migration(version: int) -> Migration:
    """Created and last-changed times of nodes and chunks, from git line history.

    Times are Unix seconds; `*_commit` columns number rows of history_commits (0: a
    file-time fallback, -1: uncommitted working-tree lines). files.history_at says
    when a file's times were last computed (older than indexed_at: stale).
    """
    return Migration(
        version,
        "git history",
        """
        ALTER TABLE nodes ADD COLUMN created INTEGER;
        ALTER TABLE nodes ADD COLUMN created_commit INTEGER;
        ALTER TABLE nodes ADD COLUMN changed INTEGER;
        ALTER TABLE nodes ADD COLUMN changed_commit INTEGER;
        ALTER TABLE chunks ADD COLUMN created INTEGER;
        ALTER TABLE chunks ADD COLUMN changed INTEGER;
        ALTER TABLE chunks ADD COLUMN changed_commit INTEGER;
        ALTER TABLE files ADD COLUMN history_at REAL;
        -- Candidate sets for the vector stream's time filters.
        CREATE INDEX chunks_changed ON chunks(changed);
        CREATE INDEX chunks_created ON chunks(created);
        -- Commits of the first-parent history, numbered in walk order (oldest first).
        CREATE TABLE history_commits (
            id INTEGER PRIMARY KEY,
            oid TEXT NOT NULL,
            time INTEGER NOT NULL,
            subject TEXT NOT NULL
        );
        -- Per tracked file at the last walked commit: run-length encoded commit
        -- numbers of each line (codesift.history.lines.encode_lines).
        CREATE TABLE history_files (
            path TEXT PRIMARY KEY,
            lines BLOB NOT NULL
        );
        """,
    )


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "initial schema",
        """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            language TEXT NOT NULL,
            line_count INTEGER NOT NULL,
            parse_errors INTEGER NOT NULL DEFAULT 0,
            invalid_utf8 INTEGER NOT NULL DEFAULT 0,
            indexed_at REAL NOT NULL
        );
        -- Files that were read and found not indexable (binary, minified...): kept so an
        -- unchanged one is not read again on every run.
        CREATE TABLE skipped_files (
            path TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            reason TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE nodes (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id),
            parent_id INTEGER,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            qualified_name TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            signature TEXT NOT NULL,
            docstring TEXT NOT NULL
        );
        CREATE INDEX nodes_file ON nodes(file_id);
        CREATE INDEX nodes_parent ON nodes(parent_id) WHERE parent_id IS NOT NULL;
        CREATE INDEX nodes_name ON nodes(name);
        CREATE INDEX nodes_name_ci ON nodes(name COLLATE NOCASE);
        -- Containment is not stored here: it is nodes.parent_id (see the all_edges view).
        CREATE TABLE edges (
            src_id INTEGER NOT NULL,
            kind TEXT NOT NULL,
            dst_name TEXT NOT NULL,
            dst_id INTEGER,
            dst_hint TEXT NOT NULL DEFAULT '',
            line INTEGER NOT NULL,
            -- how dst_id was found: local (same file), hint (import), unique (only
            -- definition of that name), or NULL while unresolved
            resolution TEXT,
            PRIMARY KEY (src_id, kind, dst_name)
        ) WITHOUT ROWID;
        CREATE INDEX edges_dst ON edges(dst_id, kind) WHERE dst_id IS NOT NULL;
        CREATE INDEX edges_dst_name ON edges(dst_name, kind);
        CREATE VIEW all_edges (src_id, kind, dst_name, dst_id, dst_hint, line, resolution) AS
            SELECT src_id, kind, dst_name, dst_id, dst_hint, line, resolution FROM edges
            UNION ALL
            SELECT parent_id, 'contains', name, id, '', start_line, 'local'
              FROM nodes WHERE parent_id IS NOT NULL;
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id),
            node_id INTEGER,
            layer TEXT NOT NULL,
            part INTEGER NOT NULL DEFAULT 0,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            -- TEXT, or a zlib-compressed UTF-8 BLOB for longer chunks; NULL for the
            -- ast and summary layers, which are rebuilt from their node on read
            text,
            text_hash INTEGER NOT NULL
        );
        CREATE INDEX chunks_file ON chunks(file_id);
        CREATE INDEX chunks_node ON chunks(node_id);
        CREATE VIRTUAL TABLE code_fts USING fts5(
            body, content='', contentless_delete=1,
            tokenize="unicode61 remove_diacritics 2 tokenchars '_'"
        );
        CREATE VIRTUAL TABLE doc_fts USING fts5(
            body, content='', contentless_delete=1,
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE names_fts USING fts5(
            name, content='', contentless_delete=1, detail='none',
            tokenize='trigram case_sensitive 0'
        );
        """,
    ),
    Migration(
        2,
        "chunk vectors",
        """
        -- int8-quantised all-MiniLM-L6-v2 vectors of code, summary and doc chunks, keyed
        -- by chunk id; `layer` is a metadata column so KNN can filter on it.
        CREATE VIRTUAL TABLE chunk_vectors USING vec0(
            chunk_id INTEGER PRIMARY KEY,
            layer TEXT,
            embedding int8[384] distance_metric=cosine
        );
        -- Which text each vector was computed from: a chunk whose text hash differs
        -- (or that is gone) has a stale vector, removed before the next fill.
        CREATE TABLE embedded (
            chunk_id INTEGER PRIMARY KEY,
            text_hash INTEGER NOT NULL
        );
        """,
    ),
    Migration(
        3,
        "ids in insertion order",
        """
        -- Node and chunk ids were hashes scattered over 63 bits; they are now
        -- allocated in insertion order. Derived rows are cleared so the next run
        -- re-indexes every file (the index is rebuilt from the files it describes).
        DELETE FROM edges;
        DELETE FROM nodes;
        DELETE FROM chunks;
        DELETE FROM files;
        DELETE FROM skipped_files;
        INSERT INTO code_fts(code_fts) VALUES ('delete-all');
        INSERT INTO doc_fts(doc_fts) VALUES ('delete-all');
        INSERT INTO names_fts(names_fts) VALUES ('delete-all');
        DELETE FROM chunk_vectors;
        DELETE FROM embedded;
        DELETE FROM meta WHERE key IN ('last_update', 'run_in_progress');
        -- Calls written with an import alias (`from a import foo as bar; bar()`): few,
        -- and found through this index when the aliased definition appears or goes.
        CREATE INDEX edges_aliased ON edges(src_id)
            WHERE dst_hint != '' AND dst_name != substr(dst_hint, length(rtrim(dst_hint,
                replace(replace(replace(dst_hint, '.', ''), ':', ''), '\\', ''))) + 1);
        """,
    ),
    _git_history_migration(4),
    Migration(
        5,
        "vector stamps",
        """
        -- Which write brought each vector (store/vector_stamps.py), so an in-memory
        -- copy of the vectors fetches only what changed since it last looked.
        ALTER TABLE embedded ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX embedded_stamp ON embedded(stamp);
        """,
    ),
    Migration(
        6,
        "ast full-text table",
        """
        -- Signatures (the ast layer) get their own full-text table: the default
        -- lexical search, over code, then scores only code rows and needs no join
        -- to tell the layers apart. Their text is rebuilt from the source, so every
        -- file is read again by the next run (ids, and with them vectors, are kept:
        -- a re-read file with unchanged text keeps its chunk ids).
        CREATE VIRTUAL TABLE ast_fts USING fts5(
            body, content='', contentless_delete=1,
            tokenize="unicode61 remove_diacritics 2 tokenchars '_'"
        );
        DELETE FROM code_fts WHERE rowid IN (SELECT id FROM chunks WHERE layer = 'ast');
        UPDATE files SET mtime_ns = -1, content_hash = '';
        DELETE FROM skipped_files;
        """,
    ),
    Migration(
        7,
        "vector models",
        """
        -- Which model made each vector (store/vectors.py): the static model's vectors,
        -- written first, are replaced by all-MiniLM-L6-v2's in the background. ''
        -- stands for the model `meta.vectors_model` names (vectors written before).
        ALTER TABLE embedded ADD COLUMN model TEXT NOT NULL DEFAULT '';
        """,
    ),
    Migration(
        8,
        "mentions",
        """
        -- Code names that a document collection's resources mention (store/mentions.py):
        -- a code result lists the resources that mention its name, file or table.
        CREATE TABLE mentions (
            term TEXT NOT NULL,
            chunk_id INTEGER NOT NULL,
            PRIMARY KEY (term, chunk_id)
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        9,
        "generated files",
        """
        -- Files whose header says a tool generated them (parsing/generated.py), which
        -- prose queries rank like vendored code. Only reading a file tells, so every
        -- file is read again by the next run (ids and vectors are kept).
        ALTER TABLE files ADD COLUMN generated INTEGER NOT NULL DEFAULT 0;
        UPDATE files SET mtime_ns = -1, content_hash = '';
        DELETE FROM skipped_files;
        """,
    ),
    Migration(
        10,
        "qualified name index",
        """
        -- Import hints name a node by its qualified name (store/writer.py
        -- resolve_edges, store/python_hints.py, store/script_hints.py): looked up
        -- through nodes_name alone, a hint whose last part is a common name (`get`)
        -- read every node of that name.
        CREATE INDEX nodes_qualified ON nodes(qualified_name);
        """,
    ),
    Migration(
        11,
        "call pass",
        """
        -- 1: the file's calls edges were written without their targets (a cold index
        -- makes search available first); the call pass (call_pass.py) parses it
        -- again, fills them in and sets 0. Cross-file resolution follows the pass.
        ALTER TABLE files ADD COLUMN calls_pending INTEGER NOT NULL DEFAULT 0;
        """,
    ),
)
