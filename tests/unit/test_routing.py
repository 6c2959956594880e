"""Source routing scores (codesift.retrieval.routing) on plain profiles."""

from __future__ import annotations

import math

import pytest

from codesift.retrieval.routing import SourceProfile, route_terms, score_pool


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
