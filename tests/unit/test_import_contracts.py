"""The package's shape, checked: the import contracts in pyproject.toml
([tool.importlinter], read by import-linter) hold.

- no import circles between the modules and subpackages of `codesift`, at any depth;
- the layers, arrows only down: cli -> web -> lsp | mcp -> engine -> retrieval ->
  store -> parsing (docs/architecture.md);
- the servers (lsp, mcp, web) never import the CLI, store/ or retrieval/: they
  reach the index through the engine.

A broken contract fails this test with import-linter's report: which import, in
which file and line, and the chain it belongs to.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The contracts pyproject.toml declares (a test of the test: none may go missing).
CONTRACTS = ("circles", "layers", "servers")


def lint_imports(*contracts: str) -> subprocess.CompletedProcess[str]:
    """import-linter over this checkout's sources (no cache: the sources change)."""
    pytest.importorskip("importlinter", reason="import-linter is in the test extra")
    env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
    code = "import sys; from importlinter.cli import lint_imports_command; lint_imports_command()"
    limit = [arg for contract in contracts for arg in ("--contract", contract)]
    return subprocess.run(
        [sys.executable, "-c", code, "--no-cache", "--no-logo", *limit, "pyproject.toml"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("contract", CONTRACTS)
def test_the_import_contract_holds(contract: str) -> None:
    result = lint_imports(contract)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "KEPT" in result.stdout and "BROKEN" not in result.stdout
