"""Reciprocal Rank Fusion and per-node collapsing, on plain data (no database)."""

from __future__ import annotations

import pytest

from codesift.retrieval.fusion import (
    FusedCandidate,
    close_match_weight,
    collapse_by_node,
    fuse_rankings,
)

# --- fuse_rankings -----------------------------------------------------------------------


def test_rrf_scores_are_the_sum_of_reciprocal_ranks() -> None:
    fused = fuse_rankings(
        {"lexical": [(1, 5.0), (2, 4.0)], "symbol": [(2, 0.9), (3, 0.8)]}, rrf_k=60
    )
    scores = {c.chunk_id: c.score for c in fused}
    assert scores[1] == pytest.approx(1 / 61)
    assert scores[2] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[3] == pytest.approx(1 / 62)
    assert [c.chunk_id for c in fused] == [2, 1, 3]


def test_rrf_k_changes_the_denominator() -> None:
    fused = fuse_rankings({"lexical": [(10, 1.0), (11, 0.5)]}, rrf_k=0)
    assert [(c.chunk_id, c.score) for c in fused] == [(10, 1.0), (11, 0.5)]
    fused = fuse_rankings({"lexical": [(10, 1.0), (11, 0.5)]}, rrf_k=9)
    assert [c.score for c in fused] == pytest.approx([1 / 10, 1 / 11])


def test_default_rrf_k_is_60() -> None:
    fused = fuse_rankings({"lexical": [(4, 1.0)]})
    assert fused[0].score == pytest.approx(1 / 61)


def test_weights_scale_each_stream_and_missing_weights_default_to_one() -> None:
    fused = fuse_rankings(
        {"lexical": [(1, 5.0), (2, 4.0)], "symbol": [(2, 0.9)], "other": [(3, 7.0)]},
        weights={"lexical": 2.0, "symbol": 0.5},
        rrf_k=60,
    )
    scores = {c.chunk_id: c.score for c in fused}
    assert scores[1] == pytest.approx(2.0 / 61)
    assert scores[2] == pytest.approx(2.0 / 62 + 0.5 / 61)
    assert scores[3] == pytest.approx(1.0 / 61)  # "other" has no weight: 1.0
    assert [c.chunk_id for c in fused] == [2, 1, 3]


def test_a_zero_weight_stream_contributes_no_score_but_keeps_provenance() -> None:
    fused = fuse_rankings({"lexical": [(1, 3.0)], "symbol": [(2, 1.0)]}, weights={"symbol": 0.0})
    by_id = {c.chunk_id: c for c in fused}
    assert by_id[2].score == 0.0
    assert by_id[2].hits == [("symbol", 1, 1.0)]
    assert [c.chunk_id for c in fused] == [1, 2]


def test_ties_break_on_chunk_id() -> None:
    fused = fuse_rankings({"a": [(9, 1.0)], "b": [(4, 1.0)], "c": [(7, 1.0)]})
    assert [c.chunk_id for c in fused] == [4, 7, 9]
    assert len({c.score for c in fused}) == 1


def test_ties_break_on_chunk_id_whatever_the_stream_order() -> None:
    one = fuse_rankings({"a": [(5, 1.0), (3, 1.0)], "b": [(3, 1.0), (5, 1.0)]})
    two = fuse_rankings({"b": [(3, 1.0), (5, 1.0)], "a": [(5, 1.0), (3, 1.0)]})
    assert [c.chunk_id for c in one] == [3, 5]
    assert [c.chunk_id for c in two] == [3, 5]


def test_limit_returns_the_head_of_the_full_fusion_with_the_same_provenance() -> None:
    rankings = {
        "lexical": [(i, 100.0 - i) for i in range(1, 200)],
        "symbol": [(i, 1.0) for i in range(150, 50, -1)],
        "vector": [(i, 0.5) for i in range(0, 300, 3)],
    }
    full = fuse_rankings(rankings, {"symbol": 2.0})
    head = fuse_rankings(rankings, {"symbol": 2.0}, limit=25)
    assert len(full) == len(set().union(*({c for c, _ in r} for r in rankings.values())))
    assert head == full[:25]
    assert fuse_rankings(rankings, limit=0) == []


