"""Repeated questions answered from the answer cache (engine/answer_cache.py),
over a real index and a real uvicorn: a hit is the engine's answer byte for
byte, an edit or another writer's commit ends it, and nothing that reads a
git-time window is kept."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import httpx
from web_harness import WORKSPACE, WebHarness, make_workspace, poll

from codesift.engine.answer_cache import AnswerCache, question_key

QUESTION = {"query": "retry_failed_charge", "top_k": 5}


def _untimed(value: object) -> object:
    """`value` without its timings (took_ms, each stream's ms)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in ("took_ms", "ms")}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _without_timing(response: httpx.Response) -> object:
    return _untimed(response.json())


def test_a_repeated_question_is_answered_from_the_cache(web: WebHarness) -> None:
    first = web.post("/api/search", QUESTION)
    again = web.post("/api/search", dict(reversed(list(QUESTION.items()))))
    assert first.status_code == again.status_code == 200
    assert first.headers["x-codesift-cache"] == "miss"
    assert again.headers["x-codesift-cache"] == "hit"
    assert again.content == first.content
    # What the engine answers now, uncached, is the same page.
    fresh = web.web.cache
    kept = fresh.entries
    fresh.entries = 0
    try:
        uncached = web.post("/api/search", QUESTION)
    finally:
        fresh.entries = kept
    assert "x-codesift-cache" not in uncached.headers
    assert _without_timing(uncached) == _without_timing(again)
    for path, body in (
        ("/api/route", {"query": "retry a failed charge"}),
        ("/api/graph", {"name": "submit", "direction": "callers"}),
    ):
        assert web.post(path, body).headers["x-codesift-cache"] == "miss"
        assert web.post(path, body).headers["x-codesift-cache"] == "hit"
    symbols = {"name": "submit", "limit": 3}
    assert web.get("/api/symbols", symbols).headers["x-codesift-cache"] == "miss"
    assert web.get("/api/symbols", symbols).headers["x-codesift-cache"] == "hit"


def test_time_windows_and_status_are_never_cached(web: WebHarness) -> None:
    timed = {**QUESTION, "since": "30d"}
    for _ in range(2):
        response = web.post("/api/search", timed)
        assert response.status_code == 200
        assert "x-codesift-cache" not in response.headers
    assert "x-codesift-cache" not in web.get("/api/status").headers


def test_an_edit_ends_the_cached_answer(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    with WebHarness(root, tokens_file=tmp_path / "tokens.json") as web:
        question = {"query": "reconcile_ledger_entries"}
        before = web.post("/api/search", question).json()["results"]
        assert "ledger.py" not in {r["path"] for r in before}
        assert web.post("/api/search", question).headers["x-codesift-cache"] == "hit"
        (root / "ledger.py").write_text(
            "def reconcile_ledger_entries(entries):\n    return sorted(entries)\n",
            encoding="utf-8",
        )

        def found() -> list[str]:
            response = web.post("/api/search", question)
            return [r["path"] for r in response.json()["results"]]

        assert "ledger.py" in poll(found, lambda paths: "ledger.py" in paths, "the edit")


def test_another_writer_commit_ends_the_cached_answer(tmp_path: Path) -> None:
    """A commit the server did not make (a `codesift index` elsewhere) changes
    SQLite's data_version: the kept answer is not served again."""
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    with WebHarness(root, tokens_file=tmp_path / "tokens.json") as web:
        assert web.post("/api/search", QUESTION).headers["x-codesift-cache"] == "miss"
        assert web.post("/api/search", QUESTION).headers["x-codesift-cache"] == "hit"
        writer = apsw.Connection(str(web.web.live.folder.db_path))
        try:
            writer.set_busy_timeout(30_000)
            writer.execute("CREATE TABLE outside_write(x); DROP TABLE outside_write")
        finally:
            writer.close()
        assert web.post("/api/search", QUESTION).headers["x-codesift-cache"] == "miss"


def test_the_cache_keeps_at_most_its_entries() -> None:
    cache = AnswerCache(entries=2)
    state = ((), "{}")
    keys = [question_key("search", None, {"query": str(i)}) for i in range(3)]
    for i, key in enumerate(keys):
        cache.put(key, state, json.dumps(i).encode())
    assert cache.get(keys[0], state) is None
    assert cache.get(keys[2], state) == b"2"
    assert cache.get(keys[2], ((), '{"fresh": false}')) is None
    assert question_key("search", "alice", {"query": "x"}) != question_key(
        "search", "bob", {"query": "x"}
    )
    assert AnswerCache(entries=0).state([], {}) is None
