"""The MCP server over the shared index (index.backend = "postgres" in the
workspace's .codesift.toml), with a real PostgreSQL and the SDK's client over
stdio: the search tool answers from the local index for this workspace (its
uncommitted edit found, the shared stale copy not returned) and from the shared
index for the other repositories (cited under their key), the route tool pools
both, and a shared index that is down leaves local answers with a one-line note."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mcp"))
from mcp_harness import McpSession
from test_lsp_shared import (
    BILLING_KEY,
    DOWN_DSN,
    VAULT_KEY,
    WEB_KEY,
    options,
    repos,
    search,
    session,
    start,
)

pytestmark = pytest.mark.usefixtures("git_isolation")

__all__ = ["repos", "session"]  # the fixtures, shared with the language server's tests


def settings_file(root: Path, dsn: str) -> None:
    (root / ".codesift.toml").write_text(
        "[embedding]\nenabled = false\n\n"
        f'[index]\nbackend = "postgres"\ndsn = "{dsn}"\nrepo = "{BILLING_KEY}"\n',
        encoding="utf-8",
    )


@pytest.fixture
def mcp_for(tmp_path: Path) -> Iterator[list[McpSession]]:
    started: list[McpSession] = []
    yield started
    for mcp in started:
        mcp.close()


def serve(started: list[McpSession], root: Path, log: Path) -> McpSession:
    session = McpSession(root, log_file=log)
    started.append(session)
    session.start()
    return session


def test_search_and_route_tools_over_local_and_shared(
    pg_dsn: str, repos: dict[str, Path], mcp_for: list[McpSession], tmp_path: Path
) -> None:
    root = repos[BILLING_KEY]
    settings_file(root, pg_dsn)
    mcp = serve(mcp_for, root, tmp_path / "mcp.log")

    edited = mcp.data("search", {"query": "retry_declined_charge"})
    first = edited["results"][0]
    assert first["qualified_name"].endswith("retry_declined_charge")
    assert first["source"] == "local" and first["cite"].startswith("billing/retry.py:")
    assert edited["shared"]["state"] == "ok"
    assert sorted(edited["shared"]["repositories"]) == [VAULT_KEY, WEB_KEY]

    stale = mcp.data("search", {"query": "retry_failed_charge"})
    assert all("retry_failed_charge" not in r["qualified_name"] for r in stale["results"])

    call = mcp.call("search", {"query": "master encryption key"})
    assert not call.is_error
    data = call.structured_content
    assert isinstance(data, dict)
    hit = data["results"][0]
    assert hit["source"] == "shared" and hit["repo"] == VAULT_KEY
    assert hit["cite"].startswith(f"{VAULT_KEY}/vault/keys.py:")
    assert f"{VAULT_KEY}/vault/keys.py" in mcp.text(call)

    only_local = mcp.data("search", {"query": "master encryption key", "shared": False})
    assert all(r["source"] == "local" for r in only_local["results"])
    assert only_local["shared"] is None

    routed = mcp.data("route", {"query": "where is the master encryption key rotated"})
    top = routed["repositories"][0]
    assert top["name"] == VAULT_KEY and top["source"] == "shared" and top["path"] is None
    assert BILLING_KEY not in [r["name"] for r in routed["repositories"]]
    local = mcp.data("route", {"query": "retry a declined charge with backoff"})
    assert local["repositories"][0]["source"] == "local"
    assert local["repositories"][0]["repo"] == BILLING_KEY

    status = mcp.data("status")
    assert status["shared"]["state"] == "ok"


def _page(data: dict[str, Any]) -> list[tuple[str, str | None, str, int]]:
    """(source, shared repository, path, first line) of each result."""
    return [
        (r["source"], r["repo"] if r["source"] == "shared" else None, r["path"], r["start_line"])
        for r in data["results"]
    ]


def test_the_language_server_and_mcp_conduct_a_shared_search_alike(
    pg_dsn: str,
    repos: dict[str, Path],
    mcp_for: list[McpSession],
    session: list[Any],
    tmp_path: Path,
) -> None:
    """One folder and the shared index's two other repositories: the same
    routing plan, merge and test filter (engine/conductor.py) behind both."""
    root = repos[BILLING_KEY]
    settings_file(root, pg_dsn)
    mcp = serve(mcp_for, root, tmp_path / "mcp.log")
    lsp = start(session, root, options(pg_dsn), tmp_path / "server.log")
    asks: list[dict[str, Any]] = [
        {},
        {"route": True},
        {"route": False},
        {"tests": "exclude"},
    ]
    for query in ("where is the master encryption key rotated", "retry a declined charge"):
        for ask in asks:
            from_lsp = search(lsp, query, **ask)
            from_mcp = mcp.data("search", {"query": query, **ask})
            assert from_lsp["results"], (query, ask)
            assert _page(from_mcp) == _page(from_lsp), (query, ask)
    # Routed (a pool of three sources), the shared repository the router chose
    # leads both pages and the other is not searched.
    routed = mcp.data(
        "search", {"query": "where is the master encryption key rotated", "route": True}
    )
    assert routed["results"][0]["repo"] == VAULT_KEY
    assert WEB_KEY not in {r["repo"] for r in routed["results"]}


def test_the_shared_index_down_leaves_local_answers(
    repos: dict[str, Path], mcp_for: list[McpSession], tmp_path: Path
) -> None:
    root = repos[BILLING_KEY]
    settings_file(root, DOWN_DSN)
    mcp = serve(mcp_for, root, tmp_path / "mcp.log")
    call = mcp.call("search", {"query": "retry_declined_charge"})
    assert not call.is_error
    data = call.structured_content
    assert isinstance(data, dict)
    assert data["results"][0]["qualified_name"].endswith("retry_declined_charge")
    assert data["shared"]["state"] == "unavailable"
    note = mcp.text(call).splitlines()[-1]
    assert note.startswith("(shared index unavailable") and note.endswith("local results only)")
    routed = mcp.data("route", {"query": "retry a declined charge"})
    assert [r["name"] for r in routed["repositories"]] == ["billing"]
    assert "unavailable" in json.dumps(routed["shared"])
    assert mcp.data("status")["shared"]["state"] == "unavailable"
