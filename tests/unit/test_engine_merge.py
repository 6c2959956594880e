"""The engine's page merge (weighted by the router), the folders an unscoped search
narrows to, and the server's error mapping (pure, no database)."""

from __future__ import annotations

import math
from pathlib import Path

import apsw
import pytest
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from codesift.engine import FolderPage, GraphQuery, check_graph_query, merge_pages
from codesift.engine.live_collections import ROUTE_FOLDERS, routed_folders
from codesift.engine.route import RouteResult, folder_names
from codesift.engine.search import ROUTE_DECAY
from codesift.engine.shared_overlay import SHARED_PREFIX
from codesift.engine.unscoped import GRADE_SCALE, choose_folders, page_weights
from codesift.errors import (
    CodesiftError,
    CorruptIndexError,
    EmbeddingError,
    IndexError_,
    NotIndexedError,
    QueryError,
    SearchCancelled,
    error_kind,
    error_message,
)
from codesift.lsp.errors import CODESIFT_ERROR, rpc_error
from codesift.mcp.errors import error_result
from codesift.retrieval import SearchRequest, SearchResponse, SearchResult
from codesift.retrieval.routing import RouteMatch


def result(path: str, score: float, snippet: str = "x") -> SearchResult:
    return SearchResult(
        path=path,
        start_line=1,
        end_line=2,
        kind="function",
        qualified_name=path,
        layer="code",
        language="python",
        score=score,
        snippet=snippet,
        snippet_start_line=1,
        truncated=False,
        provenance=(),
        chunk_id=1,
        node_id=None,
    )


def test_one_folder_page_is_passed_on_in_its_own_order() -> None:
    # A diversified page is not sorted by score; re-sorting would undo the diversity.
    page = [result("a.py", 0.9), result("b.py", 0.5), result("a.py", 0.7)]
    response = SearchResponse("q", page, tokens=42, truncated_by_budget=True)
    merged = merge_pages(SearchRequest("q", top_k=3), [FolderPage("one", response)])
    assert [r for _, r in merged.results] == page
    assert merged.tokens == 42 and merged.truncated_by_budget


def test_several_folders_keep_each_folders_order() -> None:
    one = SearchResponse("q", [result("a.py", 0.9), result("b.py", 0.5), result("c.py", 0.7)])
    two = SearchResponse("q", [result("x.py", 0.8), result("y.py", 0.6)])
    merged = merge_pages(
        SearchRequest("q", top_k=4), [FolderPage("one", one), FolderPage("two", two)]
    )
    assert [(f, r.path) for f, r in merged.results] == [
        ("one", "a.py"),
        ("two", "x.py"),
        ("two", "y.py"),
        ("one", "b.py"),
    ]


def test_the_routers_weights_weigh_each_folders_scores() -> None:
    one = SearchResponse("q", [result("a.py", 0.9), result("b.py", 0.3)])
    two = SearchResponse("q", [result("x.py", 1.0), result("y.py", 0.85)])
    pages = [FolderPage("one", one), FolderPage("two", two)]
    request = SearchRequest("q", top_k=4)
    by_score = merge_pages(request, pages)
    assert [r.path for _, r in by_score.results] == ["x.py", "a.py", "y.py", "b.py"]
    one_first = merge_pages(request, pages, {"one": 1.0, "two": 0.8})
    assert [r.path for _, r in one_first.results] == ["a.py", "x.py", "y.py", "b.py"]
    # the scores shown are the weighted ones: the page is in score order
    shown = [r.score for _, r in one_first.results]
    assert shown == pytest.approx([0.9, 0.8, 0.68, 0.3])
    # a folder the router did not rank weighs ROUTE_DECAY times the lightest it did
    three = SearchResponse("q", [result("z.py", 0.95)])
    unranked = merge_pages(request, [*pages, FolderPage("three", three)], {"two": 1, "one": 0.8})
    assert [r.path for _, r in unranked.results] == ["x.py", "y.py", "a.py", "z.py"]
    assert unranked.results[3][1].score == pytest.approx(0.95 * 0.8 * ROUTE_DECAY)


def test_page_weights_follow_the_routers_grades() -> None:
    def match(name: str, grade: float | None) -> RouteMatch:
        return RouteMatch(name, "repository", 0.5, "", (), grade)

    matches = [match("api", 6.0), match("web", 1.0), match("docs", -4.0), match("ops", None)]
    weights = page_weights(matches, {"api", "web", "docs"})
    assert weights["api"] == pytest.approx(1.0)
    assert weights["web"] == pytest.approx(math.exp(-GRADE_SCALE * 5.0))
    assert weights["docs"] == pytest.approx(math.exp(-GRADE_SCALE * 10.0))
    # not graded (not probed): ROUTE_DECAY times the one before; not local: a shared page
    assert weights[SHARED_PREFIX + "ops"] == pytest.approx(weights["docs"] * ROUTE_DECAY)
    # a pool with no graded order: ROUTE_DECAY per place
    plain = page_weights([match("a", None), match("b", None), match("c", None)], {"a", "b", "c"})
    assert plain == pytest.approx({"a": 1.0, "b": ROUTE_DECAY, "c": ROUTE_DECAY**2})


