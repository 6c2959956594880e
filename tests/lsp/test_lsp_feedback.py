"""The feedback stream through the language server: with embeddings off,
codesift/search reports the words it added and finds code that shares only them."""

from __future__ import annotations

from pathlib import Path

from harness import LspSession, make_workspace

from feedback_workspace import FILES, QUESTION


def test_search_without_vectors_reports_and_uses_the_feedback_words(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", FILES)
    with LspSession([root], {"embeddings": False}, log_file=tmp_path / "log") as lsp:
        lsp.wait_ready()
        reply = lsp.request(
            "codesift/search",
            {"query": QUESTION, "top_k": 5},
        )
    feedback = [s for s in reply["streams"] if s["stream"] == "feedback"]
    assert len(feedback) == 1 and feedback[0]["error"] is None
    assert {"creation", "guard", "double", "checked", "make"} & set(feedback[0]["added_terms"])
    assert all(s["added_terms"] == [] for s in reply["streams"] if s["stream"] != "feedback")
    guard = next(r for r in reply["results"] if r["path"] == "pool/guard.py")
    assert [p["stream"] for p in guard["provenance"]] == ["feedback"]
