"""The REST API: parse the request, ask the engine, answer its JSON.

Each endpoint takes the arguments of the MCP tool of the same name (a JSON
object for POST, the query string for GET) and answers that tool's structured
content: the one result vocabulary of `--json` and MCP (docs/mcp.md). The
MCP handlers are the calls into the engine, so the two front ends cannot drift.

    POST /api/search   search     POST /api/route    route
    GET  /api/symbols  symbols    POST /api/graph    graph (callers, callees, any kind)
    GET  /api/status   status     GET  /api/file     a file's lines around a result

Errors are the engine's taxonomy (codesift.errors): HTTP status by kind
(`HTTP_STATUS`), body `{"error": {"kind": ..., "message": ...}}`; a bug
answers 500 with one line and leaves its traceback in the log.

A repeated question (search, route, symbols, graph) is answered from the
AnswerCache (engine/answer_cache.py) while the indexes it reads are unchanged,
byte for byte as before (`x-codesift-cache: hit`); never one that reads the
shared index or a git-time window, nor while changes wait to be indexed.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread
import apsw
from mcp_types import CallToolResult, Tool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from codesift.engine.answer_cache import AnswerCache, State, question_key
from codesift.engine.shared_browse import shared_file
from codesift.engine.shared_connect import SharedIndexUnavailable
from codesift.engine.web_tokens import WebToken
from codesift.errors import CodesiftError, QueryError, error_kind, error_message
from codesift.mcp import render, tools
from codesift.mcp.handlers import HANDLERS
from codesift.mcp.live import LiveWorkspace
from codesift.mcp.views import Unauthenticated

__all__ = [
    "FILE_MAX_LINES",
    "HTTP_STATUS",
    "NotFound",
    "error_response",
    "json_answer",
    "routes_of",
]

log = logging.getLogger(__name__)

HTTP_STATUS = {
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "rate_limited": 429,
    "cancelled": 503,
    "unavailable": 503,
    "index_busy": 503,
    "not_indexed": 503,
    "timeout": 504,
    "disk_full": 507,
}
# /api/file answers at most this many lines.
FILE_MAX_LINES = 400
# ... of a file of at most this many bytes.
FILE_MAX_BYTES = 8 * 1024 * 1024

View = Callable[[Request], LiveWorkspace]
# The tools whose answers may be cached, and the arguments that keep one from it
# (a git-time window moves with the clock and the repository's history).
CACHED = frozenset({"search", "route", "symbols", "graph"})
TIMED = ("as_of", "since", "until")


class NotFound(CodesiftError):
    pass


def error_response(exc: BaseException) -> JSONResponse:
    if isinstance(exc, NotFound):
        kind = "not_found"
    elif isinstance(exc, Unauthenticated):
        kind = "unauthorized"
    elif isinstance(exc, SharedIndexUnavailable):
        kind = "unavailable"
    else:
        kind = error_kind(exc)
    message = error_message(exc)
    if kind == "internal":
        message = "unexpected failure (see the server log)"
    return JSONResponse(
        {"error": {"kind": kind, "message": message}}, status_code=HTTP_STATUS.get(kind, 500)
    )


def _encoded(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def json_answer(data: Any, cache: str | None = None) -> Response:
    """`data` as the JSON body; `cache` (hit, miss) says whether it was kept."""
    headers = {"cache-control": "no-store"}
    if cache is not None:
        headers["x-codesift-cache"] = cache
    body = data if isinstance(data, bytes) else _encoded(data)
    return Response(body, media_type="application/json", headers=headers)


async def _body(request: Request) -> dict[str, Any]:
    """The JSON object a POST carries; QueryError for anything else."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise QueryError("send the arguments as a JSON object (Content-Type: application/json)")
    raw = await request.body()
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise QueryError(f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise QueryError("the body must be a JSON object of the arguments")
    return data


def _query(tool: Tool, request: Request) -> dict[str, Any]:
    """A GET's query string as the tool's arguments, typed by its schema."""
    known: Mapping[str, Any] = tool.input_schema.get("properties", {})
    out: dict[str, Any] = {}
    for name in dict.fromkeys(request.query_params.keys()):
        values = request.query_params.getlist(name)
        kind = known.get(name, {}).get("type", "string")
        if kind == "array":
            out[name] = values
            continue
        value = values[-1]
        if kind == "integer":
            try:
                out[name] = int(value)
            except ValueError:
                raise QueryError(f"{name} must be an integer, got {value!r}") from None
        elif kind == "boolean":
            out[name] = value.lower() in ("1", "true", "yes", "on")
        else:
            out[name] = value
    return out


def _structured(result: CallToolResult) -> Any:
    return result.structured_content


async def _answer(work: Callable[[], Awaitable[Any]], what: str) -> Response:
    started = time.perf_counter()
    try:
        data = await work()
    except (CodesiftError, apsw.Error) as exc:
        log.info("%s failed: %s", what, error_message(exc))
        return error_response(exc)
    except Exception as exc:  # a bug: one line for the caller, the traceback in the log
        log.exception("%s failed unexpectedly", what)
        return error_response(exc)
    log.debug("%s answered in %.1f ms", what, (time.perf_counter() - started) * 1000)
    return data if isinstance(data, Response) else json_answer(data)


def _cache_state(
    cache: AnswerCache | None, live: LiveWorkspace, arguments: Mapping[str, Any]
) -> State | None:
    """The state a cached answer is valid in (None: not to be cached): the
    served folders' and their collections' indexes, and the index record."""
    if cache is None or not cache.enabled or live.shared is not None:
        return None
    if any(arguments.get(name) is not None for name in TIMED):
        return None
    indexes = [*live.folders, *(index for _, index in live.mounted())]
    return cache.state(indexes, live.index_state())


async def _ask(
    name: str,
    request: Request,
    arguments: dict[str, Any],
    view: View,
    cache: AnswerCache | None,
) -> Any:
    """The tool's structured answer; from the cache (or kept in it) when it may be."""
    live = view(request)
    handler = HANDLERS[name]
    state = _cache_state(cache, live, arguments) if name in CACHED else None
    if cache is None or state is None:
        with render.structured_only():
            return _structured(await handler(live, arguments))
    token = request.scope.get("codesift.token")
    key = question_key(name, token.principal if isinstance(token, WebToken) else None, arguments)
    kept = cache.get(key, state)
    if kept is not None:
        return json_answer(kept, "hit")
    with render.structured_only():
        body = _encoded(_structured(await handler(live, arguments)))
    # Kept only when nothing changed while it was answered.
    if _cache_state(cache, live, arguments) == state:
        cache.put(key, state, body)
    return json_answer(body, "miss")


def _tool_post(
    name: str, view: View, cache: AnswerCache | None
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        async def work() -> Any:
            return await _ask(name, request, await _body(request), view, cache)

        return await _answer(work, f"POST /api/{name}")

    return endpoint


def _tool_get(
    name: str, tool: Tool, view: View, cache: AnswerCache | None
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        async def work() -> Any:
            return await _ask(name, request, _query(tool, request), view, cache)

        return await _answer(work, f"GET /api/{name}")

    return endpoint


def read_lines(root: Path, raw: str, line: int, context: int) -> dict[str, Any]:
    """Lines `line - context` .. `line + context` of the file `raw` (relative to
    `root`); NotFound, with one message for every reason (outside the root,
    hidden or in .git, a symlink leading out, missing, not a file, too big), so
    that the answer tells nothing of what exists outside."""
    gone = NotFound(f"no file {raw!r} in the index")
    if not raw or "\x00" in raw or raw.startswith(("/", "\\")) or len(raw) > 4096:
        raise gone
    parts = Path(raw).parts
    if any(part == ".." or part.startswith(".") for part in parts):
        raise gone
    base = root.resolve()
    try:
        found = (base / raw).resolve(strict=True)
    except (OSError, RuntimeError):
        raise gone from None
    if not found.is_relative_to(base) or not found.is_file():
        raise gone
    if any(part.startswith(".") for part in found.relative_to(base).parts):
        raise gone
    if found.stat().st_size > FILE_MAX_BYTES:
        raise gone
    text = found.read_bytes().decode("utf-8", errors="replace").splitlines()
    line = min(line, max(1, len(text)))
    context = max(0, min(context, FILE_MAX_LINES // 2))
    first = max(1, line - context)
    last = min(len(text), max(first, line + context))
    return {
        "path": found.relative_to(base).as_posix(),
        "start_line": first,
        "end_line": last,
        "total_lines": len(text),
        "lines": text[first - 1 : last],
    }


def _shared_lines(live: LiveWorkspace, key: str, raw: str, line: int, context: int) -> Any:
    """A shared repository's file as its index keeps it (engine/shared_browse.py),
    read as the request's principal; NotFound for a repository it may not read,
    a missing one, or a missing file alike."""
    gone = NotFound(f"no file {raw!r} in the index")
    shared = live.shared
    if shared is None or not raw or len(raw) > 4096 or "\x00" in raw or len(key) > 500:
        raise gone
    exclude = set(live.repo_keys().values())
    found, status = shared_file(shared, key, raw, line, context, exclude)
    if found is None:
        if status.state != "ok":
            raise SharedIndexUnavailable(status.message)
        raise gone
    return found


def _file(view: View) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        async def work() -> Any:
            params = request.query_params
            try:
                line = int(params.get("line", "1"))
                context = int(params.get("context", "20"))
            except ValueError:
                raise QueryError("line and context must be integers") from None
            if line < 1 or context < 0:
                raise QueryError("line must be 1 or more and context 0 or more")
            context = min(context, FILE_MAX_LINES // 2)
            live = view(request)
            raw = params.get("path", "")
            served = {folder.name: folder for folder in live.folders}
            repo, root = params.get("repo"), params.get("root")
            if repo and repo not in served:  # a shared repository's file
                return await anyio.to_thread.run_sync(_shared_lines, live, repo, raw, line, context)
            name = root or repo
            if name is not None and name not in served:
                raise NotFound(f"no file {raw!r} in the index")
            folder = served[name] if name is not None else live.folder
            found = await anyio.to_thread.run_sync(read_lines, folder.root, raw, line, context)
            return {**found, "root": folder.name}

        return await _answer(work, "GET /api/file")

    return endpoint


def routes_of(
    view: View, cache: AnswerCache | None = None
) -> list[tuple[str, str, Callable[[Request], Awaitable[Response]]]]:
    """(method, path, endpoint) of every API route; `cache` keeps repeated answers."""
    return [
        ("POST", "/api/search", _tool_post("search", view, cache)),
        ("POST", "/api/route", _tool_post("route", view, cache)),
        ("GET", "/api/symbols", _tool_get("symbols", tools.SYMBOLS, view, cache)),
        ("POST", "/api/graph", _tool_post("graph", view, cache)),
        ("GET", "/api/status", _tool_get("status", tools.STATUS, view, cache)),
        ("GET", "/api/file", _file(view)),
    ]
