"""Source routing scores (codesift.retrieval.routing) on plain profiles."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pytest

from codesift.retrieval.routing import (
    NEIGHBOUR_PROBE_WEIGHT,
    NEIGHBOUR_SIZE_PENALTY,
    NEIGHBOUR_WEIGHT,
    SEMANTIC_PROBE_WEIGHT,
    SEMANTIC_WEIGHT,
    TOPIC_TOP,
    SemanticEvidence,
    SourceProfile,
    minilm_pool,
    neighbour_semantic,
    route_terms,
    score_pool,
    semantic_scores,
)


def repo(name: str, outline: str, readme: str = "") -> SourceProfile:
    return SourceProfile(
        name, "repository", (("name", name), ("readme", readme), ("outline", outline))
    )


BILLING = repo("billing", "billing/retry_policy.py\nbilling.charge.Charge\nbilling.invoice")
SEARCH = repo("search", "search/index.py\nsearch.query.parse_query\nsearch.retry")
WEB = repo("web", "web/routes.py\nweb.handlers.checkout")
REPOS = (BILLING, SEARCH, WEB)


def test_the_score_is_the_idf_weighted_share_of_matched_terms() -> None:
    [best, second] = score_pool(["charge", "retry"], REPOS, 3, keep_unmatched=False)
    # N = 3; charge: df 1, idf log(4/2); retry: df 2, idf log(4/3)
    idf_charge, idf_retry = math.log(4 / 2), math.log(4 / 3)
    assert best.name == "billing"
    assert best.confidence == pytest.approx(1.0)
    assert second.name == "search"
    assert second.confidence == pytest.approx(idf_retry / (idf_charge + idf_retry))
    assert best.matched == ("charge", "retry")
    assert "charge (outline)" in best.rationale


def test_a_term_no_source_has_weighs_nothing_and_changes_no_score() -> None:
    plain = score_pool(["charge", "retry"], REPOS, 3, keep_unmatched=False)
    typo = score_pool(["charge", "retyr", "retry"], REPOS, 3, keep_unmatched=False)
    assert [(m.name, m.confidence) for m in plain] == [(m.name, m.confidence) for m in typo]


def test_repositories_nothing_matched_are_dropped_collections_are_kept_and_weak() -> None:
    assert [m.name for m in score_pool(["charge"], REPOS, 3, keep_unmatched=False)] == ["billing"]
    docs = (
        SourceProfile("prd", "collection", (("text", "charge a card"),)),
        SourceProfile("runbook", "collection", (("text", "restart the pods"),)),
    )
    found = score_pool(["charge"], docs, 3, keep_unmatched=True)
    assert [m.name for m in found] == ["prd", "runbook"]
    assert found[1].confidence == 0.0
    assert found[1].rationale.startswith("weak")


def test_a_label_match_boosts_the_score() -> None:
    full = SourceProfile("a", "collection", (("text", "charge refund card"),))
    labelled = SourceProfile(
        "b", "collection", (("text", "charge"), ("labels", "refund")), labels=("refund",)
    )
    other = SourceProfile("c", "collection", (("text", "nothing"),))
    found = score_pool(
        ["charge", "refund", "card"], (full, labelled, other), 3, keep_unmatched=True
    )
    scores = {m.name: m.confidence for m in found}
    # N = 3: charge and refund df 2, card df 1
    low, high = math.log(4 / 3), math.log(4 / 2)
    coverage = 2 * low / (2 * low + high)
    assert scores["b"] == pytest.approx(coverage * (1 + 0.5 * 1 / 3))
    assert scores["a"] == pytest.approx(1.0)
    assert "labels: refund" in found[1].rationale


def test_a_term_matches_inside_a_dotted_name_and_a_plural_matches_its_singular() -> None:
    found = score_pool(["policies", "charge"], REPOS, 3, keep_unmatched=False)
    assert found[0].name == "billing"
    assert found[0].matched == ("policies", "charge")  # retry_policy, billing.charge


def test_route_terms_drop_stopwords_and_split_identifiers() -> None:
    assert route_terms("how does billing retry a failedCharge") == (
        "billing",
        "retry",
        "failedcharge",
        "failed",
        "charge",
    )


def test_limit_and_empty_pools() -> None:
    assert score_pool(["retry"], REPOS, 1, keep_unmatched=False)[0].name in ("billing", "search")
    assert score_pool(["retry"], (), 3, keep_unmatched=True) == []
    assert score_pool(["retry"], REPOS, 0, keep_unmatched=True) == []


class Chunks:
    """Routing evidence from plain data: each chunk is the set of words it uses."""

    def __init__(self, *chunks: str) -> None:
        self.chunks = [frozenset(c.split()) for c in chunks]

    def term_chunks(self, forms: Mapping[str, Sequence[str]]) -> Mapping[str, int]:
        counts = {t: sum(1 for c in self.chunks if c & set(fs)) for t, fs in forms.items()}
        return {t: n for t, n in counts.items() if n}

    def probe(
        self, forms: Mapping[str, Sequence[str]], common: frozenset[str] = frozenset()
    ) -> Sequence[frozenset[str]]:
        held = [frozenset(t for t, fs in forms.items() if c & set(fs)) for c in self.chunks]
        return sorted((h for h in held if h - common), key=len, reverse=True)[:20]


def sized(name: str, chunks: Chunks, outline: str = "") -> SourceProfile:
    return SourceProfile(
        name, "repository", (("name", name), ("outline", outline)), chunks=len(chunks.chunks)
    )


def test_a_term_its_chunks_use_more_than_the_pool_does_matches_the_vocabulary() -> None:
    evidence = {
        "queue": Chunks("worker lease job", "lease expire job", "heartbeat worker"),
        "web": Chunks("route handler", "handler job", "template render", "static file"),
    }
    profiles = [sized(name, chunks) for name, chunks in evidence.items()]
    found = score_pool(["lease", "job"], profiles, 3, keep_unmatched=False, evidence=evidence)
    scores = {m.name: m for m in found}
    # lease: used by queue only (df 1); job: 2 of queue's 3 chunks, 1 of web's 4,
    # the pool's share 3 / 7: only queue's share (2 / 3) is at least that (df 1).
    assert scores["queue"].confidence == pytest.approx(1.0)
    assert "lease (vocabulary)" in scores["queue"].rationale
    assert "web" not in scores  # `job` is incidental there: no match, dropped
    assert [m.name for m in found] == ["queue"]


def test_a_term_no_index_uses_weighs_nothing_with_evidence_too() -> None:
    evidence = {
        "queue": Chunks("worker lease job", "heartbeat worker"),
        "web": Chunks("route handler job", "worker pool"),
    }
    profiles = [sized(name, chunks) for name, chunks in evidence.items()]
    plain = score_pool(["lease", "worker"], profiles, 3, keep_unmatched=False, evidence=evidence)
    typo = score_pool(
        ["lease", "laese", "worker"], profiles, 3, keep_unmatched=False, evidence=evidence
    )
    assert [(m.name, m.confidence) for m in plain] == [(m.name, m.confidence) for m in typo]


def test_terms_used_together_order_the_pool_and_the_formula_stays_the_confidence() -> None:
    # Both use `retry` and `charge` in the same share of their chunks, so the formula
    # (and the term counts) score them alike; only one has chunks using both together.
    together = Chunks("retry charge", "retry charge", "ledger", "refund")
    apart = Chunks("retry", "charge", "retry", "charge")
    evidence = {"a-apart": apart, "b-together": together}
    profiles = [sized(name, chunks, "pay.retry\npay.charge") for name, chunks in evidence.items()]
    found = score_pool(["retry", "charge"], profiles, 3, keep_unmatched=False, evidence=evidence)
    assert [m.name for m in found] == ["b-together", "a-apart"]
    assert found[0].confidence == found[1].confidence
    # the graded order's scores come with it (the unscoped search weighs pages by them)
    first, second = (m.grade for m in found)
    assert first is not None and second is not None and first > second
    without = score_pool(["retry", "charge"], profiles, 3, keep_unmatched=False)
    assert [m.name for m in without] == ["a-apart", "b-together"]  # ties on name
    assert all(m.grade is None for m in without)


def test_without_evidence_for_every_repository_the_pool_is_in_formula_order() -> None:
    evidence = {"billing": Chunks("charge retry")}  # search and web have none
    found = score_pool(["charge", "retry"], REPOS, 3, keep_unmatched=False, evidence=evidence)
    plain = score_pool(["charge", "retry"], REPOS, 3, keep_unmatched=False)
    assert found == plain


class Topics(Chunks):
    """Chunks with topic centroids (RouteTopics)."""

    def __init__(self, topics: Sequence[Sequence[float]] | None, *chunks: str) -> None:
        super().__init__(*chunks)
        self._topics = None if topics is None else np.asarray(topics, np.float32)

    def topics(self) -> npt.NDArray[np.float32] | None:
        return self._topics


def unit(*xs: float) -> list[float]:
    norm = math.sqrt(sum(x * x for x in xs))
    return [x / norm for x in xs]


def test_the_semantic_score_is_the_mean_of_the_best_topic_cosines() -> None:
    query = np.asarray(unit(1.0, 0.0, 0.0), np.float32)
    topics = [unit(1, 0, 0), unit(1, 1, 0), unit(0, 1, 0), unit(0, 0, 1), unit(1, 0, 1)]
    evidence = {
        "near": Topics(topics, "a"),
        "none": Topics(None, "a"),  # an index without vectors
        "plain": Chunks("a"),  # evidence without topics at all
    }
    scores = semantic_scores(query, evidence)
    assert set(scores) == {"near"}
    best = sorted([1.0, math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)])[-TOPIC_TOP:]
    assert scores["near"] == pytest.approx(sum(best) / TOPIC_TOP, abs=1e-6)


def test_topics_order_a_pool_the_words_do_not_and_the_formula_stays_the_confidence() -> None:
    # Same chunks, same words: the term evidence ties; the topics do not.
    evidence = {
        "a-far": Topics([unit(0, 1)], "retry charge", "ledger"),
        "b-near": Topics([unit(1, 0)], "retry charge", "ledger"),
        "c-none": Chunks("retry charge", "ledger"),
    }
    profiles = [sized(name, chunks, "pay.retry") for name, chunks in evidence.items()]
    query = np.asarray(unit(1, 0), np.float32)
    semantic = semantic_scores(query, evidence)
    found = score_pool(
        ["retry", "charge"], profiles, 3, keep_unmatched=False, evidence=evidence, semantic=semantic
    )
    # c-none has no topics: it counts as the pool's mean, between the other two.
    assert [m.name for m in found] == ["b-near", "c-none", "a-far"]
    assert len({m.confidence for m in found}) == 1
    plain = score_pool(["retry", "charge"], profiles, 3, keep_unmatched=False, evidence=evidence)
    assert [m.name for m in plain] == ["a-far", "b-near", "c-none"]  # ties on name
    assert [m.confidence for m in plain] == [m.confidence for m in found]


def test_one_source_with_topics_changes_no_order() -> None:
    evidence = {
        "a": Chunks("retry charge", "ledger"),
        "b": Topics([unit(1, 0)], "retry charge", "ledger"),
    }
    profiles = [sized(name, chunks, "pay.retry") for name, chunks in evidence.items()]
    semantic = semantic_scores(np.asarray(unit(1, 0), np.float32), evidence)
    found = score_pool(
        ["retry", "charge"], profiles, 3, keep_unmatched=False, evidence=evidence, semantic=semantic
    )
    assert [m.name for m in found] == ["a", "b"]


class Neighbours(Topics):
    """Topics and a neighbour score (RouteNeighbours): None when the index's vectors
    are not MiniLM's."""

    def __init__(
        self, topics: Sequence[Sequence[float]] | None, near: float | None, *chunks: str
    ) -> None:
        super().__init__(topics, *chunks)
        self.near = near

    def minilm_vectors(self) -> bool:
        return self.near is not None

    def neighbours(self, query_vector: npt.NDArray[np.float32]) -> float | None:
        return self.near


