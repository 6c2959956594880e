"""Engine results as MCP tool results: readable text that cites `path:line`, and
the same facts as structured content (JSON) for clients that read it.

docs/mcp.md describes each tool's structured content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from mcp_types import CallToolResult, TextContent

from codesift.engine import GraphLink, GraphResult, IndexStatus, Symbol, SymbolMatches
from codesift.engine.live import FolderIndex
from codesift.engine.live_collections import Mounted
from codesift.engine.results import (
    SearchRequest,
    SearchResponse,
    SearchResult,
    StreamReport,
    link_json,
    result_json,
    symbol_json,
)
from codesift.engine.route import RouteMatch, RouteResult, route_json
from codesift.engine.shared_overlay import SharedStatus

__all__ = [
    "graph_result",
    "neighbours_result",
    "route_result",
    "search_result",
    "status_result",
    "symbols_result",
]


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _span(path: str, start: int, end: int) -> str:
    return f"{path}:{start}" if end <= start else f"{path}:{start}-{end}"


def _index_note(index: dict[str, Any]) -> str:
    """A last line when the answer may miss something: changes not indexed yet,
    a failing writer, vectors still being computed."""
    state = index.get("state", "")
    if index.get("error"):
        return f"\n(the index is not up to date: {index['error']})"
    if not index.get("fresh", True):
        return f"\n(answered before the latest changes were indexed; indexer: {state})"
    vectors = index.get("vectors", {})
    if vectors.get("enabled") and vectors.get("coverage", 1.0) < 1.0:
        return (
            f"\n(vectors computed for {vectors['coverage']:.0%} of the index so far:"
            " matches by meaning may be missing)"
        )
    return ""


# -- search ---------------------------------------------------------------------------


def _cited_path(result: SearchResult, repo: str | None) -> str:
    """The path a result is cited by: within the workspace, or `<key>/<path>` for
    a repository of the shared index."""
    return result.path if repo is None else f"{repo}/{result.path}"


def _search_json(rank: int, result: SearchResult, repo: str | None = None) -> dict[str, Any]:
    data = result_json(result)
    cite = _span(_cited_path(result, repo), result.start_line, result.end_line)
    return {
        "rank": rank,
        "cite": cite,
        **data,
        "source": "local" if repo is None else "shared",
        "repo": repo,
    }


def _search_text(rank: int, result: SearchResult, repo: str | None = None) -> list[str]:
    found_by = ", ".join(f"{h.stream}#{h.rank}" for h in result.provenance)
    where = _span(_cited_path(result, repo), result.start_line, result.end_line)
    lines = [
        f"{rank}. {where}{'' if repo is None else ' (shared index)'}"
        f"  {result.kind} {result.qualified_name}  [{result.layer}; {found_by}]"
    ]
    for offset, line in enumerate(result.snippet.split("\n")):
        lines.append(f"   {result.snippet_start_line + offset:>5} | {line}")
    if result.truncated:
        lines.append("         | ... (snippet cut)")
    for edge in result.graph:
        node = edge.node
        lines.append(
            f"   {edge.relation} ({edge.kind}, line {edge.line}): {node.qualified_name}"
            f"  {_span(node.path, node.start_line, node.end_line)}"
        )
    for link in result.related:
        lines.append(
            f"   mentioned in {link.collection}:"
            f" {_span(link.path, link.start_line, link.end_line)} {link.title} ({link.term})"
        )
    return lines


def _resource_json(rank: int, result: SearchResult) -> dict[str, Any]:
    return {
        "rank": rank,
        "collection": result.collection,
        "cite": _span(result.path, result.start_line, result.end_line),
        "path": result.path,
        "start_line": result.start_line,
        "end_line": result.end_line,
        "title": result.qualified_name or result.path,
        "kind": result.kind,
        "layer": result.layer,
        "score": result.score,
        "snippet": result.snippet,
        "snippet_start_line": result.snippet_start_line,
        "truncated": result.truncated,
    }


def _resource_text(rank: int, result: SearchResult) -> list[str]:
    lines = [
        f"{rank}. [{result.collection}] {_span(result.path, result.start_line, result.end_line)}"
        f"  {result.qualified_name or result.path}"
    ]
    for offset, line in enumerate(result.snippet.split("\n")):
        lines.append(f"   {result.snippet_start_line + offset:>5} | {line}")
    return lines


def _shared_note(shared: SharedStatus | None) -> str:
    """A last line when the shared index could not answer."""
    if shared is None or shared.state == "ok":
        return ""
    return f"\n({shared.message}; local results only)"


def search_result(
    request: SearchRequest,
    response: SearchResponse,
    index: dict[str, Any],
    repos: Sequence[str | None] | None = None,
    shared: SharedStatus | None = None,
    shared_streams: Sequence[StreamReport] = (),
) -> CallToolResult:
    """`repos`: per result, the shared index's repository it comes from (None: the
    workspace); `shared`: the shared index's status, when one is in use, and
    `shared_streams` its streams' reports."""
    keys = list(repos) if repos is not None else [None] * len(response.results)
    results = [
        _search_json(i, r, repo)
        for i, (r, repo) in enumerate(zip(response.results, keys, strict=True), start=1)
    ]
    data = {
        "query": response.query,
        "results": results,
        "tokens": response.tokens,
        "max_tokens": request.max_tokens,
        "truncated_by_budget": response.truncated_by_budget,
        "took_ms": round(response.took_ms, 2),
        "streams": [{**asdict(s), "source": "local"} for s in response.streams]
        + [{**asdict(s), "source": "shared"} for s in shared_streams],
        "rerank": response.rerank,
        "resources": [_resource_json(i, r) for i, r in enumerate(response.resources, start=1)],
        "index": index,
        "shared": shared.as_json() if shared is not None else None,
        "warnings": [asdict(w) for w in response.warnings],
    }
    if not response.results and not response.resources:
        text = f"no results for {response.query!r}"
    else:
        lines: list[str] = []
        for i, (result, repo) in enumerate(zip(response.results, keys, strict=True), start=1):
            lines.extend(_search_text(i, result, repo))
        budget = (
            f"; cut to fit max_tokens {request.max_tokens}" if response.truncated_by_budget else ""
        )
        lines.append(f"({len(results)} results, ~{response.tokens} tokens{budget})")
        if response.resources:
            lines.append("From the document collections:")
            for i, resource in enumerate(response.resources, start=1):
                lines.extend(_resource_text(i, resource))
        text = "\n".join(lines)
    warned = "".join(f"\nwarning ({w.code}): {w.message}" for w in response.warnings)
    return _result(text + warned + _index_note(index) + _shared_note(shared), data)


