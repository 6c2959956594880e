"""What the shared-index commands say when the database cannot be used: an
unreachable server, a DSN that is not PostgreSQL's, a server that is not
PostgreSQL, a wrong password, missing extensions, a role without the privilege
to read, a database without the schema. Each is one `error:` line on stderr,
exit code 2, no traceback, and `codesift index` keeps the local index it built."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import codesift.engine.shared_connect as shared_connect
import codesift.store.postgres.schema as pg_schema
from codesift.cli import main

pytestmark = pytest.mark.usefixtures("git_isolation")

FILES = {
    "billing/retry.py": "def retry_failed_charge(charge) -> bool:\n    return charge.submit()\n",
    ".codesift.toml": "[embedding]\nenabled = false\n",
}

READS = [
    ["search", "retry a failed charge", "--no-embed"],
    ["symbols", "retry_failed_charge"],
    ["callers", "retry_failed_charge"],
    ["graph", "retry_failed_charge", "--depth", "2"],
    ["status"],
]


@pytest.fixture(autouse=True)
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODESIFT_NO_SERVER", "1")


def one_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The error line of a command that must fail as a usage or database error."""
    code = main(argv)
    out = capsys.readouterr()
    assert code == 2, (argv, out.err)
    assert "Traceback" not in out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.err
    return lines[0]


@pytest.fixture
def repo(make_repo: Any) -> Path:
    root: Path = make_repo(FILES, name="billing")
    return root


@pytest.mark.parametrize(
    ("dsn", "says"),
    [
        ("postgresql://codesift@127.0.0.1:1/codesift", "cannot connect to the shared index"),
        ("host=/nonexistent/socket dbname=codesift", "cannot connect to the shared index"),
        ("mysql://localhost/codesift", "not a PostgreSQL connection string or URI"),
        ("/var/lib/codesift/index.db", "not a PostgreSQL connection string or URI"),
        ("sqlite:///index.db", "not a PostgreSQL connection string or URI"),
        ("mysql://ana:hunter2-pw@db.internal/x", "not a PostgreSQL connection string or URI"),
    ],
)
def test_a_dsn_that_leads_to_no_postgresql_is_one_line(
    repo: Path, capsys: pytest.CaptureFixture[str], dsn: str, says: str
) -> None:
    for argv in READS:
        line = one_error(capsys, [*argv, "--db", dsn])
        assert says in line
        assert "hunter2" not in line  # libpq quotes a string it cannot parse
    line = one_error(capsys, ["index", str(repo), "--quiet", "--db", dsn])
    assert says in line
    # The local index was built and kept; only the shared write failed.
    assert (repo / ".codesift" / "index.db").is_file()


@pytest.fixture
def not_postgres() -> Iterator[int]:
    """A TCP port where something that is not PostgreSQL answers (HTTP)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = int(server.getsockname()[1])
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        stop.set()
        server.close()
        thread.join(timeout=10)


def test_a_server_that_is_not_postgresql_is_one_line(
    not_postgres: int, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn = f"postgresql://codesift@127.0.0.1:{not_postgres}/codesift?sslmode=disable&gssencmode=disable"
    for argv in READS:
        assert "cannot connect to the shared index" in one_error(capsys, [*argv, "--db", dsn])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never answers (as a host behind a
    firewall that drops packets keeps a client waiting)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = int(server.getsockname()[1])
    held: list[socket.socket] = []
    stop = threading.Event()

    def hold() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        stop.set()
        server.close()
        for conn in held:
            conn.close()
        thread.join(timeout=10)


def test_a_server_that_never_answers_is_given_up(
    silent_server: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The DSN names no connect_timeout: codesift's own limit applies (libpq's
    # smallest, 2 s, here), not psycopg's 130 s.
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    monkeypatch.setattr(shared_connect, "CONNECT_TIMEOUT_SECONDS", 2)
    dsn = f"postgresql://codesift@127.0.0.1:{silent_server}/x?sslmode=disable&gssencmode=disable"
    line = one_error(capsys, ["status", "--db", dsn])
    assert "cannot connect to the shared index" in line and "timeout" in line


def test_a_wrong_password_is_one_line_without_the_password(
    pg_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    role = f"pw_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        row = conn.execute("SHOW hba_file").fetchone()
        assert row is not None
        hba = Path(str(row[0]))
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'right-pw-7d1f'")
    try:
        original = hba.read_text()
        # This role alone must give a password (the test server trusts everyone).
        hba.write_text(
            f"local all {role} scram-sha-256\nhost all {role} all scram-sha-256\n{original}"
        )
    except OSError as exc:
        pytest.skip(f"cannot edit the test server's {hba.name}: {exc}")
    try:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
        wrong = pg_dsn.replace("postgres:@", f"{role}:wrong-pw-9c3e@", 1)
        # The server reloads its rules on a signal: wait (without sleeping) until
        # a login with the wrong password is refused.
        refused = False
        for _ in range(500):
            try:
                psycopg.connect(wrong).close()
            except psycopg.OperationalError:
                refused = True
                break
        assert refused
        for argv in READS:
            line = one_error(capsys, [*argv, "--db", wrong])
            assert "cannot connect to the shared index" in line
            assert "password authentication failed" in line
            assert "wrong-pw-9c3e" not in line and "right-pw-7d1f" not in line
    finally:
        hba.write_text(original)
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
            conn.execute(f"DROP ROLE IF EXISTS {role}")


def test_missing_extensions_are_one_line_and_the_local_index_stays(
    pg_dsn: str, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server without an extension the schema needs, as one without pgvector is.
    missing = pg_schema.PgMigration(
        pg_schema.MIGRATIONS[-1].version + 1,
        "an extension this server lacks",
        "CREATE EXTENSION IF NOT EXISTS codesift_missing_extension;",
    )
    monkeypatch.setattr(pg_schema, "MIGRATIONS", (*pg_schema.MIGRATIONS, missing))
    line = one_error(capsys, ["index", str(repo), "--quiet", "--db", pg_dsn])
    assert "needs the PostgreSQL extensions vector (pgvector), pg_trgm and btree_gin" in line
    assert "codesift_missing_extension" in line
    assert (repo / ".codesift" / "index.db").is_file()


def test_a_database_without_the_schema_or_a_role_without_privileges(
    pg_dsn: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in READS:
        assert "schema version 0" in one_error(capsys, [*argv, "--db", pg_dsn])
    assert main(["index", str(repo), "--quiet", "--db", pg_dsn, "--repo", "acme/billing"]) == 0
    capsys.readouterr()
    role = f"nobody_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")  # no SELECT on the tables
    try:
        as_role = pg_dsn.replace("postgres:@", f"{role}:@", 1)
        for argv in READS:
            line = one_error(capsys, [*argv, "--db", as_role])
            assert "the shared index: permission denied" in line
        line = one_error(capsys, ["index", str(repo), "--quiet", "--db", as_role])
        assert "permission denied" in line
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")
