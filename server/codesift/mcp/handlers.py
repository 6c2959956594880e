"""One handler per tool: read the arguments, call the engine, render the result.

Each is `(live, arguments) -> CallToolResult`; a codesift error raised here
becomes a tool error in server.py (errors.py maps it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from mcp_types import CallToolResult, Tool

from codesift.engine import (
    GraphQuery,
    GraphResult,
    IndexStatus,
    Symbol,
    SymbolMatches,
    check_graph_query,
)
from codesift.engine.conductor import TESTS_CHOICES, conduct, keeps_tests
from codesift.engine.graph_merge import merge_walks
from codesift.engine.live import Cancellation, FolderIndex
from codesift.engine.live_collections import live_route
from codesift.engine.live_search import LiveFolders, LiveSearch
from codesift.engine.results import SearchRequest, SearchResponse
from codesift.engine.route import check_route
from codesift.engine.shared_browse import shared_graph, shared_symbols
from codesift.engine.symbols import MAX_SYMBOLS
from codesift.engine.unscoped import live_route_with_shared
from codesift.errors import QueryError
from codesift.front_defaults import GRAPH_MAX_NODES, NEIGHBOURS_MAX_NODES, SYMBOLS_LIMIT
from codesift.mcp import render, tools
from codesift.mcp.arguments import Arguments
from codesift.mcp.live import LiveWorkspace
from codesift.timespec import TimeFilter, time_filter

__all__ = ["HANDLERS", "REINDEX_WAIT_SECONDS"]

# `reindex` with wait answers after at most this long (the rescan goes on).
REINDEX_WAIT_SECONDS = 600.0

# Definitions found, each with the served folder's name or the shared repository's key.
Keyed = list[tuple[Symbol, str]]

Handler = Callable[[LiveWorkspace, Mapping[str, Any] | None], Awaitable[CallToolResult]]


def _tests(args: Arguments, query: str) -> bool:
    """Whether `tests` (`include`, the default, `exclude` or `auto`) keeps test files
    for `query` (engine/search.py, `keeps_tests`)."""
    value = args.choice("tests", "include")
    if value not in TESTS_CHOICES:
        raise QueryError(f"tests must be 'include', 'exclude' or 'auto', got {value!r}")
    return keeps_tests(value, query)


def _sources(
    live: LiveWorkspace, args: Arguments
) -> tuple[list[FolderIndex], bool, frozenset[str] | None]:
    """The served folders a search reads, whether it reads the shared index, and
    the shared repositories it may read (None: every one in view), from `repo`
    (a served folder's name, `local` for every one, or a shared repository's
    key) and `shared`."""
    shared = live.shared is not None and args.flag("shared", True)
    wanted = args.strings("repo")
    if not wanted:
        return list(live.folders), shared, None
    names = {folder.name for folder in live.folders}
    folders = [f for f in live.folders if "local" in wanted or f.name in wanted]
    keys = frozenset(w for w in wanted if w != "local" and w not in names)
    return folders, shared and bool(keys), keys


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
    tests = _tests(args, request.query)
    route = args.flag("route", False) if args.given("route") else None
    folders, with_shared, only = _sources(live, args)
    if args.strings("repo"):
        route = False  # the sources are named: searched, not routed

    # Checked (and its times resolved) before any reading: a bad one is a tool error.
    # ... and in each folder's repository (its git revisions resolved there: a git
    # call, on a worker thread; without times it is a check of values, done here).
    def validated() -> tuple[SearchRequest, dict[str, SearchRequest]]:
        checked = request.validated(root=live.workspace.root)
        per_folder = {
            f.name: request.validated(root=f.root) for f in folders if f is not live.folder
        }
        per_folder[live.folder.name] = checked
        return checked, per_folder

    timed = as_of is not None or since is not None or until is not None
    checked, per_folder = await live.run(validated) if timed else validated()
    shared = live.shared if with_shared else None
    # The served folders' own repositories are left out of the shared index (git reads).
    exclude: frozenset[str] = frozenset()
    if shared is not None:
        exclude = frozenset((await live.run(live.repo_keys)).values())
    how = LiveSearch(
        route=route,
        shared=shared,
        exclude=exclude,
        only=only,
        collections=live.collections,
        resource_top_k=live.workspace.settings.search.resource_top_k,
        open_timeout=None,
        times=(as_of, since, until),  # revisions: each shared repository's own
    )
    page = await live.read(
        lambda cancel: conduct(
            LiveFolders(live.reader, folders, per_folder, how), checked, cancel, tests=tests
        )
    )
    # The first folder's own page gives the timings, rerank and warnings (an empty
    # one when the router or the filter left it out).
    own = next((page.responses[f.name] for f in folders if f.name in page.responses), None)
    response = replace(
        own or SearchResponse(query=checked.query),
        results=[result for _, result in page.results],
        resources=page.resources,
        tokens=page.tokens,
        truncated_by_budget=page.truncated_by_budget,
        warnings=page.warnings,
    )
    served = {folder.name for folder in live.folders}
    return render.search_result(
        checked,
        response,
        live.index_state(),
        [page.shared_keys.get(name) for name, _ in page.results],
        page.shared_status,
        page.shared_streams,
        [name if name in served else None for name, _ in page.results],
    )


async def route(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    args = Arguments(tools.ROUTE, raw)
    query = args.text("query")
    limit = args.count("limit", 3)
    check_route(query, limit)
    mounted = live.mounted()
    folders = live.folders
    shared = live.shared if args.flag("shared", True) else None
    if shared is None:
        found = await live.read(
            lambda cancel: live_route(live.reader, folders, mounted, query, limit, cancel)
        )
        return render.route_result(found, folders, mounted, live.index_state())
    # The shared index's repositories join the pool (the served folders' own left out).
    keys = await live.run(live.repo_keys)
    pooled, status = await live.read(
        lambda cancel: live_route_with_shared(
            live.reader, folders, mounted, query, limit, cancel, shared, set(keys.values())
        )
    )
    return render.route_result(pooled, folders, mounted, live.index_state(), keys, status)


async def _windows(
    live: LiveWorkspace, args: Arguments, folders: list[FolderIndex]
) -> dict[str, TimeFilter]:
    """The git-time window in each folder (its revisions resolved there)."""
    as_of, since, until = args.times()
    if as_of is None and since is None and until is None:
        return {folder.name: TimeFilter() for folder in folders}
    return await live.run(
        lambda: {f.name: time_filter(as_of, since, until, root=f.root) for f in folders}
    )


async def symbols(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    args = Arguments(tools.SYMBOLS, raw)
    name = args.text("name")
    limit = args.count("limit", SYMBOLS_LIMIT)
    if not 1 <= limit <= MAX_SYMBOLS:
        raise QueryError(f"limit must be between 1 and {MAX_SYMBOLS}, got {limit}")
    folders, with_shared, only = _sources(live, args)
    windows = await _windows(live, args, folders)

    def local(cancel: Cancellation) -> tuple[Keyed, Keyed]:
        exact: Keyed = []
        similar: Keyed = []
        for folder in folders:
            found = live.reader.symbols(
                folder, name, limit, cancel, times=windows[folder.name], open_timeout=None
            )
            exact.extend((symbol, folder.name) for symbol in found.exact)
            similar.extend((symbol, folder.name) for symbol in found.fuzzy)
        similar.sort(key=lambda item: -item[0].score)  # stable: each folder's order kept
        return exact, similar

    exact, similar = await live.read(local)
    places = [render.place_of(root=root) for _, root in [*exact, *similar]]
    status = None
    if with_shared and live.shared is not None:
        shared = live.shared
        times = args.times()  # resolved in each repository
        exclude = set((await live.run(live.repo_keys)).values())
        more_exact, more_similar, status = await live.run(
            lambda: shared_symbols(shared, name, limit, times, exclude, only)
        )
        places = [
            *places[: len(exact)],
            *(render.place_of(repo=key) for _, key in more_exact),
            *places[len(exact) :],
            *(render.place_of(repo=key) for _, key in more_similar),
        ]
        exact, similar = [*exact, *more_exact], [*similar, *more_similar]
    kept = min(len(exact), limit)
    room = max(0, limit - kept)
    found = SymbolMatches(
        name, tuple(s for s, _ in exact[:kept]), tuple(s for s, _ in similar[:room])
    )
    where = [*places[:kept], *places[len(exact) : len(exact) + room]]
    return render.symbols_result(found, live.index_state(), where, status)


def _everywhere(place: render.Place) -> Callable[[Symbol], render.Place]:
    return lambda symbol: place


async def _walk(
    live: LiveWorkspace, args: Arguments, name: str, query: GraphQuery
) -> tuple[GraphResult, Callable[[Symbol], render.Place], render.Place]:
    """The walk from the definitions named `name` in every source that has one:
    the served folders in order (or those `repo` names), then the shared index's
    repositories; one answer (engine/graph_merge.py), with where each definition
    is, and the source walked when it is one."""
    check_graph_query(query)
    folders, with_shared, only = _sources(live, args)
    windows = await _windows(live, args, folders)

    def local(cancel: Cancellation) -> list[GraphResult]:
        return [
            live.reader.graph(
                folder, name, replace(query, times=windows[folder.name]), cancel, open_timeout=None
            )
            for folder in folders
        ]

    walks = await live.read(local)
    sourced: list[tuple[GraphResult, Callable[[Symbol], render.Place]]] = [
        (walk, _everywhere(render.place_of(root=folder.name)))
        for walk, folder in zip(walks, folders, strict=True)
    ]
    walked = [render.place_of(root=folder.name) for folder in folders]
    if with_shared and live.shared is not None:
        shared = live.shared
        exclude = set((await live.run(live.repo_keys)).values())
        times = args.times()  # resolved in each repository
        (walk, keys), _ = await live.run(
            lambda: shared_graph(shared, name, query, times, exclude, only)
        )
        repos = {keys.get(r) for r in walk.roots}
        sourced.append((walk, lambda symbol: render.place_of(repo=keys.get(symbol.node.id))))
        walked.append(
            render.place_of(repo=next(iter(repos))) if len(repos) == 1 else render.place_of()
        )
    found = [i for i, (walk, _) in enumerate(sourced) if walk.roots]
    if len(found) == 1:
        walk, place = sourced[found[0]]
        return walk, place, walked[found[0]]
    if not found:  # nothing named so: the last source's (empty) answer
        if not sourced:
            return GraphResult((), (), ()), lambda symbol: render.place_of(), render.place_of()
        walk, place = sourced[-1]
        return walk, place, walked[-1]
    merged, places = merge_walks(sourced, query.max_nodes)
    return merged, lambda symbol: places.get(symbol.node.id, render.place_of()), render.SEVERAL


def _neighbours(direction: str, spec: Tool) -> Handler:
    async def handler(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
        args = Arguments(spec, raw)
        name = args.text("name")
        max_nodes = args.count("max_nodes", NEIGHBOURS_MAX_NODES)
        query = GraphQuery(direction, 1, ("calls",), max_nodes, TimeFilter())
        walk, place, _ = await _walk(live, args, name, query)
        return render.neighbours_result(
            name, direction, walk, live.index_state(), place, max_nodes=max_nodes
        )

    handler.__name__ = direction
    return handler


async def graph(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    args = Arguments(tools.GRAPH, raw)
    name = args.text("name")
    query = GraphQuery(
        direction=args.choice("direction", "both"),
        depth=args.count("depth", 1),
        kinds=args.strings("kinds") or ("calls",),
        max_nodes=args.count("max_nodes", GRAPH_MAX_NODES),
        times=TimeFilter(),
    )
    walk, place, walked = await _walk(live, args, name, query)
    return render.graph_result(
        name, walk, live.index_state(), place, walked, max_nodes=query.max_nodes
    )


def _status(live: LiveWorkspace) -> Callable[[Cancellation], IndexStatus]:
    """The index's status, read on a reader thread."""
    return lambda cancel: live.reader.status(live.folder, cancel, rerank=False, open_timeout=None)


async def status(live: LiveWorkspace, raw: Mapping[str, Any] | None) -> CallToolResult:
    Arguments(tools.STATUS, raw)
    found = await live.read(_status(live), fresh=False)
    shared = await live.run(live.shared_status)
    if len(live.folders) == 1:
        return render.status_result(found, live.index_state(), shared=shared)

    def each(cancel: Cancellation) -> list[dict[str, Any]]:
        out = []
        for folder in live.folders:
            one = live.reader.status(folder, cancel, rerank=False, open_timeout=None)
            out.append(
                {
                    "name": folder.name,
                    "root": str(folder.root),
                    "files": one.files,
                    "nodes": one.nodes,
                    "chunks": one.chunks,
                }
            )
        return out

    roots = await live.read(each, fresh=False)
    return render.status_result(found, live.index_state(), shared=shared, roots=roots)


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