def test_a_minilm_pool_adds_the_nearest_chunks_to_the_topics() -> None:
    query = np.asarray(unit(1, 0), np.float32)
    evidence = {
        "a": Neighbours([unit(1, 0)], 0.4, "retry"),
        "b": Neighbours([unit(0, 1)], 0.7, "retry"),
        "c": Chunks("retry"),  # no vectors at all: left out, as with topics alone
    }
    found = neighbour_semantic(query, evidence)
    assert found is not None
    assert found.weights == (NEIGHBOUR_WEIGHT, NEIGHBOUR_PROBE_WEIGHT)
    assert found.size_penalty == NEIGHBOUR_SIZE_PENALTY > 0
    assert found.scores == pytest.approx({"a": 1.0 + 0.4, "b": 0.0 + 0.7})
    assert minilm_pool(evidence)
    # One index whose vectors are not MiniLM's: the pool keeps the static query.
    mixed = {**evidence, "d": Neighbours([unit(1, 1)], None, "retry")}
    assert not minilm_pool(mixed) and neighbour_semantic(query, mixed) is None
    # Fewer than two with vectors: no MiniLM query is embedded for the pool.
    assert not minilm_pool({"a": evidence["a"], "c": evidence["c"]})
    # Fewer than two sources with vectors: nothing to compare.
    assert neighbour_semantic(query, {"a": evidence["a"], "c": evidence["c"]}) is None
    assert SemanticEvidence({}).weights == (SEMANTIC_WEIGHT, SEMANTIC_PROBE_WEIGHT)
    assert SemanticEvidence({}).size_penalty == 0.0  # the centroid score alone: as is


