"""A one-shot search over several workspace folders (`codesift search --root A
--root B ...`), as the language server searches a multi-root workspace.

Each folder is opened with its own `Engine` (its index brought up to date first,
its own settings and vectors). An unscoped search routes first (engine/route.py,
`route`, over the folders' local indexes) and reads the router's answer as the
language server does (engine/unscoped.py, `choose_folders`): over
ROUTE_MIN_FOLDERS folders or more only the router's best ROUTE_FOLDERS at
ROUTE_THRESHOLD or more are searched (every folder when none is); either way the
pages merge weighted by the router (engine/search.py, `merge_pages`).
`route=False` searches every folder, merged by score alone; `route=True` narrows
from two folders on. A router that cannot read a folder's index costs the order,
never the search.

The document collections the searched folders list are searched once each (a
collection two folders list is one collection), for the best
`search.resource_top_k` of the first searched folder's settings.

The search itself is engine/conductor.py's `conduct` (the steps every front end's
search runs), over `EngineFolders`: the folders' engines as its sources. The
CLI's search of one folder is the same, with one engine, and its search of the
shared index alone (`search --db`) too, with `SharedIndexSource`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from codesift.engine.api import SourcePlan
from codesift.engine.conductor import ConductedPage, conduct
from codesift.engine.listener import EngineListener
from codesift.engine.session import Engine, open_collection
from codesift.engine.workspace import folder_names
from codesift.errors import CodesiftError, QueryError, SearchCancelled
from codesift.retrieval.request import SearchRequest, SearchResponse, SearchResult, StreamReport

# Loaded where used: the router and the collections (a search of one folder that
# lists no collections loads neither), and types.
if TYPE_CHECKING:
    from codesift.engine.collections import Collection
    from codesift.engine.live import Cancellation
    from codesift.engine.postgres import SharedSearch
    from codesift.engine.shared_overlay import SharedPage
    from codesift.engine.unscoped import FolderChoice

__all__ = [
    "EngineFolders",
    "FolderResult",
    "FoldersResponse",
    "SharedIndexSource",
    "search_engines",
    "search_folder",
    "search_folders",
    "search_shared_index",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FolderResult:
    """One result of the merged page and the folder it comes from."""

    folder: str  # the folder's name (engine/route.py, folder_names)
    root: Path
    result: SearchResult


@dataclass(slots=True)
class FoldersResponse:
    query: str
    results: list[FolderResult] = field(default_factory=list)
    resources: list[SearchResult] = field(default_factory=list)
    # The folders searched, by name, in the order given.
    searched: list[str] = field(default_factory=list)
    # The folders the router chose, best first; None: not narrowed (every folder
    # searched); []: it narrowed and none passed its threshold (every folder searched).
    routed: list[str] | None = None
    # Every folder the router ranked, best first; empty when it did not route.
    folder_order: list[str] = field(default_factory=list)
    streams: list[tuple[str, StreamReport]] = field(default_factory=list)
    took_ms: float = 0.0
    tokens: int = 0
    truncated_by_budget: bool = False


def _choice(
    query: str,
    engines: Sequence[Engine],
    names: Sequence[str],
    listener: EngineListener,
    asked: bool | None,
) -> FolderChoice:
    """The router's answer for the folders (engine/unscoped.py's rules)."""
    from codesift.engine.live_collections import ROUTE_MIN_FOLDERS
    from codesift.engine.route import MAX_ROUTE_LIMIT
    from codesift.engine.route_folders import route
    from codesift.engine.unscoped import FolderChoice, choose_folders

    unrouted = FolderChoice(None, [], {})
    if asked is False or len(engines) < 2:
        return unrouted
    narrow = len(engines) >= (2 if asked else ROUTE_MIN_FOLDERS)
    try:
        result = route(
            query,
            [e.workspace for e in engines],
            listener,
            MAX_ROUTE_LIMIT,
            engines=engines,
            folders_only=True,
        )
    except (SearchCancelled, QueryError):
        raise
    except CodesiftError as exc:  # a folder's index cannot be read: search every one
        log.info("routing %r failed (%s): searching every folder", query, exc)
        return FolderChoice([] if narrow else None, [], {})
    return choose_folders(result, frozenset(names), narrow=narrow)


class EngineFolders:
    """One-shot engines over folders on disk as the sources of a search (engine/
    api.py, SearchSources), each engine with its own request (its git times
    resolved in its folder), named as `folder_names` names the folders.
    `route_first`: None routes as the module docstring says, True narrows from
    two folders on, False merges by score alone."""

    def __init__(
        self,
        engines: Sequence[Engine],
        requests: Sequence[SearchRequest],
        listener: EngineListener,
        *,
        route_first: bool | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.names = folder_names([e.root for e in engines])
        self.engines = dict(zip(self.names, engines, strict=True))
        self.requests = dict(zip(self.names, requests, strict=True))
        self.listener = listener
        self.route_first = route_first
        self.cancel = cancel

    def plan(self, query: str, cancel: Cancellation | None) -> SourcePlan:
        engines = list(self.engines.values())
        if len(engines) < 2:  # nothing to route among (the router is not loaded)
            return SourcePlan(list(self.names))
        choice = _choice(query, engines, self.names, self.listener, self.route_first)
        chosen = set(choice.routed) if choice.routed else set(self.names)
        searched = [name for name in self.names if name in chosen]
        return SourcePlan(searched, choice.routed, choice.ranked, choice.weights)

    def page(self, name: str, top_k: int, cancel: Cancellation | None) -> SearchResponse:
        request = replace(self.requests[name], top_k=top_k)
        return self.engines[name].search(request, self.cancel)

    def shared(
        self, request: SearchRequest, only: Sequence[str] | None, cancel: Cancellation | None
    ) -> SharedPage | None:
        return None  # a one-shot search over folders reads their local indexes

    def resources(
        self,
        searched: Sequence[str],
        request: SearchRequest,
        results: list[SearchResult],
        cancel: Cancellation | None,
    ) -> tuple[list[SearchResult], list[SearchResult]]:
        if not any(self.engines[name].workspace.settings.collections for name in searched):
            return [], results
        from codesift.engine.collections import (
            collections_of,
            related_resources,
            search_collections,
        )

        collections: dict[Path, Collection] = {}
        for name in searched:
            for collection in collections_of(self.engines[name].workspace, self.listener):
                collections.setdefault(collection.workspace.db_path, collection)
        found = list(collections.values())
        if not found or not searched:
            return [], results
        limit = self.engines[searched[0]].workspace.settings.search.resource_top_k
        listener = self.listener
        resources = search_collections(request, found, limit, listener, open_index=open_collection)
        return resources, related_resources(results, found, listener, refresh=limit <= 0)


def search_engines(
    engines: Sequence[Engine],
    requests: Sequence[SearchRequest],
    listener: EngineListener | None = None,
    *,
    route_first: bool | None = None,
    cancel: threading.Event | None = None,
    tests: bool = True,
) -> ConductedPage:
    """The conducted page of one search over `engines` (each with its request, all
    checked): engine/conductor.py's `conduct` over `EngineFolders`."""
    if not engines:
        raise QueryError("no folder to search")
    sources = EngineFolders(
        engines, requests, listener or EngineListener(), route_first=route_first, cancel=cancel
    )
    return conduct(sources, requests[0], tests=tests)


