"""codesift/route: which workspace folders and which document collections a
question is about, pool by pool (engine/route.py scores, engine/live_collections.py
reads the live indexes). With a shared index (index.backend = "postgres"), an
unscoped route's repository pool also holds the shared index's repositories
(engine/shared_overlay.py), the open folders' own left out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from codesift.engine.live import Cancellation
from codesift.engine.live_collections import live_route
from codesift.engine.results import MAX_QUERY_CHARS
from codesift.engine.route import MAX_ROUTE_LIMIT, RouteMatch, RouteResult, check_route, route_json
from codesift.engine.unscoped import live_route_with_shared
from codesift.errors import QueryError
from codesift.lsp.params import (
    invalid,
    opt_bool,
    opt_int,
    opt_str_list,
    require_object,
    require_str,
)

if TYPE_CHECKING:
    from codesift.engine.live import FolderIndex
    from codesift.engine.live_collections import Mounted
    from codesift.lsp.server import CodesiftServer

__all__ = ["ROUTE", "route", "route_result_json"]

ROUTE = "codesift/route"


def route_result_json(
    result: RouteResult,
    folders: list[FolderIndex],
    mounted: list[Mounted],
    repos: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The route as JSON, each source with its URI; with `repos` (the open
    folders' repository keys, when a shared index is in use) each repository
    also says whether it is a folder (`source: "local"`, its key in `repo`) or a
    repository of the shared index (`source: "shared"`, no URI, `repo` its key)."""
    from codesift.lsp.server import path_to_uri

    uris = {f.name: f.uri for f in folders}
    collections = {c.name: path_to_uri(c.root) for c, _ in mounted}

    def where(match: RouteMatch) -> dict[str, Any]:
        pool = uris if match.kind == "repository" else collections
        found: dict[str, Any] = {"uri": pool.get(match.name)}
        if repos is not None and match.kind == "repository":
            local = match.name in uris
            found["source"] = "local" if local else "shared"
            found["repo"] = repos.get(match.name) if local else match.name
        return found

    return route_json(result, where)


async def route(server: CodesiftServer, params: Any) -> dict[str, Any]:
    data = require_object(params, ROUTE)
    query = require_str(data, "query", max_chars=MAX_QUERY_CHARS)
    limit = opt_int(data, "limit", 3, 1, MAX_ROUTE_LIMIT) or 3
    try:
        check_route(query, limit)
    except QueryError as exc:
        raise invalid(str(exc)) from exc
    named = opt_str_list(data, "folders")
    folders = server.select_folders(named)
    mounted = server.mounted(folders)
    # Unscoped, the shared index's repositories (the open ones left out) join the pool.
    shared = server.shared_index() if opt_bool(data, "shared", True) and not named else None

    def run(cancel: Cancellation) -> dict[str, Any]:
        if shared is None:
            result = live_route(server.live, folders, mounted, query, limit, cancel)
            return route_result_json(result, folders, mounted)
        repos = server.open_repo_keys()
        result, status = live_route_with_shared(
            server.live, folders, mounted, query, limit, cancel, shared, set(repos.values())
        )
        return {**route_result_json(result, folders, mounted, repos), "shared": status.as_json()}

    return await server.read(run)
