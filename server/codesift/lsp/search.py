"""codesift/search: the retrieval request over every (or some) workspace folders.

An unscoped search (no `folders`) over several workspace folders routes first
(engine/unscoped.py): over many folders only those the router chooses are
searched, named in `routed`; when none passes, every folder is (`routed: []`).
Either way the pages merge weighted by the router (`folder_order`); `route: false`
searches every folder, merged by score alone. When the
searched folders list document collections, their best resources come in
`resources` and each code result lists the resources that mention it (`related`).

`tests: "exclude"` leaves out results in test files, as the engine's ranking
recognises them by each language's conventions (`is_test_path`): the folders are
asked for TEST_OVERFETCH times as many results, the test files dropped, and the
page cut to `top_k` and the token budget. Every result says `is_test` by the same
rule, so a client never needs a copy of it.

The search itself is conducted by engine/conductor.py (routing plan, each folder
and the shared index, test filter, page merge, resources), as the MCP server's
is: this module parses the request and renders the page.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from codesift.config import SearchSettings
from codesift.engine.conductor import (
    TEST_OVERFETCH,
    TESTS_CHOICES,
    conduct,
    is_test_path,
)
from codesift.engine.live import Cancellation, FolderIndex
from codesift.engine.live_collections import Mounted
from codesift.engine.live_search import LiveFolders, LiveSearch
from codesift.engine.results import (
    MAX_QUERY_CHARS,
    SearchRequest,
    SearchResult,
    result_json,
)
from codesift.engine.search import keeps_tests, search_request
from codesift.errors import QueryError
from codesift.front_defaults import search_setting
from codesift.lsp.params import (
    invalid,
    opt_bool,
    opt_int,
    opt_str_list,
    parse_time_filters,
    require_object,
    require_str,
)

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["SEARCH", "TEST_OVERFETCH", "for_folder", "parse_search_request", "search"]

log = logging.getLogger(__name__)

SEARCH = "codesift/search"


def parse_tests(data: dict[str, Any], query: str) -> bool:
    """Whether `tests` (`include`, the default, `exclude` or `auto`) keeps test files
    for `query` (engine/search.py, `keeps_tests`)."""
    value = data.get("tests", "include")
    if value not in TESTS_CHOICES:
        raise invalid(f"parameter 'tests' must be 'include', 'exclude' or 'auto', got {value!r}")
    return keeps_tests(value, query)


def parse_search_request(
    params: Any, defaults: SearchSettings | None = None
) -> tuple[SearchRequest, tuple[str, ...]]:
    """The request and the folders it names; raises InvalidParams. `top_k` and
    `snippet_chars` not given come from `defaults` (the folder's `search` settings:
    `.codesift.toml` and initializationOptions).

    Git-time values stay as sent: a revision is resolved per folder (`for_folder`).
    """
    settings = defaults or SearchSettings()
    data = require_object(params, SEARCH)
    query = require_str(data, "query", max_chars=MAX_QUERY_CHARS)
    times = parse_time_filters(data)
    _, top_k_min, top_k_max = search_setting("top_k")
    request = search_request(
        settings,
        query,
        top_k=opt_int(data, "top_k", None, top_k_min, top_k_max),
        layers=opt_str_list(data, "layers"),
        languages=opt_str_list(data, "languages"),
        paths=opt_str_list(data, "paths"),
        # A snippet size out of the settings' bounds is clamped, not refused.
        snippet_chars=opt_int(data, "snippet_chars", None, 1, 1_000_000),
        max_tokens=opt_int(data, "max_tokens", None, 1, 10_000_000),
        include_graph=opt_bool(data, "include_graph", False),
    )
    try:
        request = request.validated()  # everything but the times, checked once
    except QueryError as exc:
        raise invalid(str(exc)) from exc
    timed = replace(request, as_of=times.as_of, since=times.since, until=times.until)
    return timed, opt_str_list(data, "folders")


def for_folder(request: SearchRequest, folder: FolderIndex) -> SearchRequest:
    """The request with its times in Unix seconds, git revisions resolved in the
    folder's repository; raises InvalidParams for a malformed time."""
    try:
        return request.validated(root=folder.root)
    except QueryError as exc:
        raise invalid(f"{exc} (folder {folder.name})") from exc


