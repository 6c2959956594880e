"""The git history pass in the MCP server: a search with a time filter answers at
once while the pass is pending, with a `history_pending` warning, and without one
once the pass is done.

A real `codesift mcp` with the SDK's client, on a repository with 1,000 generated
commits (tests/deep_history.py); the test holds the index's history lock as
another process running the pass would, so the pending state does not depend on
timing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_harness import McpSession, poll

from codesift.store.locks import IndexLock
from deep_history import make_deep_history

pytestmark = pytest.mark.usefixtures("git_isolation")


def test_time_filter_warns_while_the_history_is_pending(tmp_path: Path) -> None:
    repo = make_deep_history(tmp_path / "repo", commits=1000)
    (repo / ".codesift.toml").write_text("[embedding]\nenabled = false\n")
    other = IndexLock(
        repo / ".codesift" / "index.db", "history", purpose="test: a slow history pass"
    )
    assert other.try_acquire()
    try:
        with McpSession(repo, log_file=tmp_path / "mcp.log") as mcp:
            pending = poll(
                lambda: mcp.data("search", {"query": "f3_1", "since": "2000-01-01"}),
                lambda data: data["index"]["history"]["elsewhere"] is not None,
                "the server sees another process's history pass",
            )
            (warning,) = pending["warnings"]
            assert warning["code"] == "history_pending"
            assert "history   being computed" in mcp.text(mcp.call("status", {}))
            assert "warning (history_pending)" in mcp.text(
                mcp.call("search", {"query": "f3_1", "since": "2000-01-01"})
            )
            other.release()
            done = poll(
                lambda: mcp.data("search", {"query": "f3_1", "since": "2000-01-01"}),
                lambda data: not data["index"]["history"]["pending"],
                "the history pass done",
            )
            assert done["warnings"] == [] and done["results"]
            assert done["results"][0]["history"]["source"] == "git"
            assert "history   complete" in mcp.text(mcp.call("status", {}))
    finally:
        other.release()
