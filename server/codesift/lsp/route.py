"""codesift/route: which workspace folders and which document collections a
question is about, pool by pool (engine/route.py scores, engine/live_collections.py
reads the live indexes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codesift.engine.live import Cancellation
from codesift.engine.live_collections import live_route
from codesift.engine.route import MAX_ROUTE_LIMIT, RouteResult, check_route, route_json
from codesift.errors import QueryError
from codesift.lsp.params import invalid, opt_int, opt_str_list, require_object, require_str
from codesift.retrieval.request import MAX_QUERY_CHARS
from codesift.retrieval.routing import RouteMatch

if TYPE_CHECKING:
    from codesift.engine.live import FolderIndex
    from codesift.engine.live_collections import Mounted
    from codesift.lsp.server import CodesiftServer

__all__ = ["ROUTE", "route", "route_result_json"]

ROUTE = "codesift/route"


def route_result_json(
    result: RouteResult, folders: list[FolderIndex], mounted: list[Mounted]
) -> dict[str, Any]:
    """The route as JSON, each source with its URI."""
    from codesift.lsp.server import path_to_uri

    uris = {f.name: f.uri for f in folders}
    collections = {c.name: path_to_uri(c.root) for c, _ in mounted}

    def where(match: RouteMatch) -> dict[str, Any]:
        pool = uris if match.kind == "repository" else collections
        return {"uri": pool.get(match.name)}

    return route_json(result, where)


async def route(server: CodesiftServer, params: Any) -> dict[str, Any]:
    data = require_object(params, ROUTE)
    query = require_str(data, "query", max_chars=MAX_QUERY_CHARS)
    limit = opt_int(data, "limit", 3, 1, MAX_ROUTE_LIMIT) or 3
    try:
        check_route(query, limit)
    except QueryError as exc:
        raise invalid(str(exc)) from exc
    folders = server.select_folders(opt_str_list(data, "folders"))
    mounted = server.mounted(folders)

    def run(cancel: Cancellation) -> dict[str, Any]:
        result = live_route(server.live, folders, mounted, query, limit, cancel)
        return route_result_json(result, folders, mounted)

    return await server.read(run)
