"""merge_walks: several sources' walks as one answer (engine/graph_merge.py)."""

from __future__ import annotations

from codesift.engine.graph_merge import merge_walks
from codesift.engine.results import GraphLink, GraphResult, Symbol
from codesift.store.reader import NodeRow


def _node(node_id: int, name: str) -> Symbol:
    return Symbol(
        NodeRow(
            id=node_id,
            kind="function",
            name=name,
            qualified_name=f"m.{name}",
            parent_id=None,
            path="m.py",
            language="python",
            start_line=node_id,
            end_line=node_id,
            signature=f"def {name}()",
            docstring="",
        )
    )


def _walk(root: int, callers: list[int], *, omitted: int = 0) -> GraphResult:
    nodes = (_node(root, "submit"), *(_node(c, f"caller{c}") for c in callers))
    edges = tuple(GraphLink(c, root, "submit", "calls", c, "exact") for c in callers)
    return GraphResult((root,), nodes, edges, truncated=omitted > 0, omitted=omitted)


def test_one_walk_that_found_something_is_answered_as_it_was() -> None:
    alpha = _walk(7, [8, 9])
    merged, places = merge_walks(
        [(GraphResult((), (), ()), lambda s: "none"), (alpha, lambda s: "alpha")], 50
    )
    assert merged is alpha
    assert places == {7: "alpha", 8: "alpha", 9: "alpha"}


def test_walks_with_colliding_ids_are_numbered_within_the_answer() -> None:
    alpha, beta = _walk(1, [2, 3]), _walk(1, [2], omitted=1)
    merged, places = merge_walks([(alpha, lambda s: "alpha"), (beta, lambda s: "beta")], 50)
    ids = [s.node.id for s in merged.nodes]
    assert len(set(ids)) == len(ids) == 5
    assert merged.roots == (1, 2)  # every walk's roots first
    assert [places[i] for i in ids] == ["alpha", "beta", "alpha", "alpha", "beta"]
    by_id = {s.node.id: s for s in merged.nodes}
    pairs = {(places[e.source], by_id[e.source].node.name, places[e.target]) for e in merged.edges}
    assert pairs == {
        ("alpha", "caller2", "alpha"),
        ("alpha", "caller3", "alpha"),
        ("beta", "caller2", "beta"),
    }
    assert (merged.truncated, merged.omitted) == (True, 1)


def test_max_nodes_bounds_the_whole_answer() -> None:
    alpha, beta = _walk(1, [2, 3]), _walk(1, [2])
    merged, _ = merge_walks([(alpha, lambda s: "alpha"), (beta, lambda s: "beta")], 3)
    assert len(merged.nodes) == 3 and merged.roots == (1, 2)
    assert (merged.truncated, merged.omitted) == (True, 2)
    shown = {s.node.id for s in merged.nodes}
    assert all(e.source in shown and e.target in shown for e in merged.edges)
