"""codesift/route and the collection parts of codesift/search, over a real stdio
client, on two git repositories that list two document collections (collection
indexes in a private cache): the route's pools are the CLI's, a requirement no
code mentions is found, a code result lists the requirement that mentions it, an
edited document is found through the collection's watcher, an unscoped search is
routed to the folder it is about, and a bad route request is InvalidParams."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import LspSession, file_uri, poll, ready_server, server_env
from pygls.exceptions import JsonRpcException

from routing_corpus import (
    GIFT_QUERY,
    ROUTE_QUERY,
    SEARCH,
    SHOP,
    RoutingCorpus,
    make_routing_corpus,
    pools,
)


def _make_repo(files: Any, *, name: str, parent: Path) -> Path:
    root = parent / name
    root.mkdir(parents=True)
    for args in (
        ("init", "-q"),
        ("config", "user.name", "Test"),
        ("config", "user.email", "test@example.com"),
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, capture_output=True)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=root, check=True)
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RoutingCorpus]:
    base = tmp_path_factory.mktemp("routing")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(base / "cache"))
        patch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        patch.setenv("GIT_CEILING_DIRECTORIES", str(base))
        yield make_routing_corpus(base / "src", _make_repo)


@pytest.fixture(scope="module")
def lsp(corpus: RoutingCorpus, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    log = tmp_path_factory.mktemp("log") / "server.log"
    roots = [corpus.shop, corpus.search]
    with ready_server(roots, log, {"embeddings": False}, no_traceback=True) as session:
        yield session


def _cli_json(cwd: Path, *args: str | Path, served: bool = False) -> Any:
    env = server_env()
    if not served:
        env["CODESIFT_NO_SERVER"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "codesift.cli", *map(str, args), "--json"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_route_gives_the_clis_pools_with_uris(lsp: LspSession, corpus: RoutingCorpus) -> None:
    route = poll(
        lambda: lsp.request("codesift/route", {"query": ROUTE_QUERY}),
        lambda r: bool(r["collections"]) and r["collections"][0]["confidence"] > 0,
        "a route with the collections indexed",
    )
    assert route["repositories"][0]["name"] == "shop"
    assert route["repositories"][0]["uri"] == file_uri(corpus.shop)
    assert [m["name"] for m in route["collections"]] == ["billing-prd", "search-notes"]
    assert route["collections"][0]["uri"] == file_uri(corpus.billing_docs)
    assert all(m["rationale"] for m in (*route["repositories"], *route["collections"]))
    from_cli = _cli_json(
        corpus.shop, "route", ROUTE_QUERY, "--root", corpus.shop, "--root", corpus.search
    )
    assert pools(from_cli) == pools(route)
    one = lsp.request("codesift/route", {"query": ROUTE_QUERY, "limit": 1})
    assert len(one["collections"]) == 1


def test_a_requirement_no_code_mentions_and_a_related_resource(lsp: LspSession) -> None:
    gift = poll(
        lambda: lsp.request("codesift/search", {"query": GIFT_QUERY, "folders": ["shop"]}),
        lambda r: bool(r["resources"]),
        "the gift card requirement among the resources",
    )
    top = gift["resources"][0]
    assert (top["collection"], top["path"], top["start_line"]) == (
        "billing-prd",
        "gift-cards.md",
        3,
    )
    assert top["uri"].endswith("/docs/billing/gift-cards.md") and top["title"]
    assert gift["routed"] is None  # a scoped search is not routed

    page = poll(
        lambda: lsp.request("codesift/search", {"query": "refund_order", "folders": ["shop"]}),
        lambda r: any(x["related"] for x in r["results"]),
        "refund_order's related requirement",
    )
    [code] = [r for r in page["results"] if r["related"]]
    assert code["qualified_name"].endswith("refund_order")
    assert (code["related"][0]["collection"], code["related"][0]["path"]) == (
        "billing-prd",
        "refunds.md",
    )


def test_an_unscoped_search_is_routed_to_the_folder_it_is_about(lsp: LspSession) -> None:
    # two folders are all searched unless the request asks to route; the router
    # still orders their pages: the folder it ranks first leads
    auto = lsp.request("codesift/search", {"query": "porter stemmer stem words"})
    assert auto["routed"] is None and len(auto["index"]) == 2
    assert auto["folder_order"][0] == "search"
    assert auto["results"][0]["folder"] == "search"
    page = lsp.request("codesift/search", {"query": "porter stemmer stem words", "route": True})
    assert page["routed"] == ["search"]
    assert {r["folder"] for r in page["results"]} == {"search"}
    assert [x["folder"] for x in page["index"]] == ["search"]
    # no folder passes: every folder is searched
    every = lsp.request("codesift/search", {"query": "zzqx unknownword", "route": True})
    assert every["routed"] == []
    assert len(every["index"]) == 2
    unrouted = lsp.request("codesift/search", {"query": "porter stem", "route": False})
    assert unrouted["routed"] is None and len(unrouted["index"]) == 2
    assert unrouted["folder_order"] is None


def test_an_edited_collection_document_is_found_through_the_watcher(
    lsp: LspSession, corpus: RoutingCorpus
) -> None:
    query = "quarterly chargeback reconciliation"
    (corpus.billing_docs / "chargebacks.md").write_text(
        "# Chargebacks\n\n## Quarterly chargeback reconciliation\n\n"
        "Finance reconciles every chargeback each quarter.\n",
        encoding="utf-8",
    )
    found = poll(
        lambda: lsp.request("codesift/search", {"query": query, "folders": ["shop"]}),
        lambda r: any(x["path"] == "chargebacks.md" for x in r["resources"]),
        "the new document among the resources",
    )
    assert found["resources"][0]["collection"] == "billing-prd"


@pytest.mark.parametrize(
    "params",
    [{"query": ""}, {"query": "   "}, {}, {"query": "refund", "limit": 0}, {"query": 3}],
)
def test_a_bad_route_request_is_invalid_params(lsp: LspSession, params: Any) -> None:
    with pytest.raises(JsonRpcException) as caught:
        lsp.raw_request("codesift/route", params)
    assert caught.value.code == -32602
    assert lsp.request("codesift/route", {"query": "refund"})["repositories"]  # still serving


def test_collections_sent_as_initialization_options(corpus: RoutingCorpus, tmp_path: Path) -> None:
    """Folders that list nothing get the collections of initializationOptions; both
    folders share one live index of it."""
    bare = _make_repo(
        {**SEARCH, ".codesift.toml": "[embedding]\nenabled = false\n"}, name="a", parent=tmp_path
    )
    other = _make_repo(
        {**SHOP, ".codesift.toml": "[embedding]\nenabled = false\n"}, name="b", parent=tmp_path
    )
    options = {
        "embeddings": False,
        "collections": [{"name": "prd", "path": str(corpus.billing_docs), "labels": ["billing"]}],
    }
    with LspSession([bare, other], options, log_file=tmp_path / "server.log") as session:
        session.wait_ready()
        gift = poll(
            lambda: session.request("codesift/search", {"query": GIFT_QUERY, "route": False}),
            lambda r: bool(r["resources"]),
            "the gift card requirement through the initialization options",
        )
        assert gift["resources"][0]["collection"] == "prd"
        route = session.request("codesift/route", {"query": GIFT_QUERY})
        assert [m["name"] for m in route["collections"]] == ["prd"]


def test_the_cli_through_the_servers_socket_gives_the_same_collections(
    lsp: LspSession, corpus: RoutingCorpus
) -> None:
    """The same code results, related resources and best resource whether the
    server answers `codesift search` over its socket or the CLI answers itself
    (the tail of the resource list may differ while the live collection index
    and the CLI's update take turns on it: terms every document has score ~0)."""

    def page(data: Any) -> Any:
        top = data["resources"][0]
        return (
            [(r["path"], r["start_line"], r["related"]) for r in data["results"]],
            (top["collection"], top["path"], top["start_line"]),
        )

    for query in (GIFT_QUERY, "refund_order"):
        served = _cli_json(corpus.shop, "search", query, served=True)
        local = _cli_json(corpus.shop, "search", query)
        assert page(served) == page(local)

    def which_path(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "codesift.cli", "-vv", *args, "--json"],
            cwd=corpus.shop,
            env=server_env(),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stderr

    assert "answered by codesift serve" in which_path("search", GIFT_QUERY)
    # settings the server was not started with: always in-process
    config = corpus.shop / "extra.toml"
    config.write_text("[search]\nresource_top_k = 1\n", encoding="utf-8")
    assert "answered by" not in which_path("search", GIFT_QUERY, "--config", str(config))
    assert "answered by" not in which_path("search", GIFT_QUERY, "--conf", str(config))


def test_status_lists_each_collection_once_with_the_folders_that_list_it(
    lsp: LspSession, corpus: RoutingCorpus
) -> None:
    status = lsp.request("codesift/status", {})
    by_name = {c["name"]: c for c in status["collections"]}
    assert sorted(by_name) == ["billing-prd", "search-notes"]
    billing = by_name["billing-prd"]
    assert billing["listed_by"] == ["shop", "search"]  # one live index, shared
    assert billing["root"] == str(corpus.billing_docs.resolve())
    assert billing["database"].startswith(os.environ["XDG_CACHE_HOME"])
    assert billing["state"] in ("ready", "indexing", "scanning")
