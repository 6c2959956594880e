"""`codesift web --db DSN` over a real PostgreSQL: tokens kept in the shared
index's table, each request reading the shared index as its token's
principal. A principal granted one repository finds it; a principal without
grants learns the name of no repository through search, route, status,
symbols, graph or file; a token revoked in the table stops at once."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from test_lsp_shared import BILLING_KEY, VAULT_KEY, WEB_KEY, repos

from codesift.engine.web_tokens import SharedTokens
from codesift.store.postgres import add_principal, grant

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "web"))
from web_harness import WORKSPACE, WebHarness, make_workspace

pytestmark = pytest.mark.usefixtures("git_isolation")

__all__ = ["repos"]  # the fixture, shared with the language server's tests

KEYS = (BILLING_KEY, VAULT_KEY, WEB_KEY)


@pytest.fixture
def team(
    pg_dsn: str, repos: dict[str, Path], tmp_path: Path
) -> Iterator[tuple[WebHarness, dict[str, str], SharedTokens]]:
    with psycopg.connect(pg_dsn, autocommit=True) as pg:
        add_principal(pg, "ana")
        add_principal(pg, "nobody")
        assert grant(pg, "ana", VAULT_KEY)
    tokens = SharedTokens(pg_dsn)
    secrets = {
        "ana": tokens.add("ana-laptop", "ana"),
        "nobody": tokens.add("nobody-laptop", "nobody"),
        "ghost": tokens.add("ghost-laptop", "no-such-principal"),
    }
    root = make_workspace(tmp_path / "local", WORKSPACE)
    try:
        with WebHarness(root, db=pg_dsn) as web:
            yield web, secrets, tokens
    finally:
        tokens.close()


def named_repos(text: str) -> set[str]:
    return {key for key in KEYS if key in text or key.split("@")[0] in text}


def test_each_token_reads_as_its_principal(
    team: tuple[WebHarness, dict[str, str], SharedTokens],
) -> None:
    web, secrets, _ = team
    assert web.get("/api/status").status_code == 401  # tokens exist: one is needed

    ana = web.post("/api/search", {"query": "master encryption key"}, token=secrets["ana"])
    assert ana.status_code == 200
    data = ana.json()
    assert data["shared"]["repositories"] == [VAULT_KEY]
    assert any(r["repo"] == VAULT_KEY for r in data["results"])
    assert named_repos(ana.text) == {VAULT_KEY}
    status = web.get("/api/status", token=secrets["ana"]).json()
    assert status["shared"]["repositories"] == [VAULT_KEY]


@pytest.mark.parametrize("who", ["nobody", "ghost"])
def test_a_principal_without_grants_learns_no_repository(
    team: tuple[WebHarness, dict[str, str], SharedTokens], who: str
) -> None:
    web, secrets, _ = team
    token = secrets[who]
    answers = [
        web.post("/api/search", {"query": "master encryption key"}, token=token),
        web.post("/api/search", {"query": "vault acme billing web"}, token=token),
        web.post("/api/route", {"query": "rotate the master encryption key"}, token=token),
        web.get("/api/status", token=token),
        web.get("/api/symbols", {"name": "rotate_master_key"}, token=token),
        web.post("/api/graph", {"name": "derive_master_key", "direction": "both"}, token=token),
    ]
    for answer in answers:
        assert answer.status_code == 200, answer.text
        assert named_repos(answer.text) == set(), answer.text
    assert answers[0].json()["shared"]["repositories"] == []
    assert answers[3].json()["shared"]["repositories"] == []
    assert answers[4].json()["exact"] == []
    assert answers[5].json()["roots"] == []
    # A repository's file: the same 404 whether it exists, is granted or not.
    probes = [
        web.get("/api/file", {"repo": key, "path": path}, token=token)
        for key, path in (
            (VAULT_KEY, "vault/keys.py"),
            (BILLING_KEY, "billing/retry.py"),
            ("acme/none@main", "vault/keys.py"),
        )
    ]
    assert {p.status_code for p in probes} == {404}
    assert probes[0].json() == probes[2].json()  # granted to others, or none at all
    assert all(named_repos(p.text) == set() for p in probes)


def test_a_token_revoked_in_the_table_stops_at_once(
    team: tuple[WebHarness, dict[str, str], SharedTokens],
) -> None:
    web, secrets, tokens = team
    assert web.get("/api/status", token=secrets["ana"]).status_code == 200
    assert [t.name for t in tokens.tokens()] == ["ana-laptop", "ghost-laptop", "nobody-laptop"]
    assert tokens.revoke("ana-laptop")
    assert web.get("/api/status", token=secrets["ana"]).status_code == 401
    assert web.post("/api/search", {"query": "key"}, token=secrets["ana"]).status_code == 401
    assert web.get("/api/status", token=secrets["nobody"]).status_code == 200


def test_mcp_reads_as_the_token_s_principal_too(
    team: tuple[WebHarness, dict[str, str], SharedTokens],
) -> None:
    """/mcp behind the same guard: each tool call reads as its request's token."""
    import asyncio

    import httpx
    from mcp.client.streamable_http import streamable_http_client

    from mcp import ClientSession

    web, secrets, _ = team

    async def ask(secret: str) -> str:
        headers = {"authorization": f"Bearer {secret}"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(web.base + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            found = await session.call_tool("search", {"query": "master encryption key"})
            status = await session.call_tool("status", {})
            return json.dumps([found.structured_content, status.structured_content])

    assert named_repos(asyncio.run(ask(secrets["ana"]))) == {VAULT_KEY}
    assert named_repos(asyncio.run(ask(secrets["nobody"]))) == set()


def test_symbols_graph_and_file_of_a_granted_repository(
    team: tuple[WebHarness, dict[str, str], SharedTokens],
) -> None:
    """A shared repository the principal may read: its definitions, its code graph
    and its file's lines (rebuilt from the chunks the index keeps); one it may
    not read answers as a missing one, through each of them."""
    web, secrets, _ = team
    ana = secrets["ana"]
    symbols = web.get("/api/symbols", {"name": "rotate_master_key"}, token=ana).json()
    hit = symbols["exact"][0]
    assert (hit["source"], hit["repo"], hit["path"]) == ("shared", VAULT_KEY, "vault/keys.py")
    assert hit["cite"] == f"{VAULT_KEY}/vault/keys.py:1-3"

    walk = web.post(
        "/api/graph", {"name": "derive_master_key", "direction": "callers"}, token=ana
    ).json()
    assert walk["repo"] == VAULT_KEY and walk["roots"]
    callers = {n["qualified_name"] for n in walk["nodes"] if n["id"] not in walk["roots"]}
    assert callers == {"keys.rotate_master_key"} or any("rotate_master_key" in c for c in callers)
    assert {n["repo"] for n in walk["nodes"]} == {VAULT_KEY}

    lines = web.get(
        "/api/file",
        {"repo": VAULT_KEY, "path": "vault/keys.py", "line": 6, "context": 1},
        token=ana,
    )
    assert lines.status_code == 200, lines.text
    data = lines.json()
    assert (data["start_line"], data["end_line"], data["total_lines"]) == (5, 7, 7)
    # Line 5 is blank between two definitions: no chunk holds it.
    assert data["lines"] == [
        None,
        "def derive_master_key(seed: bytes) -> bytes:",
        "    return seed[::-1]",
    ]
    assert data["missing"] == [5] and data["stored"] == "chunks"

    # Not granted (web), or not there at all: the same answers.
    hidden = web.get("/api/symbols", {"name": "parse_http_header"}, token=ana).json()
    assert hidden["exact"] == [] and named_repos(json.dumps(hidden)) <= {VAULT_KEY}
    walks = [
        web.post("/api/graph", {"name": "parse_http_header", "repo": [key]}, token=ana)
        for key in (WEB_KEY, "acme/none@main")
    ]
    assert [w.status_code for w in walks] == [200, 200] and walks[0].json()["roots"] == []
    assert walks[0].json() == walks[1].json() and WEB_KEY not in walks[0].text
    probes = [
        web.get("/api/file", {"repo": key, "path": path}, token=ana)
        for key, path in (
            (WEB_KEY, "http/server.py"),
            ("acme/none@main", "http/server.py"),
            (VAULT_KEY, "vault/none.py"),
            (VAULT_KEY, "../web/http/server.py"),
        )
    ]
    assert [p.status_code for p in probes] == [404] * 4
    assert probes[0].json() == probes[1].json()
