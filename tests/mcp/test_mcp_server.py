"""`codesift mcp` over stdio with the SDK's own client, on a real git workspace:
the tools and their schemas, search (a symbol and a question in words), symbols,
callers, callees, graph, status, a file edit becoming searchable, and bad
arguments answered with tool errors while the server keeps answering."""

from __future__ import annotations

import re
from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_harness import McpSession, make_workspace, poll

NO_VECTORS = "[embedding]\nenabled = false\n"
TOOLS = {"search", "route", "symbols", "callers", "callees", "graph", "status", "reindex"}


def hits(data: dict[str, object]) -> list[tuple[str, int]]:
    results = data["results"]
    assert isinstance(results, list)
    return [(r["path"], r["start_line"]) for r in results]


def test_tools_are_listed_with_their_schemas(mcp: McpSession) -> None:
    tools = {tool.name: tool for tool in mcp.list_tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name}"
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert set(search["properties"]) >= {
        *("query", "top_k", "layers", "lang", "path", "since", "until", "as_of"),
        *("max_tokens", "include_graph"),
    }
    assert search["properties"]["top_k"] == {
        **search["properties"]["top_k"],
        "type": "integer",
        "minimum": 1,
        "maximum": 200,
    }
    assert search["properties"]["layers"]["items"]["enum"] == ["code", "ast", "summary", "doc"]
    assert search["properties"]["include_graph"]["type"] == "boolean"
    graph = tools["graph"].input_schema["properties"]
    assert graph["direction"]["enum"] == ["callers", "callees", "both"]
    assert set(graph["kinds"]["items"]["enum"]) == {
        "calls",
        "contains",
        "imports",
        "inherits",
        "references",
    }
    for name in ("symbols", "callers", "callees", "graph"):
        assert tools[name].input_schema["required"] == ["name"]
    assert tools["search"].annotations is not None and tools["search"].annotations.read_only_hint


def test_search_finds_a_symbol_and_cites_it(mcp: McpSession) -> None:
    result = mcp.call("search", {"query": "retry_failed_charge", "top_k": 5})
    assert not result.is_error
    data = result.structured_content
    assert isinstance(data, dict)
    first = data["results"][0]
    assert (first["path"], first["qualified_name"]) == ("billing.py", "billing.retry_failed_charge")
    assert first["cite"] == f"billing.py:{first['start_line']}-{first['end_line']}"
    assert first["snippet_start_line"] >= first["start_line"]
    assert first["truncated"] is False and "def retry_failed_charge" in first["snippet"]
    assert data["tokens"] > 0 and data["truncated_by_budget"] is False
    assert data["index"]["fresh"] is True and data["index"]["complete"] is True
    text = mcp.text(result)
    assert text.startswith(f"1. {first['cite']}")
    # The snippet's lines are numbered from snippet_start_line.
    assert re.search(rf"\b{first['snippet_start_line']} \| ", text)


def test_search_answers_a_question_in_words(mcp: McpSession) -> None:
    data = mcp.data("search", {"query": "where are declined payments retried"})
    assert "billing.py" in [path for path, _ in hits(data)[:3]]


def test_search_options_reach_the_engine(mcp: McpSession) -> None:
    docs = mcp.data("search", {"query": "retried gateway", "lang": ["md"]})
    assert {path for path, _ in hits(docs)} == {"README.md"}
    paths = mcp.data("search", {"query": "retry_failed_charge", "path": ["reports*"]})
    assert {path for path, _ in hits(paths)} == {"reports.py"}
    budget = mcp.data("search", {"query": "charge", "top_k": 20, "max_tokens": 60})
    assert budget["max_tokens"] == 60 and budget["truncated_by_budget"] is True
    graph = mcp.data("search", {"query": "retry_failed_charge", "include_graph": True})
    relations = {edge["relation"] for edge in graph["results"][0]["graph"]}
    assert {"callee", "caller"} <= relations


def test_symbols_exact_then_similar(mcp: McpSession, workspace: Path) -> None:
    data = mcp.data("symbols", {"name": "retry_failed_charge"})
    (exact,) = data["exact"]
    line = (
        (workspace / "billing.py")
        .read_text()
        .splitlines()
        .index("def retry_failed_charge(amount, attempts=3):")
    )
    assert (exact["path"], exact["start_line"]) == ("billing.py", line + 1)
    assert exact["cite"].startswith(f"billing.py:{line + 1}-")
    typo = mcp.data("symbols", {"name": "retry_faild_charge"})
    assert typo["exact"] == []
    assert typo["fuzzy"][0]["qualified_name"] == "billing.retry_failed_charge"


def test_callers_and_callees_cite_call_sites(mcp: McpSession, workspace: Path) -> None:
    data = mcp.data("callers", {"name": "retry_failed_charge"})
    (group,) = data["nodes"]
    callers = {c["node"]["qualified_name"]: c["call_site"] for c in group["callers"]}
    assert set(callers) == {"billing.Ledger.record", "reports.monthly_report"}
    report_line = (
        (workspace / "reports.py")
        .read_text()
        .splitlines()
        .index("    return [retry_failed_charge(a) for a in amounts]")
    )
    assert callers["reports.monthly_report"] == f"reports.py:{report_line + 1}"
    assert "reports.py:" in mcp.text(mcp.call("callers", {"name": "retry_failed_charge"}))
    callees = mcp.data("callees", {"name": "retry_failed_charge"})
    names = {c["edge"]["name"] for c in callees["nodes"][0]["callees"]}
    assert "submit" in names


