"""Parity: the three front ends answer the same questions the same way.

One real git workspace (a copy of codesift's own retrieval and store packages)
is indexed once; then the same 10 searches, a symbols lookup, a callers lookup
a graph walk and a route go through `codesift ... --json` (a subprocess each), through
`codesift serve` over stdio (codesift/search, workspace/symbol, the call
hierarchy, codesift/graph) and through `codesift mcp` over stdio (the MCP SDK's
own client: the search, symbols, callers and graph tools). All three must
return the same ranked paths and lines. The workspace's `.codesift.toml` sets
search.top_k and snippet_chars, so the pages also show that every front end
takes its defaults from it. A few of codesift's own unit tests come along, so
that the test filter (`--tests exclude`, `tests: "exclude"`) has something to
leave out: the three pages must agree with it too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import SERVER_DIR, LspSession, file_uri, make_workspace, ready_server, server_env
from lsprotocol import types
from mcp_harness import McpSession

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
# Unit tests copied into the workspace (as tests/<name>) for the test filter.
TEST_FILES = ("test_fusion.py", "test_snippets.py", "test_ranking.py")
# Questions whose page holds one of those tests, unfiltered.
TEST_QUERIES = ("test fuse rankings", "tests for snippet window", "fusion test ties")
TOP_K = 7

Hit = tuple[str, int, int]


@pytest.fixture(scope="module")
def parity_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {
        f"{package}/{source.name}": source.read_text(encoding="utf-8")
        for package in ("retrieval", "store")
        for source in sorted((SERVER_DIR / "codesift" / package).glob("*.py"))
    }
    tests_dir = SERVER_DIR.parent / "tests" / "unit"
    files.update({f"tests/{name}": (tests_dir / name).read_text("utf-8") for name in TEST_FILES})
    files[".codesift.toml"] = (
        f"[search]\ntop_k = {TOP_K}\nsnippet_chars = 300\n\n[embedding]\nenabled = false\n"
    )
    root = make_workspace(tmp_path_factory.mktemp("parity") / "engine-copy", files)
    cli(root, "index", "--no-embed", "--quiet")
    return root


@pytest.fixture(scope="module")
def server(
    parity_workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LspSession]:
    log = tmp_path_factory.mktemp("log") / "server.log"
    with ready_server([parity_workspace], log, {"embeddings": False}) as session:
        yield session


@pytest.fixture(scope="module")
def mcp(parity_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpSession]:
    log = tmp_path_factory.mktemp("log") / "mcp.log"
    with McpSession(parity_workspace, log_file=log) as session:
        yield session
    assert "Traceback" not in session.server_log(), session.server_log()


def cli(root: Path, *args: str) -> Any:
    env = server_env()
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "CLICOLOR_FORCE"):
        env.pop(name, None)
    result = subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if "--json" in args else None


def cli_search(root: Path, query: str) -> list[Hit]:
    data = cli(root, "search", query, "--json", "--no-update", "--no-embed")
    return [(r["path"], r["start_line"], r["end_line"]) for r in data["results"]]


def lsp_search(server: LspSession, query: str) -> list[Hit]:
    data = server.request("codesift/search", {"query": query})
    return [(r["path"], r["start_line"], r["end_line"]) for r in data["results"]]


def mcp_search(mcp: McpSession, query: str) -> list[Hit]:
    data = mcp.data("search", {"query": query})
    return [(r["path"], r["start_line"], r["end_line"]) for r in data["results"]]


def relative(root: Path, uri: str) -> str:
    return uri.removeprefix(root.resolve().as_uri() + "/")


@pytest.mark.parametrize("query", QUERIES)
def test_search_pages_are_the_same(
    server: LspSession, mcp: McpSession, parity_workspace: Path, query: str
) -> None:
    from_cli = cli_search(parity_workspace, query)
    from_server = lsp_search(server, query)
    from_mcp = mcp_search(mcp, query)
    assert from_cli, query
    assert len(from_cli) == TOP_K  # search.top_k from .codesift.toml, in all three
    assert from_server == from_cli
    assert from_mcp == from_cli


def hits(data: Any) -> list[Hit]:
    return [(r["path"], r["start_line"], r["end_line"]) for r in data["results"]]


@pytest.mark.parametrize("query", TEST_QUERIES)
def test_pages_without_tests_are_the_same(
    server: LspSession, mcp: McpSession, parity_workspace: Path, query: str
) -> None:
    included = cli_search(parity_workspace, query)
    options = ("--json", "--no-update", "--no-embed", "--tests", "exclude")
    from_cli = hits(cli(parity_workspace, "search", query, *options))
    from_server = hits(server.request("codesift/search", {"query": query, "tests": "exclude"}))
    from_mcp = hits(mcp.data("search", {"query": query, "tests": "exclude"}))
    assert any(path.startswith("tests/") for path, _, _ in included), included
    assert not any(path.startswith("tests/") for path, _, _ in from_cli), from_cli
    assert len(from_cli) == TOP_K  # the page still fills once the tests are dropped
    assert from_server == from_cli
    assert from_mcp == from_cli


@pytest.mark.parametrize("query", [TEST_QUERIES[0], "test_rrf_k_changes_the_denominator"])
def test_pages_with_tests_auto_are_the_same(
    server: LspSession, mcp: McpSession, parity_workspace: Path, query: str
) -> None:
    """`auto`: a question's page leaves the tests out, a test's name finds it."""
    options = ("--json", "--no-update", "--no-embed", "--tests", "auto")
    from_cli = hits(cli(parity_workspace, "search", query, *options))
    from_server = hits(server.request("codesift/search", {"query": query, "tests": "auto"}))
    from_mcp = hits(mcp.data("search", {"query": query, "tests": "auto"}))
    if query.startswith("test_"):
        assert from_cli[0][0] == "tests/test_fusion.py", from_cli
    else:
        assert not any(path.startswith("tests/") for path, _, _ in from_cli), from_cli
    assert from_server == from_cli
    assert from_mcp == from_cli


@pytest.mark.parametrize("query", QUERIES[:3])
def test_routes_are_the_same(
    server: LspSession, mcp: McpSession, parity_workspace: Path, query: str
) -> None:
    def pools(data: Any) -> Any:
        return [
            (m["name"], m["confidence"], m["rationale"])
            for pool in ("repositories", "collections")
            for m in data[pool]
        ]

    from_cli = cli(parity_workspace, "route", query, "--json")
    from_server = server.request("codesift/route", {"query": query})
    from_mcp = mcp.data("route", {"query": query})
    assert from_cli["repositories"], query
    assert pools(from_server) == pools(from_cli)
    assert pools(from_mcp) == pools(from_cli)


def pairs(nodes: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(n["path"], n["start_line"]) for n in nodes]


def test_symbols_are_the_same(server: LspSession, mcp: McpSession, parity_workspace: Path) -> None:
    data = cli(parity_workspace, "symbols", SYMBOL, "--json", "--no-update", "--limit", "100")
    from_cli = pairs([*data["exact"], *data["fuzzy"]])
    found = server.request(types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query=SYMBOL))
    from_server = [
        (relative(parity_workspace, s.location.uri), s.location.range.start.line + 1) for s in found
    ]
    from_mcp = mcp.data("symbols", {"name": SYMBOL, "limit": 100})
    assert data["exact"] and data["fuzzy"]
    assert from_server == from_cli
    # The MCP tool keeps the two groups apart, as the CLI's JSON does.
    assert pairs(from_mcp["exact"]) == pairs(data["exact"])
    assert pairs(from_mcp["fuzzy"]) == pairs(data["fuzzy"])


def callers(groups: list[dict[str, Any]]) -> list[list[tuple[str, int, int]]]:
    """Each target's callers: the calling definition and the line of the call."""
    return [
        [(c["node"]["path"], c["node"]["start_line"], c["edge"]["line"]) for c in g["callers"]]
        for g in groups
    ]


