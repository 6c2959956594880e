"""One conductor for a search over a server's live folders: the language server's
`codesift/search` and the MCP server's `search` both call `conduct`.

The steps, in this order and nowhere else:

1. the routing plan (engine/unscoped.py, `plan_unscoped`): which folders and which
   repositories of the shared index are searched, and each page's weight;
2. each source's page: every planned folder (LiveReader.search), then the shared
   index's repositories (SharedIndex.search), their open folders' own left out;
3. the test filter (engine/search.py, `without_tests`): with `tests=False` every
   source is asked for TEST_OVERFETCH times `top_k` results, the results in test
   files (as the ranking recognises them, `is_test_path`) dropped, and each page
   cut back to `top_k`;
4. the page merge (engine/search.py, `merge_pages`): weighted by the plan;
5. the document collections' best resources (`live_resources`) and, on every
   result, the resources that mention it (`related_resources`).

Front ends parse their input into a SearchRequest and a `LiveSearch`, call
`conduct`, and render the `ConductedPage` (their own fields: URIs, folders).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from codesift.embedding import remembered_queries
from codesift.engine.collections import related_resources
from codesift.engine.live import Cancellation, FolderIndex, LiveReader
from codesift.engine.live_collections import Mounted, live_resources
from codesift.engine.search import (
    TEST_OVERFETCH,
    TESTS_CHOICES,
    FolderPage,
    is_test_path,
    merge_pages,
    wide_request,
    without_tests,
)
from codesift.engine.shared_overlay import SharedIndex, SharedStatus
from codesift.engine.unscoped import UnscopedPlan, plan_unscoped
from codesift.retrieval.request import (
    SearchRequest,
    SearchResponse,
    SearchResult,
    SearchWarning,
    StreamReport,
)

__all__ = [
    "TESTS_CHOICES",
    "TEST_OVERFETCH",
    "ConductedPage",
    "LiveSearch",
    "conduct",
    "is_test_path",
    "without_tests",
]


@dataclass(frozen=True, slots=True)
class LiveSearch:
    """How a search over live folders is conducted, besides its request.

    tests: keep results in test files (False: the test filter);
    route: None routes as engine/unscoped.py says, True narrows from two sources
      on, False neither routes nor orders;
    shared: the shared index searched besides the folders (None: none);
    exclude: the shared repositories left out (the open folders' own);
    mounted: the document collections of the folders searched, whose resources
      come with the page (None: none);
    resource_top_k: how many resources at most (0: none, `related` still listed);
    open_timeout: how long to wait for a folder's index to open (None: no limit).
    """

    tests: bool = True
    route: bool | None = None
    shared: SharedIndex | None = None
    exclude: frozenset[str] = frozenset()
    mounted: Callable[[Sequence[FolderIndex]], Sequence[Mounted]] | None = None
    resource_top_k: int = 0
    open_timeout: float | None = 30.0


@dataclass(slots=True)
class ConductedPage:
    """The merged page: each result with the name of the page it came from (a
    folder's name, or the shared index's page of a repository: `shared_keys`
    gives its key), the resources, and what the plan and the sources said."""

    request: SearchRequest
    results: list[tuple[str, SearchResult]]
    resources: list[SearchResult]
    searched: list[FolderIndex]
    plan: UnscopedPlan
    streams: tuple[tuple[str, StreamReport], ...] = ()
    tokens: int = 0
    truncated_by_budget: bool = False
    warnings: list[SearchWarning] = field(default_factory=list)
    shared_keys: Mapping[str, str] = field(default_factory=dict)
    shared_status: SharedStatus | None = None
    shared_streams: tuple[StreamReport, ...] = ()
    # The collections whose resources came with the page.
    mounted: list[Mounted] = field(default_factory=list)
    # Each source's own page (test filter applied), by page name: what a front end
    # that shows one folder's timings, rerank and warnings reads.
    responses: dict[str, SearchResponse] = field(default_factory=dict)


def conduct(
    reader: LiveReader,
    folders: Sequence[FolderIndex],
    request: SearchRequest,
    cancel: Cancellation,
    how: LiveSearch | None = None,
    *,
    checked: Mapping[str, SearchRequest] | None = None,
) -> ConductedPage:
    """The page for `request` over `folders` and the shared index, by the steps of
    the module docstring. `checked`: the request as each folder validated it (times
    resolved in its repository), by folder name; else validated here (QueryError
    for a time a folder cannot resolve). SearchCancelled when `cancel` fires."""
    how = how or LiveSearch()
    wide = wide_request(request, how.tests)
    asked = {
        folder.name: wide_request(
            checked[folder.name] if checked is not None else request.validated(root=folder.root),
            how.tests,
        )
        for folder in folders
    }
    # The folders and the shared index share one query vector (one model).
    with remembered_queries():
        return _conduct(reader, list(folders), request, wide, asked, cancel, how)


def _conduct(
    reader: LiveReader,
    folders: list[FolderIndex],
    request: SearchRequest,
    wide: SearchRequest,
    asked: Mapping[str, SearchRequest],
    cancel: Cancellation,
    how: LiveSearch,
) -> ConductedPage:
    shared = how.shared
    plan = plan_unscoped(
        reader,
        folders,
        request.query,
        cancel,
        route=how.route,
        shared=shared,
        exclude=how.exclude,
    )
    pages: list[FolderPage] = []
    for folder in plan.folders:
        if cancel.cancelled:
            break
        response = reader.search(folder, asked[folder.name], cancel, how.open_timeout)
        pages.append(
            FolderPage(
                folder.name, without_tests(response, request.top_k) if not how.tests else response
            )
        )
    page = ConductedPage(request, [], [], plan.folders, plan)
    if shared is not None and not cancel.cancelled:
        found = shared.search(wide, how.exclude, plan.shared_keys, cancel)
        page.shared_status = found.status
        page.shared_streams = found.streams  # also when no repository had a result
        page.shared_keys = dict(found.keys)
        for shared_page in found.pages:
            response = (
                without_tests(shared_page.response, request.top_k)
                if not how.tests
                else shared_page.response
            )
            pages.append(FolderPage(shared_page.folder, response))
    merged = merge_pages(request, pages, plan.weights)
    page.results = list(merged.results)
    page.streams = merged.streams
    page.tokens = merged.tokens
    page.truncated_by_budget = merged.truncated_by_budget
    page.warnings = [w for p in pages for w in p.response.warnings]
    page.responses = {p.folder: p.response for p in pages}
    mounted = list(how.mounted(plan.folders)) if how.mounted is not None else []
    page.mounted = mounted
    if mounted:
        limit = how.resource_top_k
        page.resources = live_resources(reader, mounted, request, limit, cancel)
        related = related_resources(
            [r for _, r in page.results], [c for c, _ in mounted], refresh=limit <= 0
        )
        page.results = [(name, r) for (name, _), r in zip(page.results, related, strict=True)]
    return page


def _tests_kept(response: SearchResponse, request: SearchRequest, tests: bool) -> SearchResponse:
    return response if tests else without_tests(response, request.top_k)
