"""The engine's page merge and the server's error mapping (pure, no database)."""

from __future__ import annotations

import apsw
import pytest
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from codesift.engine import FolderPage, GraphQuery, check_graph_query, merge_pages
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