def test_routed_folders_are_the_best_few_that_pass_the_threshold() -> None:
    matches = tuple(
        RouteMatch(f"f{i}", "repository", confidence, "", ())
        for i, confidence in enumerate([0.9, 0.05, 0.5, 0.4, 0.3, 0.25, 0.6, 0.2])
    )
    result = RouteResult("q", ("q",), matches, ())
    # f1 is below the threshold; f6 and f7 pass it but five are before them
    assert ROUTE_FOLDERS == 5
    assert routed_folders(result) == ["f0", "f2", "f3", "f4", "f5"]
    assert routed_folders(result, 0.45, 10) == ["f0", "f2", "f6"]
    assert routed_folders(result, 0.95) == []


def test_several_folders_share_one_token_budget() -> None:
    long = "word " * 200
    one = SearchResponse("q", [result("a.py", 0.9, long)])
    two = SearchResponse("q", [result("x.py", 0.8, long)])
    merged = merge_pages(
        SearchRequest("q", top_k=10, max_tokens=400),
        [FolderPage("one", one), FolderPage("two", two)],
    )
    assert [r.path for _, r in merged.results] == ["a.py"]
    assert merged.truncated_by_budget and merged.tokens <= 400


def test_graph_query_is_checked() -> None:
    check_graph_query(GraphQuery("callers", 2, ("calls", "inherits")))
    for bad in (GraphQuery("up"), GraphQuery(depth=0), GraphQuery(kinds=("calls", "uses"))):
        with pytest.raises(QueryError):
            check_graph_query(bad)


def test_errors_map_to_json_rpc_once() -> None:
    assert isinstance(rpc_error(QueryError("the query is empty")), JsonRpcInvalidParams)
    assert isinstance(rpc_error(SearchCancelled()), JsonRpcRequestCancelled)
    for exc, kind in (
        (CorruptIndexError("damaged"), "index_damaged"),
        (NotIndexedError("not yet"), "not_indexed"),
        (EmbeddingError("no model"), "embedding_failed"),
        (apsw.BusyError("locked"), "index_busy"),
    ):
        error = rpc_error(exc)
        assert error.code == CODESIFT_ERROR and error.data == {"kind": kind}, exc


def test_one_error_kind_table_for_every_front_end() -> None:
    for exc, kind in (
        (QueryError("empty"), "bad_request"),
        (SearchCancelled(), "cancelled"),
        (CorruptIndexError("damaged"), "index_damaged"),
        (apsw.NotADBError("file is not a database"), "index_damaged"),
        (apsw.ReadOnlyError("readonly"), "index_read_only"),
        (apsw.SQLError("no such table"), "index_error"),
        (IndexError_("odd"), "codesift"),
        (CodesiftError("odd"), "codesift"),
        (RuntimeError("bug"), "internal"),
    ):
        assert error_kind(exc) == kind, exc
        result = error_result(exc)
        assert result.is_error and result.structured_content is not None
        assert result.structured_content["error"]["kind"] == kind
        if kind not in ("bad_request", "cancelled"):
            error = rpc_error(exc) if kind != "internal" else None
            assert error is None or error.data == {"kind": kind}


def test_error_messages_are_one_line() -> None:
    assert error_message(NotIndexedError("not\n  yet")) == "not yet"
    assert error_message(CodesiftError()) == "CodesiftError"
    damaged = error_message(apsw.CorruptError("database disk image is malformed"))
    assert damaged.endswith("run `codesift index --rebuild`")


def test_folder_names_tell_folders_of_one_name_apart_by_their_parents() -> None:
    roots = [Path("/w/app/src"), Path("/w/lib/src"), Path("/w/tools"), Path("/src")]
    assert folder_names(roots) == ["app/src", "lib/src", "tools", "src"]
    assert folder_names([Path("/a/x/src"), Path("/b/x/src")]) == ["a/x/src", "b/x/src"]
    assert folder_names([Path("/only")]) == ["only"]


def test_choose_folders_narrows_only_when_asked_and_weighs_every_ranked_folder() -> None:
    matches = tuple(
        RouteMatch(name, "repository", conf, "", (), grade)
        for name, conf, grade in (("a", 0.9, 10.0), ("b", 0.5, 5.0), ("c", 0.05, None))
    )
    result = RouteResult("q", ("q",), matches, ())
    narrowed = choose_folders(result, {"a", "b", "c"}, narrow=True)
    assert narrowed.routed == ["a", "b"]  # c is below the threshold
    assert narrowed.ranked == ["a", "b", "c"]
    assert narrowed.weights["a"] == 1.0
    assert narrowed.weights["b"] == pytest.approx(math.exp(-0.2))
    assert narrowed.weights["c"] == pytest.approx(math.exp(-0.2) * ROUTE_DECAY)
    every = choose_folders(result, {"a", "b", "c"}, narrow=False)
    assert every.routed is None and every.weights == narrowed.weights
