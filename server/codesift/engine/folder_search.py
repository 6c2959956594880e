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
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from codesift.engine.listener import EngineListener
from codesift.engine.live_collections import ROUTE_MIN_FOLDERS
from codesift.engine.route import MAX_ROUTE_LIMIT, folder_names
from codesift.engine.route_folders import route
from codesift.engine.search import FolderPage, merge_pages
from codesift.engine.session import Engine, open_collection
from codesift.engine.unscoped import FolderChoice, choose_folders
from codesift.errors import CodesiftError, QueryError, SearchCancelled
from codesift.retrieval.request import SearchRequest, SearchResult, StreamReport

if TYPE_CHECKING:
    from codesift.engine.collections import Collection

__all__ = ["FolderResult", "FoldersResponse", "search_folders"]

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
    from codesift.engine.collections import (
        collections_of,
        related_resources,
        search_collections,
    )

    if not engines:
        raise QueryError("no folder to search")
    listener = listener or EngineListener()
    started = time.perf_counter()
    requests = [request_for(engine) for engine in engines]  # every request checked first
    first = requests[0]
    names = folder_names([e.root for e in engines])
    choice = _choice(first.query, engines, names, listener, route_first)
    chosen = set(choice.routed) if choice.routed else set(names)
    pages: list[FolderPage] = []
    searched: list[int] = []
    for i, (engine, request) in enumerate(zip(engines, requests, strict=True)):
        if names[i] not in chosen:
            continue
        response = engine.search(request, cancel, resources=False, tests=tests)
        pages.append(FolderPage(names[i], response))
        searched.append(i)
    page = merge_pages(first, pages, choice.weights)
    index = {names[i]: i for i in searched}
    collections: dict[Path, Collection] = {}
    for i in searched:
        for collection in collections_of(engines[i].workspace, listener):
            collections.setdefault(collection.workspace.db_path, collection)
    limit = engines[searched[0]].workspace.settings.search.resource_top_k
    found = list(collections.values())
    resources = (
        search_collections(first, found, limit, listener, open_index=open_collection)
        if found
        else []
    )
    merged = [result for _, result in page.results]
    if found:
        merged = related_resources(merged, found, listener, refresh=limit <= 0)
    return FoldersResponse(
        query=first.query,
        results=[
            FolderResult(name, engines[index[name]].root, result)
            for (name, _), result in zip(page.results, merged, strict=True)
        ],
        resources=resources,
        searched=[names[i] for i in searched],
        routed=choice.routed,
        folder_order=choice.ranked,
        streams=list(page.streams),
        took_ms=round((time.perf_counter() - started) * 1000, 2),
        tokens=page.tokens,
        truncated_by_budget=page.truncated_by_budget,
    )
