"""Server options, request parameter checks and workspace/symbol scoring, on plain data."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from codesift.engine.symbols import score_name
from codesift.lsp.hover import first_sentence
from codesift.lsp.options import ServerOptions, client_options, folder_settings, parse_options
from codesift.lsp.params import parse_time_filters
from codesift.lsp.search import parse_search_request


def test_options_defaults_and_valid_values() -> None:
    assert parse_options(None) == (ServerOptions(), [])
    options, problems = parse_options(
        {"codesift": {"embeddings": False, "quietMs": 100, "search": {"top_k": 5}}}
    )
    assert problems == []
    assert options.embeddings is False and options.quiet_ms == 100
    assert options.overrides == {"search": {"top_k": 5}}


def test_invalid_options_are_replaced_one_by_one() -> None:
    options, problems = parse_options(
        {
            "watch": "no",
            "maxWaitMs": 10**9,
            "index": {"max_file_bytes": -1, "workers": 1, "exclude": ["gen/**"]},
            "search": 3,
            "x": 1,
        }
    )
    assert options.watch is True and options.max_wait_ms == 2000
    assert options.overrides == {"index": {"workers": 1, "exclude": ("gen/**",)}}
    assert len(problems) == 5
    assert all(p.endswith("using the default") or p.endswith("(ignored)") for p in problems)
    assert any("watch must be true or false, got 'no'" in p for p in problems)
    assert any("maxWaitMs must be between 50 and 60000" in p for p in problems)
    assert any("index.max_file_bytes must be positive" in p for p in problems)
    assert any("search must be an object" in p for p in problems)
    assert any("unknown codesift option 'x'" in p for p in problems)
    assert parse_options([1])[1] == ["codesift options must be an object, got list"]
    # an unknown key inside a section is named with its section
    assert parse_options({"search": {"topk": 5}})[1] == [
        "unknown codesift option 'search.topk' (ignored)"
    ]


def test_options_use_the_clients_names_both_ways() -> None:
    assert client_options(ServerOptions()) == {
        "embeddings": True,
        "watch": True,
        "quietMs": 200,
        "maxWaitMs": 2000,
    }
    sent = {"embeddings": False, "watch": False, "quietMs": 50, "maxWaitMs": 900}
    options, problems = parse_options({**sent, "search": {"top_k": 4}})
    assert problems == []
    assert (options.quiet_ms, options.max_wait_ms) == (50, 900)
    assert client_options(options) == {**sent, "search": {"top_k": 4}}
    # field names are not the client's names
    assert parse_options({"quiet_ms": 50})[1] == ["unknown codesift option 'quiet_ms' (ignored)"]
    assert parse_options({"overrides": {}})[1] == ["unknown codesift option 'overrides' (ignored)"]


def test_folder_settings_report_file_problems_and_apply_the_rest(tmp_path: Path) -> None:
    (tmp_path / ".codesift.toml").write_text("[search]\ntop_k = 0\nrrf_k = 30\n")
    options, _ = parse_options({"embeddings": False, "search": {"snippet_chars": 90}})
    settings, problems = folder_settings(tmp_path, options)
    assert settings.search.top_k == 10  # the file's invalid value: the default
    assert (settings.search.rrf_k, settings.search.snippet_chars) == (30, 90)
    assert settings.embedding.enabled is False  # "embeddings": false
    assert len(problems) == 1 and "search.top_k must be between 1 and 200" in problems[0]
    (tmp_path / ".codesift.toml").write_text("[search\n")
    settings, problems = folder_settings(tmp_path, options)
    assert settings.search.snippet_chars == 90 and settings.search.rrf_k == 40  # the default
    assert len(problems) == 1 and "using the defaults" in problems[0]


def test_time_filters_are_kept_as_sent_for_the_history_parser() -> None:
    filters = parse_time_filters({"since": "2025-03-01", "until": 1740000000, "as_of": "v1.2"})
    assert (filters.since, filters.until, filters.as_of) == ("2025-03-01", 1740000000.0, "v1.2")
    assert not parse_time_filters({}).given
    with pytest.raises(JsonRpcInvalidParams, match="must be a date"):
        parse_time_filters({"as_of": ["2 weeks ago"]})
    with pytest.raises(JsonRpcInvalidParams, match="is empty"):
        parse_time_filters({"since": "  "})


def test_search_request_fields() -> None:
    request, folders = parse_search_request(
        {
            "query": " retry ",
            "top_k": 3,
            "layers": ["code", "doc"],
            "languages": "Python",
            "paths": ["src/*"],
            "snippet_chars": 10,
            "max_tokens": 500,
            "include_graph": True,
            "folders": ["api"],
        }
    )
    assert request.query == "retry" and request.top_k == 3 and request.layers == ("code", "doc")
    assert request.languages == ("python",) and request.paths == ("src/*",)
    assert request.snippet_chars == 80 and request.max_tokens == 500 and request.include_graph
    assert folders == ("api",)
    with pytest.raises(JsonRpcInvalidParams, match="'include_graph' must be true or false"):
        parse_search_request({"query": "a", "include_graph": "yes"})


@pytest.mark.parametrize(
    ("query", "better", "worse"),
    [
        ("Pool", "Pool", "ThreadPool"),
        ("pars", "parse_header", "header_parser"),
        ("trfh", "TimedRotatingFileHandler", "TarFile"),
        ("parse_hedaer_line", "parse_header_line", "parse_line"),
    ],
)
def test_symbol_scores_order_names(query: str, better: str, worse: str) -> None:
    assert score_name(query, better) > score_name(query, worse)


def test_symbol_score_rejects_unrelated_names() -> None:
    assert score_name("socket", "urlparse") == 0


def test_first_sentence() -> None:
    assert first_sentence("Send it. Then wait.") == "Send it."
    assert first_sentence("Summary line\n\nDetails.") == "Summary line"
    assert first_sentence("/** Parses e.g. headers.\n * More */") == "Parses e.g."
    # A block tag line ends it (KDoc, Javadoc, JSDoc).
    assert first_sentence("Single instance holder\n@author A. Person") == "Single instance holder"
    assert first_sentence("/** Loads it\n * @param path where */") == "Loads it"
    assert first_sentence("") == ""