def test_the_nearest_chunks_order_a_pool_the_topics_do_not() -> None:
    # Same words, same topics: the neighbour scores decide; the confidence stays.
    evidence = {
        "a-far": Neighbours([unit(1, 0)], 0.3, "retry charge", "ledger"),
        "b-near": Neighbours([unit(1, 0)], 0.8, "retry charge", "ledger"),
    }
    profiles = [sized(name, chunks, "pay.retry") for name, chunks in evidence.items()]
    semantic = neighbour_semantic(np.asarray(unit(1, 0), np.float32), evidence)
    found = score_pool(
        ["retry", "charge"], profiles, 3, keep_unmatched=False, evidence=evidence, semantic=semantic
    )
    assert [m.name for m in found] == ["b-near", "a-far"]
    assert found[0].confidence == found[1].confidence


def test_the_size_penalty_takes_log_chunks_off_and_an_unknown_size_counts_as_the_mean() -> None:
    semantic = SemanticEvidence({"a": 0.5, "b": 0.5, "c": 0.5}, size_penalty=0.1)
    adjusted = semantic.adjusted({"a": 100, "b": 10_000, "c": 0})
    mean_log = (math.log(100) + math.log(10_000)) / 2
    assert adjusted == pytest.approx(
        {
            "a": 0.5 - 0.1 * math.log(100),
            "b": 0.5 - 0.1 * math.log(10_000),
            "c": 0.5 - 0.1 * mean_log,
        }
    )
    plain = SemanticEvidence({"a": 0.5})
    assert plain.adjusted({"a": 100}) == {"a": 0.5}


