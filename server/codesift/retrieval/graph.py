"""Graph expansion: for code results, their parent container, callees and callers.

Each neighbour comes with the edge that links it, labelled with the edge's true
kind (`calls`, `contains`, `inherits`, `imports`) and its direction seen from the
result (`out`: the result calls / inherits from / imports the neighbour; `in`: the
neighbour calls / contains / inherits from / imports the result).

The whole response shares one budget of distinct neighbour nodes (20 by default),
handed out in rounds over the results in rank order, so the first result cannot
take every slot: in each round a result gets its next most useful edge (parent
container first, then callees and callers alternately, callers outside tests
first, then base classes, subclasses and imports). An edge to a node already
shown costs nothing; an edge from a node to itself is not shown.

`plan_neighbours` is pure; `expand_graph` reads the edges through the search's
store (store/search_store.py) and builds the records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import zip_longest

from codesift.retrieval.ranking import is_test_like_path
from codesift.retrieval.request import GraphEdge, GraphNode
from codesift.store.search_store import SearchStore

__all__ = ["MAX_GRAPH_NODES", "Neighbour", "expand_graph", "plan_neighbours"]

MAX_GRAPH_NODES = 20
# Edges read per node and direction before planning: enough to fill any budget,
# bounded so a function with thousands of callers stays cheap.
_FETCH_PER_NODE = 2 * MAX_GRAPH_NODES

_RELATION: dict[tuple[str, str], str] = {
    ("contains", "in"): "parent",
    ("calls", "out"): "callee",
    ("calls", "in"): "caller",
    ("inherits", "out"): "base",
    ("inherits", "in"): "subclass",
    ("imports", "out"): "imports",
    ("imports", "in"): "imported_by",
}


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An edge between a result's node and another node, before records are built."""

    node_id: int
    kind: str
    direction: str  # "out" or "in", seen from the result
    line: int

    @property
    def relation(self) -> str:
        return _RELATION.get((self.kind, self.direction), self.kind)


def order_neighbours(
    parent: Sequence[Neighbour],
    callees: Sequence[Neighbour],
    callers: Sequence[Neighbour],
    rest: Sequence[Neighbour],
) -> list[Neighbour]:
    """The order a result offers its edges in: parent, callees and callers
    alternately, then the rest; each neighbour node once."""
    ordered: list[Neighbour] = list(parent)
    for pair in zip_longest(callees, callers):
        ordered.extend(n for n in pair if n is not None)
    ordered.extend(rest)
    seen: set[int] = set()
    out: list[Neighbour] = []
    for n in ordered:
        if n.node_id not in seen:
            seen.add(n.node_id)
            out.append(n)
    return out


def plan_neighbours(
    offers: Mapping[int, Sequence[Neighbour]],
    order: Sequence[int],
    limit: int = MAX_GRAPH_NODES,
) -> dict[int, list[Neighbour]]:
    """Pick edges for each result node (`order`: best result first) so that at most
    `limit` distinct neighbour nodes are shown in all. Round-robin: each round gives
    every result its next offered edge."""
    chosen: dict[int, list[Neighbour]] = {node: [] for node in order}
    shown: set[int] = set()
    position = dict.fromkeys(order, 0)
    progressing = True
    while progressing:
        progressing = False
        for node in order:
            edges = offers.get(node, ())
            while position[node] < len(edges):
                candidate = edges[position[node]]
                position[node] += 1
                if candidate.node_id in shown:
                    chosen[node].append(candidate)  # already counted: free
                    continue
                if len(shown) >= limit:
                    continue
                shown.add(candidate.node_id)
                chosen[node].append(candidate)
                progressing = True
                break
    return chosen


def _offers(store: SearchStore, node_id: int) -> list[Neighbour]:
    outgoing = [e for e in store.edges_from(node_id) if e.dst_id not in (None, node_id)]
    incoming = [e for e in store.edges_to(node_id) if e.src_id != node_id]
    parent = [
        Neighbour(e.src_id, "contains", "in", e.line) for e in incoming if e.kind == "contains"
    ]
    callees = [
        Neighbour(int(e.dst_id), "calls", "out", e.line)
        for e in outgoing
        if e.kind == "calls" and e.dst_id is not None
    ][:_FETCH_PER_NODE]
    callers = [Neighbour(e.src_id, "calls", "in", e.line) for e in incoming if e.kind == "calls"]
    if len(callers) > 1:
        # Callers in tests say less about how code is used than callers elsewhere.
        paths = {n.id: n.path for n in store.node_rows([c.node_id for c in callers]).values()}
        callers.sort(key=lambda c: is_test_like_path(paths.get(c.node_id, "")))
    rest = [
        Neighbour(int(e.dst_id), e.kind, "out", e.line)
        for e in outgoing
        if e.kind in ("inherits", "imports") and e.dst_id is not None
    ][:_FETCH_PER_NODE] + [
        Neighbour(e.src_id, e.kind, "in", e.line)
        for e in incoming
        if e.kind in ("inherits", "imports")
    ][:_FETCH_PER_NODE]
    return order_neighbours(parent, callees, callers[:_FETCH_PER_NODE], rest)


def expand_graph(
    store: SearchStore, node_ids: Sequence[int], limit: int = MAX_GRAPH_NODES
) -> dict[int, tuple[GraphEdge, ...]]:
    """Result node id -> the edges to show for it (see the module docstring)."""
    order = list(dict.fromkeys(node_ids))
    offers = {node: _offers(store, node) for node in order}
    plan = plan_neighbours(offers, order, limit)
    rows = store.node_rows({n.node_id for edges in plan.values() for n in edges})
    out: dict[int, tuple[GraphEdge, ...]] = {}
    for node, edges in plan.items():
        records: list[GraphEdge] = []
        for n in edges:
            row = rows.get(n.node_id)
            if row is None:  # removed by a concurrent update
                continue
            records.append(
                GraphEdge(
                    relation=n.relation,
                    kind=n.kind,
                    direction=n.direction,
                    line=n.line,
                    node=GraphNode(
                        id=row.id,
                        path=row.path,
                        kind=row.kind,
                        name=row.name,
                        qualified_name=row.qualified_name,
                        start_line=row.start_line,
                        end_line=row.end_line,
                    ),
                )
            )
        out[node] = tuple(records)
    return out
