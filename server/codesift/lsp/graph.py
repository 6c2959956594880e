"""codesift/graph and the call hierarchy (prepare, incoming calls, outgoing calls)."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw
from lsprotocol import types

from codesift.errors import QueryError
from codesift.history.records import nodes_in_time
from codesift.history.timespec import TimeFilter, time_filter
from codesift.lsp.folders import Cancellation, FolderIndex
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
from codesift.store.reader import NodeRow, edges_from, edges_to, node_rows, nodes_named

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["GRAPH", "graph", "incoming_calls", "outgoing_calls", "prepare_call_hierarchy"]

GRAPH = "codesift/graph"
EDGE_KINDS = ("calls", "contains", "imports", "inherits", "references")


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
    if direction not in ("callers", "callees", "both"):
        raise invalid(f"parameter 'direction' must be callers, callees or both, got {direction!r}")
    depth = opt_int(data, "depth", 1, 1, 10) or 1
    max_nodes = opt_int(data, "max_nodes", 100, 1, 2000) or 100
    kinds = opt_str_list(data, "kinds") or ("calls",)
    unknown = [k for k in kinds if k not in EDGE_KINDS]
    if unknown:
        raise invalid(
            f"unknown edge kind(s) {', '.join(unknown)}; choose from {', '.join(EDGE_KINDS)}"
        )
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
        for folder, rel in targets:
            folder.wait_open()
            conn = server.readers.connection(folder.db_path)
            cancel.attach(conn)
            try:
                window = windows[folder.name]
                if rel is not None and position is not None:
                    path = folder.root / rel
                    lines = document_lines(server, uri, path)
                    start = resolve_position(conn, rel, lines, position, uri).nodes[:1]
                else:
                    start = nodes_named(conn, str(name), limit=20, times=window)
                cut = _walk(
                    conn,
                    folder,
                    start,
                    _Walk(direction, depth, kinds, max_nodes, window),
                    nodes,
                    edges,
                    roots,
                )
                truncated = truncated or cut
            finally:
                cancel.detach(conn)
        return {
            "roots": roots,
            "nodes": list(nodes.values()),
            "edges": edges,
            "truncated": truncated,
        }

    return await server.read(run)


def _window(times: TimeFilters, folder: FolderIndex) -> TimeFilter:
    """The request's git-time filter for one folder (revisions resolved in it)."""
    try:
        return time_filter(times.as_of, times.since, times.until, root=folder.root)
    except QueryError as exc:
        raise invalid(f"{exc} (folder {folder.name})") from exc


@dataclass(frozen=True, slots=True)
class _Walk:
    direction: str
    depth: int
    kinds: tuple[str, ...]
    max_nodes: int
    window: TimeFilter  # neighbours outside it are left out, with their edges


def _walk(
    conn: apsw.Connection,
    folder: FolderIndex,
    start: list[NodeRow],
    how: _Walk,
    nodes: dict[str, dict[str, Any]],
    edges: list[dict[str, Any]],
    roots: list[str],
) -> bool:
    """Breadth-first along edges; False unless the node cap cut the walk short."""
    direction, depth, kinds, max_nodes = how.direction, how.depth, how.kinds, how.max_nodes
    queue: deque[tuple[int, int]] = deque()
    for node in start:
        key = str(node.id)
        roots.append(key)
        if key not in nodes:
            if len(nodes) >= max_nodes:
                return True
            nodes[key] = node_json(folder, node)
        queue.append((node.id, 0))
    seen_edges: set[tuple[str, str, str, str]] = set()
    while queue:
        node_id, level = queue.popleft()
        if level >= depth:
            continue
        found: list[tuple[int | None, str, int | None, Any]] = []
        if direction in ("callers", "both"):
            found += [(e.src_id, "in", node_id, e) for e in edges_to(conn, node_id, kinds)]
        if direction in ("callees", "both"):
            found += [(node_id, "out", e.dst_id, e) for e in edges_from(conn, node_id, kinds)]
        other_ids = [i for s, way, d, _ in found for i in ((s,) if way == "in" else (d,)) if i]
        others = node_rows(conn, other_ids)
        in_time = nodes_in_time(conn, other_ids, how.window) if how.window else None
        for src, way, dst, edge in found:
            other_id = src if way == "in" else dst
            if in_time is not None and other_id is not None and other_id not in in_time:
                continue
            if other_id is not None and str(other_id) not in nodes:
                other = others.get(other_id)
                if other is None:
                    continue
                if len(nodes) >= max_nodes:
                    return True
                nodes[str(other_id)] = node_json(folder, other)
                queue.append((other_id, level + 1))
            edge_key = (str(src), edge.kind, str(dst) if dst else edge.dst_name, str(edge.line))
            if edge_key in seen_edges:
                continue
            seen_edges.add(edge_key)
            edges.append(
                {
                    "source": str(src),
                    "target": None if dst is None else str(dst),
                    "target_name": edge.dst_name,
                    "kind": edge.kind,
                    "line": edge.line,
                    "resolution": edge.resolution,
                }
            )
    return False


