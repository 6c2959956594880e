"""Search pages: one folder's page as the Searcher made it, several folders merged once,
and the test filter every front end applies the same way (`keeps_tests`,
`without_tests`).

A single index's page is retrieval/search.py's (`Searcher`): fused, ranked,
diversified across files and fitted to the token budget there. It is passed on
as it is: re-sorting it by score would undo the file diversity.

A multi-root workspace (the language server) merges its folders' pages here,
once: each folder's order is kept (the page heads are compared by score, so a
folder's diversified order survives the merge), the union is cut to top_k and
fitted to the budget. When the router ranked the folders, each page has a
weight (`weights`, engine/unscoped.py, page_weights) and its heads compete at
their score times its weight: one folder's scores are not another's (each fuses
its own streams over its own index), and the router says which folder the
question is about. A page the router did not rank weighs ROUTE_DECAY times the
lightest it did. The score a merged result shows is the weighted one, so a
merged page is in score order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from codesift.config import SearchSettings
from codesift.engine.results import TESTS_CHOICES
from codesift.retrieval.page import RESULT_OVERHEAD_TOKENS
from codesift.retrieval.query import analyze_query
from codesift.retrieval.ranking import is_test_like_path
from codesift.retrieval.request import (
    BROAD_LAYERS,
    SearchRequest,
    SearchResponse,
    SearchResult,
    StreamReport,
)
from codesift.retrieval.snippets import estimate_tokens

__all__ = [
    "MAX_TOP_K",
    "ROUTE_DECAY",
    "TESTS_CHOICES",
    "TEST_OVERFETCH",
    "FolderPage",
    "MergedPage",
    "is_test_path",
    "keeps_tests",
    "merge_pages",
    "search_request",
    "wide_request",
    "without_tests",
]

# A folder the router did not rank (or ranked without a graded score) counts this
# much less than the one before it (engine/unscoped.py).
ROUTE_DECAY = 0.8
# With the test filter, each source is asked for this many times `top_k` results
# (at most MAX_TOP_K), so that the page still fills once tests are dropped.
TEST_OVERFETCH = 3
# The most results a request may ask for (retrieval/request.py checks it).
MAX_TOP_K = 200


@dataclass(frozen=True, slots=True)
class FolderPage:
    """One folder's answer: its name and the Searcher's response."""

    folder: str
    response: SearchResponse


@dataclass(frozen=True, slots=True)
class MergedPage:
    results: tuple[tuple[str, SearchResult], ...]  # (folder, result) in page order
    streams: tuple[tuple[str, StreamReport], ...] = ()
    tokens: int = 0
    truncated_by_budget: bool = False
    stages: dict[str, float] = field(default_factory=dict)


def merge_pages(
    request: SearchRequest,
    pages: Sequence[FolderPage],
    weights: Mapping[str, float] | None = None,
) -> MergedPage:
    """The page over several folders (see the module docstring); one folder's page
    comes back unchanged. `weights`: each page's weight by folder name, from the
    router (None or empty: scores alone)."""
    streams = tuple((p.folder, s) for p in pages for s in p.response.streams)
    if len(pages) == 1:
        only = pages[0]
        return MergedPage(
            results=tuple((only.folder, r) for r in only.response.results),
            streams=streams,
            tokens=only.response.tokens,
            truncated_by_budget=only.response.truncated_by_budget,
            stages=dict(only.response.stages),
        )
    truncated = any(p.response.truncated_by_budget for p in pages)
    unranked = min(weights.values()) * ROUTE_DECAY if weights else 1.0
    weight = [(weights or {}).get(p.folder, unranked) for p in pages]
    heads = [0] * len(pages)
    merged: list[tuple[str, SearchResult]] = []
    tokens = 0
    while len(merged) < request.top_k:
        best = -1
        for i, page in enumerate(pages):
            results = page.response.results
            if heads[i] < len(results) and (
                best < 0
                or results[heads[i]].score * weight[i]
                > pages[best].response.results[heads[best]].score * weight[best]
            ):
                best = i
        if best < 0:
            break
        result = pages[best].response.results[heads[best]]
        heads[best] += 1
        cost = RESULT_OVERHEAD_TOKENS + estimate_tokens(result.snippet)
        if request.max_tokens is not None and tokens + cost > request.max_tokens:
            truncated = True
            break
        tokens += cost
        if weight[best] != 1.0:  # the score shown is the one the page is ordered by
            result = replace(result, score=result.score * weight[best])
        merged.append((pages[best].folder, result))
    return MergedPage(tuple(merged), streams, tokens, truncated)


def search_request(settings: SearchSettings, query: str, **options: Any) -> SearchRequest:
    """A search request with the `search` settings' defaults (`top_k`,
    `snippet_chars`; the broad layers) for the options not given (or given as
    None): the one place every front end's request gets its defaults. The bounds
    are checked by `SearchRequest.validated`."""
    given = {k: v for k, v in options.items() if v is not None}
    given.setdefault("top_k", settings.top_k)
    given.setdefault("snippet_chars", settings.snippet_chars)
    if not given.get("layers"):
        given["layers"] = BROAD_LAYERS
    return SearchRequest(query=query, **given)


def is_test_path(path: str) -> bool:
    """Whether a result's file is a test file, by each language's conventions (the
    rule the ranking and the test filter use; front ends show it as `is_test`)."""
    return is_test_like_path(path)


# A test's own name, as test frameworks have them written: `test_parse`,
# `testParse`, `TestParser`, `Test_parse`, `parse_test`, `ParserTest(s)`, `ParserSpec`,
# `parser_spec`.
_TEST_NAME = re.compile(
    r"^(?:test_|test[A-Z0-9]|Test[A-Z0-9_])|(?:_test|_spec|(?<=[a-z0-9])(?:Tests?|Spec))$"
)


def keeps_tests(choice: str, query: str) -> bool:
    """Whether a search whose `tests` option is `choice` keeps the results in test
    files: `include` does, `exclude` does not, and `auto` does only when the query
    asks for test code itself: text to find as written (a quoted text or a pasted
    line of code: an error message or a line may well be in a test), a test's name
    (`test_retry_charge`, `LedgerTest`), a path of a test file, or a trace with a
    frame in one (a failing test's traceback)."""
    if choice == "include":
        return True
    if choice != "auto":
        return False
    analysis = analyze_query(query)
    if analysis.verbatim:
        return True
    if analysis.frames:
        return any(is_test_like_path(frame.path) for frame in analysis.frames)
    if analysis.path:
        return is_test_like_path(analysis.path)
    names = (analysis.symbol,) if analysis.symbol_like else analysis.identifiers
    return any(_TEST_NAME.search(part) for name in names for part in re.split(r"[.:#]+", name))


def wide_request(request: SearchRequest, tests: bool) -> SearchRequest:
    """What each source is asked: the request, or TEST_OVERFETCH times as many
    results when the test filter (`tests` False) will drop some."""
    if tests or not 1 <= request.top_k <= MAX_TOP_K:  # a bad top_k: validation says so
        return request
    return replace(request, top_k=min(MAX_TOP_K, request.top_k * TEST_OVERFETCH))


def without_tests(response: SearchResponse, top_k: int) -> SearchResponse:
    """A source's page without test files, cut to `top_k` (its token estimate
    counted again as merge_pages counts it; what is left fits the budget the
    wider page fitted)."""
    kept = [r for r in response.results if not is_test_like_path(r.path)][:top_k]
    tokens = sum(RESULT_OVERHEAD_TOKENS + estimate_tokens(r.snippet) for r in kept)
    return replace(response, results=kept, tokens=tokens)
