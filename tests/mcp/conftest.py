"""Fixtures for the MCP server tests: a temporary git workspace and a running
`codesift mcp` with the SDK's own client (see mcp_harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import McpSession, make_workspace

BILLING_PY = '''\
"""Charging customers and retrying declined payments."""


def submit(amount):
    """Send a charge to the gateway. It returns whether the gateway accepted it."""
    return amount > 0


def retry_failed_charge(amount, attempts=3):
    """Retry a failed charge until the gateway accepts it."""
    for _ in range(attempts):
        if submit(amount):
            return True
    return False


class Ledger:
    """Keeps the record of every charge."""

    def record(self, amount):
        return retry_failed_charge(amount)

    def refund(self, amount):
        return submit(-amount)
'''

REPORTS_PY = '''\
from billing import retry_failed_charge


def monthly_report(amounts):
    """Summarise the month's charges."""
    return [retry_failed_charge(a) for a in amounts]
'''

README_MD = """\
# Billing

Charges are retried by `retry_failed_charge` when the gateway declines them.
"""

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
