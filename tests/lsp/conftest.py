"""Fixtures for the language server tests: a temporary git workspace and a running
`codesift serve` with a real LSP client (see harness.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import WORKSPACE, LspSession, make_workspace, ready_server

# The MCP server's test client (tests/mcp/mcp_harness.py), for the parity test
# that asks the CLI, the language server and the MCP server the same questions.
MCP_TESTS = str(Path(__file__).resolve().parent.parent / "mcp")
if MCP_TESTS not in sys.path:
    sys.path.append(MCP_TESTS)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("ws") / "billing-ws", WORKSPACE)


@pytest.fixture(scope="module")
def lsp(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    """One server per test module on the module's workspace, indexed and ready."""
    log = tmp_path_factory.mktemp("log") / "server.log"
    with ready_server([workspace], log, {"embeddings": False}) as session:
        yield session
