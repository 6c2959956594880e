"""A synchronous MCP client for tests: the SDK's own ClientSession over stdio
(mcp.client.stdio), on an event loop thread, talking to `codesift mcp` in a
subprocess.

    with McpSession(root, log_file=log) as mcp:
        mcp.list_tools()
        mcp.call("search", {"query": "retry"})   # -> CallToolResult

Also: temporary git workspaces, the `codesift` CLI as a subprocess, and `poll`
(a deadline that is the failure, never a speed limit).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, TypeVar

import mcp_types as types

import codesift
from mcp import ClientSession, StdioServerParameters, stdio_client

# The language server's test harness: workspaces, the server's environment, polling.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lsp"))
import harness as lsp_harness
from harness import BILLING_PY, README_MD, REPORTS_PY, git, make_workspace

SERVER_DIR = Path(codesift.__file__).resolve().parent.parent
DEADLINE = 90.0

T = TypeVar("T")


def poll(
    fetch: Callable[[], T],
    check: Callable[[T], bool],
    what: str,
    timeout: float = DEADLINE,
    interval: float = 0.1,
) -> T:
    """`harness.poll` with this harness's deadline: the deadline passing is the
    failure (naming `what` and the last value seen)."""
    return lsp_harness.poll(fetch, check, what, timeout, interval)


def server_env() -> dict[str, str]:
    """The language server tests' environment, without forced terminal colours."""
    env = lsp_harness.server_env()
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "CLICOLOR_FORCE"):
        env.pop(name, None)
    return env


__all__ = [
    "BILLING_PY",
    "DEADLINE",
    "README_MD",
    "REPORTS_PY",
    "McpSession",
    "cli",
    "git",
    "make_workspace",
    "poll",
    "server_env",
]


def cli(root: Path, *args: str) -> Any:
    """`codesift ARGS` in `root`; its JSON output when --json is given."""
    result = subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=root,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if "--json" in args else None


class McpSession:
    """`codesift mcp --root ROOT` with the SDK's ClientSession, used synchronously."""

    def __init__(self, root: Path, *, log_file: Path) -> None:
        self.root = root
        self.log_file = log_file
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._session: ClientSession | None = None
        self._stop: asyncio.Event | None = None
        self._main: Any = None
        self._errlog: IO[str] | None = None
        self.initialized: types.InitializeResult | None = None

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float = DEADLINE) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _serve(self, ready: Future[None]) -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                *("-m", "codesift.cli", "mcp"),
                *("--root", str(self.root), "--log-file", str(self.log_file)),
            ],
            env=server_env(),
            cwd=str(self.root),
        )
        self._stop = asyncio.Event()
        try:
            errlog = self._errlog or sys.stderr
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                self.initialized = await session.initialize()
                self._session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def start(self) -> None:
        self._thread.start()
        self._errlog = self.log_file.with_suffix(".stderr").open("w", encoding="utf-8")
        ready: Future[None] = Future()

        def launch() -> None:
            self._main = self.loop.create_task(self._serve(ready))

        self.loop.call_soon_threadsafe(launch)
        ready.result(DEADLINE)

    def close(self) -> None:
        """Close stdin (the server then stops) and wait for the client to finish."""
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        if self._main is not None:
            main = self._main

            async def finished() -> None:
                await asyncio.wait_for(asyncio.shield(main), DEADLINE)

            with contextlib.suppress(Exception):
                self._run(finished(), DEADLINE + 5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if self._errlog is not None:
            self._errlog.close()

    def __enter__(self) -> McpSession:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def session(self) -> ClientSession:
        assert self._session is not None, "the session is not started"
        return self._session

    def list_tools(self) -> list[types.Tool]:
        return self._run(self.session.list_tools()).tools

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        result = self._run(self.session.call_tool(name, arguments or {}))
        assert isinstance(result, types.CallToolResult)
        return result

    def data(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The structured content of a call that must succeed."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def text(self, result: types.CallToolResult) -> str:
        return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))

    def server_log(self) -> str:
        parts = []
        for path in (self.log_file, self.log_file.with_suffix(".stderr")):
            if path.exists():
                parts.append(path.read_text(encoding="utf-8", errors="replace"))
        return "\n".join(parts)