def _result_json(
    folder: FolderIndex, result: SearchResult, repo: str | None = None
) -> dict[str, Any]:
    """A local result: its folder and file URI (`repo`: the folder's repository key
    when a shared index is in use)."""
    from codesift.lsp.server import path_to_uri

    data = result_json(result)
    data["chunk_id"] = str(result.chunk_id)
    data["node_id"] = None if result.node_id is None else str(result.node_id)
    data["folder"] = folder.name
    data["uri"] = path_to_uri(folder.root / result.path)
    data["is_test"] = is_test_path(result.path)
    data["source"] = "local"
    data["repo"] = repo
    return data


def _shared_result_json(repo: str, result: SearchResult) -> dict[str, Any]:
    """A result of the shared index: its repository key and its path within the
    repository; no folder and no file URI (the repository is not open here: the
    open ones are searched locally). Its ids are the shared index's."""
    data = result_json(result)
    data["chunk_id"] = str(result.chunk_id)
    data["node_id"] = None if result.node_id is None else str(result.node_id)
    data["folder"] = None
    data["uri"] = None
    data["is_test"] = is_test_path(result.path)
    data["source"] = "shared"
    data["repo"] = repo
    return data


def _resource_json(mounted: list[Mounted], result: SearchResult) -> dict[str, Any]:
    from codesift.lsp.server import path_to_uri

    roots = {c.name: c.root for c, _ in mounted}
    data = result_json(result)
    data["chunk_id"] = str(result.chunk_id)
    data["node_id"] = None if result.node_id is None else str(result.node_id)
    data["title"] = result.qualified_name or result.path
    root = roots.get(result.collection)
    data["uri"] = path_to_uri(root / result.path) if root is not None else None
    return data


async def search(server: CodesiftServer, params: Any) -> dict[str, Any]:
    data = require_object(params, SEARCH)
    named = opt_str_list(data, "folders")
    folders = server.select_folders(named)
    defaults = folders[0].settings.search if folders else None
    request, _ = parse_search_request(params, defaults)
    tests = parse_tests(data, request.query)
    # Auto (no `route`): narrow over many folders only; `route: true` over two or more.
    asked = opt_bool(data, "route", False) if "route" in data else None
    # The shared index (index.backend = "postgres") is searched by an unscoped
    # search besides the folders, their own repositories left out of it.
    shared = server.shared_index() if opt_bool(data, "shared", True) and not named else None
    checked = {folder.name: for_folder(request, folder) for folder in folders}
    by_name = {folder.name: folder for folder in folders}
    resource_top_k = defaults.resource_top_k if defaults is not None else 0

    def run(cancel: Cancellation) -> dict[str, Any]:
        started = time.perf_counter()
        # Every open folder's repository is left out of the shared index (git reads).
        open_keys = server.open_repo_keys() if shared is not None else {}
        how = LiveSearch(
            route=False if named else asked,
            shared=shared,
            exclude=frozenset(open_keys.values()),
            collections=server.collections,
            resource_top_k=resource_top_k,
            # A git revision: each shared repository's own (engine/shared_pages.py).
            times=(request.as_of, request.since, request.until),
        )
        sources = LiveFolders(server.live, folders, checked, how)
        page = conduct(sources, request, cancel, tests=tests)
        searched = [by_name[name] for name in page.searched]
        shared_keys = page.shared_keys
        return {
            "query": request.query,
            "results": [
                _shared_result_json(shared_keys[name], result)
                if name in shared_keys
                else _result_json(by_name[name], result, open_keys.get(name))
                for name, result in page.results
            ],
            "resources": [_resource_json(sources.mounted, r) for r in page.resources],
            "routed": page.plan.routed,
            "folder_order": page.plan.ranked or None,
            "streams": [
                *(
                    {**asdict(s), "folder": name, "source": "local"}
                    for name, s in page.streams
                    if name not in shared_keys
                ),
                *({**asdict(s), "folder": None, "source": "shared"} for s in page.shared_streams),
            ],
            "took_ms": round((time.perf_counter() - started) * 1000, 2),
            "tokens": page.tokens,
            "truncated_by_budget": page.truncated_by_budget,
            "index": [folder.completeness() for folder in searched],
            "warnings": [asdict(w) for w in page.warnings],
            "complete": all(folder.completeness()["complete"] for folder in searched),
            "shared": page.shared_status.as_json() if page.shared_status is not None else None,
        }

    return await server.read(run)
