"""`codesift web --root A --root B`: one server over several folders. A search
reads them all through the engine's conductor and each result names its root;
the repository filter goes to the engine; symbols, graph and status cover every
root; /api/file reads only inside the root it names (path traversal from one
root into another is refused like any other)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from web_harness import WORKSPACE, WebHarness, make_workspace

from codesift.mcp.handlers import HANDLERS

LEDGER_PY = '''\
"""Posting entries to the general ledger."""


def submit(entry):
    """Post one journal entry to the ledger."""
    return post_journal_entry(entry)


def post_journal_entry(entry):
    """Write a journal entry in the ledger book."""
    return bool(entry)


def close_books(entries):
    """Submit every entry left at the end of the period."""
    return [submit(entry) for entry in entries]
'''

LEDGER = {"ledger.py": LEDGER_PY, ".codesift.toml": "[embedding]\nenabled = false\n"}


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("roots")
    return make_workspace(base / "alpha", WORKSPACE), make_workspace(base / "beta", LEDGER)


@pytest.fixture(scope="module")
def web(roots: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebHarness]:
    no_tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    alpha, beta = roots
    with WebHarness(alpha, more=(beta,), tokens_file=no_tokens) as harness:
        yield harness


def test_search_reads_every_root_and_names_each_results_root(web: WebHarness) -> None:
    data = web.post("/api/search", {"query": "submit", "top_k": 10}).json()
    by_root = {(r["root"], r["path"]) for r in data["results"]}
    assert ("alpha", "billing.py") in by_root
    assert ("beta", "ledger.py") in by_root
    assert all(r["source"] == "local" and r["repo"] is None for r in data["results"])
    assert [root["root"] for root in data["index"]["roots"]] == ["alpha", "beta"]


def test_the_repository_filter_is_the_engines(web: WebHarness) -> None:
    only_beta = web.post("/api/search", {"query": "submit", "repo": ["beta"]}).json()
    assert only_beta["results"]
    assert {r["root"] for r in only_beta["results"]} == {"beta"}
    # The page is beta's own, not the merged page cut afterwards: beta's results
    # fill it even where alpha's would have ranked above them.
    every = web.post("/api/search", {"query": "journal entry ledger", "top_k": 1}).json()
    beta_only = web.post(
        "/api/search", {"query": "charge gateway", "top_k": 1, "repo": ["beta"]}
    ).json()
    assert every["results"][0]["root"] == "beta"
    assert [r["root"] for r in beta_only["results"]] in ([], ["beta"])
    local = web.post("/api/search", {"query": "submit", "repo": ["local"]}).json()
    assert {r["root"] for r in local["results"]} == {"alpha", "beta"}
    unknown = web.post("/api/search", {"query": "submit", "repo": ["gamma"]}).json()
    assert unknown["results"] == []


def test_symbols_graph_and_status_cover_every_root(web: WebHarness) -> None:
    symbols = web.get("/api/symbols", {"name": "submit"}).json()
    assert {(s["root"], s["path"]) for s in symbols["exact"]} == {
        ("alpha", "billing.py"),
        ("beta", "ledger.py"),
    }
    walk = web.post("/api/graph", {"name": "submit", "direction": "callees", "repo": ["beta"]})
    data = walk.json()
    assert data["root"] == "beta"
    names = {n["qualified_name"] for n in data["nodes"]}
    assert "ledger.post_journal_entry" in names and all(n["root"] == "beta" for n in data["nodes"])
    first = web.post("/api/graph", {"name": "post_journal_entry", "direction": "callers"}).json()
    assert first["root"] == "beta" and first["roots"]  # alpha has none: beta walked
    status = web.get("/api/status").json()
    assert [(r["name"], r["files"] > 0) for r in status["roots"]] == [
        ("alpha", True),
        ("beta", True),
    ]


def test_graph_walks_every_root_that_defines_the_name(web: WebHarness) -> None:
    """`submit` is defined in both roots: its callers in each, one answer, every
    definition naming its root, ids unique within the answer."""
    data = web.post("/api/graph", {"name": "submit", "direction": "callers"}).json()
    assert data["source"] == "several" and data["root"] is None
    by_id = {n["id"]: n for n in data["nodes"]}
    assert len(by_id) == len(data["nodes"])
    assert {(by_id[i]["root"], by_id[i]["qualified_name"]) for i in data["roots"]} == {
        ("alpha", "billing.submit"),
        ("beta", "ledger.submit"),
    }
    callers = {
        (by_id[e["source"]]["root"], by_id[e["source"]]["qualified_name"])
        for e in data["edges"]
        if e["target"] in data["roots"]
    }
    assert ("alpha", "billing.retry_failed_charge") in callers
    assert ("beta", "ledger.close_books") in callers
    # Each edge joins definitions of one root.
    assert all(by_id[e["source"]]["root"] == by_id[e["target"]]["root"] for e in data["edges"])
    # The MCP `callers` tool walks both roots too.
    tool = asyncio.run(HANDLERS["callers"](web.web.live, {"name": "submit"}))
    assert isinstance(tool.structured_content, dict)
    groups = tool.structured_content["nodes"]
    assert {(g["node"]["root"], g["node"]["qualified_name"]) for g in groups} == {
        ("alpha", "billing.submit"),
        ("beta", "ledger.submit"),
    }
    # One root named: that root's walk alone, as before.
    beta = web.post("/api/graph", {"name": "submit", "direction": "callers", "repo": ["beta"]})
    assert beta.json()["root"] == "beta"
    assert {n["root"] for n in beta.json()["nodes"]} == {"beta"}
    # max_nodes bounds the whole answer; what it leaves out is counted.
    cut = web.post("/api/graph", {"name": "submit", "direction": "callers", "max_nodes": 2})
    assert len(cut.json()["nodes"]) == 2
    assert cut.json()["truncated"] is True and cut.json()["omitted"] >= 2


def test_file_reads_inside_the_root_it_names(web: WebHarness, roots: tuple[Path, Path]) -> None:
    alpha, beta = roots
    ok = web.get("/api/file", {"root": "beta", "path": "ledger.py", "line": 4, "context": 0})
    assert ok.status_code == 200, ok.text
    assert ok.json()["lines"] == ["def submit(entry):"] and ok.json()["root"] == "beta"
    first = web.get("/api/file", {"path": "billing.py", "line": 4, "context": 0}).json()
    assert first["root"] == "alpha"  # no root named: the first
    # A symlink in alpha to beta's file leads out of alpha: refused like the rest.
    (alpha / "into-beta.py").symlink_to(beta / "ledger.py")
    try:
        refused = [
            {"root": "alpha", "path": "ledger.py"},
            {"root": "alpha", "path": "../beta/ledger.py"},
            {"root": "alpha", "path": "into-beta.py"},
            {"root": "alpha", "path": str(beta / "ledger.py")},
            {"root": "gamma", "path": "ledger.py"},
            {"root": "beta", "path": "../alpha/billing.py"},
            {"repo": "alpha", "path": "ledger.py"},
        ]
        for params in refused:
            answer = web.get("/api/file", params)
            assert answer.status_code == 404, (params, answer.text)
            assert answer.json()["error"]["message"].startswith("no file")
        encoded = web.client.get(f"{web.base}/api/file?root=alpha&path=..%2Fbeta%2Fledger.py")
        assert encoded.status_code == 404
    finally:
        os.unlink(alpha / "into-beta.py")