def test_a_chunk_listed_twice_by_one_stream_counts_once_at_its_best_rank() -> None:
    fused = fuse_rankings({"lexical": [(7, 3.0), (8, 2.0), (7, 1.0)]}, rrf_k=60)
    by_id = {c.chunk_id: c for c in fused}
    assert by_id[7].score == pytest.approx(1 / 61)
    assert by_id[7].hits == [("lexical", 1, 3.0)]
    assert by_id[8].score == pytest.approx(1 / 62)
    assert len(fused) == 2


def test_provenance_records_rank_and_raw_score_per_stream() -> None:
    fused = fuse_rankings(
        {"lexical": [(1, 5.5), (2, 4.25)], "symbol": [(2, 0.75)], "lexical_doc": []}
    )
    by_id = {c.chunk_id: c for c in fused}
    assert by_id[1].hits == [("lexical", 1, 5.5)]
    assert by_id[2].hits == [("lexical", 2, 4.25), ("symbol", 1, 0.75)]
    for cand in fused:
        assert all(stream != "lexical_doc" for stream, _, _ in cand.hits)


def test_empty_inputs_give_no_candidates() -> None:
    assert fuse_rankings({}) == []
    assert fuse_rankings({"lexical": [], "symbol": []}) == []
    assert fuse_rankings({}, weights={"lexical": 2.0}) == []


# --- collapse_by_node --------------------------------------------------------------------


def cand(chunk_id: int, score: float, *hits: tuple[str, int, float]) -> FusedCandidate:
    return FusedCandidate(chunk_id, score, list(hits))


def test_layers_of_one_node_merge_into_one_result_showing_the_code_chunk() -> None:
    candidates = [
        cand(1, 0.05, ("lexical", 3, 2.0), ("symbol", 1, 1.5)),  # summary of node 100
        cand(2, 0.03, ("lexical", 1, 6.0)),  # code of node 100
    ]
    out = collapse_by_node(candidates, {1: 100, 2: 100}, {1: "summary", 2: "code"})
    assert len(out) == 1
    assert out[0].chunk_id == 2  # the code chunk is shown
    assert out[0].score == 0.05  # the best member's score, not a sum


def test_merged_provenance_keeps_the_best_rank_per_stream() -> None:
    candidates = [
        cand(1, 0.05, ("lexical", 3, 2.0), ("symbol", 1, 1.5)),
        cand(2, 0.03, ("lexical", 1, 6.0)),
        cand(3, 0.01, ("symbol", 4, 0.5), ("lexical_doc", 9, 0.1)),
    ]
    out = collapse_by_node(
        candidates, {1: 100, 2: 100, 3: 100}, {1: "summary", 2: "code", 3: "ast"}
    )
    assert len(out) == 1
    hits = {hit[0]: hit for hit in out[0].hits}
    assert hits == {
        "lexical": ("lexical", 1, 6.0),
        "symbol": ("symbol", 1, 1.5),
        "lexical_doc": ("lexical_doc", 9, 0.1),
    }
    assert len(out[0].hits) == 3
    ranks = [rank for _, rank, _ in out[0].hits]
    assert ranks == sorted(ranks)


def test_best_chunk_is_shown_when_the_node_has_no_code_chunk_among_candidates() -> None:
    candidates = [cand(5, 0.04, ("lexical", 1, 1.0)), cand(6, 0.02, ("symbol", 2, 0.7))]
    out = collapse_by_node(candidates, {5: 300, 6: 300}, {5: "summary", 6: "summary"})
    assert [(c.chunk_id, c.score) for c in out] == [(5, 0.04)]


def test_a_single_chunk_node_is_unchanged() -> None:
    candidates = [cand(4, 0.02, ("lexical", 2, 3.0))]
    out = collapse_by_node(candidates, {4: 200}, {4: "ast"})
    assert [(c.chunk_id, c.score, c.hits) for c in out] == [(4, 0.02, [("lexical", 2, 3.0)])]


