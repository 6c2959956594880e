"""`codesift web --db` and the language server: a git-time window over the
shared index is resolved in each repository on its own
(engine/shared_pages.py). Two repositories tag
`v1` at different moments: search, symbols and graph `as_of=v1` read each at
its own `v1`, not at the served folder's; dates are one window everywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codesift.engine.postgres import index_into

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "web"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lsp"))
from harness import LspSession
from web_harness import WebHarness

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}
CLOSE_PY = '''\
def reconcile_accounts(book):
    """Match each entry against the bank statement."""
    return sorted(book)


def close_month(book):
    return reconcile_accounts(book)
'''
ALPHA, BETA = "acme/alpha@main", "acme/beta@main"


def commit_at(root: Path, message: str, when: str, tag: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, check=True, env=env)
    if tag is not None:
        subprocess.run(["git", "tag", tag], cwd=root, check=True, env=env)


@pytest.fixture
def tagged(pg_dsn: str, make_repo: Any) -> Path:
    """Two shared repositories whose `v1` are different moments, and a served
    folder (returned) whose own `v1` is later than both definitions."""
    # alpha: reconcile_accounts written in 2021, tagged v1 then.
    alpha: Path = make_repo({"ledger/close.py": CLOSE_PY}, name="alpha", commit=False)
    commit_at(alpha, "reconcile", "2021-01-01T12:00:00+00:00", tag="v1")
    (alpha / "ledger" / "notes.md").write_text("# Notes\n", encoding="utf-8")
    commit_at(alpha, "notes", "2023-06-01T12:00:00+00:00")
    # beta: tagged v1 in 2020, reconcile_accounts written in 2022.
    beta: Path = make_repo({"README.md": "# Books\n"}, name="beta", commit=False)
    commit_at(beta, "readme", "2020-01-01T12:00:00+00:00", tag="v1")
    (beta / "books").mkdir()
    (beta / "books" / "close.py").write_text(CLOSE_PY, encoding="utf-8")
    commit_at(beta, "reconcile", "2022-01-01T12:00:00+00:00")
    index_into(pg_dsn, alpha, repo=ALPHA, overrides=NO_VECTORS)
    index_into(pg_dsn, beta, repo=BETA, overrides=NO_VECTORS)
    # The served folder tags v1 now: its v1 would show both repositories' definitions.
    local: Path = make_repo(
        {"README.md": "# Local\n", ".codesift.toml": "[embedding]\nenabled = false\n"},
        name="local",
        commit=False,
    )
    commit_at(local, "local", "2025-01-01T12:00:00+00:00", tag="v1")

    return local


def test_revisions_are_resolved_in_each_repository(
    pg_dsn: str, tagged: Path, tmp_path: Path
) -> None:
    local = tagged
    with WebHarness(local, db=pg_dsn, tokens_file=tmp_path / "tokens.json") as web:

        def repos(params: dict[str, Any]) -> set[str]:
            answer = web.get("/api/symbols", {"name": "reconcile_accounts", **params})
            assert answer.status_code == 200, answer.text
            return {s["repo"] for s in answer.json()["exact"]}

        assert repos({}) == {ALPHA, BETA}
        assert repos({"as_of": "v1"}) == {ALPHA}  # beta's v1 is before its definition
        assert repos({"as_of": "2021-06-01"}) == {ALPHA}
        assert repos({"since": "2021-06-01"}) == {BETA}  # a date: one window everywhere

        def searched(params: dict[str, Any]) -> set[str]:
            body = {"query": "reconcile_accounts bank statement", **params}
            answer = web.post("/api/search", body)
            assert answer.status_code == 200, answer.text
            return {r["repo"] for r in answer.json()["results"] if r["source"] == "shared"}

        assert searched({}) == {ALPHA, BETA}
        assert searched({"as_of": "v1"}) == {ALPHA}
        assert searched({"since": "2021-06-01"}) == {BETA}

        walk = web.post(
            "/api/graph", {"name": "reconcile_accounts", "direction": "callers", "as_of": "v1"}
        ).json()
        assert walk["repo"] == ALPHA and walk["roots"]
        assert {(n["repo"], n["qualified_name"]) for n in walk["nodes"]} == {
            (ALPHA, "close.reconcile_accounts"),
            (ALPHA, "close.close_month"),
        }
        both = web.post("/api/graph", {"name": "reconcile_accounts", "direction": "callers"}).json()
        assert {n["repo"] for n in both["nodes"]} == {ALPHA, BETA}
        assert len({n["id"] for n in both["nodes"]}) == len(both["nodes"]) == 4


def test_the_language_server_searches_each_repository_at_its_own_revision(
    pg_dsn: str, tagged: Path, tmp_path: Path
) -> None:
    options = {
        "embeddings": False,
        "watch": False,
        "index": {"backend": "postgres", "dsn": pg_dsn, "repo": "acme/local@main"},
    }
    with LspSession([tagged], options, log_file=tmp_path / "server.log") as lsp:
        lsp.wait_ready()

        def searched(params: dict[str, Any]) -> set[str]:
            found = lsp.request(
                "codesift/search", {"query": "reconcile_accounts bank statement", **params}
            )
            return {r["repo"] for r in found["results"] if r["source"] == "shared"}

        assert searched({}) == {ALPHA, BETA}
        assert searched({"as_of": "v1"}) == {ALPHA}
