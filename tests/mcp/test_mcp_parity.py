"""Parity: the MCP server answers as the CLI does (the MCP leg of tests/lsp/test_parity.py).

The same workspace as the CLI/language server parity test (a copy of codesift's
own retrieval and store packages, `.codesift.toml` setting search.top_k and
snippet_chars), indexed once by `codesift index`; then the same 10 searches, a
symbols lookup, a callers lookup and a graph walk go through `codesift ... --json`
and through `codesift mcp` (the SDK's client over stdio). Both must give the
same ranked paths and lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import SERVER_DIR, McpSession, cli, make_workspace

QUERIES = (
    "reciprocal rank fusion of stream rankings",
    "snippet window around the best matching lines",
    "quote a term for an FTS5 MATCH",
    "vectors kept in memory",
    "file diversity on a page",
    "ranking priors for definitions and tests",
    "cancel a running search",
    "graph neighbours of a result",
    "trigram",
    "token budget of the answer",
)
SYMBOL = "fuse_rankings"
TOP_K = 7

Hit = tuple[str, int, int]


@pytest.fixture(scope="module")
def parity_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {
        f"{package}/{source.name}": source.read_text(encoding="utf-8")
        for package in ("retrieval", "store")
        for source in sorted((SERVER_DIR / "codesift" / package).glob("*.py"))
    }
    files[".codesift.toml"] = (
        f"[search]\ntop_k = {TOP_K}\nsnippet_chars = 300\n\n[embedding]\nenabled = false\n"
    )
    root = make_workspace(tmp_path_factory.mktemp("parity") / "engine-copy", files)
    cli(root, "index", "--no-embed", "--quiet")
    return root


@pytest.fixture(scope="module")
def mcp(parity_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpSession]:
    log = tmp_path_factory.mktemp("log") / "mcp.log"
    with McpSession(parity_workspace, log_file=log) as session:
        yield session


def cli_search(root: Path, query: str) -> list[Hit]:
    data = cli(root, "search", query, "--json", "--no-update", "--no-embed")
    return [(r["path"], r["start_line"], r["end_line"]) for r in data["results"]]


def mcp_search(mcp: McpSession, query: str) -> list[Hit]:
    data = mcp.data("search", {"query": query})
    return [(r["path"], r["start_line"], r["end_line"]) for r in data["results"]]


@pytest.mark.parametrize("query", QUERIES)
def test_search_pages_are_the_same(mcp: McpSession, parity_workspace: Path, query: str) -> None:
    from_cli = cli_search(parity_workspace, query)
    from_mcp = mcp_search(mcp, query)
    assert len(from_cli) == TOP_K  # search.top_k from .codesift.toml, in both
    assert from_mcp == from_cli


def test_symbols_are_the_same(mcp: McpSession, parity_workspace: Path) -> None:
    data = cli(parity_workspace, "symbols", SYMBOL, "--json", "--no-update", "--limit", "100")
    found = mcp.data("symbols", {"name": SYMBOL, "limit": 100})

    def pairs(nodes: list[dict[str, Any]]) -> list[tuple[str, int]]:
        return [(n["path"], n["start_line"]) for n in nodes]

    assert data["exact"] and data["fuzzy"]
    assert pairs(found["exact"]) == pairs(data["exact"])
    assert pairs(found["fuzzy"]) == pairs(data["fuzzy"])


def test_callers_are_the_same(mcp: McpSession, parity_workspace: Path) -> None:
    data = cli(parity_workspace, "callers", SYMBOL, "--json", "--no-update")
    found = mcp.data("callers", {"name": SYMBOL})

    def callers(groups: list[dict[str, Any]]) -> list[list[tuple[str, int, int]]]:
        return [
            [(c["node"]["path"], c["node"]["start_line"], c["edge"]["line"]) for c in g["callers"]]
            for g in groups
        ]

    assert callers(data["nodes"]) and callers(data["nodes"])[0]
    assert callers(found["nodes"]) == callers(data["nodes"])


def test_graph_walks_are_the_same(mcp: McpSession, parity_workspace: Path) -> None:
    data = cli(
        parity_workspace,
        *("graph", SYMBOL, "--json", "--no-update", "--depth", "2"),
        *("--kind", "calls", "--kind", "contains"),
    )
    walk = mcp.data("graph", {"name": SYMBOL, "depth": 2, "kinds": ["calls", "contains"]})

    def nodes(found: list[dict[str, Any]]) -> list[tuple[str, int]]:
        return [(n["path"], n["start_line"]) for n in found]

    def edges(found: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
        return [(e["kind"], e["target_name"], e["line"]) for e in found]

    assert len(data["nodes"]) > 2
    assert nodes(walk["nodes"]) == nodes(data["nodes"])
    assert edges(walk["edges"]) == edges(data["edges"])
    assert walk["truncated"] == data["truncated"]