class SharedIndexSource:
    """The shared PostgreSQL index alone as the source of a search (`codesift
    search --db`): one page, the shared index's own (its principal's grants, its
    repositories); no routing plan, no collections."""

    NAME = "shared"

    def __init__(self, index: SharedSearch, request: SearchRequest) -> None:
        self.index = index
        self.request = request

    def plan(self, query: str, cancel: Cancellation | None) -> SourcePlan:
        return SourcePlan([self.NAME])

    def page(self, name: str, top_k: int, cancel: Cancellation | None) -> SearchResponse:
        return self.index.search(replace(self.request, top_k=top_k))

    def shared(
        self, request: SearchRequest, only: Sequence[str] | None, cancel: Cancellation | None
    ) -> SharedPage | None:
        return None  # the index is this source's page already

    def resources(
        self,
        searched: Sequence[str],
        request: SearchRequest,
        results: list[SearchResult],
        cancel: Cancellation | None,
    ) -> tuple[list[SearchResult], list[SearchResult]]:
        return [], results


def search_shared_index(
    index: SharedSearch, request: SearchRequest, *, tests: bool = True
) -> SearchResponse:
    """A search of the shared index alone, conducted as every search is."""
    return _one_page(conduct(SharedIndexSource(index, request), request, tests=tests))


def search_folder(engine: Engine, request: SearchRequest, *, tests: bool = True) -> SearchResponse:
    """One folder's search (`request` checked), conducted as every search is: the
    engine's own page (its streams, stages, rerank, warnings) with the conducted
    results and the collections' resources."""
    return _one_page(search_engines([engine], [request], engine.listener, tests=tests))


def _one_page(page: ConductedPage) -> SearchResponse:
    """The conducted page of one source as that source's response."""
    own = page.responses[page.searched[0]]
    return replace(
        own,
        results=[result for _, result in page.results],
        resources=page.resources,
        tokens=page.tokens,
        truncated_by_budget=page.truncated_by_budget,
    )


def search_folders(
    engines: Sequence[Engine],
    request_for: Callable[[Engine], SearchRequest],
    listener: EngineListener | None = None,
    *,
    route_first: bool | None = None,
    cancel: threading.Event | None = None,
    tests: bool = True,
) -> FoldersResponse:
    """Search the folders of `engines` (one per folder, as opened by the caller,
    who closes them) for the request `request_for` makes for each (its git times
    resolved in that folder; the same query and page size for every folder): see
    the module docstring. `route_first`: None routes as the module docstring
    says, True narrows from two folders on, False merges by score alone. `tests`
    False: the test filter on each folder's page (engine/search.py)."""
    if not engines:
        raise QueryError("no folder to search")
    started = time.perf_counter()
    requests = [request_for(engine) for engine in engines]  # every request checked first
    page = search_engines(
        engines, requests, listener, route_first=route_first, cancel=cancel, tests=tests
    )
    names = folder_names([engine.root for engine in engines])
    roots = {name: engine.root for name, engine in zip(names, engines, strict=True)}
    return FoldersResponse(
        query=requests[0].query,
        results=[FolderResult(name, roots[name], result) for name, result in page.results],
        resources=page.resources,
        searched=page.searched,
        routed=page.plan.routed,
        folder_order=page.plan.ranked,
        streams=list(page.streams),
        took_ms=round((time.perf_counter() - started) * 1000, 2),
        tokens=page.tokens,
        truncated_by_budget=page.truncated_by_budget,
    )
