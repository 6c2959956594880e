"""Graph expansion planning on plain data: order of a result's edges, one budget of
distinct neighbour nodes across the response, shared neighbours free."""

from __future__ import annotations

from codesift.retrieval.graph import Neighbour, order_neighbours, plan_neighbours


def n(node_id: int, kind: str = "calls", direction: str = "out") -> Neighbour:
    return Neighbour(node_id, kind, direction, line=node_id)


def test_relation_names_follow_kind_and_direction() -> None:
    assert n(1, "calls", "out").relation == "callee"
    assert n(1, "calls", "in").relation == "caller"
    assert n(1, "contains", "in").relation == "parent"
    assert n(1, "inherits", "out").relation == "base"
    assert n(1, "inherits", "in").relation == "subclass"
    assert n(1, "imports", "out").relation == "imports"


def test_order_is_parent_then_callees_and_callers_alternately_then_the_rest() -> None:
    parent = [n(9, "contains", "in")]
    callees = [n(1), n(2), n(3)]
    callers = [n(4, "calls", "in")]
    rest = [n(5, "inherits", "out"), n(2, "imports", "out")]
    ordered = order_neighbours(parent, callees, callers, rest)
    assert [x.node_id for x in ordered] == [9, 1, 4, 2, 3, 5]  # node 2 only once


def test_budget_is_shared_round_robin_across_results() -> None:
    offers = {100: [n(i) for i in range(1, 30)], 200: [n(i) for i in range(50, 80)]}
    plan = plan_neighbours(offers, [100, 200], limit=6)
    assert [x.node_id for x in plan[100]] == [1, 2, 3]
    assert [x.node_id for x in plan[200]] == [50, 51, 52]


def test_a_result_with_few_edges_leaves_its_share_to_others() -> None:
    offers = {100: [n(1)], 200: [n(i) for i in range(50, 80)]}
    plan = plan_neighbours(offers, [100, 200], limit=5)
    assert [x.node_id for x in plan[100]] == [1]
    assert [x.node_id for x in plan[200]] == [50, 51, 52, 53]


def test_a_node_already_shown_costs_nothing() -> None:
    offers = {100: [n(1), n(2)], 200: [n(1), n(3)]}
    plan = plan_neighbours(offers, [100, 200], limit=3)
    assert [x.node_id for x in plan[100]] == [1, 2]
    assert [x.node_id for x in plan[200]] == [1, 3]
    distinct = {x.node_id for edges in plan.values() for x in edges}
    assert len(distinct) == 3


def test_limit_zero_and_no_offers() -> None:
    assert plan_neighbours({100: [n(1)]}, [100], limit=0) == {100: []}
    assert plan_neighbours({}, [100, 200]) == {100: [], 200: []}
