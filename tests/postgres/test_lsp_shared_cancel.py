"""A server request cancelled while the shared index is answering
(engine/shared_overlay.py, as the language server's $/cancelRequest and the MCP
server's cancellation reach it): the running statement is cancelled in
PostgreSQL, the request ends with SearchCancelled, and the shared index is not
taken for unavailable (the next search answers)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from codesift.engine.live import Cancellation
from codesift.engine.postgres import SharedSearch, index_into
from codesift.engine.shared_overlay import SharedIndex
from codesift.errors import SearchCancelled
from codesift.retrieval.request import SearchRequest, SearchResponse

pytestmark = pytest.mark.usefixtures("git_isolation")

DEADLINE = 60.0
SOURCE = {"keys.py": "def rotate_master_key(vault):\n    return vault.seed[::-1]\n"}


def test_a_cancelled_request_cancels_the_shared_statement(
    pg_dsn: str, make_repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root: Path = make_repo(SOURCE, name="vault")
    index_into(pg_dsn, root, repo="acme/vault@main", overrides={"embedding": {"enabled": False}})
    shared = SharedIndex(pg_dsn)
    request = SearchRequest("rotate_master_key", top_k=3)
    try:
        already = Cancellation()
        already.cancel()
        with pytest.raises(SearchCancelled):
            shared.search(request, cancel=already)
        assert shared.status().state == "ok"

        real_search = SharedSearch.search

        def slow(self: SharedSearch, req: SearchRequest) -> SearchResponse:
            self.store.connection.execute("SELECT pg_sleep(600)")
            return real_search(self, req)

        monkeypatch.setattr(SharedSearch, "search", slow)
        cancel = Cancellation()
        outcome: list[BaseException | object] = []

        def run() -> None:
            try:
                outcome.append(shared.search(request, cancel=cancel))
            except BaseException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=run)
        worker.start()
        deadline = time.monotonic() + DEADLINE
        with psycopg.connect(pg_dsn, autocommit=True) as watch:
            while True:
                row = watch.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(600)%'"
                    " AND state = 'active'"
                ).fetchone()
                if row and row[0]:
                    break
                assert time.monotonic() < deadline, "the shared statement never started"
                time.sleep(0.05)  # polling interval; the deadline is the failure
        cancel.cancel()
        worker.join(DEADLINE)
        assert not worker.is_alive(), "the cancelled statement did not end"
        assert len(outcome) == 1 and isinstance(outcome[0], SearchCancelled)
        monkeypatch.setattr(SharedSearch, "search", real_search)
        again = shared.search(request)
        assert again.status.state == "ok"
        assert next(r.path for p in again.pages for r in p.response.results) == "keys.py"
    finally:
        shared.close()
