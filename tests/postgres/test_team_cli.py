"""`codesift team ...` and `codesift route --db` against a real PostgreSQL: what
docs/team.md does with them, as an admin and a member would, in text and JSON."""

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
from codesift.retrieval.request import SearchRequest

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}
BILLING = {
    "billing/retry.py": (
        "def retry_failed_charge(charge, attempts: int = 5) -> bool:\n"
        '    """Retry a failed charge with exponential backoff."""\n'
        "    return any(charge.submit() for _ in range(attempts))\n"
    ),
    "README.md": "# Billing\n\nCharges, invoices and retries of failed payments.\n",
}
VAULT = {
    "vault/keys.py": (
        "def derive_master_key(seed: bytes) -> bytes:\n"
        '    """Derive the vault master encryption key."""\n'
        "    return seed[::-1]\n"
    ),
    "README.md": "# Vault\n\nMaster encryption keys and their rotation.\n",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def team_json(capsys: pytest.CaptureFixture[str], dsn: str, *argv: str) -> Any:
    code, out, err = run(capsys, "team", *argv, "--db", dsn, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def roles(pg_dsn: str) -> Iterator[dict[str, str]]:
    suffix = uuid.uuid4().hex[:8]
    names = {"svc": f"svc_{suffix}", "ana": f"ana_{suffix}"}
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for role in names.values():
            conn.execute(f"CREATE ROLE {role} LOGIN")
    try:
        yield names
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            for role in names.values():
                conn.execute(f"DROP OWNED BY {role}")
                conn.execute(f"DROP ROLE {role}")


def test_an_admin_sets_up_a_team_with_the_cli(
    pg_dsn: str, make_repo: Any, roles: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "team", "sql", "--database", "codesift")
    assert code == 0 and "CREATE EXTENSION IF NOT EXISTS vector;" in out
    assert "GRANT SELECT ON schema_migrations, repos" in out and "principals" not in out
    assert team_json(capsys, pg_dsn, "init")["schema_version"] >= 9
    index_into(
        pg_dsn, make_repo(BILLING, name="billing"), repo="acme/billing@main", overrides=NO_VECTORS
    )
    index_into(pg_dsn, make_repo(VAULT, name="vault"), repo="acme/vault@main", overrides=NO_VECTORS)
    ana, svc = roles["ana"], roles["svc"]
    for role in (ana, svc):
        assert team_json(capsys, pg_dsn, "reader", role)["role"] == role
    assert team_json(capsys, pg_dsn, "member", "payments", ana)["member"] is True
    assert team_json(capsys, pg_dsn, "grant", "payments", "acme/billing@main")["granted"]
    assert team_json(capsys, pg_dsn, "principal", "security", "--group")["kind"] == "group"
    assert team_json(capsys, pg_dsn, "grant", "security", "acme/vault@main")["granted"]
    assert team_json(capsys, pg_dsn, "delegate", svc)["delegate"] is True
    assert team_json(capsys, pg_dsn, "row-security", "on") == {"row_security": True}

    listed = team_json(capsys, pg_dsn, "list")
    assert listed["row_security"] is True and listed["delegates"] == [svc]
    assert listed["repositories"] == ["acme/billing@main", "acme/vault@main"]
    by_name = {p["name"]: p for p in listed["principals"]}
    assert by_name["payments"]["members"] == [ana]
    assert by_name[ana]["reads"] == ["acme/billing@main"]
    assert team_json(capsys, pg_dsn, "list", "--principal", ana)["repositories"] == [
        "acme/billing@main"
    ]
    code, out, _ = run(capsys, "team", "list", "--db", pg_dsn)
    assert code == 0 and f"user {ana}" in out and "reads acme/billing@main" in out

    # Both access models at once: the service for ana, ana as herself.
    as_svc = pg_dsn.replace("postgres:@", f"{svc}:@", 1)
    as_ana = pg_dsn.replace("postgres:@", f"{ana}:@", 1)
    for dsn, principal in ((as_svc, ana), (as_ana, None)):
        with open_shared_search(dsn, principal=principal, parallel=False) as shared:
            assert shared.repos() == ["acme/billing@main"]
            found = shared.search(SearchRequest("retry a failed charge", top_k=3)).results
            assert found and {r.path for r in found} <= {"billing/retry.py", "README.md"}

    # Taking things back.
    assert team_json(capsys, pg_dsn, "revoke", "payments", "acme/billing@main")["granted"] is False
    assert team_json(capsys, pg_dsn, "list", "--principal", ana)["repositories"] == []
    assert team_json(capsys, pg_dsn, "member", "payments", ana, "--remove")["member"] is False
    assert team_json(capsys, pg_dsn, "delegate", svc, "--remove")["delegate"] is False
    assert team_json(capsys, pg_dsn, "remove-repo", "acme/vault@main")["removed"] is True
    assert team_json(capsys, pg_dsn, "row-security", "off") == {"row_security": False}
    assert team_json(capsys, pg_dsn, "principal", "security", "--remove")["removed"] is True
    assert team_json(capsys, pg_dsn, "list")["repositories"] == ["acme/billing@main"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["grant", "ana", "acme/nothing@main"], "no repository acme/nothing@main"),
        (["revoke", "ana", "acme/nothing@main"], "has no grant"),
        (["reader", "no_such_role_here"], "no database role no_such_role_here"),
        (["delegate", "no_such_role_here"], "no database role no_such_role_here"),
        (["member", "g", "u" * 100], "at most 63"),
        (["grant", "ana", "a\nb"], "control character"),
        (["remove-repo", "acme/nothing@main"], "no repository acme/nothing@main"),
        (["list", "--principal", "nobody"], "no principal named nobody"),
    ],
)
def test_a_bad_team_command_is_one_line(
    pg_dsn: str, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    code, out, err = run(capsys, "team", *argv, "--db", pg_dsn)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and said in err, err


def test_route_over_the_shared_index(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    index_into(
        pg_dsn, make_repo(BILLING, name="billing"), repo="acme/billing@main", overrides=NO_VECTORS
    )
    index_into(pg_dsn, make_repo(VAULT, name="vault"), repo="acme/vault@main", overrides=NO_VECTORS)
    team_json(capsys, pg_dsn, "grant", "ana", "acme/billing@main")
    query = "where is the master encryption key rotated"
    code, out, err = run(capsys, "route", query, "--db", pg_dsn, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["repositories"][0]["name"] == "acme/vault@main"
    code, out, err = run(capsys, "route", query, "--db", pg_dsn, "--principal", "ana", "--json")
    assert code == 0, err
    assert "vault" not in out
    code, out, _ = run(
        capsys, "route", "retry failed charges", "--db", pg_dsn, "--principal", "ana"
    )
    assert code == 0 and "acme/billing@main" in out and "vault" not in out
    code, out, err = run(capsys, "route", query, "--principal", "ana")
    assert code == 2 and err.count("\n") == 1 and "--db" in err
