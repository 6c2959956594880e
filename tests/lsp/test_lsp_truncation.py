"""A cut list of callers says so in the language server: the call hierarchy ends
with an item counting the callers left out, hover says how many more, and
codesift/graph reports `truncated` with the count (graph.max_calls 1 here)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import WORKSPACE, LspSession, make_workspace, ready_server
from lsprotocol import types


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LspSession, Path]]:
    root = make_workspace(tmp_path_factory.mktemp("ws") / "billing-ws", WORKSPACE)
    log = tmp_path_factory.mktemp("log") / "server.log"
    options = {"embeddings": False, "graph": {"max_calls": 1}}
    with ready_server([root], log, options) as session:
        yield session, root


def _submit(session: LspSession, root: Path) -> types.CallHierarchyItem:
    (item,) = session.request(
        types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
        types.CallHierarchyPrepareParams(
            text_document=types.TextDocumentIdentifier(uri=(root / "billing.py").as_uri()),
            position=types.Position(line=3, character=5),
        ),
    )
    assert item.name == "submit"
    return item


def test_incoming_calls_end_with_the_count_left_out(capped: tuple[LspSession, Path]) -> None:
    session, root = capped
    item = _submit(session, root)
    incoming = session.request(
        types.CALL_HIERARCHY_INCOMING_CALLS, types.CallHierarchyIncomingCallsParams(item=item)
    )
    # submit has two callers (retry_failed_charge, Ledger.refund): one shown, one counted.
    assert len(incoming) == 2
    assert incoming[0].from_.name in ("retry_failed_charge", "refund")
    cut = incoming[-1]
    assert cut.from_.name == "… 1 more callers not shown (limit 1)"
    assert cut.from_.detail == "truncated: graph.max_calls is 1" and not cut.from_ranges
    # Expanding the counting item lists nothing (and is no error).
    below = session.request(
        types.CALL_HIERARCHY_INCOMING_CALLS, types.CallHierarchyIncomingCallsParams(item=cut.from_)
    )
    assert not below


def test_outgoing_calls_under_the_limit_have_no_counting_item(
    capped: tuple[LspSession, Path],
) -> None:
    session, root = capped
    item = _submit(session, root)
    incoming = session.request(
        types.CALL_HIERARCHY_INCOMING_CALLS, types.CallHierarchyIncomingCallsParams(item=item)
    )
    caller = incoming[0].from_
    outgoing = session.request(
        types.CALL_HIERARCHY_OUTGOING_CALLS, types.CallHierarchyOutgoingCallsParams(item=caller)
    )
    assert [c.to.name for c in outgoing] == ["submit"]


def test_hover_says_how_many_callers_it_left_out(capped: tuple[LspSession, Path]) -> None:
    session, root = capped
    hover = session.request(
        types.TEXT_DOCUMENT_HOVER,
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=(root / "billing.py").as_uri()),
            position=types.Position(line=3, character=5),
        ),
    )
    text = hover.contents.value
    assert "called by 1" in text
    assert "(truncated: stopped at 2 definitions, graph.max_calls; at least 1 more not shown)" in (
        text
    )


def test_graph_counts_what_it_left_out(capped: tuple[LspSession, Path]) -> None:
    session, _ = capped
    cut = session.request(
        "codesift/graph", {"name": "submit", "direction": "callers", "max_nodes": 2}
    )
    assert (cut["truncated"], cut["omitted"], cut["max_nodes"]) == (True, 1, 2)
    whole = session.request("codesift/graph", {"name": "submit", "direction": "callers"})
    assert (whole["truncated"], whole["omitted"]) == (False, 0)
