"""The MCP server's `route` tool and the collection parts of its `search` tool, over
the SDK's stdio client, on real git repositories; collection indexes in a private
cache. The pools must be the CLI's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp_harness import McpSession, cli, poll

from routing_corpus import GIFT_QUERY, ROUTE_QUERY, RoutingCorpus, make_routing_corpus, pools

pytestmark = pytest.mark.usefixtures("git_isolation")


@pytest.fixture
def corpus(
    tmp_path: Path, make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> RoutingCorpus:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return make_routing_corpus(tmp_path / "src", make_repo)


@pytest.fixture
def mcp(corpus: RoutingCorpus, tmp_path: Path) -> Iterator[McpSession]:
    session = McpSession(corpus.shop, log_file=tmp_path / "mcp.log")
    session.start()
    try:
        yield session
    finally:
        session.close()
        assert "Traceback" not in session.server_log(), session.server_log()


def test_the_route_tool_gives_the_clis_pools(mcp: McpSession, corpus: RoutingCorpus) -> None:
    [tool] = [t for t in mcp.list_tools() if t.name == "route"]
    assert tool.input_schema["required"] == ["query"]
    assert "confidence" in (tool.description or "")
    data = poll(
        lambda: mcp.data("route", {"query": ROUTE_QUERY}),
        lambda d: bool(d["repositories"]) and d["collections"][0]["confidence"] > 0,
        "a route over the indexed workspace and collections",
    )
    assert data["repositories"][0]["name"] == "shop"
    assert data["repositories"][0]["path"] == str(corpus.shop.resolve())
    assert [m["name"] for m in data["collections"]] == ["billing-prd", "search-notes"]
    assert "refund" in data["collections"][0]["rationale"]
    text = mcp.text(mcp.call("route", {"query": ROUTE_QUERY}))
    assert "billing-prd" in text and "weak" in text

    from_cli = cli(corpus.shop, "route", ROUTE_QUERY, "--json")
    assert pools(from_cli) == pools(data)


def test_search_lists_resources_and_related(mcp: McpSession) -> None:
    gift = poll(
        lambda: mcp.data("search", {"query": GIFT_QUERY}),
        lambda d: bool(d["resources"]),
        "the gift card requirement among the resources",
    )
    top = gift["resources"][0]
    assert (top["collection"], top["path"], top["start_line"]) == (
        "billing-prd",
        "gift-cards.md",
        3,
    )
    assert top["title"] and top["snippet"] and top["cite"].startswith("gift-cards.md:3")
    assert "From the document collections" in mcp.text(mcp.call("search", {"query": GIFT_QUERY}))

    page = poll(
        lambda: mcp.data("search", {"query": "refund_order"}),
        lambda d: any(r["related"] for r in d["results"]),
        "refund_order's related requirement",
    )
    [code] = [r for r in page["results"] if r["related"]]
    assert code["qualified_name"].endswith("refund_order")
    assert code["related"][0]["path"] == "refunds.md"


def test_a_bad_route_call_is_a_tool_error_and_the_server_lives(mcp: McpSession) -> None:
    for arguments in ({"query": ""}, {"query": "refund", "limit": 0}, {}):
        result = mcp.call("route", arguments)
        assert result.is_error, arguments
    assert not mcp.call("status").is_error
