"""Fixtures for the MCP server tests: a temporary git workspace and a running
`codesift mcp` with the SDK's own client (see mcp_harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import BILLING_PY, README_MD, REPORTS_PY, McpSession, make_workspace

WORKSPACE = {
    "billing.py": BILLING_PY,
    "reports.py": REPORTS_PY,
    "README.md": README_MD,
    # No embedding model in these tests: lexical and symbol streams only.
    ".codesift.toml": "[embedding]\nenabled = false\n",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("ws") / "billing-ws", WORKSPACE)


@pytest.fixture(scope="module")
def mcp(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpSession]:
    """One `codesift mcp` per test module on the module's workspace."""
    log = tmp_path_factory.mktemp("log") / "mcp.log"
    session = McpSession(workspace, log_file=log)
    session.start()
    try:
        yield session
    finally:
        session.close()
        assert "Traceback" not in session.server_log(), session.server_log()
