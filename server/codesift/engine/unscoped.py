"""Which folders an unscoped search over several folders searches, and in what
order their pages are merged.

An unscoped search (no folders named) over two or more folders asks the router
(engine/live_collections.py, live_route; with the shared index's repositories in
the pool when there is one) to rank them:

- over ROUTE_MIN_FOLDERS or more (two or more when the request asks to route), it
  searches only the router's best ROUTE_FOLDERS of those at ROUTE_THRESHOLD or
  more (every folder when none is);
- over fewer, it searches every folder;
- either way the pages are merged by the router's weights (page_weights):
  exp(-GRADE_SCALE x (best grade - the folder's grade)) for the folders the
  router's graded order scored (engine/search.py, merge_pages), each other one
  ROUTE_DECAY times the one before it.

Over the 25 dev-set corpora (bench/route_quality.py) this lifts the NDCG@10 of a
search that names no folder from 0.40 (every folder at confidence 0.3 or more,
merged by score) to 0.63 (the right folder searched alone: 0.78).

A router that cannot read a folder's index costs the order, never the search:
every folder is searched, merged by score alone.

`plan_unscoped` plans a live search (the language server's folders);
`choose_folders` reads a route's answer by the same rules for any front end
(the CLI's search over several folders: engine/folder_search.py).
`live_route_with_shared` is live_route with the shared index's repositories in
the pool (the language server's and the MCP server's `route`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field

from codesift.engine.live import Cancellation, FolderIndex, LiveReader
from codesift.engine.live_collections import (
    ROUTE_MIN_FOLDERS,
    Mounted,
    live_pools,
    live_query_embedder,
    live_route,
    routed_folders,
)
from codesift.engine.route import MAX_ROUTE_LIMIT, RouteResult, check_route, route_sources
from codesift.engine.search import ROUTE_DECAY
from codesift.engine.shared_overlay import (
    SHARED_PREFIX,
    SharedIndex,
    SharedStatus,
    add_shared_pool,
)
from codesift.errors import CodesiftError, SearchCancelled
from codesift.retrieval.routing import RouteMatch

__all__ = [
    "GRADE_SCALE",
    "FolderChoice",
    "UnscopedPlan",
    "choose_folders",
    "live_route_with_shared",
    "page_weights",
    "plan_unscoped",
]

log = logging.getLogger(__name__)

# How fast a folder's weight falls with its distance from the best grade (a sum of
# z-scores, ~5-15 apart from first to fifth over 25 folders). Set on half of the
# dev-set questions (0.03-0.05 alike over 25 folders), checked on the other: above
# a fixed ROUTE_DECAY per place over 2, 3, 5, 8 and 25 folders, on both halves.
GRADE_SCALE = 0.04


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
    # empty: not routed.
    ranked: list[str]
    # Each page's weight in the merge (by page name: a local folder's name,
    # SHARED_PREFIX + a shared key); empty: merged by score alone.
    weights: dict[str, float] = field(default_factory=dict)


def page_weights(matches: Sequence[RouteMatch], local: Collection[str]) -> dict[str, float]:
    """The merge weight of each ranked source's page (see the module docstring),
    by page name (`local`: the local folders' names; the others are shared keys)."""
    grades = [m.grade for m in matches if m.grade is not None]
    best = max(grades) if grades else 0.0
    out: dict[str, float] = {}
    weight = 1.0
    for i, m in enumerate(matches):
        if m.grade is not None:
            weight = math.exp(-GRADE_SCALE * (best - m.grade))
        elif i > 0:
            weight *= ROUTE_DECAY
        out[m.name if m.name in local else SHARED_PREFIX + m.name] = weight
    return out


def plan_unscoped(
    reader: LiveReader,
    folders: list[FolderIndex],
    query: str,
    cancel: Cancellation,
    *,
    route: bool | None = None,
    shared: SharedIndex | None = None,
    exclude: Collection[str] = (),
) -> UnscopedPlan:
    """The plan for `query` over `folders` (and the shared index's repositories in
    view, `exclude` left out). `route`: None routes as the module docstring says;
    True narrows from two sources on; False neither routes nor orders."""
    every = UnscopedPlan(folders, None, None, [])
    if route is False:
        return every
    needed = 2 if route else ROUTE_MIN_FOLDERS  # the sources from which it narrows
    pool = len(folders)
    if shared is not None and pool < needed:  # the shared repositories count too
        pool += len(shared.status(exclude).repositories)
    if pool < 2:
        return every
    narrow = pool >= needed
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
    choice = choose_folders(result, names, narrow=narrow)
    if choice.routed is None or not choice.routed:
        return UnscopedPlan(folders, choice.routed, None, choice.ranked, choice.weights)
    picked = [f for f in folders if f.name in choice.routed]
    keys = [name for name in choice.routed if name not in names]
    return UnscopedPlan(picked, choice.routed, keys, choice.ranked, choice.weights)


@dataclass(frozen=True, slots=True)
class FolderChoice:
    """What the router's answer means for an unscoped search (the module
    docstring): the sources to search (None: every one, not narrowed; []: it
    narrowed and none passed, so every one), every source it ranked, best first,
    and each page's weight in the merge."""

    routed: list[str] | None
    ranked: list[str]
    weights: dict[str, float]


def choose_folders(result: RouteResult, local: Collection[str], *, narrow: bool) -> FolderChoice:
    """The choice for a route `result` over the local folders named `local` (and
    any shared repositories it ranked); `narrow`: whether the pool is large enough
    to search only the routed sources."""
    ranked = [m.name for m in result.repositories]
    weights = page_weights(result.repositories, local)
    return FolderChoice(routed_folders(result) if narrow else None, ranked, weights)


def live_route_with_shared(
    reader: LiveReader,
    folders: Sequence[FolderIndex],
    mounted: Sequence[Mounted],
    query: str,
    limit: int,
    cancel: Cancellation,
    shared: SharedIndex,
    exclude: Collection[str],
) -> tuple[RouteResult, SharedStatus]:
    """engine/live_collections.live_route with the shared repositories in the
    repository pool, scored together by the same code (engine/route.py,
    route_sources)."""
    check_route(query, limit)
    with ExitStack() as held:
        repositories, evidence, collections = live_pools(reader, folders, mounted, cancel, held)
        status = add_shared_pool(repositories, evidence, shared, exclude)
        embedder = live_query_embedder(reader, folders)
        return route_sources(query, repositories, collections, limit, evidence, embedder), status
