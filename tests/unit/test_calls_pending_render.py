"""A graph answer while the call pass is under way says so, in every front end's
rendering: MCP's text and structured content, the CLI's page."""

from __future__ import annotations

from typing import Any

from mcp.types import TextContent

from codesift.cli.render_json import graph_page, neighbours_page
from codesift.engine.results import GraphResult, Symbol
from codesift.mcp.render import graph_result, neighbours_result
from codesift.store.reader import NodeRow

WORK = Symbol(
    NodeRow(1, "app/m.py", "python", "function", "f", "app.m.f", None, 3, 9, "def f()", "")
)
PENDING = GraphResult((1,), (WORK,), (), calls_pending=37)
DONE = GraphResult((1,), (WORK,), ())


def text_of(result: Any) -> str:
    (content,) = result.content
    assert isinstance(content, TextContent)
    return content.text


def test_mcp_answers_carry_the_files_left() -> None:
    for result in (
        graph_result("f", PENDING, {}, max_nodes=10),
        neighbours_result("f", "callers", PENDING, {}, max_nodes=10),
    ):
        assert result.structured_content is not None
        assert result.structured_content["calls_pending"] == 37
        assert "calls_pending: the calls of 37 files are still being resolved" in text_of(result)
    done = graph_result("f", DONE, {}, max_nodes=10)
    assert done.structured_content is not None and done.structured_content["calls_pending"] == 0
    assert "calls_pending" not in text_of(done)


def page_text(page: Any) -> str:
    return "\n".join("".join(text for text, _style in line) for line in page.lines)


def test_the_cli_page_says_the_graph_is_not_complete() -> None:
    symbol = {
        "id": 1,
        "path": "app/m.py",
        "language": "python",
        "kind": "function",
        "name": "f",
        "qualified_name": "app.m.f",
        "signature": "def f()",
        "start_line": 3,
        "end_line": 9,
        "history": None,
    }
    data = {
        "name": "f",
        "nodes": [symbol],
        "roots": [1],
        "edges": [],
        "truncated": False,
        "omitted": 0,
        "max_nodes": 10,
        "calls_pending": 37,
    }
    grouped = {**data, "nodes": [{"node": symbol, "callers": []}]}
    for page in (graph_page(data), neighbours_page(grouped, "callers")):
        assert "the calls of 37 files are not resolved yet" in page_text(page)
    assert "not resolved yet" not in page_text(graph_page({**data, "calls_pending": 0}))