# -- routing ------------------------------------------------------------------------------


def route_result(
    found: RouteResult,
    folder: FolderIndex,
    mounted: Sequence[Mounted],
    index: dict[str, Any],
    repo: str | None = None,
    shared: SharedStatus | None = None,
) -> CallToolResult:
    """With `shared` (a shared index in use), each repository says its `source`
    (`local`: this workspace, whose key is `repo`; `shared`: a repository of the
    shared index, no path) and `repo`."""
    paths = {folder.name: str(folder.root)}
    collections = {c.name: str(c.root) for c, _ in mounted}

    def where(match: RouteMatch) -> dict[str, Any]:
        pool = paths if match.kind == "repository" else collections
        found: dict[str, Any] = {"path": pool.get(match.name)}
        if shared is not None and match.kind == "repository":
            local = match.name in paths
            found["source"] = "local" if local else "shared"
            found["repo"] = repo if local else match.name
        return found

    data = {**route_json(found, where), "index": index}
    if shared is not None:
        data["shared"] = shared.as_json()
    lines: list[str] = []
    for pool in ("repositories", "collections"):
        lines.append(f"{pool}:")
        if not data[pool]:
            lines.append("  (none)")
        for match in data[pool]:
            place = match["path"] if match["path"] is not None else "shared index"
            lines.append(
                f"  {match['confidence']:.2f} {match['name']} ({place}): {match['rationale']}"
            )
    return _result("\n".join(lines) + _index_note(index) + _shared_note(shared), data)


# -- definitions ------------------------------------------------------------------------


def _symbol_json(symbol: Symbol) -> dict[str, Any]:
    node = symbol.node
    return {"cite": _span(node.path, node.start_line, node.end_line), **symbol_json(symbol)}


def _symbol_text(symbol: Symbol) -> str:
    node = symbol.node
    signature = " ".join(node.signature.split())[:160]
    return (
        f"{_span(node.path, node.start_line, node.end_line)}  {node.kind}"
        f" {node.qualified_name}" + (f"  {signature}" if signature else "")
    )


def symbols_result(found: SymbolMatches, index: dict[str, Any]) -> CallToolResult:
    data = {
        "name": found.name,
        "exact": [_symbol_json(s) for s in found.exact],
        "fuzzy": [{**_symbol_json(s), "score": s.score} for s in found.fuzzy],
        "index": index,
    }
    lines = [_symbol_text(s) for s in found.exact]
    if found.fuzzy:
        lines.append(
            "similar names:"
            if found.exact
            else f"no definition named {found.name!r}; similar names:"
        )
        lines.extend("  " + _symbol_text(s) for s in found.fuzzy)
    if not lines:
        lines.append(f"no definitions match {found.name!r}")
    return _result("\n".join(lines) + _index_note(index), data)


# -- the code graph -------------------------------------------------------------------------


def _link_json(walk: GraphResult, link: GraphLink) -> dict[str, Any]:
    source = walk.node(link.source)
    where = _span(source.node.path, link.line, link.line) if source else None
    return {**link_json(link), "cite": where}