def test_a_cut_walk_says_so_and_counts_what_it_left_out(mcp: McpSession) -> None:
    # submit has two callers: with max_nodes 2 the walk shows submit and one.
    cut = mcp.call("callers", {"name": "submit", "max_nodes": 2})
    data = mcp.data("callers", {"name": "submit", "max_nodes": 2})
    assert data["truncated"] is True and data["omitted"] == 1 and data["max_nodes"] == 2
    assert len(data["nodes"][0]["callers"]) == 1
    assert "truncated: stopped at max_nodes 2; 1 more not shown" in mcp.text(cut)
    whole = mcp.data("callers", {"name": "submit"})
    assert whole["truncated"] is False and whole["omitted"] == 0
    graph = mcp.data("graph", {"name": "submit", "direction": "callers", "max_nodes": 2})
    assert graph["truncated"] is True and graph["omitted"] == 1


def test_graph_walks_edge_kinds(mcp: McpSession) -> None:
    arguments = {"name": "Ledger", "direction": "callees", "depth": 2}
    data = mcp.data("graph", {**arguments, "kinds": ["contains", "calls"]})
    names = {n["qualified_name"] for n in data["nodes"]}
    assert {"billing.Ledger", "billing.Ledger.record", "billing.retry_failed_charge"} <= names
    assert {e["kind"] for e in data["edges"]} == {"contains", "calls"}
    assert all(e["cite"] and e["cite"].startswith("billing.py:") for e in data["edges"])


def test_status_and_reindex(mcp: McpSession, workspace: Path) -> None:
    data = mcp.data("status")
    assert data["exists"] is True and data["root"] == str(workspace.resolve())
    assert data["files"] >= 3 and data["languages"]["python"] == 2
    assert data["index"]["state"] == "ready" and data["index"]["vectors"]["enabled"] is False
    again = mcp.data("reindex", {"wait": True})
    assert again["rescan"] == "done" and again["files"] == data["files"]


def test_a_file_edit_becomes_searchable(mcp: McpSession, workspace: Path) -> None:
    (workspace / "invoices.py").write_text(
        "def issue_quarterly_invoice(customer):\n"
        '    """Send the quarterly invoice to a customer."""\n'
        "    return customer\n",
        encoding="utf-8",
    )
    data = poll(
        lambda: mcp.data("search", {"query": "issue_quarterly_invoice"}),
        lambda d: bool(d["results"]) and d["results"][0]["path"] == "invoices.py",
        "the new file's function found by search",
    )
    assert data["results"][0]["cite"] == "invoices.py:1-3"
    with (workspace / "billing.py").open("a", encoding="utf-8") as out:
        out.write("\n\ndef void_stale_charge(charge_id):\n    return charge_id\n")
    poll(
        lambda: mcp.data("symbols", {"name": "void_stale_charge"})["exact"],
        lambda exact: [s["path"] for s in exact] == ["billing.py"],
        "an edited file's new definition found by symbols",
    )


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("search", {"query": "charge", "top_k": 0}, "top_k must be between 1 and 200, got 0"),
        ("search", {"query": "charge", "lang": ["klingon"]}, "unknown language(s) klingon"),
        ("search", {"query": "charge", "top_k": "5"}, "top_k must be an integer, got '5'"),
        ("search", {"query": "charge", "layers": ["bodies"]}, "unknown layer(s) bodies"),
        ("search", {"query": "   "}, "query is empty"),
        ("search", {}, "search needs the argument query"),
        ("search", {"query": "charge", "since": "the day before"}, "since"),
        ("search", {"query": "charge", "color": "red"}, "unknown argument(s) color for search"),
        ("symbols", {"name": "submit", "limit": 0}, "limit must be between 1 and"),
        ("graph", {"name": "submit", "depth": 11}, "depth must be between 1 and 10, got 11"),
        ("graph", {"name": "submit", "kinds": ["friends"]}, "unknown edge kind(s) friends"),
        ("graph", {"name": "submit", "direction": "up"}, "direction must be callers"),
    ],
)
def test_a_bad_argument_is_a_tool_error(
    mcp: McpSession, tool: str, arguments: dict[str, object], message: str
) -> None:
    result = mcp.call(tool, arguments)
    assert result.is_error
    text = mcp.text(result)
    assert "\n" not in text and text.startswith("bad argument: ") and message in text, text
    assert result.structured_content == {"error": {"kind": "bad_request", "message": text}}
    # The server lives on.
    assert mcp.data("symbols", {"name": "submit"})["exact"]


def test_an_unknown_tool_is_a_protocol_error(mcp: McpSession) -> None:
    with pytest.raises(MCPError, match="unknown tool 'grep'"):
        mcp.call("grep", {"pattern": "x"})
    assert not mcp.call("status").is_error


def test_the_server_names_itself(mcp: McpSession) -> None:
    init = mcp.initialized
    assert isinstance(init, types.InitializeResult)
    assert init.server_info.name == "codesift"
    assert init.instructions and "search" in init.instructions
    assert init.capabilities.tools is not None


def test_a_damaged_index_is_a_tool_error_naming_the_fix(tmp_path: Path) -> None:
    root = make_workspace(
        tmp_path / "ws", {"a.py": "def a():\n    pass\n", ".codesift.toml": NO_VECTORS}
    )
    (root / ".codesift").mkdir()
    (root / ".codesift" / "index.db").write_bytes(b"not a database, " * 512)
    with McpSession(root, log_file=tmp_path / "mcp.log") as mcp:
        for tool, arguments in (("search", {"query": "a"}), ("status", {})):
            result = mcp.call(tool, arguments)
            assert result.is_error
            text = mcp.text(result)
            assert "\n" not in text and "codesift index --rebuild" in text, text
            assert result.structured_content == {
                "error": {"kind": "index_damaged", "message": text}
            }
