"""codesift/search over stdio: results, live updates from disk, cancellation, bad input."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from harness import DEADLINE, LspSession, poll
from pygls.exceptions import JsonRpcException


def names(reply: dict[str, Any]) -> list[str]:
    return [r["qualified_name"] for r in reply["results"]]


def search_until(lsp: LspSession, query: str, check: Any, **extra: Any) -> dict[str, Any]:
    """Search until `check` accepts the reply; the deadline passing is the failure."""
    return poll(
        lambda: lsp.request("codesift/search", {"query": query, **extra}),
        check,
        f"search {query!r}",
    )


def test_search_answers_with_provenance_and_completeness(lsp: LspSession, workspace: Path) -> None:
    reply = lsp.request("codesift/search", {"query": "retry_failed_charge", "top_k": 5})
    assert reply["results"], reply
    first = reply["results"][0]
    assert first["qualified_name"].endswith("retry_failed_charge")
    assert first["uri"] == (workspace / "billing.py").as_uri()
    assert first["provenance"] and {"stream", "rank", "score"} <= set(first["provenance"][0])
    assert isinstance(first["node_id"], str)  # 63-bit ids travel as strings
    assert reply["complete"] is True
    (index,) = reply["index"]
    assert index["folder"] == workspace.name and index["state"] == "ready"


def test_search_options_are_applied(lsp: LspSession) -> None:
    reply = lsp.request(
        "codesift/search",
        {"query": "gateway", "layers": ["doc"], "languages": ["markdown"], "snippet_chars": 80},
    )
    assert reply["results"] and all(r["layer"] == "doc" for r in reply["results"])
    reply = lsp.request("codesift/search", {"query": "charge", "paths": ["reports.py"]})
    assert {r["path"] for r in reply["results"]} == {"reports.py"}
    reply = lsp.request("codesift/search", {"query": "charge", "max_tokens": 60, "top_k": 10})
    assert reply["tokens"] <= 60 and reply["truncated_by_budget"]


def test_file_changed_on_disk_is_found(lsp: LspSession, workspace: Path) -> None:
    path = workspace / "invoices.py"
    path.write_text("def issue_quarterly_invoice(customer):\n    return customer\n")
    old, new = "invoices.issue_quarterly_invoice", "invoices.issue_yearly_invoice"
    reply = search_until(lsp, "issue_quarterly_invoice", lambda r: old in names(r))
    assert old in names(reply)
    path.write_text("def issue_yearly_invoice(customer):\n    return customer\n")
    reply = search_until(lsp, "issue_yearly_invoice", lambda r: new in names(r))
    assert new in names(reply)
    assert old not in names(lsp.request("codesift/search", {"query": "issue_quarterly_invoice"}))
    path.unlink()
    reply = search_until(lsp, "issue_yearly_invoice", lambda r: new not in names(r))
    assert new not in names(reply)


def test_did_save_and_watched_files_without_a_watcher(workspace: Path) -> None:
    with LspSession([workspace], {"embeddings": False, "watch": False}) as lsp:
        lsp.wait_ready()
        path = workspace / "saved.py"
        path.write_text("def settle_disputed_payment(p):\n    return p\n")
        lsp.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})
        reply = search_until(lsp, "settle_disputed_payment", lambda r: r["results"])
        assert names(reply) == ["saved.settle_disputed_payment"]
        path.unlink()
        lsp.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": path.as_uri(), "type": 3}]}
        )
        reply = search_until(lsp, "settle_disputed_payment", lambda r: not r["results"])
        assert reply["results"] == []
    assert lsp.returncode == 0


def test_reindex_paths_and_status(lsp: LspSession, workspace: Path) -> None:
    reply = lsp.request(
        "codesift/reindex", {"paths": [(workspace / "billing.py").as_uri()], "wait": True}
    )
    assert reply["done"] is True and reply["queued"][0]["paths"] == ["billing.py"]
    status = lsp.request("codesift/status")
    (folder,) = status["folders"]
    assert folder["files"] >= 3 and folder["nodes"] >= 5 and folder["chunks"] > 0
    assert folder["database_bytes"] > 0 and folder["last_update"]
    assert folder["vectors"]["enabled"] is False
    assert any("embeddings are off" in w for w in folder["warnings"])
    assert set(folder["pending"]) >= {"paths", "rescan", "busy"}


def test_cancelled_search_gets_request_cancelled(workspace: Path, monkeypatch: Any) -> None:
    # Each read request first waits this long (or until it is cancelled): far
    # longer than the deadline below, so only the cancellation can end it in time.
    monkeypatch.setenv("CODESIFT_TEST_READ_DELAY", str(5 * DEADLINE))
    with LspSession([workspace], {"embeddings": False, "watch": False}) as lsp:
        msg_id = str(uuid.uuid4())
        future = lsp.request_future("codesift/search", {"query": "charge"}, msg_id)
        lsp.cancel(msg_id)  # sent after the request: the server handles them in order
        with pytest.raises(JsonRpcException) as caught:
            future.result(DEADLINE)
        assert caught.value.code == -32800
    assert lsp.returncode == 0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (None, "needs params"),
        ([1, 2], "must be an object"),
        ({}, "missing required parameter 'query'"),
        ({"query": 5}, "must be a string"),
        ({"query": "x" * 100_000}, "100000 characters long"),
        ({"query": "   "}, "the query is empty"),
        ({"query": "a", "top_k": 0}, "'top_k' must be between 1 and 200"),
        ({"query": "a", "layers": ["bogus"]}, "unknown layer"),
        ({"query": "a", "since": "last tuesday"}, "cannot read since 'last tuesday'"),
        ({"query": "a", "as_of": "no-such-tag"}, "cannot read as_of 'no-such-tag'"),
        ({"query": "a", "as_of": [2025]}, "parameter 'as_of' must be a date"),
        ({"query": "a", "since": "2025-02-01", "until": "2025-01-01"}, "is after until"),
        ({"query": "a", "folders": ["nope"]}, "no workspace folder 'nope'"),
    ],
)
def test_bad_search_params_are_invalid_params(lsp: LspSession, params: Any, message: str) -> None:
    with pytest.raises(JsonRpcException) as caught:
        lsp.raw_request("codesift/search", params)
    assert caught.value.code == -32602
    assert message in caught.value.message
    assert lsp.request("codesift/search", {"query": "charge"})["results"]  # still serving


def test_search_filters_on_git_time(lsp: LspSession) -> None:
    # Everything in the workspace was committed (or edited) just now.
    since_long_ago = lsp.request("codesift/search", {"query": "charge", "since": "2000-01-01"})
    assert since_long_ago["results"]
    first = since_long_ago["results"][0]
    assert first["history"]["source"] in ("git", "uncommitted")
    assert first["history"]["changed"] > "2000"
    until_long_ago = lsp.request("codesift/search", {"query": "charge", "until": "2000-01-01"})
    assert until_long_ago["results"] == []
    relative = lsp.request("codesift/search", {"query": "charge", "since": "2w"})
    assert [r["path"] for r in relative["results"]] == [
        r["path"] for r in since_long_ago["results"]
    ]


def test_search_with_include_graph_lists_callers_and_callees(lsp: LspSession) -> None:
    result = lsp.request(
        "codesift/search", {"query": "retry_failed_charge", "top_k": 3, "include_graph": True}
    )
    first = result["results"][0]
    assert first["qualified_name"] == "billing.retry_failed_charge"
    edges = {(e["relation"], e["kind"], e["node"]["name"]) for e in first["graph"]}
    assert ("callee", "calls", "submit") in edges
    assert ("caller", "calls", "monthly_report") in edges
    assert ("caller", "calls", "record") in edges
    plain = lsp.request("codesift/search", {"query": "retry_failed_charge", "top_k": 3})
    assert all(not r["graph"] for r in plain["results"])


def test_a_rerank_model_that_fails_to_load_is_a_status_warning(
    workspace: Path, tmp_path: Path
) -> None:
    options = {"embeddings": False, "rerank": {"enabled": True, "model_path": str(tmp_path)}}
    with LspSession([workspace], options, log_file=tmp_path / "log") as lsp:
        lsp.wait_ready()
        folder = lsp.request("codesift/status")["folders"][0]
        assert folder["rerank"]["enabled"] is True and folder["rerank"]["active"] is False
        assert any("reranker could not be loaded" in w for w in folder["warnings"])
        result = lsp.request("codesift/search", {"query": "charge"})
        assert result["results"]  # searching goes on without the stage


def test_tests_exclude_leaves_out_test_files_by_the_servers_rule(
    lsp: LspSession, workspace: Path
) -> None:
    tests = workspace / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "test_settlement.py").write_text(
        "def test_settle_the_ledger_twice():\n    assert settle_the_ledger() == 2\n"
    )
    (workspace / "settlement_spec.go").write_text(
        "package settlement\n\nfunc settle_the_ledger_spec() int { return settle_the_ledger() }\n"
    )
    (workspace / "settlement.py").write_text("def settle_the_ledger():\n    return 2\n")
    query = "settle the ledger"
    everything = search_until(
        lsp,
        query,
        lambda r: (
            {"tests/test_settlement.py", "settlement.py"} <= {x["path"] for x in r["results"]}
        ),
    )
    flags = {r["path"]: r["is_test"] for r in everything["results"]}
    assert flags["tests/test_settlement.py"] is True
    assert flags["settlement.py"] is False
    kept = lsp.request("codesift/search", {"query": query, "tests": "exclude", "top_k": 2})
    paths = [r["path"] for r in kept["results"]]
    assert "settlement.py" in paths and len(paths) <= 2
    assert not any(r["is_test"] for r in kept["results"])
    assert "tests/test_settlement.py" not in paths
    with pytest.raises(JsonRpcException) as bad:
        lsp.request("codesift/search", {"query": query, "tests": "none"})
    assert bad.value.code == -32602 and "'tests'" in bad.value.message


def test_tests_auto_keeps_test_files_only_for_a_query_that_asks_for_test_code(
    lsp: LspSession, workspace: Path
) -> None:
    tests = workspace / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "test_refunds.py").write_text(
        "def test_refund_is_booked_once():\n"
        "    assert book_refund() == 1, 'refund booked twice for one charge'\n"
    )
    (workspace / "refunds.py").write_text(
        'def book_refund():\n    """Book a refund for one charge."""\n    return 1\n'
    )
    search_until(
        lsp,
        "book refund charge",
        lambda r: "tests/test_refunds.py" in {x["path"] for x in r["results"]},
    )

    def paths(query: str, tests: str = "auto") -> list[str]:
        page = lsp.request("codesift/search", {"query": query, "tests": tests})
        return [r["path"] for r in page["results"]]

    # a question: the test file is left out, as with "exclude"
    asked = paths("book refund charge")
    assert "refunds.py" in asked and "tests/test_refunds.py" not in asked
    # quoted text, a test's name, a test file's path: the test is what is asked for
    assert paths('"refund booked twice"')[0] == "tests/test_refunds.py"
    assert paths("test_refund_is_booked_once")[0] == "tests/test_refunds.py"
    assert "tests/test_refunds.py" in paths("tests/test_refunds.py")
    assert "tests/test_refunds.py" not in paths('"refund booked twice"', "exclude")
