"""With embeddings on, a saved file gets vectors in the server's background."""

from __future__ import annotations

import os
import time
from pathlib import Path

from harness import LspSession, make_workspace


def test_saved_file_gets_vectors(tmp_path: Path) -> None:
    root = make_workspace(
        tmp_path / "ws",
        {"pay.py": 'def charge(card):\n    """Charge a credit card."""\n    return card\n'},
    )
    cache = os.environ.get("CODESIFT_TEST_MODEL_CACHE") or str(tmp_path / "model-cache")
    options = {"embeddings": True, "embedding": {"cache_dir": cache}}
    with LspSession([root], options, log_file=tmp_path / "log") as lsp:
        lsp.wait_ready()

        def vectors() -> dict[str, int]:
            return lsp.request("codesift/status")["folders"][0]["vectors"]

        deadline = time.monotonic() + 60
        while vectors()["embedded"] < vectors()["embeddable"] and time.monotonic() < deadline:
            time.sleep(0.1)
        before = vectors()
        assert before["embedded"] == before["embeddable"] > 0
        # Loaded into memory after the fill, before any search asks for them.
        deadline = time.monotonic() + 30
        while vectors()["in_memory"] < before["embedded"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert vectors()["in_memory"] == before["embedded"]
        (root / "refunds.py").write_text(
            'def give_money_back(order):\n    """Return the payment to the customer."""\n'
        )
        lsp.notify(
            "textDocument/didSave", {"textDocument": {"uri": (root / "refunds.py").as_uri()}}
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = vectors()
            if now["embeddable"] > before["embeddable"] and now["embedded"] == now["embeddable"]:
                break
            time.sleep(0.05)
        assert now["embedded"] == now["embeddable"] > before["embeddable"]
        reply = lsp.request("codesift/search", {"query": "reimburse a purchase"})
        streams = {s["stream"] for s in reply["streams"]}
        assert "vector" in streams
        hit = next(r for r in reply["results"] if r["path"] == "refunds.py")
        assert any(p["stream"] == "vector" for p in hit["provenance"])

        # The saved file's vectors reach the copy in memory right after the fill.
        deadline = time.monotonic() + 30
        while vectors()["in_memory"] < now["embedded"] and time.monotonic() < deadline:
            time.sleep(0.05)
        held = vectors()
        assert held["in_memory"] == now["embedded"] and held["memory_mib"] >= 0
        # A file saved now reaches the in-memory copy through its vectors' stamps.
        (root / "shipping.py").write_text(
            'def dispatch_parcel(order):\n    """Send the package to the courier."""\n'
        )
        lsp.notify(
            "textDocument/didSave", {"textDocument": {"uri": (root / "shipping.py").as_uri()}}
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            latest = vectors()
            grown = latest["embeddable"] > now["embeddable"]
            if grown and latest["embedded"] == latest["embeddable"]:
                break
            time.sleep(0.05)
        reply = lsp.request("codesift/search", {"query": "hand a box to the delivery company"})
        hit = next(r for r in reply["results"] if r["path"] == "shipping.py")
        assert any(p["stream"] == "vector" for p in hit["provenance"])
        deadline = time.monotonic() + 30
        while vectors()["in_memory"] < latest["embedded"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert vectors()["in_memory"] == latest["embedded"] > held["in_memory"]
    assert lsp.returncode == 0
