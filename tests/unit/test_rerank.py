"""The rerank gate and ordering on plain data."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.config import RerankSettings, load_settings
from codesift.errors import ConfigError
from codesift.retrieval.rerank import load_reranker, rerank_order, rerank_skip_reason


def test_rerank_runs_for_a_prose_query_with_enough_candidates() -> None:
    assert rerank_skip_reason("retry a failed charge", 120, 50, False) is None


@pytest.mark.parametrize(
    ("query", "candidates", "exact_first", "reason"),
    [
        ("   ", 120, False, "blank query"),
        ("retry", 49, False, "fewer than the threshold 50"),
        ("ParseConfig", 300, True, "exact symbol match is already first"),
    ],
)
def test_rerank_is_skipped(query: str, candidates: int, exact_first: bool, reason: str) -> None:
    skip = rerank_skip_reason(query, candidates, 50, exact_first)
    assert skip is not None and reason in skip


def test_rerank_order_is_by_score_with_ties_in_fused_order() -> None:
    assert rerank_order([0.1, 0.9, 0.5, 0.9]) == [1, 3, 2, 0]
    assert rerank_order([]) == []


def test_rerank_is_off_by_default_and_loads_nothing(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    assert settings.rerank.enabled is False
    assert settings.rerank.threshold == 50
    load = load_reranker(settings.rerank, tmp_path)
    assert load.reranker is None and load.warning is None


def test_an_unknown_provider_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / ".codesift.toml").write_text('[rerank]\nprovider = "cohere"\n')
    with pytest.raises(ConfigError, match=r"rerank\.provider"):
        load_settings(tmp_path)
    with pytest.raises(ConfigError, match=r"rerank\.provider"):
        load_reranker(RerankSettings(enabled=True, provider="cohere"), tmp_path)


def test_enabled_without_a_model_path_degrades_with_a_warning(tmp_path: Path) -> None:
    load = load_reranker(RerankSettings(enabled=True), tmp_path)
    assert load.reranker is None
    assert load.warning is not None and "model_path" in load.warning
