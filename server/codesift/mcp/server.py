"""The MCP server: the SDK's low-level server, one handler per tool.

`serve(root)` resolves the workspace (a bad --root fails before anything
starts), starts its live index (live.py), answers tools/list and tools/call
on stdio until the client closes stdin (or over streamable HTTP until
interrupted), then stops the index writer. Logs go to stderr or a file: stdout
is the MCP channel.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import apsw
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
)

from codesift import __version__
from codesift.engine import Workspace
from codesift.engine.exit_deadline import (
    EXIT_GRACE_SECONDS,
    end_without_stuck_threads,
    stop_on_signals,
)
from codesift.errors import CodesiftError
from codesift.mcp.errors import error_result
from codesift.mcp.handlers import HANDLERS
from codesift.mcp.live import LiveWorkspace
from codesift.mcp.tools import TOOL_NAMES, TOOLS

if TYPE_CHECKING:
    from codesift.local_socket_server import CliSocketStarter

__all__ = [
    "EXIT_GRACE_SECONDS",
    "INSTRUCTIONS",
    "build_server",
    "http_app",
    "parse_http_address",
    "serve",
]

log = logging.getLogger(__name__)

# After the server stops, the process gets this long to end (threads that are
# stuck in uninterruptible work do not keep it alive).


INSTRUCTIONS = (
    "codesift searches this workspace's code locally. Use `search` for names, signatures"
    " or questions in words, `symbols` to find definitions by name, `callers`/`callees`/"
    "`graph` to follow the code graph, `status` to see how complete the index is and"
    " `reindex` to rescan. Results cite path:line; files changed on disk are indexed"
    " before the next answer."
)


def build_server(
    live: LiveWorkspace, view: Callable[[Any], LiveWorkspace] | None = None
) -> Server[Any]:
    """The low-level server with codesift's tools (the schemas are written out in
    tools.py rather than derived from Python signatures: they are the contract).
    `view(request)`: the workspace as the caller of an HTTP request may read it
    (`codesift web` reads the shared index as the request's token's principal)."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=list(TOOLS))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        handler = HANDLERS.get(params.name)
        if handler is None:
            raise MCPError(
                INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {', '.join(TOOL_NAMES)}"
            )
        started = time.perf_counter()
        try:
            seen = live if view is None else view(ctx.request)
            result = await handler(seen, params.arguments)
        except (CodesiftError, apsw.Error) as exc:
            log.info("%s failed: %s", params.name, " ".join(str(exc).split()))
            return error_result(exc)
        except Exception as exc:  # a bug: one line for the agent, the traceback in the log
            log.exception("%s failed unexpectedly", params.name)
            return error_result(exc)
        log.info("%s answered in %.0f ms", params.name, (time.perf_counter() - started) * 1000)
        return result

    return Server(
        "codesift",
        version=__version__,
        title="codesift",
        description="Local code search: symbols, signatures, prose questions and the code graph.",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _log_to(log_file: str | None) -> None:
    """Logs to `log_file` instead of stderr (the CLI set up stderr already)."""
    if not log_file:
        return
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)


def _quiet_sdk() -> None:
    """The SDK logs every request at INFO: warnings only, unless debugging."""
    if logging.getLogger().level > logging.DEBUG:
        logging.getLogger("mcp").setLevel(logging.WARNING)


async def _serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def parse_http_address(raw: str) -> tuple[str, int]:
    """`HOST:PORT` (`127.0.0.1:8765`, `[::1]:8765`); CodesiftError for anything else."""
    host, _, port = raw.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CodesiftError(f"--http wants HOST:PORT, got {raw!r}")
    return host, int(port)


async def _serve_http(app: Any, host: str, port: int) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp under uvicorn (see `http_app`)."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def http_app(live: LiveWorkspace, host: str) -> tuple[Any, Callable[[], None]]:
    """The SDK's streamable HTTP app behind the HTTP servers' guard (codesift/serving):
    with tokens (`codesift token add`) every request needs one, and with a shared
    index it reads as the token's principal; without tokens the host must be
    loopback (ConfigError otherwise, before anything is served). Returns the app
    and what closes it."""
    from codesift.engine.shared_overlay import shared_dsn
    from codesift.engine.web_tokens import open_token_store
    from codesift.mcp.views import PrincipalViews
    from codesift.serving.guard import Guard
    from codesift.serving.listen import check_listen, is_loopback

    dsn = shared_dsn(live.workspace.settings)
    store = open_token_store(dsn)
    try:
        authenticated = store.configured()
        check_listen(
            host, authenticated, "codesift mcp --http", "add a token: codesift token add NAME"
        )
    except BaseException:
        store.close()
        raise
    readers = PrincipalViews(live, dsn, require_token=authenticated)
    server = build_server(live, view=readers.for_request)
    app = Guard(
        server.streamable_http_app(host=host),
        tokens=store if authenticated else None,
        loopback=is_loopback(host),
    )

    def close() -> None:
        readers.close()
        store.close()

    return app, close


def serve(
    root: str | Path | None = None,
    *,
    log_file: str | None = None,
    http: str | None = None,
    cli_socket: CliSocketStarter | None = None,
) -> int:
    """Serve the workspace at `root` (default: the nearest index, else the git work
    tree, else the current folder) on stdio until the client closes it, or over
    streamable HTTP at `http` (HOST:PORT) until interrupted. `cli_socket` (the
    CLI's) answers `codesift search` & co. on the index's local socket."""
    _log_to(log_file)
    _quiet_sdk()
    address = parse_http_address(http) if http else None
    workspace = Workspace.resolve(root)  # a bad --root or setting fails here, before serving
    live = LiveWorkspace(workspace, cli_socket=cli_socket)
    close: Callable[[], None] = lambda: None  # noqa: E731
    app: Any = None
    if address is not None:  # a refused address fails here, before serving
        app, close = http_app(live, address[0])
    live.start()
    try:
        if address is not None:
            # uvicorn stops on SIGTERM, then raises it again: end through `finally`
            # (the writer stopped) instead of dying at once.
            signal.signal(signal.SIGTERM, _exit_on_sigterm)
            log.info("codesift mcp: serving http://%s:%d/mcp", *address)
            anyio.run(_serve_http, app, *address)
        else:
            stop_on_signals(live.stop)  # its socket is removed first
            anyio.run(_serve_stdio, build_server(live))
    finally:
        close()
        live.stop()
        end_without_stuck_threads(EXIT_GRACE_SECONDS)
    return 0


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)
