"""One graph answer from the walks of several sources (the served folders, the
shared index): `merge_walks`.

    walk, place = merge_walks([(alpha_walk, "alpha"), (beta_walk, "beta")], max_nodes=50)
    place[node_id]      # the source each definition of the merged walk is in

Each source's walk starts from its own definitions of the name; a walk with no
definition adds nothing. With one walk that found something, the answer is
that walk as it was (its ids are its index's). With more, node ids are
numbered anew within the answer (each index numbers its own nodes, so two
sources' ids may collide): the roots of every walk first, in the sources'
order, then the rest of each walk in its order. The answer shows at most
`max_nodes` definitions; those left out count in `omitted` with what each walk
left out, and edges to them are not listed, as in one walk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from codesift.engine.results import GraphLink, GraphResult, Symbol

__all__ = ["merge_walks"]

P = TypeVar("P")

# A walk and where its definitions are (one place for a folder, per definition
# for the shared index's repositories).
Sourced = tuple[GraphResult, Callable[[Symbol], P]]


def merge_walks(walks: Sequence[Sourced[P]], max_nodes: int) -> tuple[GraphResult, dict[int, P]]:
    """See the module docstring. `walks` in the sources' order; the answer's
    definitions' places by their (new) ids."""
    found = [(walk, place) for walk, place in walks if walk.roots]
    if not found:
        return GraphResult((), (), ()), {}
    if len(found) == 1:
        walk, place = found[0]
        return walk, {symbol.node.id: place(symbol) for symbol in walk.nodes}
    order: list[tuple[int, Symbol]] = []
    for i, (walk, _) in enumerate(found):
        roots = set(walk.roots)
        order.extend((i, s) for s in walk.nodes if s.node.id in roots)
    for i, (walk, _) in enumerate(found):
        roots = set(walk.roots)
        order.extend((i, s) for s in walk.nodes if s.node.id not in roots)
    ids: dict[tuple[int, int], int] = {}
    nodes: list[Symbol] = []
    places: dict[int, P] = {}
    for i, symbol in order[:max_nodes]:
        new = len(nodes) + 1
        ids[(i, symbol.node.id)] = new
        nodes.append(replace(symbol, node=replace(symbol.node, id=new)))
        places[new] = found[i][1](symbol)
    cut = max(0, len(order) - max_nodes)
    edges: list[GraphLink] = []
    roots_out: list[int] = []
    for i, (walk, _) in enumerate(found):
        roots_out.extend(ids[(i, r)] for r in walk.roots if (i, r) in ids)
        for link in walk.edges:
            source = ids.get((i, link.source))
            target = None if link.target is None else ids.get((i, link.target))
            if source is None or (link.target is not None and target is None):
                continue  # an end not shown
            edges.append(replace(link, source=source, target=target))
    merged = GraphResult(
        roots=tuple(roots_out),
        nodes=tuple(nodes),
        edges=tuple(edges),
        truncated=cut > 0 or any(walk.truncated for walk, _ in found),
        omitted=cut + sum(walk.omitted for walk, _ in found),
        calls_pending=sum(walk.calls_pending for walk, _ in found),
    )
    return merged, places
