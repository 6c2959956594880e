"""The REST API over a real index, through a real uvicorn on loopback: the
MCP tools' vocabulary, the engine's errors as HTTP statuses, and requests that
try to break it (malformed JSON, huge bodies, path traversal, foreign hosts
and origins); the server answers the next request after each."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from web_harness import WORKSPACE, WebHarness, make_workspace

from codesift.mcp.handlers import HANDLERS
from codesift.serving.guard import Limits


def test_search_answers_the_mcp_vocabulary(web: WebHarness) -> None:
    response = web.post("/api/search", {"query": "retry_failed_charge", "top_k": 5})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    data = response.json()
    first = data["results"][0]
    assert first["qualified_name"].endswith("retry_failed_charge")
    assert first["cite"].startswith("billing.py:")
    assert first["source"] == "local" and first["repo"] is None
    assert first["provenance"][0]["stream"] in {"lexical", "symbol"}
    assert {"query", "results", "streams", "resources", "index", "tokens"} <= set(data)
    # The same question through the MCP handler: the same fields, the same page.
    arguments = {"query": "retry_failed_charge", "top_k": 5}
    mcp = asyncio.run(HANDLERS["search"](web.web.live, arguments))
    assert isinstance(mcp.structured_content, dict)
    assert set(mcp.structured_content) == set(data)
    assert [r["cite"] for r in mcp.structured_content["results"]] == [
        r["cite"] for r in data["results"]
    ]


def test_symbols_graph_status_route_and_file(web: WebHarness) -> None:
    symbols = web.get("/api/symbols", {"name": "submit", "limit": 3})
    assert symbols.status_code == 200
    assert symbols.json()["exact"][0]["cite"] == "billing.py:4-6"

    graph = web.post("/api/graph", {"name": "submit", "direction": "callers", "depth": 1})
    assert graph.status_code == 200
    walk = graph.json()
    callers = {n["qualified_name"] for n in walk["nodes"] if n["id"] not in walk["roots"]}
    assert "billing.retry_failed_charge" in callers
    assert walk["truncated"] is False and walk["omitted"] == 0
    cut = web.post("/api/graph", {"name": "submit", "direction": "callers", "max_nodes": 2})
    assert cut.status_code == 200
    assert (cut.json()["truncated"], cut.json()["omitted"], cut.json()["max_nodes"]) == (True, 1, 2)

    status = web.get("/api/status").json()
    assert status["files"] >= 3 and status["index"]["state"]

    routed = web.post("/api/route", {"query": "retry a failed charge"}).json()
    assert routed["repositories"][0]["name"] == "billing-ws"

    lines = web.get("/api/file", {"path": "billing.py", "line": 5, "context": 1}).json()
    assert lines["start_line"] == 4 and lines["end_line"] == 6
    assert lines["lines"][0] == "def submit(amount):"


def test_openapi_document_lists_every_endpoint(web: WebHarness) -> None:
    document = web.get("/api/openapi.json").json()
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) == {
        "/api/search",
        "/api/route",
        "/api/symbols",
        "/api/graph",
        "/api/status",
        "/api/file",
    }
    body = document["paths"]["/api/search"]["post"]["requestBody"]
    assert "query" in body["content"]["application/json"]["schema"]["required"]


@pytest.mark.parametrize(
    ("content", "headers", "said"),
    [
        (b"{not json", {}, "not JSON"),
        (b"[1, 2]", {}, "JSON object"),
        (b'"query"', {}, "JSON object"),
        (b"\xff\xfe", {}, "not JSON"),
        (b'{"query": "x"}', {"content-type": "text/plain"}, "Content-Type"),
        (b'{"query": "x", "drop": 1}', {}, "unknown argument"),
        (b'{"query": 5}', {}, "query"),
        (b'{"query": "x", "top_k": 0}', {}, "top_k"),
    ],
)
def test_malformed_requests_are_400(
    web: WebHarness, content: bytes, headers: dict[str, str], said: str
) -> None:
    response = web.post("/api/search", content=content, headers=headers)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["kind"] == "bad_request" and said in error["message"]
    assert "Traceback" not in response.text
    assert web.get("/api/status").status_code == 200


def test_huge_bodies_and_query_strings_are_refused(web: WebHarness) -> None:
    limit = Limits().max_body
    big = b'{"query": "' + b"a" * (limit + 10) + b'"}'
    response = web.post("/api/search", content=big)
    assert response.status_code == 413

    def chunks():  # no Content-Length: the body grows past the limit as it comes
        yield b'{"query": "'
        for _ in range(limit // 4096 + 2):
            yield b"a" * 4096
        yield b'"}'

    chunked = httpx.post(
        web.base + "/api/search", content=chunks(), headers={"content-type": "application/json"}
    )
    assert chunked.status_code == 413
    assert web.get("/api/symbols", {"name": "x" * (Limits().max_query + 1)}).status_code == 414
    # A NUL would end SQLite's text early: refused as a bad request, not a 500.
    nul = web.get("/api/symbols", {"name": "a\x00b"})
    assert nul.status_code == 400 and "NUL" in nul.json()["error"]["message"]
    assert web.get("/api/status").status_code == 200


def test_file_refuses_every_way_out_of_the_root(web: WebHarness, workspace: Path) -> None:
    outside = workspace.parent / "secret.txt"
    outside.write_text("the secret\n", encoding="utf-8")
    link = workspace / "escape.txt"
    if not link.exists():
        os.symlink(outside, link)
    (workspace / "linked-dir").mkdir(exist_ok=True)
    tricks = [
        "../secret.txt",
        "../../../../etc/passwd",
        "/etc/passwd",
        str(outside),
        "escape.txt",
        "linked-dir/../../secret.txt",
        ".git/config",
        ".codesift.toml",
        "billing.py/../../secret.txt",
        "billing.py\x00.txt",
        "%2e%2e/secret.txt",
        "nothing-here.py",
        "",
    ]
    for raw in tricks:
        response = web.get("/api/file", {"path": raw})
        assert response.status_code == 404, (raw, response.text)
        assert "the secret" not in response.text
        assert response.json()["error"]["kind"] == "not_found"
    # URL-encoded by hand (and twice): decoded once by the server, still outside.
    encoded = ("..%2Fsecret.txt", "%2E%2E%2Fsecret.txt", "%252e%252e%252fsecret.txt")
    for raw in encoded:
        query = f"path={raw}"
        response = httpx.get(f"{web.base}/api/file?{query}")
        assert response.status_code == 404 and "the secret" not in response.text
    shared = web.get("/api/file", {"path": "billing.py", "repo": "acme/vault@main"})
    assert shared.status_code == 404
    assert web.get("/api/file", {"path": "billing.py"}).status_code == 200


def test_a_foreign_host_is_refused_on_loopback(web: WebHarness) -> None:
    """DNS rebinding: a page of another site whose name now points at 127.0.0.1."""
    response = web.get("/api/status", headers={"host": "attacker.example:8731"})
    assert response.status_code == 403
    assert web.get("/search", headers={"host": "attacker.example"}).status_code == 403
    assert web.get("/api/status", headers={"host": f"localhost:{web.port}"}).status_code == 200


def test_cross_origin_posts_are_refused(web: WebHarness) -> None:
    body = {"query": "submit"}
    evil = web.post("/api/search", body, headers={"origin": "http://attacker.example"})
    assert evil.status_code == 403
    assert "results" not in evil.text
    same = web.post("/api/search", body, headers={"origin": web.base})
    assert same.status_code == 200
    assert "access-control-allow-origin" not in {k.lower() for k in same.headers}


def test_concurrent_clients_all_answered(web: WebHarness) -> None:
    queries = ["retry", "submit", "ledger refund", "charge gateway", "record"] * 8

    def ask(query: str) -> int:
        with httpx.Client(timeout=60) as client:
            return client.post(web.base + "/api/search", json={"query": query}).status_code

    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(ask, queries))
    assert codes == [200] * len(queries)


def test_a_request_past_the_time_limit_is_504(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    limits = Limits(timeout=1e-6)
    with WebHarness(root, tokens_file=tmp_path / "t.json", limits=limits) as web:
        response = web.post("/api/search", {"query": "retry"})
        assert response.status_code == 504
        assert response.json()["error"]["kind"] == "timeout"
        assert web.get("/search").status_code == 200  # the console's page is not timed


def test_the_console_page_is_served_with_a_strict_policy(web: WebHarness) -> None:
    page = web.get("/search")
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert web.get("/static/search.js").status_code == 200
    assert web.get("/static/../app.py").status_code == 404
    assert web.get("/").status_code in (200, 302)
