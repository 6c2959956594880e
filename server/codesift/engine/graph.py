"""One walk along the code graph for every front end: callers, callees, graph.

`walk_graph` goes breadth-first from some definitions along edges of the asked
kinds (their true kinds are reported), into a node (`callers`), out of it
(`callees`) or both, up to `depth` edges away and `max_nodes` definitions.
Unresolved edges (a call to a name with no definition in the index) are
reported with no target and not followed. Neighbours outside the query's
git-time window are left out with their edges.

The walk reads through the store's port (store/ports.NodeStore): the local
SQLite index (an apsw connection is wrapped in `SqliteNodeStore`) or the shared
index on PostgreSQL as one reader (store/postgres/nodes.py), where a node the
reader may not read is not found, so neither it nor the edge to it is shown.
`start_nodes` finds where a walk starts, for every index alike.
"""

from __future__ import annotations

from collections import deque

import apsw

from codesift.engine.results import (
    EDGE_KINDS,
    GraphLink,
    GraphQuery,
    GraphResult,
    Symbol,
    confidence_of,
)
from codesift.engine.symbols import node_store
from codesift.errors import QueryError
from codesift.history.records import change_info
from codesift.store.call_targets import calls_pending_count
from codesift.store.ports import NodeStore
from codesift.store.reader import EdgeRow, NodeRow
from codesift.timespec import TimeFilter

__all__ = ["check_graph_query", "start_nodes", "walk_graph"]

DIRECTIONS = ("callers", "callees", "both")


def check_graph_query(query: GraphQuery) -> GraphQuery:
    """The query, or QueryError naming what is wrong with it."""
    if query.direction not in DIRECTIONS:
        raise QueryError(f"direction must be callers, callees or both, got {query.direction!r}")
    if not 1 <= query.depth <= 10:
        raise QueryError(f"depth must be between 1 and 10, got {query.depth}")
    if not 1 <= query.max_nodes <= 2000:
        raise QueryError(f"max_nodes must be between 1 and 2000, got {query.max_nodes}")
    unknown = [k for k in query.kinds if k not in EDGE_KINDS]
    if unknown:
        raise QueryError(
            f"unknown edge kind(s) {', '.join(unknown)}; choose from {', '.join(EDGE_KINDS)}"
        )
    return query


def start_nodes(
    index: apsw.Connection | NodeStore,
    target: str | int,
    times: TimeFilter | None = None,
    limit: int = 20,
) -> list[NodeRow]:
    """The definitions named `target` (at most `limit`, in `times`), or the node
    with id `target`."""
    store = node_store(index)
    if isinstance(target, int):
        return list(store.node_rows([target]).values())
    return store.nodes_named(target, limit=limit, times=times if times else None)


def _step(
    store: NodeStore, node_id: int, query: GraphQuery
) -> list[tuple[int, int | None, int | None, EdgeRow]]:
    """(source, target, the other end, edge) of a node's edges in the walk's direction."""
    kinds = query.kinds or None
    found: list[tuple[int, int | None, int | None, EdgeRow]] = []
    if query.direction in ("callers", "both"):
        found += [(e.src_id, node_id, e.src_id, e) for e in store.edges_to(node_id, kinds)]
    if query.direction in ("callees", "both"):
        found += [(node_id, e.dst_id, e.dst_id, e) for e in store.edges_from(node_id, kinds)]
    return found


def walk_graph(
    index: apsw.Connection | NodeStore,
    start: list[NodeRow],
    query: GraphQuery,
    *,
    history: bool = True,
) -> GraphResult:
    """Breadth-first from `start` over `index`, a local index's connection or any
    `NodeStore` (see the module docstring).

    When the walk would show more than `max_nodes` definitions it stops
    (`truncated`) and counts the definitions it met and did not show
    (`omitted`): the rest of the level it stopped in is still read (the edges
    between definitions shown are listed, the others counted), so for a
    one-step walk (callers, callees) the count is exact; deeper, and for more
    starting definitions than the walk may show, it is a lower bound."""
    check_graph_query(query)
    store = node_store(index)
    nodes: dict[int, NodeRow] = {}
    roots: list[int] = []
    queue: deque[tuple[int, int]] = deque()
    omitted: set[int] = set()
    for node in start:
        if node.id not in nodes:
            if len(nodes) >= query.max_nodes:
                omitted.add(node.id)  # more definitions than the walk may show
                continue
            nodes[node.id] = node
        roots.append(node.id)
        queue.append((node.id, 0))
    walk = _Walk(store, query, nodes, omitted)
    walk.run(queue)
    times_of = (
        {i: change_info(row) for i, row in store.node_times(list(nodes)).items()} if history else {}
    )
    return GraphResult(
        roots=tuple(roots),
        nodes=tuple(Symbol(n, times_of.get(n.id)) for n in nodes.values()),
        edges=tuple(walk.links),
        truncated=bool(omitted),
        omitted=len(omitted),
        calls_pending=calls_pending_count(index) if isinstance(index, apsw.Connection) else 0,
    )


class _Walk:
    """The breadth-first part of `walk_graph`: the definitions shown (`nodes`),
    the edges between them (`links`) and the definitions met past `max_nodes`
    (`omitted`)."""

    def __init__(
        self, store: NodeStore, query: GraphQuery, nodes: dict[int, NodeRow], omitted: set[int]
    ) -> None:
        self.store = store
        self.query = query
        self.nodes = nodes
        self.omitted = omitted
        self.links: list[GraphLink] = []
        self.seen_links: set[tuple[int, str, str, int]] = set()
        # The level the walk stopped at: the rest of it is only counted.
        self.stopped_at: int | None = 0 if omitted else None

    def run(self, queue: deque[tuple[int, int]]) -> None:
        while queue:
            node_id, level = queue.popleft()
            if level >= self.query.depth:
                continue
            if self.stopped_at is not None and level > self.stopped_at:
                break
            self.step(node_id, level, queue)

    def step(self, node_id: int, level: int, queue: deque[tuple[int, int]]) -> None:
        store, query, nodes = self.store, self.query, self.nodes
        found = _step(store, node_id, query)
        other_ids = [other for _, _, other, _ in found if other is not None]
        others = store.node_rows(other_ids)
        in_time = store.nodes_in_time(other_ids, query.times) if query.times else None
        for source, target, other_id, edge in found:
            if other_id is not None:
                if in_time is not None and other_id not in in_time:
                    continue
                if other_id not in nodes:
                    other = others.get(other_id)
                    if other is None:  # removed by a concurrent update, or not readable
                        continue
                    if self.stopped_at is not None or len(nodes) >= query.max_nodes:
                        self.stopped_at = level if self.stopped_at is None else self.stopped_at
                        self.omitted.add(other_id)
                        continue
                    nodes[other_id] = other
                    queue.append((other_id, level + 1))
            key = (source, edge.kind, str(target) if target else edge.dst_name, edge.line)
            if key in self.seen_links:
                continue
            self.seen_links.add(key)
            self.links.append(
                GraphLink(
                    source,
                    target,
                    edge.dst_name,
                    edge.kind,
                    edge.line,
                    edge.resolution,
                    confidence_of(edge.resolution) if target is not None else None,
                )
            )
