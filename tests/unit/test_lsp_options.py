"""Server options, request parameter checks and workspace/symbol scoring, on plain data."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from codesift.engine.symbols import score_name
from codesift.lsp.hover import first_sentence
from codesift.lsp.options import ServerOptions, parse_options
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
        {"watch": "no", "maxWaitMs": 10**9, "index": {"max_file_bytes": -1, "workers": 1}, "x": 1}
    )
    assert options.watch is True and options.max_wait_ms == 2000
    assert options.overrides == {"index": {"workers": 1}}
    assert len(problems) == 4
    assert any("watch must be true or false" in p and "default" in p for p in problems)
    assert any("index.max_file_bytes must be positive" in p for p in problems)
    assert any("unknown codesift option 'x'" in p for p in problems)
    assert parse_options([1])[1] == ["codesift options must be an object, got list"]


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
    assert first_sentence("") == ""