# -- call hierarchy ---------------------------------------------------------------------


def _item(folder: FolderIndex, node: NodeRow, lines: list[str] | None) -> types.CallHierarchyItem:
    from codesift.lsp.navigation import node_range
    from codesift.lsp.server import path_to_uri

    return types.CallHierarchyItem(
        name=node.name,
        kind=symbol_kind(node.kind),
        uri=path_to_uri(folder.root / node.path),
        range=node_range(node, lines),
        selection_range=selection_range(node, lines),
        detail=node.qualified_name if node.qualified_name != node.name else node.signature[:200],
        data={"folder": folder.uri, "id": str(node.id)},
    )


async def prepare_call_hierarchy(
    server: CodesiftServer, params: types.CallHierarchyPrepareParams
) -> list[types.CallHierarchyItem] | None:
    uri = params.text_document.uri
    folder, rel = server.folder_for_uri(uri)

    def run(cancel: Cancellation) -> list[types.CallHierarchyItem] | None:
        folder.wait_open()
        conn = server.readers.connection(folder.db_path)
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


def _item_node(server: CodesiftServer, item: types.CallHierarchyItem) -> tuple[FolderIndex, int]:
    data: Any = item.data
    if isinstance(data, dict):
        folder_uri, node_id = data.get("folder"), data.get("id")
    else:
        folder_uri, node_id = getattr(data, "folder", None), getattr(data, "id", None)
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
        folder.wait_open()
        conn = server.readers.connection(folder.db_path)
        target = node_rows(conn, [node_id]).get(node_id)
        if target is None:
            return []
        calls = edges_to(conn, node_id, ["calls"])
        callers = node_rows(conn, [e.src_id for e in calls])
        cache: dict[str, list[str]] = {}
        out: dict[int, types.CallHierarchyIncomingCall] = {}
        for edge in calls:
            caller = callers.get(edge.src_id)
            if caller is None:
                continue
            lines = _lines(cache, folder.root, caller.path)
            ranges = _call_ranges(lines, edge.line, edge.dst_name)
            if caller.id in out:
                out[caller.id].from_ranges = [*out[caller.id].from_ranges, *ranges]
            else:
                out[caller.id] = types.CallHierarchyIncomingCall(
                    from_=_item(folder, caller, lines), from_ranges=ranges
                )
        return list(out.values())

    return await server.read(run)


async def outgoing_calls(
    server: CodesiftServer, params: types.CallHierarchyOutgoingCallsParams
) -> list[types.CallHierarchyOutgoingCall]:
    folder, node_id = _item_node(server, params.item)

    def run(cancel: Cancellation) -> list[types.CallHierarchyOutgoingCall]:
        folder.wait_open()
        conn = server.readers.connection(folder.db_path)
        source = node_rows(conn, [node_id]).get(node_id)
        if source is None:
            return []
        calls = [e for e in edges_from(conn, node_id, ["calls"]) if e.dst_id is not None]
        callees = node_rows(conn, [e.dst_id for e in calls if e.dst_id is not None])
        cache: dict[str, list[str]] = {}
        own = _lines(cache, folder.root, source.path)
        out: dict[int, types.CallHierarchyOutgoingCall] = {}
        for edge in calls:
            callee = callees.get(edge.dst_id) if edge.dst_id is not None else None
            if callee is None:
                continue
            ranges = _call_ranges(own, edge.line, edge.dst_name)
            if callee.id in out:
                out[callee.id].from_ranges = [*out[callee.id].from_ranges, *ranges]
            else:
                out[callee.id] = types.CallHierarchyOutgoingCall(
                    to=_item(folder, callee, _lines(cache, folder.root, callee.path)),
                    from_ranges=ranges,
                )
        return list(out.values())

    return await server.read(run)
