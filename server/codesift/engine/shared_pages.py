"""The shared index's answer as pages, one per repository, and the git-time
windows of its repositories.

    pages, keys = split_by_repository(response, visible)
    for window, keys in repository_windows(shared._searcher, visible, ("v1", None, None)):
        ...   # the repositories whose `v1` is the same moment, read together

A time window given as a git revision (`v1`, `HEAD~20`, a commit) is a moment
of one repository: each repository of the shared index resolves it in the
folder it was indexed from (SharedSearch.times), so each is read at its own
`v1`. A date or a duration is the same window for every repository. A
repository whose folder is not on this machine, or that has no such revision,
is left out of a read by revision.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from codesift.engine.search import FolderPage
from codesift.errors import QueryError
from codesift.retrieval.page import RESULT_OVERHEAD_TOKENS
from codesift.retrieval.request import SearchResponse, SearchResult
from codesift.retrieval.snippets import estimate_tokens
from codesift.timespec import TimeFilter, TimeValue, time_filter

__all__ = [
    "NO_TIMES",
    "SHARED_PREFIX",
    "RawTimes",
    "has_revision",
    "repository_windows",
    "split_by_repository",
]

log = logging.getLogger(__name__)

# A shared repository's page is named so (its key after it).
SHARED_PREFIX = "shared:"
# (as_of, since, until) as the request gave them.
RawTimes = tuple[TimeValue | None, TimeValue | None, TimeValue | None]
NO_TIMES: RawTimes = (None, None, None)


class Timed(Protocol):
    """What resolves a window in one repository (engine/postgres.SharedSearch)."""

    def times(
        self,
        as_of: TimeValue | None = None,
        since: TimeValue | None = None,
        until: TimeValue | None = None,
        *,
        now: float | None = None,
    ) -> TimeFilter: ...


def has_revision(times: RawTimes) -> bool:
    """Whether a value of `times` is a git revision (or means nothing without a
    repository): dates and durations are not."""
    if all(value is None for value in times):
        return False
    try:
        time_filter(*times)
    except QueryError:
        return True
    return False


def repository_windows(
    searcher_for: Callable[[tuple[str, ...]], Timed], visible: tuple[str, ...], times: RawTimes
) -> list[tuple[TimeFilter, tuple[str, ...]]]:
    """The repositories in `visible` grouped by their window, each resolved in its
    own repository (see the module docstring); in `visible`'s order."""
    if all(value is None for value in times):
        return [(TimeFilter(), visible)]
    now = time.time()  # one clock for every repository's durations
    try:
        return [(time_filter(*times, now=now), visible)]
    except QueryError:
        pass  # a revision: each repository's own
    groups: dict[TimeFilter, list[str]] = {}
    for key in visible:
        try:
            window = searcher_for((key,)).times(*times, now=now)
        except QueryError:
            continue  # no folder here to resolve the revision in, or no such revision
        groups.setdefault(window, []).append(key)
    return [(window, tuple(keys)) for window, keys in groups.items()]


def split_by_repository(
    response: SearchResponse, visible: Sequence[str]
) -> tuple[tuple[FolderPage, ...], dict[str, str]]:
    """One page per repository, in the shared page's order, paths within the
    repository (the shared search prefixes them with the key when several are in
    view)."""
    by_key: dict[str, list[SearchResult]] = {}
    longest_first = sorted(visible, key=len, reverse=True)
    for result in response.results:
        if len(visible) == 1:
            key, path = visible[0], result.path
        else:
            key = next((k for k in longest_first if result.path.startswith(k + "/")), "")
            if not key:
                log.info("shared result %s names no repository in view: left out", result.path)
                continue
            path = result.path[len(key) + 1 :]
        by_key.setdefault(key, []).append(replace(result, path=path))
    pages = tuple(
        FolderPage(
            SHARED_PREFIX + key,
            SearchResponse(
                query=response.query,
                results=results,
                streams=list(response.streams) if i == 0 else [],
                tokens=sum(RESULT_OVERHEAD_TOKENS + estimate_tokens(r.snippet) for r in results),
                truncated_by_budget=response.truncated_by_budget,
            ),
        )
        for i, (key, results) in enumerate(by_key.items())
    )
    return pages, {SHARED_PREFIX + key: key for key in by_key}
