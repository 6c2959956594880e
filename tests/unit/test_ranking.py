"""Ranking priors on plain data."""

from __future__ import annotations

import pytest

from codesift.retrieval.fusion import FusedCandidate
from codesift.retrieval.query import analyze_query
from codesift.retrieval.ranking import (
    ChunkFeatures,
    RankingPriors,
    apply_priors,
    is_test_like_path,
)

ALL = RankingPriors()
NONE = RankingPriors(definition=False, tests=False, path=False)


def ranked(
    features: dict[int, ChunkFeatures], scores: dict[int, float], query: str, priors: RankingPriors
) -> list[int]:
    candidates = [FusedCandidate(cid, score) for cid, score in scores.items()]
    return [c.chunk_id for c in apply_priors(candidates, features, analyze_query(query), priors)]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_billing.py", True),
        ("pkg/test_util.py", True),
        ("net/http/server_test.go", True),
        ("src/app.spec.ts", True),
        ("vendor/golang.org/x/net/http2.go", True),
        ("examples/demo.rs", True),
        ("pkg/testing.py", False),
        ("src/contest/score.py", False),
        ("billing/charges.py", False),
    ],
)
def test_test_like_paths(path: str, expected: bool) -> None:
    assert is_test_like_path(path) is expected


def test_definition_of_a_symbol_query_leads() -> None:
    features = {
        1: ChunkFeatures("tests/test_pool.py", "method", 0.6),
        2: ChunkFeatures("multiprocessing/pool.py", "method", 1.5),
        3: ChunkFeatures("multiprocessing/pool.py", "module", 0.0),
    }
    scores = {1: 0.033, 2: 0.016, 3: 0.030}
    assert ranked(features, scores, "Pool.imap_unordered", ALL)[0] == 2
    assert ranked(features, scores, "Pool.imap_unordered", NONE)[0] == 1


def test_tests_are_demoted_for_prose_but_not_when_the_query_is_about_tests() -> None:
    features = {
        1: ChunkFeatures("tests/test_charges.py", "function", 0.0),
        2: ChunkFeatures("billing/charges.py", "function", 0.0),
    }
    scores = {1: 0.030, 2: 0.020}
    assert ranked(features, scores, "retry a declined card", ALL) == [2, 1]
    assert ranked(features, scores, "tests that retry a declined card", ALL) == [1, 2]
    assert ranked(features, scores, "retry a declined card", NONE) == [1, 2]


def test_query_words_in_the_path_lift_a_result() -> None:
    features = {
        1: ChunkFeatures("urllib/request.py", "function", 0.0),
        2: ChunkFeatures("urllib/robotparser.py", "function", 0.0),
    }
    # A near-tie: the path bonus breaks it, it would not overturn a real gap.
    scores = {1: 0.0200, 2: 0.0190}
    # "robot" and "parser" are both parts of robotparser
    assert ranked(features, scores, "robot parser rules for crawling", ALL) == [2, 1]
    assert ranked(features, scores, "robot parser rules for crawling", NONE) == [1, 2]


def test_ties_break_on_chunk_id_and_unknown_chunks_keep_their_score() -> None:
    scores = {5: 0.02, 3: 0.02, 9: 0.01}
    assert ranked({}, scores, "anything at all", ALL) == [3, 5, 9]


def test_path_bonus_does_not_overturn_a_clear_gap() -> None:
    features = {
        1: ChunkFeatures("x509/verify.go", "function", 0.0),
        2: ChunkFeatures("x509/root_unix.go", "function", 0.0),
    }
    scores = {1: 0.0300, 2: 0.0250}
    assert ranked(features, scores, "verify the root certificate chain", ALL) == [1, 2]
