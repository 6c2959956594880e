"""codesift/graph and the call hierarchy (prepare, incoming calls, outgoing calls)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw
from lsprotocol import types

from codesift.engine import GraphLink, GraphQuery, check_graph_query
from codesift.engine.live import Cancellation, FolderIndex
from codesift.engine.navigation import calls_of, definitions_by_id
from codesift.engine.results import NodeRow, link_json
from codesift.errors import QueryError
from codesift.lsp.navigation import (
    document_lines,
    read_lines,
    resolve_position,
    selection_range,
    symbol_kind,
)
from codesift.lsp.params import (
    TimeFilters,
    invalid,
    opt_int,
    opt_str_list,
    parse_time_filters,
    require_object,
)
from codesift.timespec import TimeFilter, time_filter

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["GRAPH", "graph", "incoming_calls", "outgoing_calls", "prepare_call_hierarchy"]

GRAPH = "codesift/graph"


def node_json(folder: FolderIndex, node: NodeRow) -> dict[str, Any]:
    from codesift.lsp.server import path_to_uri

    return {
        "id": str(node.id),
        "folder": folder.name,
        "uri": path_to_uri(folder.root / node.path),
        "path": node.path,
        "language": node.language,
        "kind": node.kind,
        "name": node.name,
        "qualified_name": node.qualified_name,
        "signature": node.signature,
        "start_line": node.start_line,
        "end_line": node.end_line,
    }


def _position(data: dict[str, Any]) -> types.Position:
    raw = data.get("position")
    if not isinstance(raw, dict):
        raise invalid("parameter 'position' must be an object {line, character}")
    line, char = raw.get("line"), raw.get("character")
    if not (isinstance(line, int) and isinstance(char, int)) or isinstance(line, bool):
        raise invalid("parameter 'position' needs integer 'line' and 'character'")
    if line < 0 or char < 0:
        raise invalid("position line and character must not be negative")
    return types.Position(line=line, character=char)


async def graph(server: CodesiftServer, params: Any) -> dict[str, Any]:
    data = require_object(params, GRAPH)
    direction = data.get("direction", "both")
    depth = opt_int(data, "depth", 1, 1, 10) or 1
    max_nodes = opt_int(data, "max_nodes", 100, 1, 2000) or 100
    kinds = opt_str_list(data, "kinds") or ("calls",)
    try:
        check_graph_query(GraphQuery(str(direction), depth, kinds, max_nodes))
    except QueryError as exc:
        raise invalid(str(exc).replace("direction must", "parameter 'direction' must")) from exc
    name = data.get("name")
    document = data.get("textDocument")
    if name is not None and not isinstance(name, str):
        raise invalid("parameter 'name' must be a string")
    if name is None and document is None:
        raise invalid("codesift/graph needs 'name' or 'textDocument' and 'position'")
    if isinstance(name, str) and (not name.strip() or len(name) > 500):
        raise invalid("parameter 'name' must be a non-empty identifier of at most 500 characters")
    targets: list[tuple[FolderIndex, str | None]] = []
    position: types.Position | None = None
    uri = ""
    if name is None:
        if not isinstance(document, dict) or not isinstance(document.get("uri"), str):
            raise invalid("parameter 'textDocument' must be an object with a 'uri' string")
        uri = document["uri"]
        position = _position(data)
        folder, rel = server.folder_for_uri(uri)
        targets.append((folder, rel))
    else:
        targets.extend((f, None) for f in server.select_folders(opt_str_list(data, "folders")))
    windows = {folder.name: _window(parse_time_filters(data), folder) for folder, _ in targets}

    def run(cancel: Cancellation) -> dict[str, Any]:
        nodes: dict[str, dict[str, Any]] = {}
        edges: list[dict[str, Any]] = []
        roots: list[str] = []
        truncated = False
        omitted = 0
        pending = 0
        for folder, rel in targets:
            start: str | Callable[[apsw.Connection], list[NodeRow]] = str(name)
            if rel is not None and position is not None:
                start = _at_position(server, folder, rel, uri, position)
            room = max_nodes - len(nodes)
            query = GraphQuery(str(direction), depth, kinds, max(room, 1), windows[folder.name])
            walk = server.live.graph(folder, start, query, cancel, history=False)
            roots.extend(str(r) for r in walk.roots)
            for symbol in walk.nodes:
                nodes.setdefault(str(symbol.node.id), node_json(folder, symbol.node))
            edges.extend(_link_json(link) for link in walk.edges)
            truncated = truncated or walk.truncated or room <= 0
            omitted += walk.omitted
            pending += walk.calls_pending
        omitted += max(len(nodes) - max_nodes, 0)
        return {
            "roots": roots,
            "nodes": list(nodes.values())[:max_nodes],
            "edges": edges,
            "truncated": truncated,
            "omitted": omitted,
            "max_nodes": max_nodes,
            "calls_pending": pending,
        }

    return await server.read(run)


def _at_position(
    server: CodesiftServer, folder: FolderIndex, rel: str, uri: str, position: types.Position
) -> Callable[[apsw.Connection], list[NodeRow]]:
    """The graph walk's start: the definition at `position` of the document."""

    def start(conn: apsw.Connection) -> list[NodeRow]:
        lines = document_lines(server, uri, folder.root / rel)
        return resolve_position(conn, rel, lines, position, uri).nodes[:1]

    return start


