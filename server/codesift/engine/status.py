"""What an index holds: counts, size, vectors, history source, rerank state."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

import apsw

from codesift.embedding import vector_coverage
from codesift.embedding.model import model_id_of
from codesift.engine.access import damaged_index, open_existing
from codesift.engine.models import load_rerank, query_path
from codesift.engine.results import IndexStatus, RerankStatus, VectorStatus
from codesift.engine.workspace import Workspace
from codesift.history.update import history_status
from codesift.store.call_targets import calls_pending_count
from codesift.store.database import index_writable, integrity_problem
from codesift.store.reader import index_counts

__all__ = ["database_bytes", "index_status", "read_status", "rerank_status"]


def database_bytes(db_path: Path) -> int:
    """The index file and its write-ahead log, in bytes."""
    total = 0
    for path in (db_path, db_path.with_name(db_path.name + "-wal")):
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    return total


def rerank_status(ws: Workspace) -> RerankStatus:
    """Whether the rerank stage would run: loads the configured model to find out."""
    rerank = ws.settings.rerank
    enabled = rerank.enabled and rerank.provider != "none"
    load = load_rerank(ws.settings) if enabled else None
    return RerankStatus(
        enabled=enabled,
        provider=rerank.provider,
        model_path=rerank.model_path,
        active=load is not None and load.reranker is not None,
        warning=None if load is None else load.warning,
    )


def read_status(
    ws: Workspace, conn: apsw.Connection, *, rerank: bool = True, details: bool = True
) -> IndexStatus:
    """The status of the index open on `conn` (no integrity check); without
    `details`, counts and size only (no vectors, history or rerank)."""
    counts = index_counts(conn)
    basic = IndexStatus(
        root=str(ws.root),
        database=str(ws.db_path),
        exists=True,
        database_bytes=database_bytes(ws.db_path),
        files=counts.files,
        nodes=counts.nodes,
        edges=counts.edges,
        chunks=counts.chunks,
        languages=counts.by_language,
        last_update=counts.last_update,
        calls_pending=calls_pending_count(conn),
    )
    if not details:
        return basic
    from codesift.store.vectors import vector_models  # here: status's imports stay light

    embedding = ws.settings.embedding
    model = model_id_of(embedding.model, embedding.cache_dir, embedding.max_tokens)
    coverage = vector_coverage(conn, embedding.layers, model)
    queries, query_error = query_path(embedding)
    return replace(
        basic,
        vectors=VectorStatus(
            coverage.embedded,
            coverage.embeddable,
            queries,
            query_error,
            usable=coverage.usable,
            models=vector_models(conn),
        ),
        history=history_status(conn, ws.root),
        rerank=rerank_status(ws) if rerank else None,
    )


def index_status(ws: Workspace) -> IndexStatus:
    """The workspace's index status (`exists` False when there is none); the file
    is checked first (status is where people look when in doubt): CorruptIndexError
    names `codesift index --rebuild` for a damaged one. An index this user cannot
    write is read read-only, and `read_only` says so."""
    if not ws.db_path.exists():
        return IndexStatus(root=str(ws.root), database=str(ws.db_path), exists=False)
    conn = open_existing(ws)
    try:
        problem = integrity_problem(ws.db_path)
        if problem is not None:
            raise damaged_index(ws, problem)
        return replace(read_status(ws, conn), read_only=not index_writable(ws.db_path))
    finally:
        conn.close()