def test_callers_are_the_same(server: LspSession, mcp: McpSession, parity_workspace: Path) -> None:
    data = cli(parity_workspace, "callers", SYMBOL, "--json", "--no-update")
    (target,) = data["nodes"]
    from_cli = list(
        dict.fromkeys((c["node"]["path"], c["node"]["start_line"]) for c in target["callers"])
    )
    # MCP: the same callers with the same call lines, in the same order.
    assert callers(data["nodes"])[0]
    assert callers(mcp.data("callers", {"name": SYMBOL})["nodes"]) == callers(data["nodes"])
    definition = target["node"]
    path = parity_workspace / definition["path"]
    line = definition["start_line"] - 1
    column = path.read_text().splitlines()[line].index(SYMBOL)
    items = server.request(
        types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
        types.CallHierarchyPrepareParams(
            text_document=types.TextDocumentIdentifier(uri=file_uri(path)),
            position=types.Position(line=line, character=column),
        ),
    )
    (item,) = items
    incoming = server.request(
        types.CALL_HIERARCHY_INCOMING_CALLS, types.CallHierarchyIncomingCallsParams(item=item)
    )
    from_server = [
        (relative(parity_workspace, c.from_.uri), c.from_.range.start.line + 1) for c in incoming
    ]
    assert from_cli
    assert from_server == from_cli


def test_graph_walks_are_the_same(
    server: LspSession, mcp: McpSession, parity_workspace: Path
) -> None:
    data = cli(
        parity_workspace,
        *("graph", SYMBOL, "--json", "--no-update", "--depth", "2"),
        *("--kind", "calls", "--kind", "contains"),
    )
    query = {"name": SYMBOL, "depth": 2, "kinds": ["calls", "contains"]}
    for walk in (server.request("codesift/graph", query), mcp.data("graph", query)):
        assert_same_walk(walk, data)


def assert_same_walk(walk: dict[str, Any], data: dict[str, Any]) -> None:
    """A server's graph walk lists the CLI's nodes and edges, in its order."""

    def edges(found: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
        return [(e["kind"], e["target_name"], e["line"]) for e in found]

    assert len(data["nodes"]) > 2 and {e["kind"] for e in data["edges"]} == {"calls", "contains"}
    assert pairs(walk["nodes"]) == pairs(data["nodes"])
    assert edges(walk["edges"]) == edges(data["edges"])
    assert walk["truncated"] == data["truncated"]
