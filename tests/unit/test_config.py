"""Settings: defaults, `.codesift.toml`, overrides, and one validation that names
every bad value by its dotted key."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from codesift.config import (
    EMBEDDABLE_LAYERS,
    SearchSettings,
    Settings,
    check_settings,
    converter,
    load_settings,
    merge_settings,
    merge_settings_leniently,
    resolve_settings,
    setting_fields,
)
from codesift.embedding.vectors import EMBEDDED_LAYERS
from codesift.errors import ConfigError
from codesift.retrieval.request import SNIPPET_MAX, SNIPPET_MIN, SearchRequest


def test_defaults_without_a_settings_file(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    assert settings == Settings()
    assert settings.search.top_k == 10
    assert settings.search.file_diversity == 0.3
    assert settings.index.db_path == ".codesift/index.db"


def test_settings_file_then_overrides(tmp_path: Path) -> None:
    (tmp_path / ".codesift.toml").write_text(
        "[search]\ntop_k = 20\nfile_evidence = 0\n[index]\nmax_chunk_lines = 50\n"
        'exclude = ["gen/**"]\n'
    )
    settings = load_settings(tmp_path, {"search": {"top_k": 5}})
    assert settings.search.top_k == 5  # the override wins over the file
    assert settings.search.file_evidence == 0.0
    assert isinstance(settings.search.file_evidence, float)  # an int where a number goes
    assert settings.index.max_chunk_lines == 50
    assert settings.index.exclude == ("gen/**",)  # a TOML array becomes the tuple
    assert settings.index.workers == Settings().index.workers  # untouched keys: defaults


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"search": {"top_k": "10"}}, "search.top_k must be an integer, got '10'"),
        ({"search": {"top_k": True}}, "search.top_k must be an integer"),
        ({"search": {"top_k": 0}}, "search.top_k must be between 1 and 200, got 0"),
        ({"search": {"top_k": 500}}, "search.top_k must be between 1 and 200"),
        ({"search": {"snippet_chars": 20}}, "search.snippet_chars must be between 80 and 4000"),
        ({"index": {"max_file_bytes": -1}}, "index.max_file_bytes must be positive, got -1"),
        ({"search": {"file_evidence": -1}}, "search.file_evidence must not be negative"),
        ({"search": {"file_diversity": 1.5}}, "search.file_diversity must be between 0 and 1"),
        ({"search": {"symbol_threshold": 2}}, "search.symbol_threshold must be between 0 and 1"),
        ({"search": {"weight_doc": "high"}}, "search.weight_doc must be a number"),
        ({"search": {"weight_doc": float("nan")}}, "search.weight_doc must be a number"),
        ({"search": {"file_evidence": float("inf")}}, "search.file_evidence must be a number"),
        ({"search": {"prior_tests": 1}}, "search.prior_tests must be true or false"),
        ({"index": {"db_path": ""}}, "index.db_path must be a non-empty string"),
        ({"index": {"db_path": 3}}, "index.db_path must be a string, got 3"),
        ({"index": {"exclude": "gen/**"}}, "index.exclude must be a list of strings"),
        ({"index": {"exclude": ["a", 1]}}, "index.exclude must be a list of strings"),
        ({"embedding": {"layers": ["ast"]}}, "embedding.layers must list only code, summary"),
        ({"rerank": {"provider": "cloud"}}, "rerank.provider must be one of none, local_cro"),
        ({"search": {"bogus": 1}}, "unknown setting search.bogus"),
        ({"bogus": {}}, "unknown setting section 'bogus'"),
        ({"search": 3}, "setting section 'search' must be a table"),
    ],
)
def test_bad_values_are_named_errors(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        merge_settings(Settings(), overrides)


def test_one_pass_reports_every_bad_value_and_keeps_the_good_ones() -> None:
    raw = {
        "search": {"top_k": 0, "rrf_k": 30, "prior_path": "yes", "nope": 1},
        "index": {"exclude": ["vendor2/**"], "workers": 0},
        "colours": {},
    }
    valid, problems = check_settings(raw)
    assert valid == {"search": {"rrf_k": 30}, "index": {"exclude": ("vendor2/**",)}}
    assert [p.key for p in problems] == [
        "search.top_k",
        "search.prior_path",
        "search.nope",
        "index.workers",
        "colours",
    ]
    assert [p.unknown for p in problems] == [False, False, True, False, True]
    base = merge_settings(Settings(), {"search": {"top_k": 7}})
    merged, again = merge_settings_leniently(base, raw)
    assert again == problems
    assert merged.search.rrf_k == 30 and merged.index.exclude == ("vendor2/**",)
    assert merged.search.top_k == 7  # an invalid value leaves the value it had
    assert merged.index.workers == base.index.workers
    # the strict form names all of them on one line
    with pytest.raises(ConfigError) as caught:
        merge_settings(Settings(), raw)
    text = str(caught.value)
    assert "\n" not in text
    assert all(p.message in text for p in problems)


def test_a_malformed_settings_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / ".codesift.toml").write_text("[search\ntop_k = ")
    with pytest.raises(ConfigError, match=r"\.codesift\.toml"):
        load_settings(tmp_path)
    settings, problems = resolve_settings(tmp_path, {"search": {"top_k": 3}})
    assert settings == merge_settings(Settings(), {"search": {"top_k": 3}})
    assert len(problems) == 1 and problems[0].endswith("using the defaults")


def test_an_invalid_value_in_the_file_names_file_and_key(tmp_path: Path) -> None:
    (tmp_path / ".codesift.toml").write_text("[search]\ntop_k = 0\nrrf_k = 30\n")
    with pytest.raises(ConfigError, match=r"\.codesift\.toml: search\.top_k must be"):
        load_settings(tmp_path)
    # leniently (the language server): reported, the default kept, the rest applied
    settings, problems = resolve_settings(tmp_path, {"search": {"top_k": "x"}})
    assert settings.search.top_k == 10 and settings.search.rrf_k == 30
    assert len(problems) == 2
    assert ".codesift.toml: search.top_k must be between 1 and 200" in problems[0]
    assert "search.top_k must be an integer" in problems[1]
    assert all(p.endswith("using the default") for p in problems)


def test_the_converter_round_trips_the_tree_and_is_strict() -> None:
    conv = converter()
    custom = merge_settings(
        Settings(), {"search": {"top_k": 3, "weight_doc": 1}, "embedding": {"layers": ["code"]}}
    )
    tree = conv.unstructure(custom)
    assert tree["search"]["top_k"] == 3 and tree["embedding"]["layers"] == ["code"]
    assert conv.structure(tree, Settings) == custom
    with pytest.raises(ValueError, match="must be an integer"):
        conv.structure("10", int)  # cattrs alone would turn this into 10
    with pytest.raises(ValueError, match="true or false"):
        conv.structure(1, bool)


def test_setting_fields_cover_the_tree_with_dotted_keys() -> None:
    keys = [s.key for s in setting_fields()]
    assert len(keys) == len(set(keys))
    assert {"index.db_path", "search.top_k", "embedding.layers", "rerank.provider"} <= set(keys)
    assert keys[0].startswith("index.") and keys[-1].startswith("collections[].")
    top_k = next(s for s in setting_fields(SearchSettings) if s.key == "top_k")
    assert (top_k.default, top_k.limits.minimum, top_k.limits.maximum) == (10, 1, 200)


def test_limits_match_what_requests_and_embedding_accept() -> None:
    """The settings' ranges are the search request's, so a valid .codesift.toml
    never makes every request fail (or be silently clamped)."""
    by_key = {s.key: s for s in setting_fields()}
    snippet = by_key["search.snippet_chars"].limits
    assert (snippet.minimum, snippet.maximum) == (SNIPPET_MIN, SNIPPET_MAX)
    top_k = by_key["search.top_k"].limits
    assert top_k.maximum is not None
    SearchRequest("q", top_k=int(top_k.maximum)).validated()
    with pytest.raises(Exception, match="top_k"):
        SearchRequest("q", top_k=int(top_k.maximum) + 1).validated()
    assert SearchRequest("q").top_k == Settings().search.top_k
    assert SearchRequest("q").snippet_chars == Settings().search.snippet_chars
    assert set(EMBEDDABLE_LAYERS) == set(EMBEDDED_LAYERS)


def test_collections_are_an_array_of_tables_checked_item_by_item() -> None:
    raw = tomllib.loads(
        """
        [[collections]]
        name = "billing-prd"
        path = "~/docs/billing"
        labels = ["billing", "prd"]

        [[collections]]
        name = "runbooks"

        [[collections]]
        name = "billing-prd"
        path = "elsewhere"
        """
    )
    settings, problems = merge_settings_leniently(Settings(), raw)
    assert [c.name for c in settings.collections] == ["billing-prd"]
    assert settings.collections[0].labels == ("billing", "prd")
    assert [p.key for p in problems] == ["collections[1].path", "collections[2].name"]
    with pytest.raises(ConfigError, match=r"collections\[1\]\.path is required"):
        merge_settings(Settings(), raw)
    # a later source replaces a collection of the same name and keeps the others
    later, problems = merge_settings_leniently(
        settings,
        {"collections": [{"name": "billing-prd", "path": "new"}, {"name": "r", "path": "r"}]},
    )
    assert not problems
    assert [(c.name, c.path, c.labels) for c in later.collections] == [
        ("billing-prd", "new", ()),
        ("r", "r", ()),
    ]
    _, problems = merge_settings_leniently(Settings(), {"collections": {"name": "x"}})
    assert problems[0].message == "collections must be an array of tables ([[collections]])"


def test_plain_sections_merge_as_the_converter_would() -> None:
    # A file of plain sections is checked and merged without cattrs; the result is
    # the one the converter's round trip gives, every leaf type among them.
    overrides: dict[str, Any] = {
        "index": {"excluded_dirs": ["vendor", "dist"], "max_file_bytes": 1000},
        "search": {"top_k": 7, "weight_lexical": 2, "prior_tests": False},
        "embedding": {"enabled": False, "model": "static"},
    }
    conv = converter()
    tree = conv.unstructure(Settings())
    for section, values in overrides.items():
        tree[section] = {**tree[section], **values}
    expected = conv.structure(tree, Settings)
    merged = merge_settings(Settings(), overrides)
    assert merged == expected
    assert merged.index.excluded_dirs == ("vendor", "dist")
    assert isinstance(merged.search.weight_lexical, float)


def test_a_wrong_leaf_type_is_named_without_the_converter() -> None:
    with pytest.raises(ConfigError, match=r"search.top_k must be an integer, got '7'"):
        merge_settings(Settings(), {"search": {"top_k": "7"}})
    with pytest.raises(ConfigError, match=r"index.exclude must be a list of strings"):
        merge_settings(Settings(), {"index": {"exclude": "x"}})
