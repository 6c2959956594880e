"""Authentication of `codesift web` with the local token file, over a real
uvicorn on loopback: a token is needed once one exists, a revoked one stops at
its next request, the console's cookie is HttpOnly and SameSite=Strict, each
token is rate-limited, and /mcp sits behind the same guard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from web_harness import WORKSPACE, WebHarness, make_workspace

from codesift.engine.web_tokens import TokenFile
from codesift.serving.guard import Limits


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WebHarness, TokenFile]]:
    base = tmp_path_factory.mktemp("auth")
    root = make_workspace(base / "ws", WORKSPACE)
    tokens = TokenFile(base / "tokens.json")
    tokens.add("ana-laptop", "ana")
    with WebHarness(root, tokens_file=tokens.path, limits=Limits(rate=50, burst=200)) as web:
        yield web, tokens


def test_no_token_or_a_wrong_one_is_401_without_detail(
    secured: tuple[WebHarness, TokenFile],
) -> None:
    web, _ = secured
    for token in (None, "csk_wrong", "Basic abc"):
        for response in (
            web.get("/api/status", token=token),
            web.post("/api/search", {"query": "retry"}, token=token),
            web.get("/api/file", {"path": "billing.py"}, token=token),
        ):
            assert response.status_code == 401
            assert response.json() == {"error": {"kind": "unauthorized", "message": "unauthorized"}}
            assert response.headers["www-authenticate"] == "Bearer"
    basic = web.get("/api/status", headers={"authorization": "Basic YW5hOmFuYQ=="})
    assert basic.status_code == 401


def test_a_token_reads_and_a_revoked_one_stops(secured: tuple[WebHarness, TokenFile]) -> None:
    web, tokens = secured
    secret = tokens.add("bob-ci", "bob")
    assert web.get("/api/status", token=secret).status_code == 200
    found = web.post("/api/search", {"query": "retry_failed_charge"}, token=secret)
    assert found.status_code == 200 and found.json()["results"]
    assert tokens.revoke("bob-ci")
    assert web.get("/api/status", token=secret).status_code == 401
    assert web.post("/api/search", {"query": "x"}, token=secret).status_code == 401


def test_public_files_need_no_token(secured: tuple[WebHarness, TokenFile]) -> None:
    web, _ = secured
    assert web.get("/search").status_code == 200
    assert web.get("/static/search.js").status_code == 200
    assert web.get("/api/openapi.json").status_code == 200
    assert web.get("/api/whoami").status_code == 401


def test_the_console_cookie(secured: tuple[WebHarness, TokenFile]) -> None:
    web, tokens = secured
    secret = tokens.add("ana-browser", "ana")
    with httpx.Client(base_url=web.base) as browser:
        refused = browser.post("/api/session", json={"token": "csk_nope"})
        assert refused.status_code == 401 and "set-cookie" not in refused.headers
        signed = browser.post("/api/session", json={"token": secret})
        assert signed.status_code == 200
        cookie = signed.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert secret not in signed.text  # the body never repeats the secret
        me = browser.get("/api/whoami").json()
        assert me == {"auth": True, "name": "ana-browser", "principal": "ana"}
        # A cross-site page cannot use the cookie to post (Origin checked).
        evil = browser.post(
            "/api/search", json={"query": "retry"}, headers={"origin": "http://attacker.example"}
        )
        assert evil.status_code == 403
        assert browser.delete("/api/session").status_code == 200
        assert browser.get("/api/whoami").status_code == 401
    tokens.revoke("ana-browser")


def test_mcp_needs_a_token_too(secured: tuple[WebHarness, TokenFile]) -> None:
    web, _ = secured
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"accept": "application/json, text/event-stream"}
    refused = web.post("/mcp", hello, headers=headers)
    assert refused.status_code == 401
    secret = secured[1].add("agent", "ana")
    try:
        allowed = web.post("/mcp", hello, token=secret, headers=headers)
        assert allowed.status_code == 200, allowed.text
    finally:
        secured[1].revoke("agent")


def test_each_token_is_rate_limited(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    tokens = TokenFile(tmp_path / "tokens.json")
    first = tokens.add("one", "ana")
    second = tokens.add("two", "bob")
    with WebHarness(root, tokens_file=tokens.path, limits=Limits(rate=0.01, burst=3)) as web:
        codes = [web.get("/api/whoami", token=first).status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
        limited = web.get("/api/whoami", token=first)
        assert int(limited.headers["retry-after"]) >= 1
        assert web.get("/api/whoami", token=second).status_code == 200  # its own bucket
        # Sign-in attempts carry no token: they are counted per client address.
        tries = [web.post("/api/session", {"token": "csk_guess"}).status_code for _ in range(5)]
        assert tries[:3] == [401, 401, 401] and tries[3:] == [429, 429]


def test_no_token_reads_nothing_while_tokens_are_required() -> None:
    """The second lock behind the guard: a request that reached a handler without
    a token (a route the guard let through by mistake) reads no index."""
    from typing import Any, cast

    from codesift.engine.web_tokens import WebToken
    from codesift.mcp.views import PrincipalViews, Unauthenticated

    live = cast(Any, object())
    views = PrincipalViews(live, None, require_token=True)

    class Request:
        def __init__(self, scope: dict[str, object]) -> None:
            self.scope = scope

    with pytest.raises(Unauthenticated):
        views.for_request(Request({}))
    token = WebToken("ana-laptop", "ana")
    assert views.for_request(Request({"codesift.token": token})) is live
    assert PrincipalViews(live, None, require_token=False).for_request(object()) is live


def test_cors_only_for_the_origins_named(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    tokens = TokenFile(tmp_path / "tokens.json")
    secret = tokens.add("dash", "ana")
    dash = "https://dash.example.com"
    with WebHarness(root, tokens_file=tokens.path, cors_origins=(dash,)) as web:
        preflight = web.client.options(
            web.base + "/api/search",
            headers={
                "origin": dash,
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == dash
        assert "authorization" in preflight.headers["access-control-allow-headers"]
        found = web.post("/api/search", {"query": "retry"}, token=secret, headers={"origin": dash})
        assert found.status_code == 200
        assert found.headers["access-control-allow-origin"] == dash
        assert "access-control-allow-credentials" not in found.headers
        other = web.post(
            "/api/search",
            {"query": "retry"},
            token=secret,
            headers={"origin": "https://other.example.com"},
        )
        assert other.status_code == 403 and "access-control-allow-origin" not in other.headers
        # Still a token to show: CORS opens reading, not the door.
        assert web.post("/api/search", {"query": "x"}, headers={"origin": dash}).status_code == 401


def test_a_token_store_that_cannot_be_read_lets_nobody_in() -> None:
    """A shared index down: 503 for every token (never the open door), and the
    guard goes on answering."""
    import asyncio

    from codesift.serving.guard import Guard

    class Down:
        def lookup(self, secret: str) -> None:
            raise OSError("connection refused")

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the app must not be reached")

    guard = Guard(app, tokens=cast(Any, Down()), loopback=True)

    async def ask() -> list[int]:
        transport = httpx.ASGITransport(app=guard)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            return [
                (await c.get("/api/status", headers={"authorization": "Bearer x"})).status_code,
                (await c.get("/api/status")).status_code,
            ]

    assert asyncio.run(ask()) == [503, 401]
