"""The docs agree with each other and with the code where they state the same
fact in several places (figures, defaults, lists)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROSE = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_minilm_throughput_is_one_figure_everywhere() -> None:
    """MiniLM's chunks a second on 2 cores: the same range wherever it is given
    (the static model's thousands a second and the shared index's writes aside)."""
    figures: dict[str, set[str]] = {}
    for path in PROSE:
        text = " ".join(read(path).split())
        for match in re.finditer(r"~([\d,]+(?:-[\d,]+)?) chunks a second", text):
            figure = match.group(1)
            context = text[max(0, match.start() - 200) : match.end() + 40]
            if "static" in text[max(0, match.start() - 60) : match.start()]:
                continue  # the static model's figure
            if int(figure.split("-")[0].replace(",", "")) >= 1000:
                continue  # static model or shared-index writes: thousands a second
            figures.setdefault(figure, set()).add(f"{path.name}: ...{context[-120:]}")
    assert len(figures) == 1, figures


def test_the_server_memory_figure_is_the_measured_one() -> None:
    """The language server's memory is stated as measured (bench/RESULTS.md), not
    as the lexical index's peak alone."""
    readme = " ".join(read(REPO / "README.md").split())
    assert "staying at its lexical index's peak" not in readme
    results = read(REPO / "bench" / "RESULTS.md")
    assert "## Language server memory" in results
    peak = re.search(r"MiniLM fill complete .*?\| (\d+) MiB", results)
    assert peak, "no measured peak in bench/RESULTS.md"
    stated = re.search(r"peak of ~(\d+) MB at the end of the MiniLM fill", readme)
    assert stated, "README states no peak for the MiniLM fill"
    assert abs(int(stated.group(1)) - int(peak.group(1))) <= 10


def section(markdown: str, heading_start: str) -> str:
    """The text under the `## ` heading that starts with `heading_start`, up to the
    next `## `."""
    match = re.search(
        rf"^## {re.escape(heading_start)}[^\n]*\n(.*?)(?=^## |\Z)", markdown, re.M | re.S
    )
    assert match, f"no '## {heading_start}...' section"
    return match.group(1)


def test_the_default_query_model_is_the_configured_default() -> None:
    from codesift.config import EmbeddingSettings

    default = EmbeddingSettings().model
    for path in (REPO / "docs" / "cli.md", REPO / "docs" / "protocol.md"):
        text = " ".join(read(path).split())
        said = re.findall(r'`embedding\.model = "(\w+)"`?,? the default', text)
        said += re.findall(r'embedding\.model = "(\w+)"`?,? the default', text)
        assert said and set(said) == {default}, (path.name, said)


def test_the_readme_lists_every_mcp_tool() -> None:
    from codesift.mcp.tools import TOOL_NAMES

    listed = " ".join(section(read(REPO / "README.md"), "Agents (MCP)").split())
    tools = listed[listed.index("Tools:") :].split(". ")[0]
    assert {name for name in TOOL_NAMES if f"`{name}`" not in tools} == set(), tools


def _help_defaults() -> dict[tuple[str, str], str]:
    """(command, option) -> the default its --help states."""
    import argparse

    from codesift.cli.parser import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: dict[tuple[str, str], str] = {}
    for name, command in sub.choices.items():
        for action in command._actions:
            match = re.search(r"\(default:? ([^)]*)\)", action.help or "")
            if match:
                option = action.option_strings[-1] if action.option_strings else "PATH"
                found[(name, option)] = match.group(1)
    return found


def test_every_help_default_is_the_one_docs_cli_md_gives() -> None:
    """Each default `--help` states is in docs/cli.md: a number in the command's
    section (`--limit` ... default 20); a folder rule (PATH, --root) worded as the
    rule every command follows, which the docs give under Common options."""
    docs = read(REPO / "docs" / "cli.md")
    flat = " ".join(docs.split())
    common = flat[flat.index("Common options:") :][:700]
    defaults = _help_defaults()
    assert defaults
    folder_rule = "nearest indexed folder, else the git work tree, else the current folder"
    for (command, option), default in defaults.items():
        where = f"codesift {command} {option}: default {default!r}"
        if option in ("PATH", "--root") and command != "route":
            assert default == folder_rule, where  # one rule for every command
            assert "nearest folder" in common and "git work tree" in common, common
            continue
        heading = "`codesift callers" if command == "callees" else f"`codesift {command}"
        text = " ".join(section(docs, heading).split())  # callers and callees: one section
        number = re.fullmatch(r"(\d+)", default) or re.search(r", (\d+) unless", default)
        if number:
            value = number.group(1)
            pattern = rf"{re.escape(option)}\b.{{0,200}}?default:? `?{value}\b"
            said_once = rf"every {value} seconds \(`{re.escape(option)}"  # for every command
            if re.search(pattern, text) is None and re.search(said_once, flat) is None:
                raise AssertionError(f"{where}: docs/cli.md says no 'default {value}'")
            continue
        words = [w for w in re.split(r"[^\w.]+", default) if len(w) > 3]
        missing = [w for w in words if w not in text and w not in flat]
        assert not missing, (where, missing)


def _search_json_example(path: Path, after: str) -> dict[str, object]:
    import json

    text = read(path)
    start = text.index(after)
    block = re.search(r"```json\n(.*?)```", text[start:], re.S)
    assert block, f"no JSON example after {after!r} in {path.name}"
    return dict(json.loads(block.group(1)))


def test_the_search_json_examples_have_every_field() -> None:
    from dataclasses import fields

    from codesift.retrieval.request import SearchResponse, SearchResult

    result_keys = {f.name for f in fields(SearchResult)}
    cli = _search_json_example(REPO / "docs" / "cli.md", "`--json` prints:")
    assert set(cli) == {f.name for f in fields(SearchResponse)}, set(cli) ^ {
        f.name for f in fields(SearchResponse)
    }
    (first,) = cli["results"]  # type: ignore[misc]
    assert set(first) == result_keys, set(first) ^ result_keys
    lsp = _search_json_example(REPO / "docs" / "protocol.md", "## `codesift/search`")
    (local,) = lsp["results"]  # type: ignore[misc]
    lsp_only = {"folder", "uri", "is_test", "source", "repo"}
    assert set(local) == result_keys | lsp_only, set(local) ^ (result_keys | lsp_only)


def test_complete_is_said_to_stay_false_through_the_minilm_fill() -> None:
    protocol = " ".join(read(REPO / "docs" / "protocol.md").split())
    assert "also for the whole background MiniLM fill" in protocol
