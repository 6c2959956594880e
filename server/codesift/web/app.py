"""`codesift web`: the REST API, the /search console and MCP at /mcp, one server.

    app = build_app(live, tokens=store, host="127.0.0.1")   # an ASGI app
    serve(WebOptions(root=".", listen="127.0.0.1:8731"))    # uvicorn until interrupted

The MCP SDK's streamable HTTP app is the base (its lifespan runs the MCP
sessions); the API (api.py), the sign-in and the console's files are its
other routes; the Guard (codesift/serving/guard.py) is in front of all of them. With a shared
index (`--db`, or `index.backend = "postgres"` in the settings), each request
reads it as its token's principal (mcp/views.py).
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from codesift.engine import Workspace
from codesift.engine.answer_cache import DEFAULT_ENTRIES, AnswerCache
from codesift.engine.shared_overlay import SharedIndex, shared_dsn
from codesift.engine.web_tokens import TokenStore, WebToken, open_token_store
from codesift.errors import ConfigError
from codesift.mcp.live import LiveWorkspace
from codesift.mcp.views import PrincipalViews
from codesift.serving.guard import COOKIE_NAME, Guard, Limits
from codesift.serving.listen import (
    DEFAULT_WEB_LISTEN,
    check_listen,
    is_loopback,
    parse_address,
)
from codesift.web import api
from codesift.web.openapi import openapi_document

if TYPE_CHECKING:
    from codesift.local_socket_server import CliSocketStarter

__all__ = ["DEFAULT_LISTEN", "WebOptions", "WebServer", "build_app", "serve"]

log = logging.getLogger(__name__)

DEFAULT_LISTEN = DEFAULT_WEB_LISTEN
_STATIC = {
    "search.html": "text/html; charset=utf-8",
    "search.js": "text/javascript; charset=utf-8",
    "search.css": "text/css; charset=utf-8",
}
# The console's pages may load only their own files and talk only to this server.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
    " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def _static(name: str) -> bytes:
    return (resources.files("codesift.web") / "static" / name).read_bytes()


def _console_routes(auth: bool, tokens: TokenStore | None) -> list[Route]:
    files = {name: _static(name) for name in _STATIC}

    async def page(request: Request) -> Response:
        return Response(
            files["search.html"],
            media_type=_STATIC["search.html"],
            headers={"content-security-policy": _CSP, "cache-control": "no-store"},
        )

    def asset(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return Response(
                files[name],
                media_type=_STATIC[name],
                headers={"x-content-type-options": "nosniff", "cache-control": "no-cache"},
            )

        return endpoint

    async def home(request: Request) -> Response:
        return RedirectResponse("/search", status_code=302)

    async def sign_in(request: Request) -> Response:
        """POST {"token": "..."}: the token checked, then kept in an HttpOnly,
        SameSite=Strict cookie; DELETE: the cookie cleared."""
        secure = request.url.scheme == "https" or (
            request.headers.get("x-forwarded-proto", "").lower() == "https"
        )
        if request.method == "DELETE":
            answer = JSONResponse({"signed_in": False})
            answer.delete_cookie(
                COOKIE_NAME, path="/", httponly=True, samesite="strict", secure=secure
            )
            return answer
        try:
            body = await request.json()
            secret = body["token"] if isinstance(body, dict) else None
        except Exception:
            secret = None
        if not isinstance(secret, str) or not secret or len(secret) > 256 or tokens is None:
            return JSONResponse(
                {"error": {"kind": "unauthorized", "message": "unauthorized"}}, status_code=401
            )
        store = tokens
        try:
            token = await anyio.to_thread.run_sync(store.lookup, secret)
        except Exception as exc:
            log.warning("cannot check a token: %s", " ".join(str(exc).split()))
            token = None
        if token is None:
            return JSONResponse(
                {"error": {"kind": "unauthorized", "message": "unauthorized"}}, status_code=401
            )
        answer = JSONResponse({"signed_in": True, "name": token.name})
        answer.set_cookie(
            COOKIE_NAME, secret, path="/", httponly=True, samesite="strict", secure=secure
        )
        return answer

    async def whoami(request: Request) -> Response:
        token = request.scope.get("codesift.token")
        return JSONResponse(
            {
                "auth": auth,
                "name": token.name if isinstance(token, WebToken) else None,
                "principal": token.principal if isinstance(token, WebToken) else None,
            }
        )

    async def document(request: Request) -> Response:
        return JSONResponse(openapi_document())

    return [
        Route("/", home, methods=["GET"]),
        Route("/search", page, methods=["GET"]),
        *(Route(f"/static/{name}", asset(name), methods=["GET"]) for name in _STATIC),
        Route("/api/session", sign_in, methods=["POST", "DELETE"]),
        Route("/api/whoami", whoami, methods=["GET"]),
        Route("/api/openapi.json", document, methods=["GET"]),
    ]


def build_app(
    live: LiveWorkspace,
    *,
    tokens: TokenStore | None,
    host: str,
    readers: PrincipalViews | None = None,
    limits: Limits | None = None,
    allowed_hosts: frozenset[str] = frozenset(),
    cors_origins: frozenset[str] = frozenset(),
    cache: AnswerCache | None = None,
) -> Guard:
    """The whole server as one ASGI app. `tokens` None: no authentication (only
    for a loopback listener: see codesift/serving/listen.py); `cache`: repeated
    questions' answers (engine/answer_cache.py), None to keep none."""
    from mcp.server.transport_security import TransportSecuritySettings

    from codesift.mcp.server import build_server

    readers = readers or PrincipalViews(live, None, require_token=tokens is not None)
    limits = limits or Limits()
    server = build_server(live, view=readers.for_request)
    routes = [
        Route(path, endpoint, methods=[method])
        for method, path, endpoint in api.routes_of(readers.for_request, cache)
    ]
    routes.extend(_console_routes(tokens is not None, tokens))
    # The Guard checks hosts and origins for every route; the SDK's own check of
    # them knows only loopback names and would refuse a server behind a proxy.
    app = server.streamable_http_app(
        host=host,
        custom_starlette_routes=routes,
        max_request_body_size=limits.max_mcp_body,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return Guard(
        app,
        tokens=tokens,
        loopback=is_loopback(host),
        allowed_hosts=allowed_hosts,
        cors_origins=cors_origins,
        limits=limits,
    )


@dataclass(frozen=True, slots=True)
class WebOptions:
    """`root`: the folder served (None: found from the current folder); `roots`:
    more folders served beside it."""

    root: str | None = None
    roots: tuple[str, ...] = ()
    db: str | None = None
    listen: str = DEFAULT_LISTEN
    config: dict[str, Any] | None = None
    tokens_file: Path | None = None
    allowed_hosts: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    log_file: str | None = None
    # How many repeated questions' answers are kept (0: none).
    answer_cache: int = DEFAULT_ENTRIES


class WebServer:
    """Everything `serve` runs, resolved and checked (ConfigError, one line,
    before anything starts: a bad address, a refused one (serving/listen.py), a bad
    root, an unreadable token store); `start` starts indexing, `server` is the
    uvicorn server to run, `close` stops it all."""

    def __init__(self, options: WebOptions, cli_socket: CliSocketStarter | None = None) -> None:
        self.host, self.port = parse_address(options.listen, "--listen")
        if options.db is not None and options.root is None:
            # The folder is served to every token: never one picked from where the
            # server happens to start.
            raise ConfigError(
                "codesift web --db also serves a local folder to every token: name it"
                " with --root (an empty folder serves the shared index alone)"
            )
        workspace = Workspace.resolve(options.root)
        more = [Workspace.resolve(root) for root in options.roots]
        if options.config:
            workspace = Workspace.at(workspace.root, options.config)
            more = [Workspace.at(ws.root, options.config) for ws in more]
        seen = {workspace.root}
        unique: list[Workspace] = []
        for ws in more:  # a folder named twice is served once
            if ws.root not in seen:
                seen.add(ws.root)
                unique.append(ws)
        more = unique
        self.dsn = options.db or shared_dsn(workspace.settings)
        self.store = open_token_store(self.dsn, options.tokens_file)
        try:
            authenticated = self.store.configured()
            check_listen(
                self.host,
                authenticated,
                "codesift web",
                "add a token: codesift token add NAME --principal P"
                + (" --db DSN" if self.dsn else ""),
            )
        except BaseException:
            self.store.close()
            raise
        self.tokens = self.store if authenticated else None
        # `codesift search` & co. on the folder ask this server (the CLI's handler).
        self.live = LiveWorkspace(
            workspace, more=more, cli_socket=cli_socket, command="codesift web"
        )
        if options.db is not None:  # --db: the shared index besides the local one
            if self.live.shared is not None:
                self.live.shared.close()
            self.live.shared = SharedIndex(
                options.db, settings=workspace.settings.search, embedder=self.live.query_embedder
            )
        self.readers = PrincipalViews(self.live, self.dsn, require_token=self.tokens is not None)
        self.cache = AnswerCache(options.answer_cache)
        self.app = build_app(
            self.live,
            tokens=self.tokens,
            host=self.host,
            readers=self.readers,
            limits=options.limits,
            allowed_hosts=frozenset(options.allowed_hosts),
            cors_origins=frozenset(options.cors_origins),
            cache=self.cache,
        )

    def start(self) -> None:
        self.live.start()

    def server(self) -> Any:
        import uvicorn

        config = uvicorn.Config(
            self.app,
            host=self.host,
            port=self.port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=5,
        )
        return uvicorn.Server(config)

    def describe(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        who = (
            f"tokens: {self.store.describe()}"
            if self.tokens is not None
            else "no authentication: loopback only"
        )
        return f"http://{shown}:{self.port}/search ({who})"

    def close(self) -> None:
        self.cache.close()
        self.readers.close()
        self.live.stop()
        self.store.close()


def serve(
    options: WebOptions,
    announce: Callable[[str], None] | None = None,
    cli_socket: CliSocketStarter | None = None,
) -> int:
    """Serve until interrupted (SIGINT, SIGTERM); see WebServer. `announce` hears
    one line: where the console is, and whether tokens are needed."""
    from codesift.engine.exit_deadline import EXIT_GRACE_SECONDS, end_without_stuck_threads

    web = WebServer(options, cli_socket)
    server = web.server()
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    (announce or log.warning)(f"codesift web: {web.describe()}")
    web.start()
    try:
        server.run()
    finally:
        web.close()
        end_without_stuck_threads(EXIT_GRACE_SECONDS)
    return 0


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)
