"""Settings: defaults, `.codesift.toml`, overrides, and clear errors for bad values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codesift.config import Settings, load_settings, merge_settings
from codesift.errors import ConfigError


def test_defaults_without_a_settings_file(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    assert settings.search.top_k == 10
    assert settings.search.file_diversity == 0.3
    assert settings.index.db_path == ".codesift/index.db"


def test_settings_file_then_overrides(tmp_path: Path) -> None:
    (tmp_path / ".codesift.toml").write_text(
        "[search]\ntop_k = 20\nfile_evidence = 0\n[index]\nmax_chunk_lines = 50\n"
    )
    settings = load_settings(tmp_path, {"search": {"top_k": 5}})
    assert settings.search.top_k == 5  # the override wins over the file
    assert settings.search.file_evidence == 0.0
    assert settings.index.max_chunk_lines == 50


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"search": {"top_k": "10"}}, "search.top_k must be an integer"),
        ({"search": {"top_k": 0}}, "search.top_k must be positive"),
        ({"search": {"file_evidence": -1}}, "search.file_evidence must not be negative"),
        ({"search": {"file_diversity": 1.5}}, "search.file_diversity must be between 0 and 1"),
        ({"search": {"symbol_threshold": 2}}, "search.symbol_threshold must be between 0 and 1"),
        ({"search": {"prior_tests": 1}}, "search.prior_tests must be true or false"),
        ({"search": {"bogus": 1}}, "unknown setting search.bogus"),
        ({"bogus": {}}, "unknown setting section 'bogus'"),
        ({"search": 3}, "setting section 'search' must be a table"),
    ],
)
def test_bad_values_are_named_errors(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        merge_settings(Settings(), overrides)


def test_a_malformed_settings_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / ".codesift.toml").write_text("[search\ntop_k = ")
    with pytest.raises(ConfigError):
        load_settings(tmp_path)
