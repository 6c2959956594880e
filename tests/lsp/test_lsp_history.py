"""The git history pass in the language server: it runs after the first index, in
the background, and never holds a search back.

A real `codesift serve` over stdio on a repository with 2,000 generated commits
(tests/deep_history.py). The test holds the index's history lock itself, as
another process running the pass would: until it lets go, the server cannot
compute the history, so the pending state is observed without timing luck.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import LspSession, poll

from codesift.store.locks import IndexLock
from deep_history import make_deep_history

pytestmark = pytest.mark.usefixtures("git_isolation")


def test_search_answers_while_the_history_is_pending_and_has_times_after(tmp_path: Path) -> None:
    repo = make_deep_history(tmp_path / "repo", commits=2000)
    other = IndexLock(
        repo / ".codesift" / "index.db", "history", purpose="test: a slow history pass"
    )
    assert other.try_acquire()
    try:
        with LspSession([repo], {"embeddings": False}, log_file=tmp_path / "server.log") as lsp:
            lsp.wait_ready(history=False)
            status = poll(
                lambda: lsp.request("codesift/status", {}),
                lambda s: s["folders"][0]["history"]["elsewhere"] is not None,
                "the server sees another process's history pass",
            )
            history = status["folders"][0]["history"]
            assert history["pending"] is True
            assert "test: a slow history pass" in history["elsewhere"]
            assert history["commits_total"] > 1900 and history["commits_done"] == 0

            # Searching works now; the results have no times yet.
            plain = lsp.request("codesift/search", {"query": "f3_1"})
            assert plain["results"] and plain["warnings"] == []
            assert all(r["history"] is None for r in plain["results"])
            # A time filter answers at once too, and says what it could not see.
            timed = lsp.request("codesift/search", {"query": "f3_1", "since": "2000-01-01"})
            (warning,) = timed["warnings"]
            assert warning["code"] == "history_pending" and warning["folder"] == repo.name

            other.release()
            lsp.wait_history()
            after = lsp.request("codesift/search", {"query": "f3_1"})
            assert after["results"][0]["history"]["source"] == "git"
            timed = lsp.request("codesift/search", {"query": "f3_1", "since": "2000-01-01"})
            assert timed["results"] and timed["warnings"] == []
            assert (
                lsp.request("codesift/search", {"query": "f3_1", "until": "2000-01-01"})["results"]
                == []
            )
            # The pass reported its own progress ($/progress), commits then files.
            values = [p.value for m, p in lsp.notifications if m == "$/progress"]
            reports = [
                str((v.get("message") if isinstance(v, dict) else v.message) or "") for v in values
            ]
            assert any("git history" in m and "commits" in m for m in reports), reports
    finally:
        other.release()
