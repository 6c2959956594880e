"""The server's search defaults come from the folder's settings, and its errors
are mapped once: InvalidParams for a bad request, codesift's own code for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import WORKSPACE, LspSession, make_workspace, poll
from lsprotocol import types
from pygls.exceptions import JsonRpcException

# Enough definitions that a page of 10 and a page of 3 differ.
MANY = {f"handlers/h{i}.py": f"def handle_event_{i}(event):\n    return event\n" for i in range(14)}
LONG = "def handle_event_batch(events):\n" + "".join(
    f"    events.append({i})  # handle event {i}\n" for i in range(40)
)


def test_top_k_and_snippet_chars_from_the_folder_settings(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {**WORKSPACE, **MANY, "handlers/batch.py": LONG})
    (root / ".codesift.toml").write_text("[search]\ntop_k = 4\nsnippet_chars = 90\n")
    log = tmp_path / "server.log"
    with LspSession([root], {"embeddings": False}, log_file=log) as lsp:
        lsp.wait_ready()
        reply = lsp.request("codesift/search", {"query": "handle event"})
        assert len(reply["results"]) == 4  # .codesift.toml, not the built-in 10
        assert all(len(r["snippet"]) <= 90 for r in reply["results"])
        batch = lsp.request("codesift/search", {"query": "handle_event_batch"})["results"][0]
        assert batch["truncated"] and len(batch["snippet"]) <= 90
        assert (
            len(lsp.request("codesift/search", {"query": "handle event", "top_k": 6})["results"])
            == 6
        )  # a request's own value wins
        # initializationOptions-style overrides, changed while running: applied to
        # the next search without restarting (or rescanning) the folder.
        lsp.notify(
            "workspace/didChangeConfiguration",
            {"settings": {"codesift": {"embeddings": False, "search": {"top_k": 2}}}},
        )
        poll(
            lambda: lsp.request("codesift/search", {"query": "handle event"}),
            lambda r: len(r["results"]) == 2,
            "search.top_k from didChangeConfiguration",
        )
    assert lsp.returncode == 0
    opened = log.read_text().count(f"indexing {root.resolve()} into")
    assert opened == 1, log.read_text()  # the folder was opened once


def test_init_options_set_the_search_defaults(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {**WORKSPACE, **MANY})
    options = {"embeddings": False, "search": {"top_k": 3}}
    with LspSession([root], options) as lsp:
        lsp.wait_ready()
        assert len(lsp.request("codesift/search", {"query": "handle event"})["results"]) == 3
    assert lsp.returncode == 0


def test_a_damaged_index_is_a_codesift_error_not_invalid_params(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    (root / ".codesift").mkdir()
    (root / ".codesift" / "index.db").write_bytes(b"this is not a database at all" * 10)
    with LspSession([root], {"embeddings": False}) as lsp:
        for method, params in (
            ("codesift/search", {"query": "submit"}),
            (types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query="submit")),
        ):
            with pytest.raises(JsonRpcException) as caught:
                lsp.request(method, params)
            assert caught.value.code == -33000, (method, caught.value)
            assert caught.value.data == {"kind": "index_damaged"}
            assert "--rebuild" in caught.value.message
        # A bad request is still InvalidParams, and the server keeps serving.
        with pytest.raises(JsonRpcException) as caught:
            lsp.request("codesift/search", {"query": "submit", "layers": ["nope"]})
        assert caught.value.code == -32602
    assert lsp.returncode == 0