def _link_json(link: GraphLink) -> dict[str, Any]:
    """engine/results.py's edge, its ids as strings (the protocol's node ids)."""
    target = None if link.target is None else str(link.target)
    return {**link_json(link), "source": str(link.source), "target": target}


def _window(times: TimeFilters, folder: FolderIndex) -> TimeFilter:
    """The request's git-time filter for one folder (revisions resolved in it)."""
    try:
        return time_filter(times.as_of, times.since, times.until, root=folder.root)
    except QueryError as exc:
        raise invalid(f"{exc} (folder {folder.name})") from exc


# -- call hierarchy ---------------------------------------------------------------------


def _item(
    folder: FolderIndex, node: NodeRow, lines: list[str] | None, *, guessed: bool = False
) -> types.CallHierarchyItem:
    from codesift.lsp.navigation import node_range
    from codesift.lsp.server import path_to_uri

    detail = node.qualified_name if node.qualified_name != node.name else node.signature[:200]
    return types.CallHierarchyItem(
        name=node.name,
        kind=symbol_kind(node.kind),
        uri=path_to_uri(folder.root / node.path),
        range=node_range(node, lines),
        selection_range=selection_range(node, lines),
        # A call found by the name alone says so (graph.guesses = "apart").
        detail=f"(guess) {detail}" if guessed else detail,
        data={"folder": folder.uri, "id": str(node.id)},
    )


async def prepare_call_hierarchy(
    server: CodesiftServer, params: types.CallHierarchyPrepareParams
) -> list[types.CallHierarchyItem] | None:
    uri = params.text_document.uri
    folder, rel = server.folder_for_uri(uri)

    def run(cancel: Cancellation) -> list[types.CallHierarchyItem] | None:
        conn = server.live.open(folder)
        lines = document_lines(server, uri, folder.root / rel)
        resolved = resolve_position(conn, rel, lines, params.position, uri)
        callable_nodes = [n for n in resolved.nodes if n.kind != "module"][:5]
        if not callable_nodes:
            return None
        cache: dict[str, list[str]] = {rel: lines}
        return [_item(folder, n, _lines(cache, folder.root, n.path)) for n in callable_nodes]

    return await server.read(run)


def _lines(cache: dict[str, list[str]], root: Path, path: str) -> list[str]:
    if path not in cache:
        cache[path] = read_lines(root / path)
    return cache[path]


def _cut_item(
    folder: FolderIndex, item: types.CallHierarchyItem, omitted: int, limit: int, what: str
) -> types.CallHierarchyItem:
    """The last item of a cut list: LSP's call lists have no flag for it, so an
    item says how many more there are (at the asked item's place; expanding it
    lists nothing)."""
    return types.CallHierarchyItem(
        name=f"… {omitted} more {what} not shown (limit {limit})",
        kind=types.SymbolKind.Null,
        uri=item.uri,
        range=item.range,
        selection_range=item.selection_range,
        detail=f"truncated: graph.max_calls is {limit}",
        data={"folder": folder.uri, "omitted": omitted},
    )


