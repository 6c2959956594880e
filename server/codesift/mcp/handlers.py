"""One handler per tool: read the arguments, call the engine, render the result.

Each is `(live, arguments) -> CallToolResult`; a codesift error raised here
becomes a tool error in server.py (errors.py maps it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from mcp_types import CallToolResult, Tool

from codesift.engine import GraphQuery, GraphResult, IndexStatus, check_graph_query
from codesift.engine.conductor import TESTS_CHOICES, conduct
from codesift.engine.live import Cancellation
from codesift.engine.live_collections import live_route
from codesift.engine.live_search import LiveFolders, LiveSearch
from codesift.engine.results import SearchResponse
from codesift.engine.route import check_route
from codesift.engine.symbols import MAX_SYMBOLS
from codesift.engine.unscoped import live_route_with_shared
from codesift.errors import QueryError
from codesift.front_defaults import GRAPH_MAX_NODES, NEIGHBOURS_MAX_NODES, SYMBOLS_LIMIT
from codesift.mcp import render, tools
from codesift.mcp.arguments import Arguments
from codesift.mcp.live import LiveWorkspace
from codesift.timespec import TimeFilter

__all__ = ["HANDLERS", "REINDEX_WAIT_SECONDS"]

# `reindex` with wait answers after at most this long (the rescan goes on).
REINDEX_WAIT_SECONDS = 600.0

Handler = Callable[[LiveWorkspace, Mapping[str, Any] | None], Awaitable[CallToolResult]]


async def _times(live: LiveWorkspace, args: Arguments) -> TimeFilter:
    """The git-time window (revisions resolved in the workspace: a git call)."""
    as_of, since, until = args.times()
    if as_of is None and since is None and until is None:
        return TimeFilter()
    return await live.run(lambda: live.engine.times(as_of, since, until))


def _tests(args: Arguments) -> bool:
    """Whether `tests` (`include`, the default, or `exclude`) keeps test files."""
    value = args.choice("tests", "include")
    if value not in TESTS_CHOICES:
        raise QueryError(f"tests must be 'include' or 'exclude', got {value!r}")
    return value == "include"


async def search(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    args = Arguments(tools.SEARCH, raw)
    as_of, since, until = args.times()
    request = live.engine.request(
        args.text("query"),
        top_k=args.integer("top_k"),
        layers=args.strings("layers"),
        languages=args.strings("lang"),
        paths=args.strings("path"),
        snippet_chars=args.integer("snippet_chars"),
        max_tokens=args.integer("max_tokens"),
        include_graph=args.flag("include_graph", False),
        as_of=as_of,
        since=since,
        until=until,
    )
    tests = _tests(args)
    route = args.flag("route", False) if args.given("route") else None
    # Checked (and its times resolved) before any reading: a bad one is a tool error.
    checked = await live.run(lambda: request.validated(root=live.workspace.root))
    shared = live.shared if args.flag("shared", True) else None
    # This workspace's own repository is left out of the shared index (git reads).
    exclude = frozenset({await live.run(live.repo_key)}) if shared is not None else frozenset()
    how = LiveSearch(
        route=route,
        shared=shared,
        exclude=exclude,
        mounted=lambda searched: live.mounted() if searched else [],
        resource_top_k=live.workspace.settings.search.resource_top_k,
        open_timeout=None,
    )
    folder = live.folder
    page = await live.read(
        lambda cancel: conduct(
            LiveFolders(live.reader, [folder], {folder.name: checked}, how),
            checked,
            cancel,
            tests=tests,
        )
    )
    # The workspace's own page gives the timings, rerank and warnings (an empty one
    # when the router left it out for the shared index's repositories).
    own = page.responses.get(folder.name) or SearchResponse(query=checked.query)
    response = replace(
        own,
        results=[result for _, result in page.results],
        resources=page.resources,
        tokens=page.tokens,
        truncated_by_budget=page.truncated_by_budget,
    )
    return render.search_result(
        checked,
        response,
        live.index_state(),
        [page.shared_keys.get(name) for name, _ in page.results],
        page.shared_status,
        page.shared_streams,
    )


async def route(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    args = Arguments(tools.ROUTE, raw)
    query = args.text("query")
    limit = args.count("limit", 3)
    check_route(query, limit)
    mounted = live.mounted()
    shared = live.shared if args.flag("shared", True) else None
    if shared is None:
        found = await live.read(
            lambda cancel: live_route(live.reader, [live.folder], mounted, query, limit, cancel)
        )
        return render.route_result(found, live.folder, mounted, live.index_state())
    # The shared index's repositories join the pool (this one's own left out).
    key = await live.run(live.repo_key)
    pooled, status = await live.read(
        lambda cancel: live_route_with_shared(
            live.reader, [live.folder], mounted, query, limit, cancel, shared, {key}
        )
    )
    return render.route_result(pooled, live.folder, mounted, live.index_state(), key, status)


async def symbols(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    args = Arguments(tools.SYMBOLS, raw)
    name = args.text("name")
    limit = args.count("limit", SYMBOLS_LIMIT)
    if not 1 <= limit <= MAX_SYMBOLS:
        raise QueryError(f"limit must be between 1 and {MAX_SYMBOLS}, got {limit}")
    times = await _times(live, args)
    found = await live.read(
        lambda cancel: live.reader.symbols(
            live.folder, name, limit, cancel, times=times, open_timeout=None
        )
    )
    return render.symbols_result(found, live.index_state())


async def _walk(live: LiveWorkspace, name: str, query: GraphQuery) -> GraphResult:
    check_graph_query(query)
    return await live.read(
        lambda cancel: live.reader.graph(live.folder, name, query, cancel, open_timeout=None)
    )


def _neighbours(direction: str, spec: Tool) -> Handler:
    async def handler(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
        args = Arguments(spec, raw)
        name = args.text("name")
        max_nodes = args.count("max_nodes", NEIGHBOURS_MAX_NODES)
        times = await _times(live, args)
        query = GraphQuery(direction, 1, ("calls",), max_nodes, times)
        walk = await _walk(live, name, query)
        return render.neighbours_result(name, direction, walk, live.index_state(), max_nodes)

    handler.__name__ = direction
    return handler


async def graph(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    args = Arguments(tools.GRAPH, raw)
    name = args.text("name")
    times = await _times(live, args)
    query = GraphQuery(
        direction=args.choice("direction", "both"),
        depth=args.count("depth", 1),
        kinds=args.strings("kinds") or ("calls",),
        max_nodes=args.count("max_nodes", GRAPH_MAX_NODES),
        times=times,
    )
    walk = await _walk(live, name, query)
    return render.graph_result(name, walk, live.index_state(), query.max_nodes)


def _status(live: LiveWorkspace) -> Callable[[Cancellation], IndexStatus]:
    """The index's status, read on a reader thread."""
    return lambda cancel: live.reader.status(live.folder, cancel, rerank=False, open_timeout=None)


async def status(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    Arguments(tools.STATUS, raw)
    found = await live.read(_status(live), fresh=False)
    shared = await live.run(live.shared_status)
    return render.status_result(found, live.index_state(), shared=shared)


async def reindex(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    args = Arguments(tools.REINDEX, raw)
    wait = args.flag("wait", True)
    live.folder.request_rescan()
    done = await live.run(lambda: live.wait_settled(REINDEX_WAIT_SECONDS)) if wait else False
    found = await live.read(_status(live), fresh=False)
    return render.status_result(found, live.index_state(), rescan="done" if done else "running")


HANDLERS: dict[str, Handler] = {
    "search": search,
    "route": route,
    "symbols": symbols,
    "callers": _neighbours("callers", tools.CALLERS),
    "callees": _neighbours("callees", tools.CALLEES),
    "graph": graph,
    "status": status,
    "reindex": reindex,
}
