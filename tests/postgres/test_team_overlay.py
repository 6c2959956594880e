"""An open folder overlays its repository in the shared index even when the
key it was indexed under is not the folder's default key (a CI job with a
remote, a clone without one): its definitions are never shown twice, and a
folder whose repository cannot be told among several is warned about once."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codesift.config import load_settings
from codesift.engine.postgres import index_into
from codesift.engine.shared_overlay import SharedIndex, folder_repo_key
from codesift.retrieval.request import SearchRequest

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}
WEB = {
    "web/retry.py": (
        "def retry_failed_charge(charge, attempts: int = 5) -> bool:\n"
        '    """Retry a failed charge with exponential backoff."""\n'
        "    return any(charge.submit() for _ in range(attempts))\n"
    ),
}
OTHER = {"tools/lint.py": "def lint_charges() -> None:\n    pass\n"}


def branch(root: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(root), "branch", "--show-current"], capture_output=True, text=True
    )
    return out.stdout.strip()


def test_a_folder_without_a_remote_overlays_its_ci_key(pg_dsn: str, make_repo: Any) -> None:
    web: Path = make_repo(WEB, name="web")
    tools: Path = make_repo(OTHER, name="tools")
    ci_key = f"github.com/acme/web@{branch(web)}"
    index_into(pg_dsn, web, repo=ci_key, overrides=NO_VECTORS)
    index_into(pg_dsn, tools, repo="github.com/acme/tools@main", overrides=NO_VECTORS)
    local_key = folder_repo_key(web, load_settings(web))
    assert local_key == f"web@{branch(web)}" != ci_key
    shared = SharedIndex(pg_dsn)
    try:
        page = shared.search(SearchRequest("retry a failed charge", top_k=5), exclude={local_key})
        assert ci_key not in page.keys.values()
        assert ci_key not in page.status.repositories
        assert "github.com/acme/tools@main" in page.status.repositories
        assert ci_key not in shared.status({local_key}).repositories
        profiles, _, _ = shared.route_pool({local_key})
        assert [p.name for p in profiles] == ["github.com/acme/tools@main"]
    finally:
        shared.close()


def test_two_candidates_are_warned_about_once_and_none_is_taken(
    pg_dsn: str, make_repo: Any, caplog: pytest.LogCaptureFixture
) -> None:
    web: Path = make_repo(WEB, name="web")
    name = branch(web)
    for key in (f"github.com/acme/web@{name}", f"gitlab.com/other/web@{name}"):
        index_into(pg_dsn, web, repo=key, overrides=NO_VECTORS)
    shared = SharedIndex(pg_dsn)
    try:
        with caplog.at_level(logging.WARNING, logger="codesift.engine.shared_overlay"):
            for _ in range(2):
                status = shared.status({f"web@{name}"})
                assert len(status.repositories) == 2
        warned = [r.getMessage() for r in caplog.records if "index.repo" in r.getMessage()]
        assert len(warned) == 1 and "github.com/acme/web" in warned[0]
    finally:
        shared.close()


def test_a_server_refuses_a_dsn_with_a_password(pg_dsn: str) -> None:
    with_password = pg_dsn.replace("postgres:@", "postgres:hunter2pw@", 1)
    shared = SharedIndex(with_password)
    try:
        status = shared.status()
        assert status.state == "unavailable"
        assert "index.dsn holds a password" in status.message
        assert "hunter2pw" not in status.message
    finally:
        shared.close()