def _item_data(item: types.CallHierarchyItem, key: str) -> Any:
    data: Any = item.data
    return data.get(key) if isinstance(data, dict) else getattr(data, key, None)


def _item_node(
    server: CodesiftServer, item: types.CallHierarchyItem
) -> tuple[FolderIndex, int | None]:
    """The folder and node of an item codesift made (None: the item that says a
    list was cut)."""
    folder_uri, node_id = _item_data(item, "folder"), _item_data(item, "id")
    if node_id is None and isinstance(_item_data(item, "omitted"), int):
        folders = [f for f in server.folder_list() if f.uri == folder_uri]
        if folders:
            return folders[0], None
    if not isinstance(folder_uri, str) or not isinstance(node_id, str) or not node_id.isdigit():
        raise invalid("this call hierarchy item was not made by codesift (its data is missing)")
    folders = [f for f in server.folder_list() if f.uri == folder_uri]
    if not folders:
        raise invalid(f"workspace folder {folder_uri} is no longer open")
    return folders[0], int(node_id)


def _call_ranges(lines: list[str], line: int, name: str) -> list[types.Range]:
    index = line - 1
    if 0 <= index < len(lines):
        match = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", lines[index])
        if match:
            return [
                types.Range(
                    start=types.Position(line=index, character=match.start()),
                    end=types.Position(line=index, character=match.end()),
                )
            ]
    start = types.Position(line=max(index, 0), character=0)
    return [types.Range(start=start, end=start)]


async def incoming_calls(
    server: CodesiftServer, params: types.CallHierarchyIncomingCallsParams
) -> list[types.CallHierarchyIncomingCall]:
    folder, node_id = _item_node(server, params.item)

    def run(cancel: Cancellation) -> list[types.CallHierarchyIncomingCall]:
        if node_id is None:
            return []
        conn = server.live.open(folder)
        cache: dict[str, list[str]] = {}
        out: list[types.CallHierarchyIncomingCall] = []
        graph = folder.settings.graph
        found = calls_of(conn, node_id, "callers", graph.guesses, graph.max_calls)
        for caller, links, guessed in found.calls:
            lines = _lines(cache, folder.root, caller.path)
            ranges = [r for link in links for r in _call_ranges(lines, link.line, link.target_name)]
            out.append(
                types.CallHierarchyIncomingCall(
                    from_=_item(folder, caller, lines, guessed=guessed), from_ranges=ranges
                )
            )
        if found.omitted:
            cut = _cut_item(folder, params.item, found.omitted, graph.max_calls, "callers")
            out.append(types.CallHierarchyIncomingCall(from_=cut, from_ranges=[]))
        return out

    return await server.read(run)


async def outgoing_calls(
    server: CodesiftServer, params: types.CallHierarchyOutgoingCallsParams
) -> list[types.CallHierarchyOutgoingCall]:
    folder, node_id = _item_node(server, params.item)

    def run(cancel: Cancellation) -> list[types.CallHierarchyOutgoingCall]:
        if node_id is None:
            return []
        conn = server.live.open(folder)
        source = definitions_by_id(conn, [node_id]).get(node_id)
        if source is None:
            return []
        cache: dict[str, list[str]] = {}
        own = _lines(cache, folder.root, source.path)
        out: list[types.CallHierarchyOutgoingCall] = []
        graph = folder.settings.graph
        found = calls_of(conn, node_id, "callees", graph.guesses, graph.max_calls)
        for callee, links, guessed in found.calls:
            ranges = [r for link in links for r in _call_ranges(own, link.line, link.target_name)]
            lines = _lines(cache, folder.root, callee.path)
            out.append(
                types.CallHierarchyOutgoingCall(
                    to=_item(folder, callee, lines, guessed=guessed),
                    from_ranges=ranges,
                )
            )
        if found.omitted:
            cut = _cut_item(folder, params.item, found.omitted, graph.max_calls, "callees")
            out.append(types.CallHierarchyOutgoingCall(to=cut, from_ranges=[]))
        return out

    return await server.read(run)
