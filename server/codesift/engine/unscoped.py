"""Which folders an unscoped search over several folders searches, and in what
order their pages are merged.

An unscoped search (no folders named) over two or more folders asks the router
(engine/live_collections.py, live_route; with the shared index's repositories in
the pool when there is one) to rank them:

- over ROUTE_MIN_FOLDERS or more (two or more when the request asks to route), it
  searches only the router's best ROUTE_FOLDERS of those at ROUTE_THRESHOLD or
  more (every folder when none is);
- over fewer, it searches every folder;
- either way the pages are merged in the router's order (engine/search.py,
  merge_pages and ROUTE_DECAY).

A router that cannot read a folder's index costs the order, never the search:
every folder is searched, merged by score alone.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass

from codesift.engine.live import Cancellation, FolderIndex, LiveReader
from codesift.engine.live_collections import (
    ROUTE_MIN_FOLDERS,
    live_route,
    routed_folders,
)
from codesift.engine.route import MAX_ROUTE_LIMIT
from codesift.engine.shared_overlay import SHARED_PREFIX, SharedIndex, live_route_with_shared
from codesift.errors import CodesiftError, SearchCancelled

__all__ = ["UnscopedPlan", "plan_unscoped"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UnscopedPlan:
    """What an unscoped search searches and how it merges."""

    folders: list[FolderIndex]  # the local folders to search
    # The sources the router chose (local names and shared keys, best first); None:
    # not narrowed (every folder searched), [] when it routed and none passed.
    routed: list[str] | None
    # The shared repositories (keys) to search; None: every one in view.
    shared_keys: list[str] | None
    # Every source the router ranked (local names and shared keys), best first;
    # empty: not routed (pages merged by score alone).
    ranked: list[str]
    # The local folder names among them (the rest are shared keys).
    local: frozenset[str] = frozenset()

    @property
    def order(self) -> list[str]:
        """The page names (a local folder's name, SHARED_PREFIX + a shared key) in
        the router's order, for merge_pages."""
        return [n if n in self.local else SHARED_PREFIX + n for n in self.ranked]


def plan_unscoped(
    reader: LiveReader,
    folders: list[FolderIndex],
    query: str,
    cancel: Cancellation,
    *,
    route: bool | None = None,
    shared: SharedIndex | None = None,
    exclude: Collection[str] = (),
    shared_count: int = 0,
) -> UnscopedPlan:
    """The plan for `query` over `folders` (and the shared index's `shared_count`
    repositories in view, `exclude` left out). `route`: None routes as the module
    docstring says; True narrows from two sources on; False neither routes nor
    orders."""
    pool = len(folders) + (shared_count if shared is not None else 0)
    every = UnscopedPlan(folders, None, None, [])
    if route is False or pool < 2:
        return every
    narrow = pool >= (2 if route else ROUTE_MIN_FOLDERS)
    try:
        if shared is None:
            result = live_route(reader, folders, (), query, MAX_ROUTE_LIMIT, cancel)
        else:
            result, _ = live_route_with_shared(
                reader, folders, (), query, MAX_ROUTE_LIMIT, cancel, shared, exclude
            )
    except SearchCancelled:
        raise
    except CodesiftError as exc:  # a folder's index cannot be read: the search says why
        log.info("routing %r failed (%s): searching every folder", query, exc)
        return UnscopedPlan(folders, [], None, []) if narrow else every
    names = frozenset(f.name for f in folders)
    ranked = [m.name for m in result.repositories]
    if not narrow:
        return UnscopedPlan(folders, None, None, ranked, names)
    chosen = routed_folders(result)
    if not chosen:
        return UnscopedPlan(folders, [], None, ranked, names)
    picked = [f for f in folders if f.name in chosen]
    keys = [name for name in chosen if name not in names]
    return UnscopedPlan(picked, chosen, keys, ranked, names)
