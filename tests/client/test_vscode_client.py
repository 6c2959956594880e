"""The VS Code extension's own test suite (vscode-client/), run from pytest so the
one test command covers it: its unit tests with the `vscode` module stubbed, and
contract tests that start this interpreter's `codesift serve` through
vscode-jsonrpc."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT_DIR = Path(__file__).resolve().parents[2] / "vscode-client"
SERVER_DIR = Path(__file__).resolve().parents[2] / "server"


def _npm(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npm", *args],
        cwd=CLIENT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.timeout(900)
def test_vscode_client_builds_and_its_tests_pass() -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: the VS Code extension is not built")
    env = dict(os.environ)
    env["CODESIFT_PYTHON"] = sys.executable
    # The contract tests start `python -m codesift.cli serve`: this checkout's package.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SERVER_DIR), env.get("PYTHONPATH")) if p)
    steps = [("run", "build"), ("test",)]
    if not (CLIENT_DIR / "node_modules" / ".package-lock.json").is_file():
        steps.insert(0, ("ci", "--no-audit", "--no-fund"))
    for step in steps:
        result = _npm(*step, env=env)
        assert result.returncode == 0, (
            f"npm {' '.join(step)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )
    # The contract suites skip themselves when the server cannot start: here it must.
    summary = dict(
        line[2:].split(" ", 1) for line in result.stdout.splitlines() if line.startswith("# ")
    )
    assert summary.get("fail") == "0" and summary.get("skipped") == "0", result.stdout[-4000:]
    assert int(summary.get("pass", "0")) >= 40, result.stdout[-4000:]