def sized_as(name: str, chunks: int) -> SourceProfile:
    """A profile whose index holds `chunks` chunks (only the first few of them are
    the Chunks evidence's: the rest use none of the query's words)."""
    return SourceProfile(
        name, "repository", (("name", name), ("outline", "pay.retry\npay.charge")), chunks=chunks
    )


def test_a_large_index_whose_nearest_chunks_are_barely_closer_does_not_win_by_its_size() -> None:
    # The same words in both; a large index's nearest chunks come a little closer to
    # the question (0.55 against 0.50: the best of 200 times more vectors), by less
    # than its size explains.
    query = np.asarray(unit(1, 0), np.float32)
    evidence = {
        "large": Neighbours([unit(1, 0)], 0.55, "retry charge", "ledger"),
        "small": Neighbours([unit(1, 0)], 0.50, "retry charge", "ledger"),
    }
    profiles = [sized_as("large", 100_000), sized_as("small", 500)]
    semantic = neighbour_semantic(query, evidence)
    assert semantic is not None
    found = score_pool(
        ["retry", "charge"], profiles, 3, keep_unmatched=False, evidence=evidence, semantic=semantic
    )
    assert [m.name for m in found] == ["small", "large"]
    assert found[0].confidence == found[1].confidence  # the formula is not touched
    # Without the penalty the raw neighbour scores decide (weight 3 against the
    # likelihood's 1).
    raw = SemanticEvidence(semantic.scores, semantic.weights)
    unpenalised = score_pool(
        ["retry", "charge"], profiles, 3, keep_unmatched=False, evidence=evidence, semantic=raw
    )
    assert [m.name for m in unpenalised] == ["large", "small"]
    # A clearly closer large index still wins.
    evidence["large"] = Neighbours([unit(1, 0)], 0.80, "retry charge", "ledger")
    semantic = neighbour_semantic(query, evidence)
    assert semantic is not None
    found = score_pool(
        ["retry", "charge"], profiles, 3, keep_unmatched=False, evidence=evidence, semantic=semantic
    )
    assert [m.name for m in found] == ["large", "small"]
