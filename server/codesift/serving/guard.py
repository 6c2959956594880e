"""The guard in front of every HTTP route: who is asking, and how much.

An ASGI middleware, in this order, for every HTTP request:

1. the URL's query string is at most `Limits.max_query` bytes (414);
2. on a loopback listener the Host header names a loopback host (or one given
   with `--allow-host`): a page on another site that rebinds its DNS name to
   127.0.0.1 gets 403 instead of the code (DNS rebinding);
3. a request that changes state (any method but GET, HEAD, OPTIONS) whose
   Origin header names another host than the request's Host (or one given with
   `--allow-host`) gets 403 (cross-site requests);
4. with authentication on (any token exists), every route but the console's
   static files, the OpenAPI document and the sign-in needs a token: an
   `Authorization: Bearer` header or the console's HttpOnly cookie. A missing,
   unknown or revoked token gets 401 with no detail (503 while the token store
   cannot be read: a shared index that is down);
5. each token (each client address for the sign-in) may make `Limits.rate`
   requests a second on average, `Limits.burst` at once (429, Retry-After);
6. the body is at most `Limits.max_body` bytes (`max_mcp_body` for /mcp): 413,
   also for a chunked body that grows past it;
7. an API request that takes longer than `Limits.timeout` seconds is cancelled
   (504).

The token a request carries is put in the ASGI scope as `codesift.token`
(a WebToken, or None with authentication off). No CORS headers are sent
unless `--cors-origin ORIGIN` names the page's origin: then its requests to
/api/ (and their preflights) get `Access-Control-Allow-Origin` for it, never
`Allow-Credentials` (such a page sends a bearer token, not the cookie).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread

from codesift.engine.web_tokens import TokenStore, WebToken
from codesift.serving.listen import LOOPBACK_NAMES

__all__ = [
    "COOKIE_NAME",
    "PUBLIC_PATHS",
    "Guard",
    "Limits",
    "RateLimiter",
    "bearer_secret",
]

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE_NAME = "codesift_token"
# Served to anyone: they hold no code (the console's page asks the API for it).
PUBLIC_PATHS = frozenset({"/", "/search", "/favicon.ico", "/api/openapi.json", "/api/session"})
PUBLIC_PREFIXES = ("/static/",)
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class _StoreDown(Exception):
    """The token store could not be read."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_body: int = 256 * 1024
    max_mcp_body: int = 4 * 1024 * 1024
    max_query: int = 8 * 1024
    rate: float = 20.0
    burst: int = 60
    timeout: float = 30.0


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float


@dataclass(slots=True)
class RateLimiter:
    """Token buckets, one per key: `rate` a second, `burst` at most."""

    rate: float
    burst: int
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, key: str) -> float:
        """0 when `key` may go on, else the seconds until it may."""
        now = self.clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) > 10_000:  # many addresses: forget the full ones
                    self._buckets = {
                        k: b for k, b in self._buckets.items() if b.tokens < self.burst - 1
                    }
                bucket = self._buckets[key] = _Bucket(float(self.burst), now)
            bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def bearer_secret(scope: Scope) -> str | None:
    """The token a request carries: `Authorization: Bearer ...`, else the cookie."""
    auth = _header(scope, b"authorization")
    if auth is not None:
        scheme, _, secret = auth.strip().partition(" ")
        return secret.strip() if scheme.lower() == "bearer" and secret.strip() else None
    cookies = _header(scope, b"cookie")
    if cookies:
        from starlette.requests import cookie_parser

        value = cookie_parser(cookies).get(COOKIE_NAME, "").strip()
        return value or None
    return None


def _host_name(host: str) -> str:
    """`127.0.0.1:8765` -> `127.0.0.1`; `[::1]:8765` -> `::1`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


async def _reply(send: Send, status: int, kind: str, message: str, **headers: str) -> None:
    body = json.dumps({"error": {"kind": kind, "message": message}}).encode()
    raw = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *((k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _preflight(send: Send, origin: str) -> None:
    """The answer to a CORS preflight from an origin `--cors-origin` names."""
    headers = [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-allow-methods", b"GET, POST"),
        (b"access-control-allow-headers", b"authorization, content-type"),
        (b"access-control-max-age", b"600"),
        (b"vary", b"Origin"),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _with_cors(send: Send, origin: str) -> Send:
    """`send` adding the CORS headers that let `origin` read the answer (never
    credentials: a page of another origin sends a bearer token, not the cookie)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            headers.append((b"access-control-allow-origin", origin.encode("latin-1")))
            headers.append((b"vary", b"Origin"))
            message = {**message, "headers": headers}
        await send(message)

    return sending


