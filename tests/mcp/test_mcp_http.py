"""`codesift mcp --http HOST:PORT`: the same tools over the SDK's streamable HTTP
transport, with the SDK's own client; SIGTERM ends the server cleanly."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.streamable_http import streamable_http_client
from mcp_harness import DEADLINE, make_workspace, server_env

from mcp import ClientSession

FILES = {
    "billing.py": "def retry_failed_charge(amount):\n    return submit(amount)\n\n\n"
    "def submit(amount):\n    return amount > 0\n",
    ".codesift.toml": "[embedding]\nenabled = false\n",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def calls(url: str) -> list[types.CallToolResult]:
    """Connect (the server may still be starting: retried until the deadline) and
    make two calls: a search and a bad one."""
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                results: list[Any] = [
                    await session.call_tool("search", {"query": "retry_failed_charge"}),
                    await session.call_tool("search", {"query": "charge", "top_k": 0}),
                ]
                return results
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


def test_http_transport(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", FILES)
    port = free_port()
    log = tmp_path / "mcp.log"
    args = ["mcp", "--root", str(root), "--http", f"127.0.0.1:{port}", "--log-file", str(log)]
    process = subprocess.Popen(
        [sys.executable, "-m", "codesift.cli", *args],
        # No tokens (a developer's own token file would turn authentication on).
        env={**server_env(), "CODESIFT_TOKENS": str(tmp_path / "no-tokens.json")},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        found, bad = asyncio.run(calls(f"http://127.0.0.1:{port}/mcp"))
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=DEADLINE)
    assert not found.is_error
    assert isinstance(found.structured_content, dict)
    assert found.structured_content["results"][0]["cite"] == "billing.py:1-2"
    assert bad.is_error
    message = "bad argument: top_k must be between 1 and 200, got 0"
    assert bad.structured_content == {"error": {"kind": "bad_request", "message": message}}
    assert process.returncode == 0, err.decode()
    assert out == b""
    assert "Traceback" not in log.read_text(), log.read_text()


def test_http_transport_with_tokens(tmp_path: Path) -> None:
    """With a token in the token file, `codesift mcp --http` asks every request
    for one (the guard of codesift web): none or a wrong one gets 401; the SDK's
    client with the bearer header gets its tools."""
    import httpx

    from codesift.engine.web_tokens import TokenFile

    root = make_workspace(tmp_path / "ws", FILES)
    tokens = TokenFile(tmp_path / "tokens.json")
    secret = tokens.add("agent", "ana")
    port = free_port()
    args = ["mcp", "--root", str(root), "--http", f"127.0.0.1:{port}"]
    process = subprocess.Popen(
        [sys.executable, "-m", "codesift.cli", *args],
        env={**server_env(), "CODESIFT_TOKENS": str(tokens.path)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"

    async def call(headers: dict[str, str]) -> Any:
        async with (
            httpx.AsyncClient(headers=headers, timeout=DEADLINE) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("search", {"query": "retry_failed_charge"})

    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"accept": "application/json, text/event-stream"}
    try:
        deadline = time.monotonic() + DEADLINE
        while True:  # the server may still be starting
            try:
                refused = httpx.post(url, json=hello, headers=accept)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert refused.status_code == 401
        wrong = httpx.post(url, json=hello, headers={**accept, "authorization": "Bearer csk_x"})
        assert wrong.status_code == 401
        found = asyncio.run(call({"authorization": f"Bearer {secret}"}))
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=DEADLINE)
    assert not found.is_error
    assert found.structured_content["results"][0]["cite"] == "billing.py:1-2"
    assert process.returncode == 0, err.decode()
