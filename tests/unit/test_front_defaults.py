"""The defaults the CLI's help and the MCP tools' schemas show come from one place
(config.SearchSettings, GraphQuery, front_defaults), never from a number of their own;
the CLI maps errors to exit codes by their kind (codesift/errors.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import apsw
import pytest

from codesift import front_defaults
from codesift.cli import errors as cli_errors
from codesift.cli import parser as cli_parser
from codesift.config import SearchSettings
from codesift.engine.results import GraphQuery
from codesift.errors import (
    ConfigError,
    CorruptIndexError,
    EmbeddingError,
    NotIndexedError,
    QueryError,
    WorkspaceError,
)
from codesift.mcp import tools


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise AssertionError(name)


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action:
    for action in parser._actions:
        if flag in action.option_strings:
            return action
    raise AssertionError(flag)


def _schema(tool: Any, name: str) -> dict[str, Any]:
    properties: dict[str, dict[str, Any]] = tool.input_schema["properties"]
    return properties[name]


def test_callers_and_callees_show_as_many_definitions_in_the_cli_as_in_mcp() -> None:
    parser = cli_parser.build_parser()
    for command, tool in (("callers", tools.CALLERS), ("callees", tools.CALLEES)):
        cli_default = parser.parse_args([command, "x"]).max_nodes
        assert cli_default == _schema(tool, "max_nodes")["default"]
        assert cli_default == front_defaults.NEIGHBOURS_MAX_NODES
    graph = parser.parse_args(["graph", "x"]).max_nodes
    assert graph == _schema(tools.GRAPH, "max_nodes")["default"] == GraphQuery().max_nodes


def test_symbols_return_as_many_definitions_in_the_cli_as_in_mcp() -> None:
    parser = cli_parser.build_parser()
    limit = parser.parse_args(["symbols", "x"]).limit
    assert limit == _schema(tools.SYMBOLS, "limit")["default"] == front_defaults.SYMBOLS_LIMIT


def test_search_defaults_in_help_and_schemas_are_the_settings_defaults() -> None:
    settings = SearchSettings()
    search = _subparser(cli_parser.build_parser(), "search")
    top_k_help = _option(search, "--top-k").help or ""
    snippet_help = _option(search, "--snippet-chars").help or ""
    assert f"{settings.top_k} unless" in top_k_help
    assert f"{settings.snippet_chars} unless" in snippet_help
    top_k = _schema(tools.SEARCH, "top_k")
    snippet = _schema(tools.SEARCH, "snippet_chars")
    assert f"{settings.top_k} unless" in top_k["description"]
    assert f"{settings.snippet_chars} unless" in snippet["description"]
    assert (top_k["minimum"], top_k["maximum"]) == front_defaults.search_setting("top_k")[1:]
    assert (snippet["minimum"], snippet["maximum"]) == front_defaults.search_setting(
        "snippet_chars"
    )[1:]


def test_the_help_follows_the_settings_when_they_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        cli_parser,
        "search_setting",
        lambda name: (37, 2, 99) if name == "top_k" else (777, 9, 8888),
    )
    search = _subparser(cli_parser.build_parser(), "search")
    assert "2..99" in (_option(search, "--top-k").help or "")
    assert "37 unless" in (_option(search, "--top-k").help or "")
    assert "9..8888" in (_option(search, "--snippet-chars").help or "")


@pytest.mark.parametrize(
    ("error", "kind", "code"),
    [
        (QueryError("the query is empty"), "bad_request", 2),
        (ConfigError("bad value"), "config", 2),
        (CorruptIndexError("damaged"), "index_damaged", 2),
        (NotIndexedError("no index"), "not_indexed", 2),
        (WorkspaceError("no such folder"), "workspace", 2),
        (EmbeddingError("model"), "embedding_failed", 2),
        (apsw.BusyError("locked"), "index_busy", 2),
        (apsw.FullError("full"), "disk_full", 2),
        (OSError(28, "No space left on device"), "os_error", 2),
        (RuntimeError("a bug"), "internal", 1),
    ],
)
def test_exit_codes_follow_the_error_kind(error: Exception, kind: str, code: int) -> None:
    error_kind, message, exit_code = cli_errors.failure(error, None)
    assert (error_kind, exit_code) == (kind, code)
    assert message and "\n" not in message
    if code == 1:
        assert message.startswith("unexpected failure: RuntimeError")


def test_the_vscode_client_has_no_copy_of_the_servers_test_path_rule() -> None:
    """Tests are left out by the server (codesift/search `tests: "auto"` or
    `"exclude"`, each result's `is_test`), never by a regex of the client's own."""
    sources = Path(__file__).resolve().parents[2] / "vscode-client" / "src"
    for source in sources.glob("*.ts"):
        text = source.read_text(encoding="utf-8")
        for fragment in ("__tests__", "conftest", "testdata"):
            assert fragment not in text, f"{source.name} has {fragment!r}"
    query = (sources / "query.ts").read_text(encoding="utf-8")
    assert 'params.tests = filters.testsStrict ? "exclude" : "auto"' in query