def test_node_less_chunks_stay_separate() -> None:
    candidates = [
        cand(10, 0.03, ("lexical_doc", 1, 2.0)),
        cand(11, 0.02, ("lexical_doc", 2, 1.0)),
        cand(12, 0.01, ("lexical", 5, 0.5)),
    ]
    # 12 is missing from node_of entirely: also node-less.
    out = collapse_by_node(candidates, {10: None, 11: None}, {10: "doc", 11: "doc", 12: "code"})
    assert [c.chunk_id for c in out] == [10, 11, 12]
    assert [c.score for c in out] == [0.03, 0.02, 0.01]


def test_different_nodes_are_not_merged() -> None:
    candidates = [cand(1, 0.03, ("lexical", 1, 1.0)), cand(2, 0.02, ("lexical", 2, 1.0))]
    out = collapse_by_node(candidates, {1: 100, 2: 200}, {1: "code", 2: "code"})
    assert [c.chunk_id for c in out] == [1, 2]


def test_output_is_ordered_by_score_then_shown_chunk_id() -> None:
    candidates = [
        cand(1, 0.05, ("symbol", 1, 1.5)),  # summary of node 100
        cand(3, 0.04, ("lexical_doc", 1, 2.0)),  # doc section, no node
        cand(8, 0.04, ("lexical", 2, 2.0)),  # code of node 300 (ties with chunk 3)
        cand(4, 0.02, ("lexical", 4, 1.0)),  # ast of node 200
        cand(2, 0.01, ("lexical", 9, 0.5)),  # code of node 100
    ]
    out = collapse_by_node(
        candidates,
        {1: 100, 2: 100, 3: None, 4: 200, 8: 300},
        {1: "summary", 2: "code", 3: "doc", 4: "ast", 8: "code"},
    )
    assert [(c.chunk_id, c.score) for c in out] == [(2, 0.05), (3, 0.04), (8, 0.04), (4, 0.02)]


def test_collapse_of_nothing_is_nothing() -> None:
    assert collapse_by_node([], {}, {}) == []


def test_fuse_then_collapse_end_to_end() -> None:
    # Node 1 has code chunk 100 and summary chunk 101; chunk 200 is a doc section.
    fused = fuse_rankings(
        {
            "lexical": [(100, 6.0), (200, 1.0)],
            "symbol": [(101, 1.5)],
            "lexical_doc": [(200, 3.0)],
        }
    )
    out = collapse_by_node(
        fused, {100: 1, 101: 1, 200: None}, {100: "code", 101: "summary", 200: "doc"}
    )
    assert [c.chunk_id for c in out] == [200, 100]
    assert out[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert out[1].score == pytest.approx(1 / 61)
    assert {stream for stream, _, _ in out[1].hits} == {"lexical", "symbol"}


# --- close_match_weight ------------------------------------------------------------------


def test_a_close_best_match_weighs_the_vector_stream_more() -> None:
    span = (0.45, 0.65)
    assert close_match_weight(0.30, span, 0.8, 1.0) == 0.8  # only shares the topic
    assert close_match_weight(0.45, span, 0.8, 1.0) == 0.8
    assert close_match_weight(0.55, span, 0.8, 1.0) == pytest.approx(0.9)  # linear
    assert close_match_weight(0.65, span, 0.8, 1.0) == pytest.approx(1.0)
    assert close_match_weight(0.95, span, 0.8, 1.0) == pytest.approx(1.0)
    # A close weight below the base one lowers it alike; a stream switched off stays off.
    assert close_match_weight(0.65, span, 0.8, 0.5) == pytest.approx(0.5)
    assert close_match_weight(0.95, span, 0.0, 1.0) == 0.0
    # A span without width is a step.
    assert close_match_weight(0.59, (0.6, 0.6), 0.8, 1.0) == 0.8
    assert close_match_weight(0.60, (0.6, 0.6), 0.8, 1.0) == 1.0
