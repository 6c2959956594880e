"""Document collections and routing in a long-running server (the language server,
the MCP server): each collection folder gets a live index of its own
(engine/live.py's `FolderIndex`: a writer thread and a watcher), shared by every
workspace folder that lists it, so an edited document is searchable within the
watcher's latency, without a rescan at search time.

    mounted = LiveCollections(make_index)
    pairs = mounted.mount("file:///work/shop", shop_workspace)   # [(Collection, FolderIndex)]
    resources = live_resources(reader, pairs, request, 3, cancel)
    results = related_resources(results, [c for c, _ in pairs])
    routed = live_route(reader, folders, pairs, "partial refunds", 3, cancel)
    mounted.unmount("file:///work/shop")                          # stops what no one lists

The one-shot front end (the CLI) does the same through engine/session.py and
engine/route.py with indexes brought up to date on each call.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import apsw

from codesift.engine.collections import (
    Collection,
    collections_of,
    pick_resources,
    refresh_mentions,
    resource_request,
)
from codesift.engine.listener import EngineListener
from codesift.engine.live import Cancellation, FolderIndex, LiveReader
from codesift.engine.route import (
    RouteResult,
    cached_collection_profile,
    cached_profile,
    check_route,
)
from codesift.engine.route import route_sources as _route_sources
from codesift.engine.workspace import Workspace
from codesift.errors import CodesiftError, SearchCancelled
from codesift.retrieval.request import SearchRequest, SearchResult
from codesift.retrieval.routing import RouteEvidence, SourceProfile
from codesift.retrieval.vector_index import resident_neighbours
from codesift.store.route_centroids import (
    cached_centroids,
    neighbour_similarity,
    vectors_are_minilm,
)
from codesift.store.route_profile import IndexEvidence

__all__ = [
    "ROUTE_FOLDERS",
    "ROUTE_MIN_FOLDERS",
    "ROUTE_THRESHOLD",
    "LiveCollections",
    "Mounted",
    "live_evidence",
    "live_query_embedder",
    "live_resources",
    "live_route",
    "resident_neighbours",
    "routed_folders",
]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from codesift.embedding.model import Embedder

log = logging.getLogger(__name__)

# An unscoped search over ROUTE_MIN_FOLDERS or more folders searches the router's
# best ROUTE_FOLDERS among those it gives at least ROUTE_THRESHOLD confidence;
# none: every folder. Its pages are merged in the router's order
# (engine/search.py, ROUTE_DECAY), so folders past the first few seldom place a
# result. Over the 25 dev-set corpora (bench/route_quality.py) the right folder is
# among the 5 searched for 0.95 of the queries, and the NDCG@10 (0.61) is that of
# every folder merged in the router's order; a threshold of 0.2 or 0.3 drops the
# right folder more often (0.945, 0.93) and costs NDCG on both halves of the
# queries. The old rule (every folder at 0.3 or more, about 12) gave 0.40.
ROUTE_THRESHOLD = 0.1
ROUTE_FOLDERS = 5
# Fewer folders are all searched unless the request asks to route (`route: true`):
# searching them costs little, and a wrong route loses the answer. The router
# still orders their pages.
ROUTE_MIN_FOLDERS = 5
# A read waits this long for a collection's index to open (its first build) before
# it answers without that collection: a search must not wait for a large folder.
COLLECTION_OPEN_SECONDS = 5.0
# ... and this long for a workspace folder's, when routing.
FOLDER_OPEN_SECONDS = 30.0

Mounted = tuple[Collection, FolderIndex]


class LiveCollections:
    """The collections the served workspaces list, each folder indexed live once.

    `make_index(collection)` builds (not starts) the FolderIndex of a collection
    folder; mounting starts it, and it stops when no owner lists it any more."""

    def __init__(self, make_index: Callable[[Collection], FolderIndex]) -> None:
        self._make_index = make_index
        self._lock = threading.Lock()
        self._indexes: dict[Path, FolderIndex] = {}
        self._owners: dict[str, list[Mounted]] = {}

    def mount(
        self, owner: str, workspace: Workspace, listener: EngineListener | None = None
    ) -> list[Mounted]:
        """Start (or share) the live index of each collection `workspace` lists, for
        `owner` (a folder's URI); the owner's earlier collections that it no longer
        lists are let go."""
        found = collections_of(workspace, listener)
        started: list[FolderIndex] = []
        mounted: list[Mounted] = []
        with self._lock:
            for collection in found:
                key = collection.workspace.db_path
                index = self._indexes.get(key)
                if index is None:
                    index = self._make_index(collection)
                    self._indexes[key] = index
                    started.append(index)
                mounted.append((collection, index))
            old = self._owners.get(owner, [])
            self._owners[owner] = mounted
            stopped = self._orphans_locked(old)
        for index in started:
            index.start()
            log.info("collection %s: indexing %s into %s", index.name, index.root, index.db_path)
        for index in stopped:
            index.request_stop()
        return mounted

    def unmount(self, owner: str) -> list[FolderIndex]:
        """Let `owner`'s collections go; the indexes no other owner lists are told
        to stop (and returned, for the caller to join or forget)."""
        with self._lock:
            old = self._owners.pop(owner, [])
            stopped = self._orphans_locked(old)
        for index in stopped:
            index.request_stop()
        return stopped

    def _orphans_locked(self, old: Sequence[Mounted]) -> list[FolderIndex]:
        listed = {c.workspace.db_path for mounted in self._owners.values() for c, _ in mounted}
        stopped: list[FolderIndex] = []
        for collection, index in old:
            key = collection.workspace.db_path
            if key not in listed and self._indexes.get(key) is index:
                del self._indexes[key]
                stopped.append(index)
        return stopped

    def of(self, owner: str) -> list[Mounted]:
        with self._lock:
            return list(self._owners.get(owner, []))

    def distinct(self, owners: Sequence[str]) -> list[Mounted]:
        """The collections `owners` list, each index once (the first name it has)."""
        seen: set[Path] = set()
        out: list[Mounted] = []
        with self._lock:
            for owner in owners:
                for collection, index in self._owners.get(owner, []):
                    if index.db_path not in seen:
                        seen.add(index.db_path)
                        out.append((collection, index))
        return out

    def indexes(self) -> list[FolderIndex]:
        with self._lock:
            return list(self._indexes.values())

    def stop_all(self) -> list[FolderIndex]:
        """Tell every collection index to stop; they are returned to be joined."""
        with self._lock:
            indexes, self._indexes, self._owners = list(self._indexes.values()), {}, {}
        for index in indexes:
            index.request_stop()
        return indexes


def live_resources(
    reader: LiveReader,
    mounted: Sequence[Mounted],
    request: SearchRequest,
    limit: int,
    cancel: Cancellation,
    warn: Callable[[str], None] | None = None,
) -> list[SearchResult]:
    """The best `limit` resources of the mounted collections for `request` (as
    engine/collections.py's `search_collections`, on the live indexes). A
    collection whose index is not usable yet is skipped (`warn` hears why)."""
    if limit <= 0 or not mounted:
        return []
    ask = resource_request(request, limit).validated()
    pages: list[tuple[str, Sequence[SearchResult]]] = []
    for collection, index in mounted:
        if cancel.cancelled:
            break
        try:
            page = reader.search(index, ask, cancel, open_timeout=COLLECTION_OPEN_SECONDS)
        except SearchCancelled:
            raise
        except CodesiftError as exc:
            message = f"collection {collection.name!r}: {exc}"
            log.warning("%s", message)
            if warn is not None:
                warn(message)
            continue
        pages.append((collection.name, page.results))
        refresh_mentions(collection)
    return pick_resources(pages, limit)


class LivePools(NamedTuple):
    """What a live route scores: the folders' profiles and evidence, and the
    mounted collections' profiles."""

    repositories: list[SourceProfile]
    evidence: dict[str, RouteEvidence]
    collections: list[SourceProfile]


def live_pools(
    reader: LiveReader,
    folders: Sequence[FolderIndex],
    mounted: Sequence[Mounted],
    cancel: Cancellation,
    held: ExitStack,
) -> LivePools:
    """Each live folder's profile and evidence and each mounted collection's profile
    (read from its live index, cached until the index changes); a collection that
    cannot be read yet is left out with a warning. The folders' connections stay
    attached to `cancel` until `held` closes (the evidence reads through them)."""
    repositories: list[SourceProfile] = []
    evidence: dict[str, RouteEvidence] = {}
    for folder in folders:
        conn = held.enter_context(reader.connection(folder, cancel, FOLDER_OPEN_SECONDS))
        profile = cached_profile(folder.workspace, conn)
        repositories.append(replace(profile, name=folder.name))
        evidence[folder.name] = live_evidence(folder, conn)
    collections: list[SourceProfile] = []
    for collection, index in mounted:
        try:
            with reader.connection(index, cancel, COLLECTION_OPEN_SECONDS) as conn:
                collections.append(cached_collection_profile(collection, conn))
        except SearchCancelled:
            raise
        except CodesiftError as exc:  # not indexed yet, unreadable: routed without it
            log.warning("collection %r left out of the route: %s", collection.name, exc)
    return LivePools(repositories, evidence, collections)


def live_route(
    reader: LiveReader,
    folders: Sequence[FolderIndex],
    mounted: Sequence[Mounted],
    query: str,
    limit: int,
    cancel: Cancellation,
) -> RouteResult:
    """Route `query` among the live `folders` and the mounted collections
    (`live_pools`); QueryError for a bad request."""
    check_route(query, limit)
    with ExitStack() as held:
        pools = live_pools(reader, folders, mounted, cancel, held)
        return _route_sources(
            query,
            pools.repositories,
            pools.collections,
            limit,
            pools.evidence,
            live_query_embedder(reader, folders),
        )


def live_evidence(folder: FolderIndex, conn: apsw.Connection) -> IndexEvidence:
    """A live folder's index as routing evidence, topics included (as a one-shot
    route reads them: engine/route_folders.py), read through `conn`, the reader
    thread's connection to it (the caller holds it while the route reads): a
    store-level object, so that routing reads the index without coming back to the
    engine. The neighbour score comes from the vectors the folder holds in memory
    (~1 ms) when they are loaded, else from a sqlite-vec kNN."""
    db_path = folder.db_path
    resident = folder.resident_vectors()
    neighbours: Callable[[npt.NDArray[np.float32]], float | None]
    if resident is None:
        neighbours = functools.partial(neighbour_similarity, db_path, conn)
    else:
        layers = folder.settings.embedding.layers
        neighbours = functools.partial(resident_neighbours, db_path, conn, resident, layers)
    return IndexEvidence(
        conn,
        topics=functools.partial(cached_centroids, db_path, conn),
        neighbours=neighbours,
        minilm=functools.partial(vectors_are_minilm, db_path, conn),
    )


def live_query_embedder(reader: LiveReader, folders: Sequence[FolderIndex]) -> Embedder | None:
    """The query embedder of the first folder that embeds with MiniLM, for routing
    among two or more folders (None: routing uses the static model's query)."""
    if len(folders) < 2:
        return None
    for folder in folders:
        embedding = folder.settings.embedding
        if embedding.enabled and embedding.model == "minilm":
            return reader.embedder(folder)
    return None


def routed_folders(
    result: RouteResult, threshold: float = ROUTE_THRESHOLD, limit: int = ROUTE_FOLDERS
) -> list[str]:
    """The repositories of `result` an unscoped search should search: the best
    `limit` of those at `threshold` or above, best first ([] when none is: then
    search every one)."""
    return [m.name for m in result.repositories if m.confidence >= threshold][:limit]
