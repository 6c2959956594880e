"""The language server over the shared index (index.backend = "postgres"), with
a real PostgreSQL and a real LSP client over stdio: an open folder's local index
overlays the shared one (its uncommitted edit is found, the shared index's stale
copy of the file is never returned), a repository only in the shared index is
found under its key with no file URI, both are merged into one page, routing
includes the shared repositories, a repository the database role may not read
(row-level security) is invisible to search, route and status, and a shared
index that is down leaves local search working with a one-line status."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from codesift.engine.postgres import index_into, open_shared_search
from codesift.retrieval.request import SearchRequest
from codesift.store.postgres import add_member, enable_row_security, grant

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lsp"))
from harness import LspSession, make_workspace, poll

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}
DOWN_DSN = "postgresql://nobody@127.0.0.1:1/nothing"
BILLING_KEY = "acme/billing@main"
VAULT_KEY = "acme/vault@main"
WEB_KEY = "acme/web@main"

BILLING = {
    "billing/retry.py": (
        "class RetryPolicy:\n"
        '    """How a failed charge is retried: exponential backoff."""\n\n'
        "    def next_delay(self, attempt: int) -> float:\n"
        "        return 2.0 ** attempt\n\n\n"
        "def retry_failed_charge(charge, policy: RetryPolicy) -> bool:\n"
        '    """Submit a failed charge again until the policy gives up."""\n'
        "    return charge.submit()\n"
    ),
    "README.md": "# Billing\n\nCharges that fail are retried with exponential backoff.\n",
}
# The uncommitted edit: the function is renamed in the open folder only.
EDITED = BILLING["billing/retry.py"].replace("retry_failed_charge", "retry_declined_charge")
VAULT = {
    "vault/keys.py": (
        "def rotate_master_key(vault) -> None:\n"
        '    """Rotate the master encryption key of the vault."""\n'
        "    vault.key = derive_master_key(vault.seed)\n\n\n"
        "def derive_master_key(seed: bytes) -> bytes:\n"
        "    return seed[::-1]\n"
    ),
    "README.md": "# Vault\n\nKeeps the master encryption key and rotates it.\n",
}
WEB = {
    "http/server.py": (
        "def parse_http_header(line: str) -> tuple[str, str]:\n"
        '    """Split one HTTP header line into its name and value."""\n'
        "    name, _, value = line.partition(':')\n"
        "    return name.strip().lower(), value.strip()\n"
    ),
    "README.md": "# Web\n\nA small HTTP server that parses request headers.\n",
}


@pytest.fixture
def repos(pg_dsn: str, tmp_path: Path) -> dict[str, Path]:
    """Three repositories in the shared index; the billing one is then edited
    (not committed) in its folder, which the tests open in the server."""
    roots = {
        BILLING_KEY: make_workspace(tmp_path / "billing", BILLING),
        VAULT_KEY: make_workspace(tmp_path / "vault", VAULT),
        WEB_KEY: make_workspace(tmp_path / "web", WEB),
    }
    for key, root in roots.items():
        index_into(pg_dsn, root, repo=key, overrides=NO_VECTORS)
    (roots[BILLING_KEY] / "billing/retry.py").write_text(EDITED, encoding="utf-8")
    return roots


def options(dsn: str) -> dict[str, Any]:
    return {
        "embeddings": False,
        "watch": False,
        "index": {"backend": "postgres", "dsn": dsn, "repo": BILLING_KEY},
    }


def search(lsp: LspSession, query: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = lsp.request("codesift/search", {"query": query, **params})
    return result


@pytest.fixture
def session(tmp_path: Path) -> Iterator[list[LspSession]]:
    """Started sessions, closed (and their exit checked) at the end."""
    started: list[LspSession] = []
    yield started
    for lsp in started:
        assert lsp.close() == 0, (tmp_path / "server.log").read_text()


def start(started: list[LspSession], folder: Path, opts: dict[str, Any], log: Path) -> LspSession:
    lsp = LspSession([folder], opts, log_file=log)
    started.append(lsp)
    lsp.start()
    lsp.wait_ready()
    return lsp


def test_the_open_folder_overlays_the_shared_index(
    pg_dsn: str, repos: dict[str, Path], session: list[LspSession], tmp_path: Path
) -> None:
    # The shared index still holds the committed name (the stale copy).
    with open_shared_search(pg_dsn, repos=[BILLING_KEY]) as shared:
        stale = shared.search(SearchRequest("retry_failed_charge", top_k=5)).results
        assert any(r.qualified_name.endswith("retry_failed_charge") for r in stale)

    lsp = start(session, repos[BILLING_KEY], options(pg_dsn), tmp_path / "server.log")

    edited = search(lsp, "retry_declined_charge")
    first = edited["results"][0]
    assert first["qualified_name"].endswith("retry_declined_charge")
    assert first["source"] == "local" and first["repo"] == BILLING_KEY
    assert first["folder"] == "billing" and first["uri"].endswith("/billing/billing/retry.py")
    assert edited["shared"]["state"] == "ok"
    assert BILLING_KEY not in edited["shared"]["repositories"]
    assert sorted(edited["shared"]["repositories"]) == [VAULT_KEY, WEB_KEY]

    old = search(lsp, "retry_failed_charge")
    assert all("retry_failed_charge" not in r["qualified_name"] for r in old["results"])
    assert all(r["repo"] != BILLING_KEY for r in old["results"] if r["source"] == "shared")

    # A repository only in the shared index: its key and path, no file URI.
    vault = search(lsp, "master encryption key")
    hit = vault["results"][0]
    assert hit["source"] == "shared" and hit["repo"] == VAULT_KEY
    assert hit["path"] == "vault/keys.py" and hit["uri"] is None and hit["folder"] is None

    # One page of both, in one ranking.
    both = search(lsp, "retry_declined_charge rotate_master_key", top_k=10)
    sources = {(r["source"], r["repo"]) for r in both["results"]}
    assert {("local", BILLING_KEY), ("shared", VAULT_KEY)} <= sources
    scores = [r["score"] for r in both["results"]]
    assert scores == sorted(scores, reverse=True)

    # `shared: false` searches the folders only.
    local_only = search(lsp, "master encryption key", shared=False)
    assert all(r["source"] == "local" for r in local_only["results"])
    assert local_only["shared"] is None

    routed = lsp.request("codesift/route", {"query": "where is the master encryption key rotated"})
    top = routed["repositories"][0]
    assert top["name"] == VAULT_KEY and top["source"] == "shared" and top["uri"] is None
    assert BILLING_KEY not in [r["name"] for r in routed["repositories"]]
    web = lsp.request("codesift/route", {"query": "parse an http request header"})
    assert web["repositories"][0]["name"] == WEB_KEY

    status = lsp.request("codesift/status", {})
    assert status["shared"]["state"] == "ok"
    assert sorted(status["shared"]["repositories"]) == [VAULT_KEY, WEB_KEY]

    # Routing first (one folder and two shared repositories: a pool of three):
    # only the shared repository the route chose is searched of the two, and its
    # results lead the page (merged in the router's order).
    first = search(lsp, "where is the master encryption key rotated", route=True)
    assert first["routed"][0] == VAULT_KEY and WEB_KEY not in first["routed"]
    assert first["folder_order"][0] == VAULT_KEY
    assert first["shared"]["repositories"] == [VAULT_KEY]
    assert first["results"] and first["results"][0]["repo"] == VAULT_KEY
    assert WEB_KEY not in {r["repo"] for r in first["results"]}


def test_the_shared_index_follows_the_configuration(
    pg_dsn: str, repos: dict[str, Path], session: list[LspSession], tmp_path: Path
) -> None:
    plain = {"embeddings": False, "watch": False}
    lsp = start(session, repos[BILLING_KEY], plain, tmp_path / "server.log")
    before = search(lsp, "master encryption key")
    assert before["shared"] is None and all(r["source"] == "local" for r in before["results"])
    assert lsp.request("codesift/status", {})["shared"] is None
    lsp.notify("workspace/didChangeConfiguration", {"settings": {"codesift": options(pg_dsn)}})

    def shared_hits() -> dict[str, Any]:
        return search(lsp, "master encryption key")

    after = poll(
        shared_hits,
        lambda r: any(x["repo"] == VAULT_KEY for x in r["results"]),
        "shared results after didChangeConfiguration",
    )
    assert after["shared"]["state"] == "ok"


@pytest.fixture
def reader_role(pg_dsn: str, repos: dict[str, Path]) -> Iterator[str]:
    """A login role that may read the billing and web repositories (through a
    group), not the vault, with row-level security on; its DSN."""
    role = f"ana_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        add_member(conn, "devs", role)
        assert grant(conn, "devs", BILLING_KEY)
        assert grant(conn, "devs", WEB_KEY)
        enable_row_security(conn)
    try:
        yield pg_dsn.replace("postgres:@", f"{role}:@", 1)
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")


def test_an_ungranted_repository_is_invisible(
    repos: dict[str, Path], reader_role: str, session: list[LspSession], tmp_path: Path
) -> None:
    lsp = start(session, repos[BILLING_KEY], options(reader_role), tmp_path / "server.log")
    found = search(lsp, "master encryption key rotate_master_key derive_master_key")
    assert found["shared"]["state"] == "ok"
    assert found["shared"]["repositories"] == [WEB_KEY]
    assert "vault" not in json.dumps(found["results"]).lower()
    header = search(lsp, "parse_http_header")
    assert header["results"][0]["repo"] == WEB_KEY
    routed = lsp.request("codesift/route", {"query": "where is the master encryption key rotated"})
    assert "vault" not in json.dumps(routed).lower()
    status = lsp.request("codesift/status", {})
    assert status["shared"]["repositories"] == [WEB_KEY]


def test_a_shared_index_that_is_down_leaves_local_search(
    repos: dict[str, Path], session: list[LspSession], tmp_path: Path
) -> None:
    lsp = start(session, repos[BILLING_KEY], options(DOWN_DSN), tmp_path / "server.log")
    for _ in range(2):  # the first attempt fails, the next waits for the retry delay
        found = search(lsp, "retry_declined_charge")
        assert found["results"][0]["qualified_name"].endswith("retry_declined_charge")
        assert found["shared"]["state"] == "unavailable"
        message = found["shared"]["message"]
        assert message.startswith("shared index unavailable") and "\n" not in message
    routed = lsp.request("codesift/route", {"query": "retry a declined charge", "limit": 3})
    assert [r["name"] for r in routed["repositories"]] == ["billing"]
    assert routed["shared"]["state"] == "unavailable"
    status = lsp.request("codesift/status", {})
    assert status["shared"]["state"] == "unavailable"
    assert status["folders"][0]["name"] == "billing"
