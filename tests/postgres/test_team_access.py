"""Who reads the shared index, against a real PostgreSQL with real login roles:
a search service and people logging in as themselves together (row security
on or off), `--principal` refused to a role that may not read for others,
readers that see no one else's principals, ids that say nothing of other
repositories, no credentials in the shared text, keys checked."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from codesift.cli import main
from codesift.engine.postgres import index_into, open_shared_search
from codesift.errors import ConfigError, QueryError
from codesift.retrieval.request import SearchRequest
from codesift.store.postgres import add_member, enable_row_security, grant
from codesift.store.postgres.access import add_delegate, grant_reader
from codesift.store.postgres.schema import ID_SPAN

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}
APP = {
    "billing/retry.py": (
        "def retry_failed_charge(charge, attempts: int = 5) -> bool:\n"
        '    """Retry a failed charge with exponential backoff."""\n'
        "    return any(charge.submit() for _ in range(attempts))\n"
    ),
}
SECRET = {
    "vault/keys.py": (
        "def derive_master_key(seed: bytes) -> bytes:\n"
        '    """Derive the vault master encryption key."""\n'
        "    return seed[::-1]\n"
    ),
}
OTHER = {"docs/notes.md": "# Notes\n\nRelease notes of the tooling.\n"}


def as_role(dsn: str, role: str) -> str:
    return dsn.replace("postgres:@", f"{role}:@", 1)


@pytest.fixture
def team(pg_dsn: str, make_repo: Any) -> Iterator[dict[str, str]]:
    """Three repositories; roles `svc` (a search service), `ana` (a person, in
    group devs, which may read acme/app@main) and `eve` (no grant), each with
    the reader privileges `grant_reader` gives."""
    for name, files, key in (
        ("app", APP, "acme/app@main"),
        ("secret", SECRET, "acme/secret@main"),
        ("other", OTHER, "acme/other@main"),
    ):
        index_into(pg_dsn, make_repo(files, name=name), repo=key, overrides=NO_VECTORS)
    suffix = uuid.uuid4().hex[:8]
    roles = {"svc": f"svc_{suffix}", "ana": f"ana_{suffix}", "eve": f"eve_{suffix}"}
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for role in roles.values():
            conn.execute(f"CREATE ROLE {role} LOGIN")
            grant_reader(conn, role)
        add_member(conn, "devs", roles["ana"])
        add_member(conn, "vault-team", "zed")
        assert grant(conn, "devs", "acme/app@main")
        assert grant(conn, "vault-team", "acme/secret@main")
    try:
        yield roles
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            for role in roles.values():
                conn.execute(f"DROP OWNED BY {role}")
                conn.execute(f"DROP ROLE {role}")


def paths(dsn: str, query: str, principal: str | None = None) -> list[str]:
    with open_shared_search(dsn, principal=principal, parallel=False) as shared:
        return [r.path for r in shared.search(SearchRequest(query, top_k=5)).results]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("row_security", [False, True])
def test_principal_is_refused_to_a_role_that_may_not_read_for_others(
    pg_dsn: str, team: dict[str, str], capsys: pytest.CaptureFixture[str], row_security: bool
) -> None:
    if row_security:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            enable_row_security(conn)
    ana = team["ana"]
    for role in ("eve", "svc"):
        with pytest.raises(ConfigError, match="may not read as another principal"):
            open_shared_search(as_role(pg_dsn, team[role]), principal=ana)
        code, out, err = cli(
            capsys,
            "search",
            "retry a failed charge",
            "--db",
            as_role(pg_dsn, team[role]),
            "--principal",
            ana,
            "--no-embed",
        )
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "may not read as another principal" in err
        assert f"codesift team delegate {team[role]}" in err
    # Reading as oneself needs no entitlement.
    assert paths(as_role(pg_dsn, ana), "retry a failed charge", principal=ana) == [
        "billing/retry.py"
    ]


@pytest.mark.parametrize("row_security", [False, True])
def test_a_search_service_and_people_logging_in_work_together(
    pg_dsn: str, team: dict[str, str], row_security: bool
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        add_delegate(conn, team["svc"])
        if row_security:
            enable_row_security(conn)
    svc, ana, eve = (as_role(pg_dsn, team[r]) for r in ("svc", "ana", "eve"))
    # The service, for ana: her repository, never the vault.
    assert paths(svc, "retry a failed charge", principal=team["ana"]) == ["billing/retry.py"]
    assert paths(svc, "derive the vault master encryption key", principal=team["ana"]) == []
    # ...and for the vault team.
    assert paths(svc, "derive the vault master encryption key", principal="vault-team") == [
        "vault/keys.py"
    ]
    # A person logged in as herself, no principal given.
    expected = ["billing/retry.py"] if row_security else ["acme/app@main/billing/retry.py"]
    assert paths(ana, "retry a failed charge") == expected
    if row_security:
        assert paths(ana, "derive the vault master encryption key") == []
        assert paths(eve, "retry a failed charge") == []


def test_readers_select_only_what_a_search_needs(pg_dsn: str, team: dict[str, str]) -> None:
    ana = as_role(pg_dsn, team["ana"])
    for table in ("principals", "memberships", "grants", "delegates"):
        with psycopg.connect(ana) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f"SELECT count(*) FROM {table}")
    # Under row security, a role given SELECT on them anyway sees only its own.
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        enable_row_security(conn)
        for table in ("principals", "memberships", "grants", "delegates"):
            conn.execute(f"GRANT SELECT ON {table} TO {team['ana']}")
    with psycopg.connect(ana) as conn:
        names = sorted(r[0] for r in conn.execute("SELECT name FROM principals"))
        assert names == sorted([team["ana"], "devs"])
        assert conn.execute("SELECT count(*) FROM memberships").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM grants").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM delegates").fetchone() == (0,)
        assert [r[0] for r in conn.execute("SELECT key FROM repos")] == ["acme/app@main"]


def test_ids_say_nothing_of_other_repositories(pg_dsn: str, team: dict[str, str]) -> None:
    with psycopg.connect(pg_dsn) as conn:
        ids = sorted(int(r[0]) for r in conn.execute("SELECT id FROM repos"))
    assert ids != [1, 2, 3]  # drawn at random, not counted
    with open_shared_search(pg_dsn, principal="devs", parallel=False) as shared:
        [hit] = shared.search(SearchRequest("retry a failed charge", top_k=1)).results
        assert hit.node_id is not None and hit.node_id // ID_SPAN not in (1, 2, 3)


def test_no_credential_reaches_the_shared_index(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn = "postgresql://codesift_indexer:hunter2pw@db.internal/codesift"
    root: Path = make_repo(
        {
            ".codesift.toml": f"[embedding]\nenabled = false\n# shared: {dsn}\n",
            "deploy/settings.py": f'DATABASE_URL = "{dsn}"\nAPI_TOKEN = "tok-hunter2pw-123"\n',
            "deploy/app.yaml": "database:\n  password: hunter2pw\n",
            "deploy/notes.md": "# Deploy\n\nLog in with password=hunter2pw to the box.\n",
        },
        name="deploy",
    )
    index_into(pg_dsn, root, repo="acme/deploy@main")
    with psycopg.connect(pg_dsn) as conn:
        for table, column in (("chunks", "text"), ("nodes", "signature"), ("nodes", "docstring")):
            found = conn.execute(
                f"SELECT {column} FROM {table} WHERE {column} LIKE '%%hunter2pw%%'"
            ).fetchall()
            assert found == [], (table, column)
        paths = [r[0] for r in conn.execute("SELECT path FROM files ORDER BY path")]
    assert ".codesift.toml" not in paths and "deploy/settings.py" in paths
    code, out, _ = cli(capsys, "search", "hunter2pw", "--db", pg_dsn, "--no-embed", "--json")
    assert code == 0 and json.loads(out)["results"] == []
    # A settings file that names a password is refused, in one line.
    (root / ".codesift.toml").write_text(f'[index]\nbackend = "postgres"\ndsn = "{dsn}"\n')
    code, out, err = cli(capsys, "index", str(root), "--no-embed")
    assert code == 2 and err.count("\n") == 1 and "index.dsn holds a password" in err
    assert "hunter2pw" not in err


@pytest.mark.parametrize(
    "key", ["k" * 300, "acme/app\n@main", "acme/\x00app", " acme/app", "acme/\x1b[31mapp"]
)
def test_a_bad_repository_key_is_one_line_before_anything_is_written(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    root: Path = make_repo({**APP, ".codesift.toml": "[embedding]\nenabled = false\n"})
    code, _, err = cli(capsys, "index", str(root), "--db", pg_dsn, "--repo", key, "--no-embed")
    assert code == 2 and err.count("\n") == 1 and "repository key" in err
    assert not (root / ".codesift").exists()  # refused before indexing
    with pytest.raises(QueryError):
        index_into(pg_dsn, root, repo=key, overrides=NO_VECTORS)
    code, _, err = cli(capsys, "status", "--db", pg_dsn, "--repo", key)
    assert code == 2 and err.count("\n") == 1


def test_a_nul_in_a_query_is_a_query_error(
    pg_dsn: str, team: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with open_shared_search(pg_dsn, parallel=False) as shared:
        with pytest.raises(QueryError):
            shared.symbols("retry\x00charge")
        with pytest.raises(QueryError):
            shared.search(SearchRequest("retry\x00charge"))
    code, out, err = cli(capsys, "symbols", "retry\x00x", "--db", pg_dsn, "--json")
    assert code == 2 and out == "" and err.count("\n") == 1