def neighbours_result(
    name: str, direction: str, walk: GraphResult, index: dict[str, Any], max_nodes: int
) -> CallToolResult:
    """callers / callees: each definition named `name` with its neighbours, the
    call site cited (path:line of the call)."""
    groups: list[dict[str, Any]] = []
    lines: list[str] = []
    for root in dict.fromkeys(walk.roots):
        target = walk.node(root)
        if target is None:
            continue
        entries: list[dict[str, Any]] = []
        lines.append(_symbol_text(target))
        for link in walk.edges:
            if direction == "callers" and link.target == root:
                other = walk.node(link.source)
            elif direction == "callees" and link.source == root:
                other = None if link.target is None else walk.node(link.target)
            else:
                continue
            # The edge is written in its source: the caller, or the definition itself.
            source = target if direction == "callees" else other
            site = _span(source.node.path, link.line, link.line) if source else str(link.line)
            entries.append(
                {
                    "call_site": site,
                    "edge": {
                        "kind": link.kind,
                        "line": link.line,
                        "name": link.target_name,
                        "resolution": link.resolution,
                        "confidence": link.confidence,
                    },
                    "node": _symbol_json(other) if other is not None else None,
                }
            )
            arrow = "<-" if direction == "callers" else "->"
            what = _symbol_text(other) if other is not None else f"{link.target_name} (unresolved)"
            how = f", {link.confidence}" if link.confidence else ""
            lines.append(f"  {arrow} {what}  (call at {site}{how})")
        if not entries:
            lines.append(f"  no {direction} found")
        groups.append({"node": _symbol_json(target), direction: entries})
    if not groups:
        lines.append(f"no definition named {name!r}")
    if walk.truncated:
        lines.append(_cut_text(walk, max_nodes))
    data = {"name": name, "nodes": groups, **_cut_json(walk, max_nodes), "index": index}
    return _result("\n".join(lines) + _index_note(index), data)


def graph_result(
    name: str, walk: GraphResult, index: dict[str, Any], max_nodes: int
) -> CallToolResult:
    data = {
        "name": name,
        "roots": list(walk.roots),
        "nodes": [_symbol_json(s) for s in walk.nodes],
        "edges": [_link_json(walk, link) for link in walk.edges],
        **_cut_json(walk, max_nodes),
        "index": index,
    }
    if not walk.roots:
        return _result(f"no definition named {name!r}" + _index_note(index), data)
    roots = set(walk.roots)
    lines = [("* " if s.node.id in roots else "  ") + _symbol_text(s) for s in walk.nodes]
    for link in walk.edges:
        source = walk.node(link.source)
        target = walk.node(link.target) if link.target is not None else None
        src = source.node.qualified_name if source else str(link.source)
        dst = target.node.qualified_name if target else f"{link.target_name} (unresolved)"
        where = f"  at {_span(source.node.path, link.line, link.line)}" if source else ""
        lines.append(f"  {src} --{link.kind}--> {dst}{where}")
    if walk.truncated:
        lines.append(_cut_text(walk, max_nodes))
    return _result("\n".join(lines) + _index_note(index), data)


def _cut_json(walk: GraphResult, max_nodes: int) -> dict[str, Any]:
    """Whether the walk stopped at max_nodes, and how many definitions it left out."""
    return {"truncated": walk.truncated, "omitted": walk.omitted, "max_nodes": max_nodes}


def _cut_text(walk: GraphResult, max_nodes: int) -> str:
    return f"(truncated: stopped at max_nodes {max_nodes}; {walk.omitted} more not shown)"


# -- status ---------------------------------------------------------------------------------


def status_result(
    status: IndexStatus,
    index: dict[str, Any],
    shared: SharedStatus | None = None,
    **extra: Any,
) -> CallToolResult:
    data = {**asdict(status), "index": index, **extra}
    if shared is not None:
        data["shared"] = shared.as_json()
    lines = [f"root      {status.root}", f"database  {status.database}"]
    if status.exists:
        lines.append(
            f"indexed   {status.files} files, {status.nodes} definitions, {status.edges} edges,"
            f" {status.chunks} chunks ({status.database_bytes / 1e6:.1f} MB)"
        )
        if status.languages:
            lines.append("languages " + ", ".join(f"{k} {v}" for k, v in status.languages.items()))
    vectors = index.get("vectors", {})
    if vectors.get("enabled"):
        lines.append(f"vectors   {vectors.get('embedded', 0)} of {vectors.get('embeddable', 0)}")
    else:
        lines.append("vectors   off")
    history = index.get("history") or {}
    if history.get("pending"):
        walked = ""
        if history.get("commits_done", 0) < history.get("commits_total", 0):
            walked = f"{history['commits_done']:,}/{history['commits_total']:,} commits walked, "
        lines.append(
            f"history   being computed: {walked}{history.get('files', 0):,} files to time"
            " (time filters see only what is timed)"
        )
    else:
        lines.append("history   complete")
    state = index.get("state", "")
    if index.get("error"):
        state += f": {index['error']}"
    lines.append(f"state     {state}{'' if index.get('fresh') else ' (changes not indexed yet)'}")
    lines.extend(f"warning   {w}" for w in index.get("warnings", []))
    for key, value in extra.items():
        lines.append(f"{key:<9} {value}")
    if shared is not None:
        text = shared.message or f"{len(shared.repositories)} repositories in view"
        lines.append(f"shared    {text}")
    return _result("\n".join(lines), data)
