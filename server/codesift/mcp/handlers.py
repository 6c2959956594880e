"""One handler per tool: read the arguments, call the engine, render the result.

Each is `(live, arguments) -> CallToolResult`; a codesift error raised here
becomes a tool error in server.py (errors.py maps it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_types import CallToolResult, Tool

from codesift.embedding import remembered_queries
from codesift.engine import GraphQuery, GraphResult, IndexStatus, check_graph_query
from codesift.engine.collections import related_resources
from codesift.engine.live import Cancellation
from codesift.engine.live_collections import live_resources, live_route
from codesift.engine.route import check_route
from codesift.engine.search import FolderPage, merge_pages
from codesift.engine.shared_overlay import SharedPage, live_route_with_shared
from codesift.engine.symbols import MAX_SYMBOLS
from codesift.errors import QueryError
from codesift.front_defaults import GRAPH_MAX_NODES, NEIGHBOURS_MAX_NODES, SYMBOLS_LIMIT
from codesift.history.timespec import TimeFilter
from codesift.mcp import render, tools
from codesift.mcp.arguments import Arguments
from codesift.mcp.live import LiveWorkspace
from codesift.retrieval import SearchResponse

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


# A search's local page, each result's shared repository (None: local), and the
# shared index's answer (None without one).
_SearchAnswer = tuple[SearchResponse, list[str | None], SharedPage | None]


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
    # Checked (and its times resolved) before any reading: a bad one is a tool error.
    checked = await live.run(lambda: request.validated(root=live.workspace.root))
    mounted = live.mounted()
    limit = live.workspace.settings.search.resource_top_k

    shared = live.shared if args.flag("shared", True) else None

    def run(cancel: Cancellation) -> _SearchAnswer:
        response = live.reader.search(live.folder, checked, cancel, open_timeout=None)
        if mounted:
            response.resources = live_resources(live.reader, mounted, checked, limit, cancel)
            response.results = related_resources(
                response.results, [c for c, _ in mounted], refresh=limit <= 0
            )
        repos: list[str | None] = [None] * len(response.results)
        if shared is None:
            return response, repos, None
        # The shared index's other repositories, merged with the local page as a
        # multi-folder search merges its folders' pages.
        found = shared.search(checked, {live.repo_key()}, cancel=cancel)
        if found.pages:
            merged = merge_pages(checked, [FolderPage(live.folder.name, response), *found.pages])
            response.results = [result for _, result in merged.results]
            repos = [found.keys.get(name) for name, _ in merged.results]
            response.tokens = merged.tokens
            response.truncated_by_budget = merged.truncated_by_budget
        return response, repos, found

    def run_once(cancel: Cancellation) -> _SearchAnswer:
        # The local and the shared search share one query vector (one model).
        with remembered_queries():
            return run(cancel)

    response, repos, found = await live.read(run_once)
    return render.search_result(
        checked,
        response,
        live.index_state(),
        repos,
        found.status if found is not None else None,
        found.streams if found is not None else (),
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
        return render.neighbours_result(name, direction, walk, live.index_state())

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
    return render.graph_result(name, walk, live.index_state())


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
