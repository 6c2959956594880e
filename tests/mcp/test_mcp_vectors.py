"""With embeddings on (the default), `codesift mcp` computes vectors in the
background and a search finds by meaning, also in a file written after it started."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp_harness import McpSession, make_workspace, poll


def test_vectors_are_computed_and_searched(tmp_path: Path) -> None:
    cache = os.environ.get("CODESIFT_TEST_MODEL_CACHE") or str(tmp_path / "model-cache")
    root = make_workspace(
        tmp_path / "ws",
        {
            "pay.py": 'def charge(card):\n    """Charge a credit card."""\n    return card\n',
            ".codesift.toml": f'[embedding]\ncache_dir = "{cache}"\n',
        },
    )
    with McpSession(root, log_file=tmp_path / "mcp.log") as mcp:

        def vectors() -> dict[str, Any]:
            found: dict[str, Any] = mcp.data("status")["index"]["vectors"]
            return found

        before = poll(vectors, lambda v: 0 < v["embeddable"] == v["embedded"], "vectors computed")
        (root / "refunds.py").write_text(
            'def give_money_back(order):\n    """Return the payment to the customer."""\n',
            encoding="utf-8",
        )
        poll(
            vectors,
            lambda v: v["embeddable"] > before["embeddable"] and v["embedded"] == v["embeddable"],
            "the new file's vectors computed",
        )
        data = mcp.data("search", {"query": "reimburse a purchase"})
        assert "vector" in {s["stream"] for s in data["streams"]}
        hit = next(r for r in data["results"] if r["path"] == "refunds.py")
        assert any(p["stream"] == "vector" for p in hit["provenance"])
        assert data["index"]["fresh"] is True
        assert "Traceback" not in mcp.server_log()
