"""codesift/search: the retrieval request over every (or some) workspace folders."""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from codesift.embedding import Embedder
from codesift.errors import QueryError
from codesift.lsp.folders import Cancellation, FolderIndex
from codesift.lsp.params import (
    invalid,
    opt_bool,
    opt_int,
    opt_str_list,
    parse_time_filters,
    require_object,
    require_str,
)
from codesift.retrieval import BROAD_LAYERS, SearchRequest
from codesift.retrieval.request import MAX_QUERY_CHARS, SearchResult
from codesift.retrieval.search import RESULT_OVERHEAD_TOKENS
from codesift.retrieval.snippets import estimate_tokens

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["SEARCH", "for_folder", "parse_search_request", "search"]

SEARCH = "codesift/search"


def parse_search_request(params: Any) -> tuple[SearchRequest, tuple[str, ...]]:
    """The request and the folders it names; raises InvalidParams.

    Git-time values stay as sent: a revision is resolved per folder (`for_folder`).
    """
    data = require_object(params, SEARCH)
    query = require_str(data, "query", max_chars=MAX_QUERY_CHARS)
    times = parse_time_filters(data)
    request = SearchRequest(
        query=query,
        top_k=opt_int(data, "top_k", 10, 1, 200) or 10,
        layers=opt_str_list(data, "layers") or BROAD_LAYERS,
        languages=opt_str_list(data, "languages"),
        paths=opt_str_list(data, "paths"),
        snippet_chars=opt_int(data, "snippet_chars", 600, 1, 1_000_000) or 600,
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


def _result_json(folder: FolderIndex, result: SearchResult) -> dict[str, Any]:
    from codesift.lsp.server import path_to_uri

    data = asdict(result)
    data["provenance"] = [dict(h) for h in data["provenance"]]
    data["chunk_id"] = str(result.chunk_id)
    data["node_id"] = None if result.node_id is None else str(result.node_id)
    data["folder"] = folder.name
    data["uri"] = path_to_uri(folder.root / result.path)
    return data


async def search(server: CodesiftServer, params: Any) -> dict[str, Any]:
    request, wanted = parse_search_request(params)
    folders = server.select_folders(wanted)
    requests = {folder.name: for_folder(request, folder) for folder in folders}

    def run(cancel: Cancellation) -> dict[str, Any]:
        started = time.perf_counter()
        merged: list[tuple[float, FolderIndex, SearchResult]] = []
        streams: list[dict[str, Any]] = []
        tokens = 0
        truncated = False
        for folder in folders:
            if cancel.cancelled:
                break
            folder.wait_open()
            conn = server.readers.connection(folder.db_path)
            cancel.attach(conn)
            try:
                embedder: Embedder | None = None
                if (
                    folder.settings.embedding.enabled
                    and conn.execute("SELECT 1 FROM embedded LIMIT 1").fetchone()
                ):
                    embedder = server.embedder(folder.settings.embedding)
                response = folder.searcher(conn, embedder).search(
                    requests[folder.name], cancel=cancel.event
                )
            finally:
                cancel.detach(conn)
            merged.extend((r.score, folder, r) for r in response.results)
            streams.extend({**asdict(s), "folder": folder.name} for s in response.streams)
            tokens += response.tokens
            truncated = truncated or response.truncated_by_budget
        merged.sort(key=lambda item: -item[0])
        merged = merged[: request.top_k]
        if len(folders) > 1:  # each folder kept to the budget; the union must be too
            tokens = 0
            kept = []
            for item in merged:
                cost = RESULT_OVERHEAD_TOKENS + estimate_tokens(item[2].snippet)
                if request.max_tokens is not None and tokens + cost > request.max_tokens:
                    truncated = True
                    break
                tokens += cost
                kept.append(item)
            merged = kept
        results = [_result_json(folder, result) for _, folder, result in merged]
        return {
            "query": request.query,
            "results": results,
            "streams": streams,
            "took_ms": round((time.perf_counter() - started) * 1000, 2),
            "tokens": tokens,
            "truncated_by_budget": truncated,
            "index": [folder.completeness() for folder in folders],
            "complete": all(folder.completeness()["complete"] for folder in folders),
        }

    return await server.read(run)
