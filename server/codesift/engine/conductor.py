"""One conductor for every search: `conduct` runs the same steps whatever the
sources are. The language server's `codesift/search` and the MCP server's `search`
give it a server's live folders (engine/live_search.py, `LiveFolders`); the CLI's `search` (one
folder or several) gives it one-shot engines (engine/folder_search.py,
`EngineFolders`). Both implement `SearchSources` (engine/api.py).

The steps, in this order and nowhere else:

1. the routing plan (`SearchSources.plan`; engine/unscoped.py's rules): which
   sources and which repositories of the shared index are searched, and each
   page's weight;
2. each source's page (`SearchSources.page`), then the shared index's
   repositories (`SearchSources.shared`), their open folders' own left out;
3. the test filter (engine/search.py, `without_tests`): with `tests=False` every
   source is asked for TEST_OVERFETCH times `top_k` results, the results in test
   files (as the ranking recognises them, `is_test_path`) dropped, and each page
   cut back to `top_k`;
4. the page merge (engine/search.py, `merge_pages`): weighted by the plan;
5. the document collections' best resources and, on every result, the resources
   that mention it (`SearchSources.resources`).

Front ends parse their input into a SearchRequest (engine/search.py,
`search_request`), build the sources, call `conduct`, and render the
`ConductedPage` (their own fields: URIs, folders).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codesift.embedding.model import remembered_queries
from codesift.engine.api import SearchSources, SourcePlan
from codesift.engine.search import (
    TEST_OVERFETCH,
    TESTS_CHOICES,
    FolderPage,
    is_test_path,
    keeps_tests,
    merge_pages,
    wide_request,
    without_tests,
)
from codesift.retrieval.request import (
    SearchRequest,
    SearchResponse,
    SearchResult,
    SearchWarning,
    StreamReport,
)

if TYPE_CHECKING:
    from codesift.engine.live import Cancellation
    from codesift.engine.shared_overlay import SharedStatus

__all__ = [
    "TESTS_CHOICES",
    "TEST_OVERFETCH",
    "ConductedPage",
    "SearchSources",
    "conduct",
    "is_test_path",
    "keeps_tests",
    "without_tests",
]


@dataclass(slots=True)
class ConductedPage:
    """The merged page: each result with the name of the page it came from (a
    source's name, or the shared index's page of a repository: `shared_keys`
    gives its key), the resources, and what the plan and the sources said."""

    request: SearchRequest
    plan: SourcePlan
    results: list[tuple[str, SearchResult]] = field(default_factory=list)
    resources: list[SearchResult] = field(default_factory=list)
    streams: tuple[tuple[str, StreamReport], ...] = ()
    tokens: int = 0
    truncated_by_budget: bool = False
    warnings: list[SearchWarning] = field(default_factory=list)
    shared_keys: Mapping[str, str] = field(default_factory=dict)
    shared_status: SharedStatus | None = None
    shared_streams: tuple[StreamReport, ...] = ()
    # Each source's own page (test filter applied), by page name: what a front end
    # that shows one folder's timings, rerank and warnings reads.
    responses: dict[str, SearchResponse] = field(default_factory=dict)

    @property
    def searched(self) -> list[str]:
        """The sources searched (the shared index's repositories aside)."""
        return self.plan.sources


def conduct(
    sources: SearchSources,
    request: SearchRequest,
    cancel: Cancellation | None = None,
    *,
    tests: bool = True,
) -> ConductedPage:
    """The page for `request` over `sources`, by the steps of the module docstring.
    `tests` False: the test filter. SearchCancelled when `cancel` fires."""
    # The sources and the shared index share one query vector (one model).
    with remembered_queries():
        plan = sources.plan(request.query, cancel)
        top_k = wide_request(request, tests).top_k
        pages: list[FolderPage] = []
        for name in plan.sources:
            if cancel is not None and cancel.cancelled:
                break
            pages.append(FolderPage(name, _kept(sources.page(name, top_k, cancel), request, tests)))
        page = ConductedPage(request, plan)
        found = None
        if cancel is None or not cancel.cancelled:
            found = sources.shared(wide_request(request, tests), plan.shared_keys, cancel)
        if found is not None:
            page.shared_status = found.status
            page.shared_streams = found.streams  # also when no repository had a result
            page.shared_keys = dict(found.keys)
            for shared_page in found.pages:
                response = _kept(shared_page.response, request, tests)
                pages.append(FolderPage(shared_page.folder, response))
        merged = merge_pages(request, pages, plan.weights)
        page.streams = merged.streams
        page.tokens = merged.tokens
        page.truncated_by_budget = merged.truncated_by_budget
        page.warnings = [w for p in pages for w in p.response.warnings]
        page.responses = {p.folder: p.response for p in pages}
        results = [result for _, result in merged.results]
        page.resources, results = sources.resources(plan.sources, request, results, cancel)
        names = [name for name, _ in merged.results]
        page.results = list(zip(names, results, strict=True))
        return page


def _kept(response: SearchResponse, request: SearchRequest, tests: bool) -> SearchResponse:
    """A source's page, through the test filter unless `tests`."""
    return response if tests else without_tests(response, request.top_k)
