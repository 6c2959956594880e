"""The loopback rule where the servers start: `codesift web`, `codesift mcp
--http` and `codesift serve --tcp` refuse an address others can reach unless
tokens exist (the language server: always), in one line, before serving."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from web_harness import WORKSPACE, make_workspace

from codesift.engine import Workspace
from codesift.engine.web_tokens import TokenFile
from codesift.errors import ConfigError
from codesift.mcp.live import LiveWorkspace
from codesift.mcp.server import http_app
from codesift.web.app import WebOptions, WebServer


def test_web_refuses_a_public_address_without_tokens(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    options = WebOptions(root=str(root), listen="0.0.0.0:0", tokens_file=tmp_path / "t.json")
    with pytest.raises(ConfigError, match=r"refuses to listen on 0\.0\.0\.0"):
        WebServer(options)
    TokenFile(tmp_path / "t.json").add("ana", "ana")
    web = WebServer(options)  # tokens: allowed (not started)
    try:
        assert web.tokens is not None
    finally:
        web.close()


def test_mcp_http_refuses_a_public_address_without_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESIFT_TOKENS", str(tmp_path / "t.json"))
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    live = LiveWorkspace(Workspace.resolve(str(root)), watch=False)
    with pytest.raises(ConfigError, match="codesift mcp --http refuses to listen on ::"):
        http_app(live, "::")
    _app, close = http_app(live, "127.0.0.1")
    close()
    TokenFile(tmp_path / "t.json").add("agent", "ana")
    _app, close = http_app(live, "0.0.0.0")
    close()


def test_serve_tcp_refuses_a_public_address(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "codesift.cli", "serve", "--tcp", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert "codesift serve --tcp refuses to listen on 0.0.0.0" in done.stderr
    assert "Traceback" not in done.stderr


def test_web_with_a_shared_index_needs_a_root(tmp_path: Path) -> None:
    """The folder is served to every token: never the one the server starts in."""
    options = WebOptions(db="postgresql://nobody@127.0.0.1:1/none", tokens_file=tmp_path / "t")
    with pytest.raises(ConfigError, match="name it with --root"):
        WebServer(options)
