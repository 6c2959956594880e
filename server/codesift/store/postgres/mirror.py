"""Writing one repository's local index into the shared PostgreSQL index.

The local SQLite index (built by codesift's own indexer, store/writer.py) is the
source: its files, nodes, edges, chunks, git times and vectors are mirrored under
the repository's key. Each file's rows get a digest (its content hash, and every
row mirrored for it: nodes, edges, chunk texts and times, which chunks have a
vector); a file whose digest is unchanged is not touched, a changed one is
replaced, a removed one deleted, in transactions of a bounded number of files.
So re-running after new commits writes only the files whose rows changed (a new
definition elsewhere can re-resolve another file's edges: that file changes too).

Node and chunk ids are the local ids offset by the repository's id
(schema.global_id), so edges into files that are not rewritten stay right. A
repository's id is drawn at random once, when its key is first written, and
every id is checked to fit before anything is written.

Each batch of files is committed on its own (the connection is used in
autocommit mode, each batch in a transaction), so a job that is killed keeps
what it committed and the next run of the key writes only the rest. A job
holds an advisory lock on its key for its whole run: a second job of the key
waits for it (saying which job it waits for), and the repository's metadata
(its root, when it was indexed) are the last complete job's. While a job runs,
`repos.job_started_at` says so; a job that ended without finishing leaves it
set, which `status` reports as interrupted.

codesift's own settings files are not written, and what looks like a credential
in any text is redacted (redact.py).
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw
import numpy as np
import psycopg
from psycopg.pq import TransactionStatus

from codesift.store.postgres.jobs import finish_job, key_lock, start_job
from codesift.store.postgres.keys import check_repo_key
from codesift.store.postgres.redact import REDACTION_VERSION, is_settings_file, redact
from codesift.store.postgres.schema import ensure_vector_index, global_id
from codesift.store.postgres.statistics import merge_pending_entries, refresh_statistics
from codesift.store.postgres.tsvector import doc_token_count, tsvector_literal
from codesift.store.reader import chunk_rows
from codesift.tokens import code_index_text

__all__ = ["MirrorSummary", "mirror_index", "refresh_statistics"]

# Files per transaction: a failed run keeps every batch it committed, and a
# batch's digests are written with its rows, so the next run redoes only the rest.
FILES_PER_TRANSACTION = 200
_BATCH = 500
_LEGACY_MODEL = "all-MiniLM-L6-v2-int8"


@dataclass(slots=True)
class MirrorSummary:
    """What one run wrote: files added / replaced / deleted / left alone, and the
    rows inserted (nodes, edges, chunks, vectors, commits)."""

    repo: str
    repo_id: int
    files_added: int = 0
    files_replaced: int = 0
    files_deleted: int = 0
    files_unchanged: int = 0
    rows: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return sum(self.rows.values())


@dataclass(slots=True)
class _File:
    local_id: int
    path: str
    language: str
    content_hash: str
    line_count: int
    generated: bool = False
    nodes: list[tuple[Any, ...]] = field(default_factory=list)
    edges: list[tuple[Any, ...]] = field(default_factory=list)
    chunks: list[tuple[Any, ...]] = field(default_factory=list)
    digest: str = ""


def _vector_format(conn: apsw.Connection) -> str | None:
    """`int8` or `float32` for the local vector table's element type, None for
    none (or a kind this mirror does not copy)."""
    row = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'chunk_vectors'").fetchone()
    if row is None:
        return None
    sql = str(row[0]).lower()
    if "int8[" in sql:
        return "int8"
    if "float[" in sql or "float32[" in sql:
        return "float32"
    return None


def _meta(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def _vector_models(conn: apsw.Connection, default: str | None) -> str:
    """SQL for the model of a chunk's vector (NULL without one): `embedded.model`
    where the local index records it per vector ('' there, and older indexes:
    `default`, the model its meta names)."""
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(embedded)")}
    fallback = (default or _LEGACY_MODEL).replace("'", "''")
    if "model" in columns:
        return (
            f"CASE WHEN e.chunk_id IS NULL THEN NULL"
            f" ELSE coalesce(nullif(e.model, ''), '{fallback}') END"
        )
    return f"CASE WHEN e.chunk_id IS NULL THEN NULL ELSE '{fallback}' END"


def _read_files(conn: apsw.Connection, model: str | None) -> dict[int, _File]:
    """Every file with its rows; a chunk's last column is its vector's model (None
    without a current vector)."""
    every = {
        int(fid): _File(int(fid), str(path), str(lang), str(digest), int(lines), bool(generated))
        for fid, path, lang, digest, lines, generated in conn.execute(
            "SELECT id, path, language, content_hash, line_count, generated FROM files"
        )
    }
    # codesift's own settings may name a DSN with its password: never shared.
    files = {fid: f for fid, f in every.items() if not is_settings_file(f.path)}
    for row in conn.execute(
        "SELECT file_id, id, parent_id, kind, name, qualified_name, start_line, end_line,"
        " signature, docstring, created, changed, changed_commit FROM nodes ORDER BY id"
    ):
        if int(row[0]) in files:
            files[int(row[0])].nodes.append(tuple(row[1:]))
    for row in conn.execute(
        "SELECT n.file_id, e.src_id, e.kind, e.dst_name, e.dst_id, e.dst_hint, e.line,"
        " e.resolution FROM edges e JOIN nodes n ON n.id = e.src_id"
        " ORDER BY e.src_id, e.kind, e.dst_name"
    ):
        if int(row[0]) in files:
            files[int(row[0])].edges.append(tuple(row[1:]))
    has_vectors = _vector_format(conn) is not None
    vector_join = (
        " LEFT JOIN embedded e ON e.chunk_id = c.id AND e.text_hash = c.text_hash"
        if has_vectors
        else ""
    )
    vector_col = _vector_models(conn, model) if has_vectors else "NULL"
    for row in conn.execute(
        "SELECT c.file_id, c.id, c.node_id, c.layer, c.part, c.start_line, c.end_line, c.title,"
        f" c.text_hash, c.created, c.changed, c.changed_commit, {vector_col}"
        f" FROM chunks c{vector_join} ORDER BY c.id"
    ):
        if int(row[0]) in files:
            files[int(row[0])].chunks.append(tuple(row[1:]))
    return files


def _digest(file: _File) -> str:
    """Everything mirrored for the file (chunk rows end with their vector's model,
    so a vector replaced by another model's rewrites the file)."""
    h = hashlib.blake2b(digest_size=16)
    head: tuple[Any, ...] = (file.path, file.language, file.content_hash, file.line_count)
    if file.generated:  # only then: the digests of other files stay what they were
        head += (True,)
    head += (("redaction", REDACTION_VERSION),)
    h.update(repr(head).encode())
    h.update(repr(file.nodes).encode())
    h.update(repr(file.edges).encode())
    h.update(repr(file.chunks).encode())
    return h.hexdigest()


def _fts_body(
    layer: str, node_id: int | None, part: int, text: str, docstrings: dict[int, str]
) -> tuple[str | None, int | None]:
    """The tsvector literal of what the local index put in its full-text table for
    a chunk (rows.py), and its token count: code text with its doc comment and
    identifier parts, signatures with their identifier parts. Doc sections get
    only their count (the `english` configuration parses them in SQL); summaries
    (searched by vector only) neither."""
    if layer == "code":
        body = text
        if node_id is not None and part == 0:
            doc = docstrings.get(node_id, "")
            if doc and doc[:60] not in body:
                body = f"{body}\n{doc}"
        return tsvector_literal(code_index_text(body))
    if layer == "ast":
        return tsvector_literal(code_index_text(text))
    if layer == "doc":
        return None, doc_token_count(text)
    return None, None


def _vectors(
    conn: apsw.Connection, fmt: str, chunk_ids: Sequence[int]
) -> Iterator[tuple[int, str, str, int]]:
    """(local chunk id, layer, pgvector text, dims) of the chunks' vectors."""
    dtype = np.int8 if fmt == "int8" else np.float32
    for start in range(0, len(chunk_ids), _BATCH):
        batch = list(chunk_ids[start : start + _BATCH])
        for cid, layer, blob in conn.execute(
            "SELECT chunk_id, layer, embedding FROM chunk_vectors"
            f" WHERE chunk_id IN ({','.join('?' * len(batch))})",
            batch,
        ):
            values = np.frombuffer(bytes(blob), dtype=dtype).astype(np.float32)
            if not values.any():
                continue  # a zero vector has no cosine
            text = "[" + ",".join(f"{v:g}" for v in values.tolist()) + "]"
            yield int(cid), str(layer), text, int(values.shape[0])


def _write_files(
    local: apsw.Connection,
    pg: psycopg.Connection[Any],
    repo_id: int,
    files: Sequence[_File],
    replace_ids: Sequence[int],
    vector_format: str | None,
    summary: MirrorSummary,
) -> set[int]:
    """Delete the PostgreSQL files `replace_ids`, insert `files` with their rows;
    returns the vector dimension counts written."""
    if replace_ids:
        pg.execute("DELETE FROM files WHERE id = ANY(%s)", (list(replace_ids),))
    if not files:
        return set()
    _delete_reused_ids(pg, repo_id, files)
    writer = _RowWriter(local, repo_id, _insert_files(pg, repo_id, files), summary)
    summary.rows["files"] += len(files)
    with pg.cursor() as cur:
        docstrings = writer.copy_nodes(cur, files)
        writer.copy_edges(cur, files)
        writer.copy_chunks(cur, files, docstrings)
        docs = [writer.gid(int(c[0])) for f in files for c in f.chunks if c[2] == "doc"]
        if docs:
            cur.execute(
                "UPDATE chunks SET tsv = to_tsvector('english', text) WHERE id = ANY(%s)",
                (docs,),
            )
        if vector_format is None:
            return set()
        return writer.copy_vectors(cur, files, vector_format)


def _delete_reused_ids(pg: psycopg.Connection[Any], repo_id: int, files: Sequence[_File]) -> None:
    """The local index may have given an id that a file of a later batch still holds
    here (ids above the largest are reused after the largest were removed): that
    file changed too, and goes now (its own batch writes it again)."""
    node_ids = [global_id(repo_id, int(n[0])) for f in files for n in f.nodes]
    chunk_ids_new = [global_id(repo_id, int(c[0])) for f in files for c in f.chunks]
    pg.execute(
        "DELETE FROM files WHERE id IN (SELECT file_id FROM nodes WHERE id = ANY(%s)"
        " UNION SELECT file_id FROM chunks WHERE id = ANY(%s))",
        (node_ids, chunk_ids_new),
    )


def _insert_files(
    pg: psycopg.Connection[Any], repo_id: int, files: Sequence[_File]
) -> dict[int, int]:
    """Insert the files' rows; returns each file's PostgreSQL id by its local id."""
    file_ids: dict[int, int] = {}
    with pg.cursor() as cur:
        for f in files:
            row = cur.execute(
                "INSERT INTO files (repo_id, path, language, content_hash, digest, line_count,"
                " generated) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (repo_id, f.path, f.language, f.content_hash, f.digest, f.line_count, f.generated),
            ).fetchone()
            assert row is not None
            file_ids[f.local_id] = int(row[0])
    return file_ids


class _RowWriter:
    """Copies the rows of a batch of inserted files (`file_ids`: their PostgreSQL
    ids by local id) and counts them in `summary`."""

    def __init__(
        self,
        local: apsw.Connection,
        repo_id: int,
        file_ids: dict[int, int],
        summary: MirrorSummary,
    ) -> None:
        self.local = local
        self.repo_id = repo_id
        self.file_ids = file_ids
        self.summary = summary

    def gid(self, local_id: Any) -> int | None:
        return None if local_id is None else global_id(self.repo_id, int(local_id))

    def copy_nodes(self, cur: psycopg.Cursor[Any], files: Sequence[_File]) -> dict[int, str]:
        """The files' nodes, signatures and docstrings redacted; returns the
        redacted docstrings by local node id."""
        docstrings: dict[int, str] = {}
        with cur.copy(
            "COPY nodes (id, repo_id, file_id, parent_id, kind, name, qualified_name,"
            " start_line, end_line, signature, docstring, created, changed, changed_commit)"
            " FROM STDIN"
        ) as copy:
            for f in files:
                for n in f.nodes:
                    node_id, parent, *rest = n
                    rest[5] = redact(str(rest[5] or ""), f.language)  # signature
                    rest[6] = redact(str(rest[6] or ""), f.language)  # docstring
                    docstrings[int(node_id)] = rest[6]
                    copy.write_row(
                        (
                            self.gid(node_id),
                            self.repo_id,
                            self.file_ids[f.local_id],
                            self.gid(parent),
                            *rest,
                        )
                    )
                    self.summary.rows["nodes"] += 1
        return docstrings

    def copy_edges(self, cur: psycopg.Cursor[Any], files: Sequence[_File]) -> None:
        with cur.copy(
            "COPY edges (src_id, repo_id, file_id, kind, dst_name, dst_id, dst_hint, line,"
            " resolution) FROM STDIN"
        ) as copy:
            for f in files:
                for src, kind, dst_name, dst_id, hint, line, resolution in f.edges:
                    copy.write_row(
                        (
                            self.gid(src),
                            self.repo_id,
                            self.file_ids[f.local_id],
                            kind,
                            dst_name,
                            self.gid(dst_id),
                            hint,
                            line,
                            resolution,
                        )
                    )
                    self.summary.rows["edges"] += 1

    def copy_chunks(
        self, cur: psycopg.Cursor[Any], files: Sequence[_File], docstrings: dict[int, str]
    ) -> None:
        """The files' chunks with their texts (read from the local index in
        batches, redacted) and full-text vectors."""
        chunk_ids = [int(c[0]) for f in files for c in f.chunks]
        local_chunk = {int(c[0]): (f.local_id, c) for f in files for c in f.chunks}
        language_of = {f.local_id: f.language for f in files}
        with cur.copy(
            "COPY chunks (id, repo_id, file_id, node_id, layer, part, start_line, end_line,"
            " title, text, text_hash, created, changed, changed_commit, tsv, tokens)"
            " FROM STDIN"
        ) as copy:
            for start in range(0, len(chunk_ids), _BATCH):
                batch = chunk_ids[start : start + _BATCH]
                rows = chunk_rows(self.local, batch)
                for cid in batch:
                    r = rows.get(cid)
                    if r is None:
                        continue
                    local_file, c = local_chunk[cid]
                    language = language_of[local_file]
                    text = redact(r.text.replace("\x00", ""), language)
                    node = None if r.node_id is None else int(r.node_id)
                    tsv, tokens = _fts_body(r.layer, node, int(r.part), text, docstrings)
                    copy.write_row(
                        (
                            self.gid(cid),
                            self.repo_id,
                            self.file_ids[local_file],
                            self.gid(node),
                            r.layer,
                            r.part,
                            r.start_line,
                            r.end_line,
                            redact(r.title, language),
                            text,
                            c[7],
                            c[8],
                            c[9],
                            c[10],
                            tsv,
                            tokens,
                        )
                    )
                    self.summary.rows["chunks"] += 1

    def copy_vectors(
        self, cur: psycopg.Cursor[Any], files: Sequence[_File], vector_format: str
    ) -> set[int]:
        """The vectors of the files' chunks; returns their dimension counts."""
        dims_seen: set[int] = set()
        models = {int(c[0]): str(c[-1]) for f in files for c in f.chunks if c[-1]}
        hashes = {int(c[0]): c[7] for f in files for c in f.chunks}
        with cur.copy(
            "COPY chunk_vectors (chunk_id, repo_id, layer, dims, text_hash, model,"
            " embedding) FROM STDIN"
        ) as copy:
            for cid, layer, vec, dims in _vectors(self.local, vector_format, list(models)):
                row = (self.gid(cid), self.repo_id, layer, dims, hashes[cid], models[cid], vec)
                copy.write_row(row)
                dims_seen.add(dims)
                self.summary.rows["vectors"] += 1
        return dims_seen


def _batches(items: Sequence[_File], size: int) -> Iterable[Sequence[_File]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _sync_commits(
    local: apsw.Connection, pg: psycopg.Connection[Any], repo_id: int, summary: MirrorSummary
) -> None:
    """The local history's commits whose number is new or now names another
    commit; commits the local history no longer holds (rewritten history: a
    force-push) are deleted."""
    try:
        rows = list(local.execute("SELECT id, oid, time, subject FROM history_commits"))
    except apsw.SQLError:
        return
    have = {
        int(n): str(o)
        for n, o in pg.execute(
            "SELECT number, oid FROM commits WHERE repo_id = %s", (repo_id,)
        ).fetchall()
    }
    numbers = {int(r[0]) for r in rows}
    stale = [n for n in have if n not in numbers]
    if stale:
        pg.execute("DELETE FROM commits WHERE repo_id = %s AND number = ANY(%s)", (repo_id, stale))
        summary.rows["commits"] += len(stale)
    changed = [r for r in rows if have.get(int(r[0])) != str(r[1])]
    if not changed:
        return
    with pg.cursor() as cur:
        cur.executemany(
            "INSERT INTO commits (repo_id, number, oid, time, subject) VALUES (%s, %s, %s, %s, %s)"
            " ON CONFLICT (repo_id, number) DO UPDATE SET oid = excluded.oid,"
            " time = excluded.time, subject = excluded.subject",
            [(repo_id, int(n), str(o), int(t), str(s)) for n, o, t, s in changed],
        )
    summary.rows["commits"] += len(changed)


# A run that wrote at least this many rows analyzes the tables it wrote.
ANALYZE_AFTER_ROWS = 10_000


def mirror_index(
    local: apsw.Connection,
    pg: psycopg.Connection[Any],
    key: str,
    root: str = "",
    *,
    on_wait: Callable[[str], None] | None = None,
) -> MirrorSummary:
    """Bring the repository `key` in PostgreSQL up to date with the local index
    (see the module docstring); `pg` must be migrated (schema.migrate). It is
    used in autocommit mode for the run (each batch its own transaction), and
    left as it was given. `on_wait` hears that another job of the key runs."""
    check_repo_key(key)
    if pg.info.transaction_status != TransactionStatus.IDLE:
        pg.commit()
    autocommit = pg.autocommit
    pg.autocommit = True
    try:
        with key_lock(pg, key, on_wait):
            return _mirror_locked(local, pg, key, root)
    finally:
        if not pg.closed:
            pg.autocommit = autocommit


def _mirror_locked(
    local: apsw.Connection, pg: psycopg.Connection[Any], key: str, root: str
) -> MirrorSummary:
    started = time.perf_counter()
    vector_format = _vector_format(local)
    files = _read_files(local, _vectors_model(local, vector_format))
    largest = max((int(row[0]) for f in files.values() for row in (*f.nodes, *f.chunks)), default=0)
    repo_id, complete = start_job(pg, key, root, largest)
    summary = MirrorSummary(key, repo_id)
    for f in files.values():
        f.digest = _digest(f)
    mirrored = {
        str(path): (int(fid), str(digest))
        for fid, path, digest in pg.execute(
            "SELECT id, path, digest FROM files WHERE repo_id = %s", (repo_id,)
        ).fetchall()
    }
    local_paths = {f.path for f in files.values()}
    gone = [fid for path, (fid, _) in mirrored.items() if path not in local_paths]
    todo = _files_to_write(files, mirrored, summary)
    dims: set[int] = set()
    if gone:
        with pg.transaction():
            pg.execute("DELETE FROM files WHERE id = ANY(%s)", (gone,))
        summary.files_deleted = len(gone)
    for batch in _batches(todo, FILES_PER_TRANSACTION):
        replaced = [mirrored[f.path][0] for f in batch if f.path in mirrored]
        with pg.transaction():
            dims |= _write_files(local, pg, repo_id, batch, replaced, vector_format, summary)
    # An interrupted job's batches are in, its statistics are not: recompute them.
    changed = bool(todo or gone) or not complete
    _finish(local, pg, summary, root, dims, changed)
    if summary.rows.get("nodes") or summary.rows.get("chunks"):
        merge_pending_entries(pg)
    if summary.rows_written >= ANALYZE_AFTER_ROWS:
        # Fresh planner statistics after a large write: until autovacuum gets to
        # them, plans (which index, which join order) are made for the old sizes.
        with pg.transaction():
            pg.execute("ANALYZE files, nodes, edges, chunks, chunk_vectors, term_stats")
    summary.seconds = time.perf_counter() - started
    return summary


def _vectors_model(local: apsw.Connection, vector_format: str | None) -> str | None:
    """The model the local index's meta names for its vectors (an index that
    predates the record: the legacy model when it has vectors); None without
    vectors."""
    if vector_format is None:
        return None
    model = _meta(local, "vectors_model")
    if model is None and local.execute("SELECT 1 FROM embedded LIMIT 1").fetchone():
        model = _LEGACY_MODEL
    return model


def _files_to_write(
    files: dict[int, _File], mirrored: dict[str, tuple[int, str]], summary: MirrorSummary
) -> list[_File]:
    """The files that are new or whose digest changed, by path (counted in
    `summary` with those left alone)."""
    todo: list[_File] = []
    for f in sorted(files.values(), key=lambda f: f.path):
        old = mirrored.get(f.path)
        if old is None:
            summary.files_added += 1
            todo.append(f)
        elif old[1] != f.digest:
            summary.files_replaced += 1
            todo.append(f)
        else:
            summary.files_unchanged += 1
    return todo


def _finish(
    local: apsw.Connection,
    pg: psycopg.Connection[Any],
    summary: MirrorSummary,
    root: str,
    dims: set[int],
    changed: bool,
) -> None:
    """The job's last transaction: statistics (when files `changed`), commits,
    a vector index per dimension count, and the job marked finished."""
    repo_id = summary.repo_id
    with pg.transaction():
        if changed:
            summary.rows["statistics"] += refresh_statistics(pg, repo_id)
        _sync_commits(local, pg, repo_id, summary)
        # Every size the repository holds, not only those written now: a
        # database made before an index was added gets it from its next run.
        held = pg.execute(
            "SELECT DISTINCT dims FROM chunk_vectors WHERE repo_id = %s", (repo_id,)
        ).fetchall()
        for d in sorted(dims | {int(r[0]) for r in held}):
            ensure_vector_index(pg, d)
        finish_job(pg, repo_id, root)
