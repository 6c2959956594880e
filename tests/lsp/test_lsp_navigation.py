"""Standard LSP features over stdio: hover, definition, call hierarchy, workspace and
document symbols, and codesift/graph; bad positions and URIs."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import LspSession, make_workspace, ready_server
from lsprotocol import types
from pygls.exceptions import JsonRpcException

LEDGER = 'def settle_invoice(amount):\n    """Mark an invoice paid."""\n    return amount\n'


def doc(path: Path) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=path.as_uri())


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def test_hover_shows_signature_doc_and_callers(lsp: LspSession, workspace: Path) -> None:
    # `submit` on its definition line (line 4, 1-based)
    hover = lsp.request(
        types.TEXT_DOCUMENT_HOVER,
        types.HoverParams(text_document=doc(workspace / "billing.py"), position=at(3, 5)),
    )
    text = hover.contents.value
    assert "def submit(amount)" in text
    assert "Send a charge to the gateway." in text
    assert "It returns" not in text  # only the first sentence
    assert "called by 2" in text
    assert "billing.retry_failed_charge" in text and "billing.Ledger.refund" in text
    assert (workspace / "billing.py").as_uri() + "#L" in text
    # The callers' callers, from the same walk (graph.hover_depth 2).
    second = text.split("2 hops away", 1)[1]
    assert "reports.monthly_report" in second and "billing.Ledger.record" in second
    assert "maybe called by" not in text  # every edge here follows the language


def test_hover_on_a_call_follows_the_resolved_edge(lsp: LspSession, workspace: Path) -> None:
    # `retry_failed_charge(a)` inside monthly_report (reports.py line 6)
    line = (workspace / "reports.py").read_text().splitlines()[5]
    hover = lsp.request(
        types.TEXT_DOCUMENT_HOVER,
        types.HoverParams(
            text_document=doc(workspace / "reports.py"), position=at(5, line.index("retry") + 2)
        ),
    )
    assert "def retry_failed_charge(amount, attempts=3)" in hover.contents.value
    assert "called by 2" in hover.contents.value


def test_hover_on_nothing_is_null(lsp: LspSession, workspace: Path) -> None:
    hover = lsp.request(
        types.TEXT_DOCUMENT_HOVER,
        types.HoverParams(text_document=doc(workspace / "billing.py"), position=at(1, 0)),
    )
    assert hover is None


def test_definition(lsp: LspSession, workspace: Path) -> None:
    line = (workspace / "billing.py").read_text().splitlines()[11]  # if submit(amount):
    locations = lsp.request(
        types.TEXT_DOCUMENT_DEFINITION,
        types.DefinitionParams(
            text_document=doc(workspace / "billing.py"), position=at(11, line.index("submit"))
        ),
    )
    assert [(loc.uri, loc.range.start.line) for loc in locations] == [
        ((workspace / "billing.py").as_uri(), 3)
    ]


def test_call_hierarchy_both_ways(lsp: LspSession, workspace: Path) -> None:
    items = lsp.request(
        types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
        types.CallHierarchyPrepareParams(
            text_document=doc(workspace / "billing.py"), position=at(8, 6)
        ),
    )
    (item,) = items
    assert item.name == "retry_failed_charge"
    assert item.selection_range.start == at(8, 4)
    incoming = lsp.request(
        types.CALL_HIERARCHY_INCOMING_CALLS, types.CallHierarchyIncomingCallsParams(item=item)
    )
    callers = sorted((c.from_.name, c.from_.uri.rsplit("/", 1)[1]) for c in incoming)
    assert callers == [("monthly_report", "reports.py"), ("record", "billing.py")]
    record = next(c for c in incoming if c.from_.name == "record")
    assert record.from_ranges[0].start.line == 20
    outgoing = lsp.request(
        types.CALL_HIERARCHY_OUTGOING_CALLS, types.CallHierarchyOutgoingCallsParams(item=item)
    )
    assert [c.to.name for c in outgoing] == ["submit"]
    assert outgoing[0].from_ranges[0].start.line == 11


def test_workspace_symbols_are_fuzzy(lsp: LspSession) -> None:
    def query(text: str) -> list[str]:
        found = lsp.request(types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query=text))
        return [s.name for s in found]

    assert query("retry_failed_charge")[0] == "retry_failed_charge"
    assert query("rfc")[0] == "retry_failed_charge"  # word initials
    assert query("retry_fialed")[0] == "retry_failed_charge"  # a typo
    assert "record" in query("Ledger.rec")  # qualified
    assert query("Ledger")[0] == "Ledger"
    assert query("") == []


def test_document_symbols_are_hierarchical(lsp: LspSession, workspace: Path) -> None:
    symbols = lsp.request(
        types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
        types.DocumentSymbolParams(text_document=doc(workspace / "billing.py")),
    )
    assert [s.name for s in symbols] == ["submit", "retry_failed_charge", "Ledger"]
    ledger = symbols[2]
    assert ledger.kind == types.SymbolKind.Class
    assert [c.name for c in ledger.children] == ["record", "refund"]


def test_graph_by_name_and_by_position(lsp: LspSession, workspace: Path) -> None:
    graph = lsp.request("codesift/graph", {"name": "submit", "direction": "callers", "depth": 2})
    names = {n["qualified_name"] for n in graph["nodes"]}
    assert names == {
        "billing.submit",
        "billing.retry_failed_charge",
        "billing.Ledger.refund",
        "billing.Ledger.record",
        "reports.monthly_report",
    }
    assert {e["kind"] for e in graph["edges"]} == {"calls"}
    assert graph["truncated"] is False
    capped = lsp.request(
        "codesift/graph", {"name": "submit", "direction": "callers", "depth": 3, "max_nodes": 2}
    )
    assert len(capped["nodes"]) == 2 and capped["truncated"] is True
    by_position = lsp.request(
        "codesift/graph",
        {
            "textDocument": {"uri": (workspace / "billing.py").as_uri()},
            "position": {"line": 16, "character": 8},
            "direction": "callees",
            "kinds": ["calls", "contains"],
        },
    )
    ledger = next(n for n in by_position["nodes"] if n["name"] == "Ledger")
    assert by_position["roots"] == [ledger["id"]]
    assert {e["kind"] for e in by_position["edges"]} == {"contains"}


def test_graph_filters_its_nodes_on_git_time(lsp: LspSession, workspace: Path) -> None:
    recent = {"name": "submit", "direction": "callers", "depth": 2, "since": "2000-01-01"}
    assert len(lsp.request("codesift/graph", recent)["nodes"]) == 5
    # Nothing existed before 2000: no definition to start from by name...
    old = {"name": "submit", "direction": "callers", "until": "2000-01-01"}
    assert lsp.request("codesift/graph", old)["nodes"] == []
    # ...and from a position the root stays, without neighbours outside the window.
    by_position = lsp.request(
        "codesift/graph",
        {
            "textDocument": {"uri": (workspace / "billing.py").as_uri()},
            "position": {"line": 3, "character": 5},
            "direction": "callers",
            "until": "2000-01-01",
        },
    )
    assert [n["name"] for n in by_position["nodes"]] == ["submit"]
    assert by_position["edges"] == []


@pytest.mark.parametrize(
    ("method", "params", "code", "message"),
    [
        ("codesift/unknownThing", {}, -32601, "codesift/unknownThing"),
        ("textDocument/hover", {"textDocument": {"uri": "file:///x.py"}}, -32602, "position"),
        ("textDocument/hover", {"position": "zero"}, -32602, "invalid params"),
        (
            "textDocument/hover",
            {"textDocument": {"uri": "file:///etc/hosts"}, "position": {"line": 0, "character": 0}},
            -32602,
            "outside every workspace folder",
        ),
        ("codesift/graph", {}, -32602, "needs 'name'"),
        ("codesift/graph", {"name": "submit", "since": "someday"}, -32602, "cannot read since"),
        ("codesift/graph", {"name": "submit", "depth": 99}, -32602, "'depth' must be between"),
        ("codesift/graph", {"name": "submit", "kinds": ["eats"]}, -32602, "unknown edge kind"),
        ("codesift/reindex", {"paths": ["file:///elsewhere/a.py"]}, -32602, "outside every"),
        ("codesift/status", "all", -32602, "must be an object"),
    ],
)
def test_bad_requests_get_clear_errors(
    lsp: LspSession, method: str, params: object, code: int, message: str
) -> None:
    with pytest.raises(JsonRpcException) as caught:
        lsp.raw_request(method, params)
    assert caught.value.code == code
    assert message in caught.value.message
    assert lsp.request("codesift/status")["folders"]  # still serving


@pytest.mark.parametrize(("line", "character"), [(500, 0), (0, 400)])
def test_position_past_the_end_of_the_file(
    lsp: LspSession, workspace: Path, line: int, character: int
) -> None:
    for method in (
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/prepareCallHierarchy",
    ):
        with pytest.raises(JsonRpcException) as caught:
            lsp.raw_request(
                method,
                {
                    "textDocument": {"uri": (workspace / "billing.py").as_uri()},
                    "position": {"line": line, "character": character},
                },
            )
        assert caught.value.code == -32602
        assert "past the end" in caught.value.message


def test_a_file_opened_through_a_symlink_is_its_target(tmp_path: Path) -> None:
    """The index holds a symlinked file once, under the target's path: workspace
    symbols name it once, and a document opened through the link gets the
    target's symbols."""
    root = make_workspace(tmp_path / "linked-ws", {"real/ledger.py": LEDGER})
    (root / "ledger_link.py").symlink_to("real/ledger.py")
    with ready_server([root], tmp_path / "server.log") as session:
        found = session.request(
            types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query="settle_invoice")
        )
        assert [(s.name, s.location.uri.rsplit("/", 2)[-2:]) for s in found] == [
            ("settle_invoice", ["real", "ledger.py"])
        ]
        symbols = session.request(
            types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
            types.DocumentSymbolParams(text_document=doc(root / "ledger_link.py")),
        )
        assert [s.name for s in symbols] == ["settle_invoice"]
