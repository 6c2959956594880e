"""The call pass in the language server: a large first index answers searches
before its calls are resolved, its graph answers say `calls_pending` until then,
and the server resolves them as soon as it may.

A real `codesift serve` over stdio on a generated project of more than
DEFER_CALLS_MIN_FILES Python files (tests/call_project.py). The test holds the
index's calls lock itself, as another process running the pass would: until it
lets go, the server cannot run the pass, so the pending state is observed
without timing luck.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import LspSession, poll

from call_project import MODULES, write_project
from codesift.store.locks import IndexLock

# The modules and the package's __init__.py: a first index leaves the call sites of
# every file a grammar parses to the pass.
CODE_FILES = MODULES + 1


def callers_of(graph: dict[str, Any]) -> set[str]:
    names = {node["id"]: node["qualified_name"] for node in graph["nodes"]}
    roots = set(graph["roots"])
    return {names[e["source"]] for e in graph["edges"] if e["target"] in roots}


def test_graph_says_calls_pending_until_the_pass_and_search_answers_before(
    tmp_path: Path,
) -> None:
    root = write_project(tmp_path / "project")
    other = IndexLock(root / ".codesift" / "index.db", "calls", purpose="test: a slow call pass")
    assert other.try_acquire()
    try:
        with LspSession([root], {"embeddings": False}, log_file=tmp_path / "server.log") as lsp:
            lsp.wait_ready(history=False)
            status = lsp.request("codesift/status", {})
            assert status["folders"][0]["calls_pending"] == CODE_FILES
            found = lsp.request("codesift/search", {"query": "Keeps the items of part 42"})
            assert found["results"][0]["path"] == "app/m42.py"
            params = {"name": "work_41", "direction": "callers"}
            pending = lsp.request("codesift/graph", params)
            assert pending["calls_pending"] == CODE_FILES
            assert callers_of(pending) == set()

            other.release()
            done = poll(
                lambda: lsp.request("codesift/graph", params),
                lambda graph: graph["calls_pending"] == 0,
                "the server's call pass",
            )
            assert callers_of(done) == {"app.m42.Store42.put_42"}
            assert lsp.request("codesift/status", {})["folders"][0]["calls_pending"] == 0
            # The pass reported its own progress ($/progress): files, then across files.
            values = [p.value for m, p in lsp.notifications if m == "$/progress"]
            reports = [
                str((v.get("message") if isinstance(v, dict) else v.message) or "") for v in values
            ]
            assert any(f"call graph {CODE_FILES}/{CODE_FILES} files" in m for m in reports), reports
            assert any("resolving calls across files" in m for m in reports), reports
    finally:
        other.release()
