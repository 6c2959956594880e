"""An unscoped codesift/search over seven workspace folders, through the real server
over stdio: the router's best five are searched (named in `routed`, best first),
the folder the question is about leads `folder_order` and the page, and the page
is in the order of the scores it shows (each folder's weighed by the router)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from harness import LspSession, make_workspace, ready_server

from routing_corpus import SEVEN_FOLDERS as FOLDERS
from routing_corpus import SEVEN_QUERY as QUERY


@pytest.fixture(scope="module")
def lsp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    base = tmp_path_factory.mktemp("unscoped")
    roots = [make_workspace(base / name, files) for name, files in FOLDERS.items()]
    log = base / "server.log"
    with ready_server(roots, log, {"embeddings": False}, no_traceback=True) as session:
        yield session


def test_an_unscoped_search_searches_the_routers_best_five(lsp: LspSession) -> None:
    route = lsp.request("codesift/route", {"query": QUERY, "limit": 20})
    passing = [m["name"] for m in route["repositories"] if m["confidence"] >= 0.1]
    assert len(passing) == len(FOLDERS)  # every folder passes the threshold...
    page = lsp.request("codesift/search", {"query": QUERY})
    assert page["routed"] == passing[:5]  # ...and the best five are searched
    assert [x["folder"] for x in page["index"]] == [n for n in FOLDERS if n in passing[:5]]
    assert page["folder_order"] == [m["name"] for m in route["repositories"]]
    assert page["folder_order"][0] == "tokens"
    assert page["results"][0]["folder"] == "tokens"
    assert page["results"][0]["qualified_name"].endswith("refresh_expired_session_token")
    assert {r["folder"] for r in page["results"]} <= set(passing[:5])
    scores = [r["score"] for r in page["results"]]
    assert scores == sorted(scores, reverse=True)


def test_route_false_searches_every_folder_merged_by_score(lsp: LspSession) -> None:
    page = lsp.request("codesift/search", {"query": QUERY, "route": False})
    assert page["routed"] is None and page["folder_order"] is None
    assert len(page["index"]) == len(FOLDERS)
    named = lsp.request("codesift/search", {"query": QUERY, "folders": ["cache", "ui"]})
    assert named["routed"] is None and named["folder_order"] is None
    assert {r["folder"] for r in named["results"]} <= {"cache", "ui"}
