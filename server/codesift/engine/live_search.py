"""A search over a server's live folders: the sources (`LiveFolders`) the
language server's `codesift/search` and the MCP server's `search` give the one
conductor (engine/conductor.py, `conduct`), and how they are searched
(`LiveSearch`: routing, the shared index, the collections).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from codesift.engine.api import SourcePlan
from codesift.engine.collections import related_resources
from codesift.engine.live import Cancellation, FolderIndex, LiveReader
from codesift.engine.live_collections import LiveCollections, Mounted, live_resources
from codesift.engine.shared_overlay import SharedIndex, SharedPage
from codesift.engine.shared_pages import NO_TIMES, RawTimes
from codesift.engine.unscoped import plan_unscoped
from codesift.retrieval.request import SearchRequest, SearchResponse, SearchResult

__all__ = ["LiveFolders", "LiveSearch"]


@dataclass(frozen=True, slots=True)
class LiveSearch:
    """How a search over live folders is conducted, besides its request.

    route: None routes as engine/unscoped.py says, True narrows from two sources
      on, False neither routes nor orders;
    shared: the shared index searched besides the folders (None: none);
    exclude: the shared repositories left out (the open folders' own);
    only: the shared repositories searched at most (None: every one in view);
    collections: the server's live document collections (engine/live_collections.py);
      the resources of those the searched folders list come with the page, each
      collection index once (None: none);
    resource_top_k: how many resources at most (0: none, `related` still listed);
    open_timeout: how long to wait for a folder's index to open (None: no limit);
    times: the request's (as_of, since, until) as given: a git revision among
      them is resolved in each shared repository on its own (shared_pages.py);
      none given, the shared index reads the request's window.
    """

    route: bool | None = None
    shared: SharedIndex | None = None
    exclude: frozenset[str] = frozenset()
    only: frozenset[str] | None = None
    collections: LiveCollections | None = None
    resource_top_k: int = 0
    open_timeout: float | None = 30.0
    times: RawTimes = NO_TIMES


class LiveFolders:
    """A server's live folders (and the shared index) as the sources of a search.

    `checked`: the request as each folder validated it (its git times resolved in
    the folder's repository), by folder name."""

    def __init__(
        self,
        reader: LiveReader,
        folders: Sequence[FolderIndex],
        checked: Mapping[str, SearchRequest],
        how: LiveSearch | None = None,
    ) -> None:
        self.reader = reader
        self.folders = {folder.name: folder for folder in folders}
        self.checked = checked
        self.how = how or LiveSearch()
        # The collections whose resources came with the last page.
        self.mounted: list[Mounted] = []

    def plan(self, query: str, cancel: Cancellation | None) -> SourcePlan:
        how = self.how
        unscoped = plan_unscoped(
            self.reader,
            list(self.folders.values()),
            query,
            cancel or Cancellation(),
            route=how.route,
            shared=how.shared,
            exclude=how.exclude,
        )
        return SourcePlan(
            [folder.name for folder in unscoped.folders],
            unscoped.routed,
            unscoped.ranked,
            unscoped.weights,
            unscoped.shared_keys,
        )

    def page(self, name: str, top_k: int, cancel: Cancellation | None) -> SearchResponse:
        request = replace(self.checked[name], top_k=top_k)
        folder = self.folders[name]
        return self.reader.search(folder, request, cancel or Cancellation(), self.how.open_timeout)

    def shared(
        self, request: SearchRequest, only: Sequence[str] | None, cancel: Cancellation | None
    ) -> SharedPage | None:
        if self.how.shared is None:
            return None
        limit = self.how.only
        if limit is not None:
            only = [key for key in only if key in limit] if only is not None else sorted(limit)
        return self.how.shared.search(request, self.how.exclude, only, cancel, self.how.times)

    def resources(
        self,
        searched: Sequence[str],
        request: SearchRequest,
        results: list[SearchResult],
        cancel: Cancellation | None,
    ) -> tuple[list[SearchResult], list[SearchResult]]:
        how = self.how
        folders = [self.folders[name] for name in searched]
        collections = how.collections
        self.mounted = collections.distinct([f.uri for f in folders]) if collections else []
        if not self.mounted:
            return [], results
        limit = how.resource_top_k
        found = live_resources(self.reader, self.mounted, request, limit, cancel or Cancellation())
        listed = [collection for collection, _ in self.mounted]
        return found, related_resources(results, listed, refresh=limit <= 0)
