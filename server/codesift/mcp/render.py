"""Engine results as MCP tool results: readable text that cites `path:line`, and
the same facts as structured content (JSON) for clients that read it.

docs/mcp.md describes each tool's structured content.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
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
    "structured_only",
    "symbols_result",
]

# False while a caller reads only the structured content (the REST API): the
# text for the model is then not written.
_WITH_TEXT: ContextVar[bool] = ContextVar("codesift_mcp_with_text", default=True)


@contextlib.contextmanager
def structured_only() -> Iterator[None]:
    """Within it (in this task), a search's result carries no text content: its
    structured content alone, as the REST API answers it."""
    token = _WITH_TEXT.set(False)
    try:
        yield
    finally:
        _WITH_TEXT.reset(token)


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


def _search_json(
    rank: int, result: SearchResult, repo: str | None = None, root: str | None = None
) -> dict[str, Any]:
    data = result_json(result)
    cite = _span(_cited_path(result, repo), result.start_line, result.end_line)
    return {
        "rank": rank,
        "cite": cite,
        **data,
        "source": "local" if repo is None else "shared",
        "repo": repo,
        "root": root if repo is None else None,
    }


def _search_text(
    rank: int, result: SearchResult, repo: str | None = None, root: str | None = None
) -> list[str]:
    found_by = ", ".join(f"{h.stream}#{h.rank}" for h in result.provenance)
    where = _span(_cited_path(result, repo), result.start_line, result.end_line)
    if repo is None and root is not None:
        where = f"[{root}] {where}"
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
    roots: Sequence[str | None] | None = None,
) -> CallToolResult:
    """`repos`: per result, the shared index's repository it comes from (None: the
    workspace); `shared`: the shared index's status, when one is in use, and
    `shared_streams` its streams' reports; `roots`: per result, the served
    folder it comes from (named in the text when several are served)."""
    keys = list(repos) if repos is not None else [None] * len(response.results)
    folders = list(roots) if roots is not None else [None] * len(response.results)
    several = len({root for root in folders if root is not None}) > 1
    results = [
        _search_json(i, r, repo, root)
        for i, (r, repo, root) in enumerate(
            zip(response.results, keys, folders, strict=True), start=1
        )
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
    if not _WITH_TEXT.get():
        return _result("", data)
    if not response.results and not response.resources:
        text = f"no results for {response.query!r}"
    else:
        lines: list[str] = []
        for i, (result, repo, root) in enumerate(
            zip(response.results, keys, folders, strict=True), start=1
        ):
            lines.extend(_search_text(i, result, repo, root if several else None))
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
    folders: Sequence[FolderIndex],
    mounted: Sequence[Mounted],
    index: dict[str, Any],
    repos: Mapping[str, str] | None = None,
    shared: SharedStatus | None = None,
) -> CallToolResult:
    """With `shared` (a shared index in use), each repository says its `source`
    (`local`: a served folder, whose key `repos` gives by folder name; `shared`:
    a repository of the shared index, no path) and `repo`."""
    paths = {folder.name: str(folder.root) for folder in folders}
    collections = {c.name: str(c.root) for c, _ in mounted}

    def where(match: RouteMatch) -> dict[str, Any]:
        pool = paths if match.kind == "repository" else collections
        found: dict[str, Any] = {"path": pool.get(match.name)}
        if shared is not None and match.kind == "repository":
            local = match.name in paths
            found["source"] = "local" if local else "shared"
            found["repo"] = (repos or {}).get(match.name) if local else match.name
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


# Where a definition is: a served folder (`root`: its name) or a repository of
# the shared index (`repo`: its key; the definition is cited `<key>/<path>`).
Place = Mapping[str, Any]
LOCAL: Place = {"source": "local", "root": None, "repo": None}
# A walk of several sources (engine/graph_merge.py): each definition says its own.
SEVERAL: Place = {"source": "several", "root": None, "repo": None}


def place_of(root: str | None = None, repo: str | None = None) -> Place:
    if repo is not None:
        return {"source": "shared", "root": None, "repo": repo}
    return {"source": "local", "root": root, "repo": None}


def _symbol_json(symbol: Symbol, place: Place | None = None) -> dict[str, Any]:
    node = symbol.node
    where = place or LOCAL
    path = node.path if where.get("repo") is None else f"{where['repo']}/{node.path}"
    return {"cite": _span(path, node.start_line, node.end_line), **symbol_json(symbol), **where}


def _symbol_text(symbol: Symbol, place: Place | None = None) -> str:
    node = symbol.node
    signature = " ".join(node.signature.split())[:160]
    where = place or LOCAL
    path = node.path if where.get("repo") is None else f"{where['repo']}/{node.path}"
    return f"{_span(path, node.start_line, node.end_line)}  {node.kind} {node.qualified_name}" + (
        f"  {signature}" if signature else ""
    )


def symbols_result(
    found: SymbolMatches,
    index: dict[str, Any],
    places: Sequence[Place] | None = None,
    shared: SharedStatus | None = None,
) -> CallToolResult:
    """`places`: where each of `found.all` is (default: the served folder)."""
    where = list(places) if places is not None else [LOCAL] * len(found.all)
    exact, fuzzy = where[: len(found.exact)], where[len(found.exact) :]
    data: dict[str, Any] = {
        "name": found.name,
        "exact": [_symbol_json(s, p) for s, p in zip(found.exact, exact, strict=True)],
        "fuzzy": [
            {**_symbol_json(s, p), "score": s.score}
            for s, p in zip(found.fuzzy, fuzzy, strict=True)
        ],
        "index": index,
    }
    if shared is not None:
        data["shared"] = shared.as_json()
    lines = [_symbol_text(s, p) for s, p in zip(found.exact, exact, strict=True)]
    if found.fuzzy:
        lines.append(
            "similar names:"
            if found.exact
            else f"no definition named {found.name!r}; similar names:"
        )
        lines.extend("  " + _symbol_text(s, p) for s, p in zip(found.fuzzy, fuzzy, strict=True))
    if not lines:
        lines.append(f"no definitions match {found.name!r}")
    return _result("\n".join(lines) + _index_note(index) + _shared_note(shared), data)


# -- the code graph -------------------------------------------------------------------------


def _link_json(walk: GraphResult, link: GraphLink) -> dict[str, Any]:
    source = walk.node(link.source)
    where = _span(source.node.path, link.line, link.line) if source else None
    return {**link_json(link), "cite": where}


def neighbours_result(
    name: str,
    direction: str,
    walk: GraphResult,
    index: dict[str, Any],
    place: Callable[[Symbol], Place] | None = None,
    *,
    max_nodes: int,
) -> CallToolResult:
    """callers / callees: each definition named `name` with its neighbours, the
    call site cited (path:line of the call). `place`: where each definition is
    (default: the served folder)."""
    where = place or (lambda symbol: LOCAL)
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
                    "node": _symbol_json(other, where(other)) if other is not None else None,
                }
            )
            arrow = "<-" if direction == "callers" else "->"
            what = _symbol_text(other) if other is not None else f"{link.target_name} (unresolved)"
            how = f", {link.confidence}" if link.confidence else ""
            lines.append(f"  {arrow} {what}  (call at {site}{how})")
        if not entries:
            lines.append(f"  no {direction} found")
        groups.append({"node": _symbol_json(target, where(target)), direction: entries})
    if not groups:
        lines.append(f"no definition named {name!r}")
    if walk.truncated:
        lines.append(_cut_text(walk, max_nodes))
    if walk.calls_pending:
        lines.append(_pending_text(walk))
    data = {"name": name, "nodes": groups, **_cut_json(walk, max_nodes), "index": index}
    return _result("\n".join(lines) + _index_note(index), data)


def graph_result(
    name: str,
    walk: GraphResult,
    index: dict[str, Any],
    place: Callable[[Symbol], Place] | None = None,
    walked: Place | None = None,
    *,
    max_nodes: int,
) -> CallToolResult:
    """`place`: where each definition is (default: the served folder); `walked`:
    the folder or shared repository walked (said in the answer)."""
    where = place or (lambda symbol: LOCAL)
    data = {
        "name": name,
        "roots": list(walk.roots),
        "nodes": [_symbol_json(s, where(s)) for s in walk.nodes],
        "edges": [_link_json(walk, link) for link in walk.edges],
        **_cut_json(walk, max_nodes),
        "index": index,
        **(walked or {}),
    }
    if not walk.roots:
        return _result(f"no definition named {name!r}" + _index_note(index), data)
    roots = set(walk.roots)
    several = walked is SEVERAL  # each definition names its folder

    def shown(symbol: Symbol) -> str:
        root = where(symbol).get("root")
        return (f"[{root}] " if several and root else "") + _symbol_text(symbol, where(symbol))

    lines = [("* " if s.node.id in roots else "  ") + shown(s) for s in walk.nodes]
    for link in walk.edges:
        source = walk.node(link.source)
        target = walk.node(link.target) if link.target is not None else None
        src = source.node.qualified_name if source else str(link.source)
        dst = target.node.qualified_name if target else f"{link.target_name} (unresolved)"
        site = f"  at {_span(source.node.path, link.line, link.line)}" if source else ""
        lines.append(f"  {src} --{link.kind}--> {dst}{site}")
    if walk.truncated:
        lines.append(_cut_text(walk, max_nodes))
    if walk.calls_pending:
        lines.append(_pending_text(walk))
    return _result("\n".join(lines) + _index_note(index), data)


def _cut_json(walk: GraphResult, max_nodes: int) -> dict[str, Any]:
    """Whether the walk stopped at max_nodes, and how many definitions it left out."""
    return {
        "truncated": walk.truncated,
        "omitted": walk.omitted,
        "max_nodes": max_nodes,
        "calls_pending": walk.calls_pending,
    }


def _pending_text(walk: GraphResult) -> str:
    return (
        f"(calls_pending: the calls of {walk.calls_pending:,} files are still being resolved;"
        " callers and callees may be missing until the call pass is done)"
    )


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
