"""One indexing job of a repository key at a time, and what it leaves behind.

A job (mirror.mirror_index) holds the key's advisory lock for its whole run
(`key_lock`): a second job of the key says which job it waits for and runs
after it. `start_job` gives the key its repository id (drawn at random once,
checked to fit the id packing with the local index's ids) and records the job
in `repos` (host, pid, folder, start); `finish_job` writes the repository's
metadata (vector models, root, when indexed) and clears the job. A job that
ended without `finish_job` leaves `job_started_at` set: status.py reports it
as interrupted, or as indexing while a job holds the lock.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import psycopg

from codesift.store.postgres.schema import MAX_REPO_ID, check_id_range

__all__ = ["KEY_LOCK_CLASS", "finish_job", "key_lock", "repo_id_for", "start_job"]

# The first half of a key's advisory lock (the second: hashtext(key)).
KEY_LOCK_CLASS = 4346541


def repo_id_for(pg: psycopg.Connection[Any], key: str, root: str) -> int:
    """The id of the repository `key`; a new key gets an id drawn at random from
    1..MAX_REPO_ID (ids then say nothing of other repositories, and a run of a
    known key allocates nothing). Run inside a transaction."""
    row = pg.execute("SELECT id FROM repos WHERE key = %s", (key,)).fetchone()
    if row is not None:
        return int(row[0])
    for _ in range(64):
        drawn = 1 + secrets.randbelow(MAX_REPO_ID)
        row = pg.execute(
            "INSERT INTO repos (id, key, root) OVERRIDING SYSTEM VALUE VALUES (%s, %s, %s)"
            " ON CONFLICT DO NOTHING RETURNING id",
            (drawn, key, root),
        ).fetchone()
        if row is not None:
            return int(row[0])
        row = pg.execute("SELECT id FROM repos WHERE key = %s", (key,)).fetchone()
        if row is not None:
            return int(row[0])
    raise psycopg.errors.UniqueViolation(
        f"no free repository id found for {key!r} in 64 draws of 1..{MAX_REPO_ID}"
    )


def start_job(
    pg: psycopg.Connection[Any], key: str, root: str, largest_local_id: int
) -> tuple[int, bool]:
    """(the repository id of `key`, whether its last job finished); records
    this job. IdRangeError, before anything of the job is written, when an id
    would not fit."""
    with pg.transaction():
        repo_id = repo_id_for(pg, key, root)
        check_id_range(repo_id, largest_local_id)
        before = pg.execute(
            "SELECT indexed_at IS NOT NULL AND job_started_at IS NULL FROM repos WHERE id = %s",
            (repo_id,),
        ).fetchone()
        pg.execute(
            "UPDATE repos SET job_started_at = now(), job_root = %s, job_host = %s,"
            " job_pid = %s WHERE id = %s",
            (root, socket.gethostname(), os.getpid(), repo_id),
        )
    return repo_id, bool(before and before[0])


def finish_job(pg: psycopg.Connection[Any], repo_id: int, root: str) -> None:
    """The repository's vector models (several while a better model replaces a
    first one) and their size, its root and time: the job's end. Run inside the
    job's last transaction."""
    pg.execute(
        "UPDATE repos SET embedding_model = (SELECT string_agg(DISTINCT v.model, ','"
        " ORDER BY v.model) FROM chunk_vectors v WHERE v.repo_id = %s),"
        " dims = (SELECT max(v.dims) FROM chunk_vectors v WHERE v.repo_id = %s),"
        " root = %s, indexed_at = now(), job_started_at = NULL, job_root = NULL,"
        " job_host = NULL, job_pid = NULL WHERE id = %s",
        (repo_id, repo_id, root, repo_id),
    )


def _job_holder(pg: psycopg.Connection[Any], key: str) -> str:
    """Who holds the key's lock, as the job recorded itself (may be empty)."""
    row = pg.execute(
        "SELECT job_host, job_pid, job_root, extract(epoch FROM job_started_at)"
        " FROM repos WHERE key = %s AND job_started_at IS NOT NULL",
        (key,),
    ).fetchone()
    if row is None:
        return ""
    host, pid, root, since = row
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(since)))
    return f" (process {pid} on {host}, indexing {root}, since {when})"


@contextmanager
def key_lock(
    pg: psycopg.Connection[Any], key: str, on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold the advisory lock of the repository `key` (a session lock on `pg`,
    in autocommit mode); when another job holds it, say so through `on_wait` and
    wait for it. Released when the block ends (or the connection closes)."""
    lock = (KEY_LOCK_CLASS, key)
    row = pg.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", lock).fetchone()
    if not (row and row[0]):
        if on_wait is not None:
            on_wait(
                f"another indexing job is writing {key} into the shared index"
                f"{_job_holder(pg, key)}: this one starts after it"
            )
        pg.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", lock)
    try:
        yield
    finally:
        if not pg.closed and not pg.broken:
            # A failing connection takes its locks with it.
            with suppress(psycopg.Error):
                pg.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", lock)