class Guard:
    """The middleware (see the module docstring). `tokens` None: no authentication."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        tokens: TokenStore | None,
        loopback: bool,
        allowed_hosts: frozenset[str] = frozenset(),
        cors_origins: frozenset[str] = frozenset(),
        limits: Limits | None = None,
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.loopback = loopback
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts)
        self.cors_origins = frozenset(o.strip().lower().rstrip("/") for o in cors_origins)
        self.limits = limits or Limits()
        self.rates = RateLimiter(self.limits.rate, self.limits.burst)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if len(scope.get("query_string", b"")) > self.limits.max_query:
            await _reply(send, 414, "bad_request", "the query string is too long")
            return
        host = _header(scope, b"host") or ""
        if self.loopback and not self._host_allowed(host):
            await _reply(send, 403, "forbidden", "this server answers to loopback hosts only")
            return
        method: str = scope.get("method", "GET")
        cors = self._cors_origin(scope, path)
        if cors is not None and method == "OPTIONS":
            await _preflight(send, cors)
            return
        if cors is not None:
            send = _with_cors(send, cors)
        elif method not in _SAFE_METHODS and not self._origin_allowed(scope, host):
            await _reply(send, 403, "forbidden", "cross-origin request refused")
            return
        public = path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)
        token: WebToken | None = None
        if self.tokens is not None and not public:
            try:
                token = await self._authenticate(scope)
            except _StoreDown:  # nobody gets in, and the client may try again later
                await _reply(send, 503, "unavailable", "tokens cannot be checked now")
                return
            if token is None:
                await _reply(send, 401, "unauthorized", "unauthorized", www_authenticate="Bearer")
                return
        scope["codesift.token"] = token
        key = f"token:{token.name}" if token is not None else None
        if key is None and path == "/api/session":
            client = scope.get("client") or ("?", 0)
            key = f"client:{client[0]}"
        if key is not None:
            wait = self.rates.take(key)
            if wait > 0:
                retry = str(max(1, math.ceil(wait)))
                await _reply(send, 429, "rate_limited", "too many requests", retry_after=retry)
                return
        await self._limited(scope, receive, send, path)

    def _cors_origin(self, scope: Scope, path: str) -> str | None:
        """The request's Origin when it is one `--cors-origin` names and the path
        is the API's; else None (no CORS headers at all)."""
        origin = _header(scope, b"origin")
        if origin is None or not path.startswith("/api/"):
            return None
        origin = origin.strip()
        return origin if origin.lower().rstrip("/") in self.cors_origins else None

    def _host_allowed(self, host: str) -> bool:
        name = _host_name(host)
        return name in LOOPBACK_NAMES or name in self.allowed_hosts or host in self.allowed_hosts

    def _origin_allowed(self, scope: Scope, host: str) -> bool:
        """No Origin (curl, an agent), or this server's own: the Host it was asked
        by, or a host given with --allow-host (a proxy's public name)."""
        origin = _header(scope, b"origin")
        if origin is None:
            return True
        scheme, _, netloc = origin.strip().lower().partition("://")
        if scheme not in ("http", "https") or not netloc:
            return False
        if netloc == host.strip().lower():
            return True
        return _host_name(netloc) in self.allowed_hosts or netloc in self.allowed_hosts

    async def _authenticate(self, scope: Scope) -> WebToken | None:
        secret = bearer_secret(scope)
        if secret is None or self.tokens is None:
            return None
        store = self.tokens
        try:
            return await anyio.to_thread.run_sync(store.lookup, secret)
        except Exception as exc:  # the token store cannot be read (a database down)
            log.warning("cannot check a token: %s", " ".join(str(exc).split()))
            raise _StoreDown from None

    async def _limited(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        """The body limit and the time limit. /mcp's body is limited by the MCP
        SDK (given `max_mcp_body`); an API request's body is read here, at most
        `max_body` bytes, and handed on whole."""
        limit = self.limits.max_mcp_body if path.startswith("/mcp") else self.limits.max_body
        length = _header(scope, b"content-length")
        if length is not None and (not length.strip().isdigit() or int(length) > limit):
            await _reply(send, 413, "bad_request", f"the body is larger than {limit} bytes")
            return
        if not path.startswith("/api/"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = bytes(message.get("body", b""))
            seen += len(chunk)
            if seen > limit:
                await _reply(send, 413, "bad_request", f"the body is larger than {limit} bytes")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # waits for the disconnect

        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            with anyio.fail_after(self.limits.timeout):
                await self.app(scope, replay, watched)
        except TimeoutError:
            log.warning("%s took longer than %.0f s: cancelled", path, self.limits.timeout)
            if not started:
                await _reply(send, 504, "timeout", "the request took too long")
