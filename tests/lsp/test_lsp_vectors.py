"""With embeddings on, a saved file gets vectors in the server's background."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import LspSession, make_workspace, poll


def test_saved_file_gets_vectors(tmp_path: Path) -> None:
    root = make_workspace(
        tmp_path / "ws",
        {"pay.py": 'def charge(card):\n    """Charge a credit card."""\n    return card\n'},
    )
    cache = os.environ.get("CODESIFT_TEST_MODEL_CACHE") or str(tmp_path / "model-cache")
    options = {"embeddings": True, "embedding": {"cache_dir": cache}}
    with LspSession([root], options, log_file=tmp_path / "log") as lsp:
        lsp.wait_ready()

        def vectors() -> dict[str, Any]:
            current: dict[str, Any] = lsp.request("codesift/status")["folders"][0]["vectors"]
            return current

        def settle(check: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
            """Poll the folder's vectors until `check` holds; the deadline passing
            (twice `timeout`: a deadline, not a speed limit) is the failure."""
            return poll(vectors, check, "the folder's vectors", 2 * timeout)

        def filled_beyond(count: int) -> Callable[[dict[str, Any]], bool]:
            return lambda v: v["embeddable"] > count and v["embedded"] == v["embeddable"]

        # (Right after the index is ready the vector counts may still be 0 / 0: the
        # background fill has not counted the chunks yet.)
        before = settle(lambda v: 0 < v["embeddable"] <= v["embedded"], 60)
        assert before["embedded"] == before["embeddable"] > 0
        assert before["usable"] == before["embeddable"] and before["usable_coverage"] == 1.0
        # Every phase reported its progress: the static tier's vectors too.
        values = [p.value for m, p in lsp.notifications if m == "$/progress"]
        messages = [
            str((v.get("message") if isinstance(v, dict) else v.message) or "") for v in values
        ]
        assert any("static vectors" in m and "chunks" in m for m in messages), messages
        # The int8 query encoder is built and loaded in the background.
        assert settle(lambda v: v["queries"] == "int8", 60)["queries"] == "int8"
        # Loaded into memory after the fill, before any search asks for them.
        loaded = settle(lambda v: v["in_memory"] >= before["embedded"], 30)
        assert loaded["in_memory"] == before["embedded"]
        (root / "refunds.py").write_text(
            'def give_money_back(order):\n    """Return the payment to the customer."""\n'
        )
        lsp.notify(
            "textDocument/didSave", {"textDocument": {"uri": (root / "refunds.py").as_uri()}}
        )
        now = settle(filled_beyond(before["embeddable"]), 30)
        assert now["embedded"] == now["embeddable"] > before["embeddable"]
        reply = lsp.request("codesift/search", {"query": "reimburse a purchase"})
        streams = {s["stream"] for s in reply["streams"]}
        assert "vector" in streams
        hit = next(r for r in reply["results"] if r["path"] == "refunds.py")
        assert any(p["stream"] == "vector" for p in hit["provenance"])

        # The saved file's vectors reach the copy in memory right after the fill.
        held = settle(lambda v: v["in_memory"] >= now["embedded"], 30)
        assert held["in_memory"] == now["embedded"] and 0 <= held["memory_mib"] < 1
        # A file saved now reaches the in-memory copy through its vectors' stamps.
        (root / "shipping.py").write_text(
            'def dispatch_parcel(order):\n    """Send the package to the courier."""\n'
        )
        lsp.notify(
            "textDocument/didSave", {"textDocument": {"uri": (root / "shipping.py").as_uri()}}
        )
        latest = settle(filled_beyond(now["embeddable"]), 30)
        reply = lsp.request("codesift/search", {"query": "hand a box to the delivery company"})
        hit = next(r for r in reply["results"] if r["path"] == "shipping.py")
        assert any(p["stream"] == "vector" for p in hit["provenance"])
        final = settle(lambda v: v["in_memory"] >= latest["embedded"], 30)
        assert final["in_memory"] == latest["embedded"] > held["in_memory"]
    assert lsp.returncode == 0
