"""engine/results.result_json: the fast path (no graph, no related resources)
answers exactly what dataclasses.asdict gives, field for field."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from codesift.engine.results import result_json
from codesift.history.records import ChangeInfo
from codesift.retrieval.request import GraphEdge, GraphNode, SearchResult, StreamHit


def _by_asdict(result: SearchResult) -> dict[str, Any]:
    data = asdict(result)
    data["provenance"] = [dict(hit) for hit in data["provenance"]]
    return data


def _result() -> SearchResult:
    return SearchResult(
        path="billing.py",
        start_line=4,
        end_line=6,
        kind="function",
        qualified_name="billing.submit",
        layer="code",
        language="python",
        score=0.5,
        snippet="def submit(amount):",
        snippet_start_line=4,
        truncated=False,
        provenance=(StreamHit("lexical", 1, 3.2), StreamHit("symbol", 2, 0.9)),
        chunk_id=7,
        node_id=3,
    )


def test_the_fast_path_is_asdict() -> None:
    plain = _result()
    assert result_json(plain) == _by_asdict(plain)
    assert list(result_json(plain)) == list(_by_asdict(plain))
    history = ChangeInfo(**{name: f"v-{name}" for name in ChangeInfo.__dataclass_fields__})
    timed = replace(plain, history=history)
    assert result_json(timed) == _by_asdict(timed)


def test_a_result_with_graph_edges_too() -> None:
    fields = GraphNode.__dataclass_fields__
    node = GraphNode(
        **{n: (1 if f.type in ("int", "int | None") else "x") for n, f in fields.items()}
    )
    edge_fields = GraphEdge.__dataclass_fields__
    values = {
        n: (node if n == "node" else 1 if f.type == "int" else "x") for n, f in edge_fields.items()
    }
    with_graph = replace(_result(), graph=(GraphEdge(**values),))
    assert result_json(with_graph) == _by_asdict(with_graph)
