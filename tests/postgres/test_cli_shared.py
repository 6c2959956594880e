"""`codesift index --db` and `codesift search --db` over a real PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from codesift.cli import main
from codesift.store.postgres import add_principal

pytestmark = pytest.mark.usefixtures("git_isolation")

FILES = {
    "billing/retry.py": (
        "def retry_failed_charge(charge, attempts: int = 5) -> bool:\n"
        '    """Retry a failed charge with exponential backoff."""\n'
        "    return any(charge.submit() for _ in range(attempts))\n"
    ),
    "README.md": "# Billing\n\nCharges that fail are retried.\n",
}


def test_index_and_search_the_shared_index(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    root: Path = make_repo(FILES, name="billing")
    args = ["index", str(root), "--no-embed", "--json", "--db", pg_dsn, "--repo", "acme/billing"]
    assert main(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    assert lines[-1]["repo"] == "acme/billing"
    assert lines[-1]["files_added"] == len(FILES)
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["files_unchanged"] == len(FILES)

    query = ["search", "retry a failed charge", "--db", pg_dsn, "--no-embed", "--json"]
    assert main(query) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert results[0]["path"] == "billing/retry.py"

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        add_principal(conn, "bob")
    assert main([*query, "--principal", "bob"]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == []
    assert main([*query, "--repo", "acme/other"]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == []
