"""A second, independent LSP client: Neovim's built-in client, headless, starts
`codesift serve` and asks for workspace symbols, hover and incoming calls."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import server_env

SCRIPT = Path(__file__).parent / "nvim" / "lsp_check.lua"


@pytest.fixture
def nvim() -> str:
    """Neovim's path; without it the test skips, except under CI (.ci/run installs it)."""
    found = shutil.which("nvim")
    if found is None:
        reason = "Neovim is not installed (Debian: apt-get install neovim)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"{reason}; CI is set, so this test must run", pytrace=False)
        pytest.skip(reason)
    return found


def test_neovim_client(nvim: str, workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    log = tmp_path / "server.log"
    env = server_env()
    env.update(
        CODESIFT_WS=str(workspace),
        CODESIFT_PYTHON=sys.executable,
        CODESIFT_OUT=str(out),
        CODESIFT_LOG=str(log),
        HOME=str(tmp_path),  # no user config or state
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-c", f"luafile {SCRIPT}"],
        env=env,
        check=False,
        timeout=120,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    server_log = log.read_text() if log.exists() else "(no server log)"
    assert run.returncode == 0 and out.exists(), (run.returncode, run.stderr, server_log)
    results = json.loads(out.read_text())
    assert "error" not in results, (results, server_log)
    assert results["initialized"] and results["ready"]
    assert results["symbols"][0]["name"] == "retry_failed_charge"
    assert results["symbols"][0]["uri"] == (workspace / "billing.py").as_uri()
    assert "def submit(amount)" in results["hover"] and "called by 2" in results["hover"]
    assert results["prepared"] == ["retry_failed_charge"]
    assert sorted(results["incoming"]) == ["monthly_report", "record"]
    assert results["stopped"]
