"""The reading commands: search (one folder or several), route, symbols, callers,
callees, graph.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesift.cli.errors import EXIT_OK
from codesift.cli.invocation import (
    ConsoleListener,
    Invocation,
    configured_workspace,
    report_built,
)
from codesift.cli.render import (
    folders_json,
    neighbours,
    print_route,
    response_json,
    symbol_json,
)
from codesift.cli.shared import (
    given_dsn,
    open_reader,
    request_options,
    search_shared,
    shared_dsn,
)
from codesift.engine.results import MAX_SYMBOLS, GraphQuery, GraphResult
from codesift.engine.session import Engine
from codesift.engine.workspace import Workspace, indexed_folders_below, workspace_above
from codesift.errors import QueryError, WorkspaceError

# Imported where used (a search of an up-to-date index loads none of them): the
# router's, the collections', and types.
if TYPE_CHECKING:
    from codesift.retrieval import SearchRequest
    from codesift.retrieval.routing import RouteMatch
    from codesift.timespec import TimeFilter


def _search_request(args: argparse.Namespace, engine: Engine, times: TimeFilter) -> SearchRequest:
    """The search the command line asks for, with the engine's defaults for what it
    leaves out and `times` (resolved in the engine's folder)."""
    return engine.request(
        args.query,
        **request_options(args),
        as_of=times.as_of,
        since=times.since,
        until=times.until,
    )


def cmd_search(args: argparse.Namespace, inv: Invocation) -> int:
    if len(args.roots or ()) > 1:
        return _search_folders(args, inv)
    if args.no_route:
        raise QueryError("--no-route needs several --root folders")
    dsn, ws = shared_dsn(args, inv)
    if dsn is not None:
        response = search_shared(args, inv, dsn, ws)
        inv.show("search", response_json(response), bool(args.json))
        return EXIT_OK
    from codesift.engine.folder_search import search_folder  # not loaded by callers, symbols

    engine = inv.engine(args, quiet=bool(args.json), workspace=ws)
    try:
        times = engine.times(args.as_of, args.since, args.until)  # before any indexing
        request = _search_request(args, engine, times).validated(root=engine.root)
        response = search_folder(engine, request, tests=_tests(args))
        report_built(inv, engine, args)
    finally:
        engine.close()
    inv.show("search", response_json(response), bool(args.json))
    return EXIT_OK


def _tests(args: argparse.Namespace) -> bool:
    """Whether `--tests` (`include`, the default, `exclude` or `auto`) keeps the
    results in test files for the query (engine/search.py, `keeps_tests`)."""
    from codesift.engine.search import keeps_tests  # loaded with the search

    return keeps_tests(args.tests, args.query)


def _search_folders(args: argparse.Namespace, inv: Invocation) -> int:
    """`search` over several --root folders (engine/folder_search.py)."""
    from codesift.engine.folder_search import search_folders

    if getattr(args, "db", None) is not None or args.repo or args.principal:
        raise QueryError("--db, --repo and --principal search the shared index: give one --root")
    workspaces = _workspaces_of(args, args.roots)
    args.db_path = workspaces[0].db_path
    engines = [inv.engine(args, quiet=bool(args.json), workspace=ws) for ws in workspaces]

    def request_for(engine: Engine) -> SearchRequest:
        try:  # a revision is resolved in each folder's repository
            times = engine.times(args.as_of, args.since, args.until)
        except QueryError as exc:
            raise QueryError(f"{exc} (folder {engine.root})") from None
        return _search_request(args, engine, times).validated(root=engine.root)

    try:
        found = search_folders(
            engines,
            request_for,
            ConsoleListener(inv, quiet=bool(args.json)),
            route_first=False if args.no_route else None,
            tests=_tests(args),
        )
        for engine in engines:
            report_built(inv, engine, args)
    finally:
        for engine in engines:
            engine.close()
    if found.routed and not args.json:
        inv.say(f"routed to {', '.join(found.routed)} (of {len(engines)} folders)")
    folders = [hit.folder for hit in found.results]
    inv.show("search", folders_json(found), bool(args.json), folders=folders)
    return EXIT_OK


def _workspaces_of(args: argparse.Namespace, roots: Sequence[str | None]) -> list[Workspace]:
    """The folders of a command over several (`route`, `search --root A --root B`):
    each of `roots` once (None: the current workspace), --config applied to each."""
    found: list[Workspace] = []
    for root in roots:
        ws = Workspace.resolve(root)
        if args.config:
            ws = configured_workspace(ws.root, args.config)
        if all(w.root != ws.root for w in found):
            found.append(ws)
    return found


def cmd_route(args: argparse.Namespace, inv: Invocation) -> int:
    """Which folders and collections a question is about, pool by pool."""
    from codesift.engine.collections import collections_of
    from codesift.engine.route import check_route, folder_names, route_json
    from codesift.engine.route_folders import route

    check_route(args.query, args.limit)  # before any index is touched
    if given_dsn(args) is not None:
        return _route_shared(args, inv)
    if args.repo or args.principal:
        raise QueryError("--repo and --principal route over the shared index: give --db DSN")
    roots, below = _route_roots(args.root)
    workspaces = _workspaces_of(args, roots)
    args.db_path = workspaces[0].db_path
    listener = ConsoleListener(inv, quiet=bool(args.json))
    result = route(args.query, workspaces, listener, limit=args.limit)
    names = folder_names([ws.root for ws in workspaces])
    paths = {name: str(ws.root) for name, ws in zip(names, workspaces, strict=True)}
    if not args.json:
        which = f"indexed folders below {below}" if below is not None else "folders"
        if len(names) == 1:
            which = which.replace("folders", "folder", 1)
        listener.note(f"routed among {len(names)} {which}: {', '.join(names)}")
    collections = {c.name: str(c.root) for ws in workspaces for c in collections_of(ws) if c.name}

    def where(match: RouteMatch) -> dict[str, Any]:
        pool = paths if match.kind == "repository" else collections
        return {"path": pool.get(match.name)}

    data = route_json(result, where)
    data["folders"] = [{"name": name, "path": path} for name, path in paths.items()]
    if args.json:
        inv.print(json.dumps(data, ensure_ascii=False))
        return EXIT_OK
    print_route(inv, data)
    return EXIT_OK


def _route_shared(args: argparse.Namespace, inv: Invocation) -> int:
    """`route --db`: the shared index's repositories this principal may read."""
    from codesift.engine.route import route_json
    from codesift.engine.route_folders import route_shared

    if args.root:
        raise QueryError("--root routes among local folders: leave it out with --db")
    result = route_shared(
        args.db,
        args.query,
        principal=args.principal,
        repos=tuple(args.repo or ()),
        limit=args.limit,
    )
    data = route_json(result, lambda match: {"path": None})
    if args.json:
        inv.print(json.dumps(data, ensure_ascii=False))
    else:
        print_route(inv, data)
    return EXIT_OK


def _route_roots(given: Sequence[str] | None) -> tuple[Sequence[str | None], Path | None]:
    """The folders `route` routes among: the ones given; else the current workspace;
    outside any (no index above, no git work tree: a scratch or home folder) the
    folders below that have an index, never an index built here (then the folder
    they are under is returned too). WorkspaceError when there is none."""
    if given:
        return given, None
    here = Path.cwd()
    if workspace_above(here) is not None:
        return [None], None
    below = indexed_folders_below(here)
    if not below:
        raise WorkspaceError(
            f"no codesift index at or below {here} (and no git work tree): run `codesift"
            " index` in the folders to route among, or name them with --root"
        )
    return [str(folder) for folder in below], here.resolve()


def cmd_symbols(args: argparse.Namespace, inv: Invocation) -> int:
    if args.limit < 1 or args.limit > MAX_SYMBOLS:
        raise QueryError(f"--limit must be between 1 and {MAX_SYMBOLS}, got {args.limit}")
    engine = open_reader(args, inv)
    try:
        times = engine.times(args.as_of, args.since, args.until)
        found = engine.symbols(args.name, args.limit, times)
        report_built(inv, engine, args)
    finally:
        engine.close()
    exact = [symbol_json(s) for s in found.exact]
    data = {"exact": exact, "fuzzy": [symbol_json(s) for s in found.fuzzy]}
    inv.show("symbols", data, bool(args.json), name=args.name)
    return EXIT_OK


def _graph_command(args: argparse.Namespace, inv: Invocation, direction: str) -> int:
    engine = open_reader(args, inv)
    try:
        times = engine.times(args.as_of, args.since, args.until)
        query = GraphQuery(
            direction=direction, depth=1, kinds=("calls",), max_nodes=args.max_nodes, times=times
        )
        walk = engine.graph(args.name, query)
        report_built(inv, engine, args)
    finally:
        engine.close()
    groups = neighbours(walk, direction)
    payload = [
        {
            "node": symbol_json(walk.node(root)),
            direction: [
                {
                    "edge": {
                        "kind": link.kind,
                        "line": link.line,
                        "name": link.target_name,
                        "resolution": link.resolution,
                        "confidence": link.confidence,
                    },
                    "node": symbol_json(other),
                }
                for link, other in pairs
            ],
        }
        for root, pairs in groups
    ]
    data = {"name": args.name, "nodes": payload, **_cut_json(walk, args)}
    inv.show(direction, data, bool(args.json))
    return EXIT_OK


def cmd_graph(args: argparse.Namespace, inv: Invocation) -> int:
    """The code graph around the definitions named NAME: callers, callees or both,
    DEPTH edges away, along the edge kinds asked for."""
    engine = open_reader(args, inv)
    try:
        times = engine.times(args.as_of, args.since, args.until)
        kinds = tuple(args.kind or ("calls",))
        query = GraphQuery(args.direction, args.depth, kinds, args.max_nodes, times)
        walk = engine.graph(args.name, query)
        report_built(inv, engine, args)
    finally:
        engine.close()
    data = {
        "name": args.name,
        "roots": list(walk.roots),
        "nodes": [symbol_json(s) for s in walk.nodes],
        "edges": [asdict(link) for link in walk.edges],
        **_cut_json(walk, args),
    }
    inv.show("graph", data, bool(args.json))
    return EXIT_OK


def _cut_json(walk: GraphResult, args: argparse.Namespace) -> dict[str, Any]:
    """Whether the walk stopped at --max-nodes, and how many definitions it left out."""
    return {
        "truncated": walk.truncated,
        "omitted": walk.omitted,
        "max_nodes": args.max_nodes,
        "calls_pending": walk.calls_pending,
    }


def cmd_callers(args: argparse.Namespace, inv: Invocation) -> int:
    return _graph_command(args, inv, "callers")


def cmd_callees(args: argparse.Namespace, inv: Invocation) -> int:
    return _graph_command(args, inv, "callees")
