"""docs/configuration.md's tables of settings match the options tree: every key,
its type (with its limits) and its default, read from the dataclasses; and the
VS Code client's defaults for the settings it maps are the server's."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from codesift.config import Setting, Settings, setting_fields
from codesift.lsp.options import CLIENT_NAMES, ServerOptions

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "configuration.md"
HEADER = ["key", "type", "default", "meaning"]


def section(markdown: str, heading: str) -> str:
    """The text under `## heading`, up to the next `## `."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert match, f"no '## {heading}' section in {DOC}"
    return match.group(1)


def table(text: str) -> dict[str, tuple[str, str, str]]:
    """The one table of `text` with the key/type/default/meaning header, by key."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.lstrip().startswith("|")
    ]
    assert rows and rows[0] == HEADER, rows[:1]
    assert set(rows[1]) <= {"---", ":---", "---:"}  # the separator row
    found: dict[str, tuple[str, str, str]] = {}
    for row in rows[2:]:
        assert len(row) == 4 and all(row), f"a row needs 4 filled cells: {row}"
        key = row[0].strip("`")
        assert key not in found, f"{key} is listed twice"
        found[key] = (row[1], row[2], row[3])
    return found


def number(value: float, integer: bool) -> str:
    return str(int(value)) if integer or float(value).is_integer() else str(value)


def expected_type(setting: Setting) -> str:
    """How the docs name a setting's type and limits."""
    kind, lim = setting.type, setting.limits
    if kind is bool:
        return "boolean"
    if kind in (int, float):
        word = "integer" if kind is int else "number"
        low, high = lim.minimum, lim.maximum
        if low is not None and high is not None:
            return f"{word} {number(low, kind is int)}..{number(high, kind is int)}"
        if low is not None:
            return f"{word} ≥ {number(low, kind is int)}"
        return word
    choices = ", ".join(f"`{c}`" for c in lim.choices)
    if kind is str:
        if lim.choices:
            return f"one of {choices}"
        return "string" if lim.empty else "non-empty string"
    assert kind == tuple[str, ...], f"{setting.key}: no docs wording for {kind}"
    return f"list of {choices}" if lim.choices else "list of strings"


def documented_default(cell: str) -> Any:
    """A default cell's TOML value (`10`, `"x"`, `["a"]`, `true`)."""
    assert cell.startswith("`") and cell.endswith("`"), f"a default is a `TOML value`: {cell}"
    return tomllib.loads(f"v = {cell[1:-1]}")["v"]


def check(documented: dict[str, tuple[str, str, str]], settings: dict[str, Setting]) -> None:
    missing = sorted(set(settings) - set(documented))
    extra = sorted(set(documented) - set(settings))
    assert not missing and not extra, f"not documented: {missing}; not settings: {extra}"
    for key, setting in settings.items():
        kind, default, _ = documented[key]
        assert kind == expected_type(setting), f"{key}: documented type {kind!r}"
        if setting.limits.shown:  # a computed default (workers) is described
            assert default == setting.limits.shown, f"{key}: documented default {default!r}"
            continue
        value = documented_default(default)
        actual = setting.default
        if isinstance(actual, tuple):
            actual = list(actual)
        assert value == actual and type(value) is type(actual), (
            f"{key}: documented default {default}, the code's {setting.default!r}"
        )


def test_the_settings_table_matches_the_options_tree() -> None:
    documented = table(section(DOC.read_text(encoding="utf-8"), "Settings"))
    check(documented, {s.key: s for s in setting_fields(Settings)})


def test_the_editor_options_table_matches_server_options() -> None:
    documented = table(section(DOC.read_text(encoding="utf-8"), "Editor options"))
    options = {CLIENT_NAMES.get(s.name, s.name): s for s in setting_fields(ServerOptions)}
    check(documented, options)


def test_the_check_fails_on_drift() -> None:
    """The comparison itself catches a changed default, type, or a missing key."""
    settings = {s.key: s for s in setting_fields(Settings)}
    documented = table(section(DOC.read_text(encoding="utf-8"), "Settings"))
    kind, _, meaning = documented["search.top_k"]
    for broken in (
        {**documented, "search.top_k": (kind, "`20`", meaning)},
        {**documented, "search.top_k": ("integer ≥ 1", "`10`", meaning)},
        {**documented, "search.weight_doc": ("number ≥ 0", "`0`", "x")},  # 0 is not 0.0
        {k: v for k, v in documented.items() if k != "rerank.threshold"},
        {**documented, "search.bogus": ("boolean", "`true`", "x")},
    ):
        with pytest.raises(AssertionError):
            check(broken, settings)


# The VS Code client's settings that stand for server settings (package.json
# `contributes.configuration`), and the server setting each one is.
CLIENT_SETTINGS = {
    "codesift.search.resultCount": "search.top_k",
    "codesift.search.snippetWidth": "search.snippet_chars",
    "codesift.fusion.rrfK": "search.rrf_k",
    "codesift.fusion.candidateCap": "search.candidate_cap",
    "codesift.ranking.fileEvidence": "search.file_evidence",
    "codesift.ranking.fileDiversity": "search.file_diversity",
    "codesift.rerank.enabled": "rerank.enabled",
    "codesift.rerank.threshold": "rerank.threshold",
    "codesift.embeddings.enabled": "embedding.enabled",
}


def test_the_vscode_clients_defaults_are_the_servers() -> None:
    package = json.loads((REPO / "vscode-client" / "package.json").read_text(encoding="utf-8"))
    contributed = package["contributes"]["configuration"]["properties"]
    by_key = {s.key: s.default for s in setting_fields(Settings)}
    for name, key in CLIENT_SETTINGS.items():
        assert contributed[name]["default"] == by_key[key], f"{name} vs {key}"
    # The extension's names are camelCase (`pathShort`), the server's snake_case.
    weights = contributed["codesift.fusion.weights"]["default"]
    snake = {w: re.sub(r"(?<!^)([A-Z])", r"_\1", w).lower() for w in weights}
    assert weights == {w: by_key[f"search.weight_{snake[w]}"] for w in weights}
    # Every fusion weight of the server has its client setting.
    assert set(snake.values()) == {
        k.removeprefix("search.weight_") for k in by_key if k.startswith("search.weight_")
    }
    priors = contributed["codesift.ranking.priors"]["default"]
    snake = {p: re.sub(r"(?<!^)([A-Z])", r"_\1", p).lower() for p in priors}
    assert priors == {p: by_key[f"search.prior_{snake[p]}"] for p in priors}
    assert len(priors) == 5
    # settings.ts sends result count and snippet width only when the person set them
    # (the server's search.top_k / snippet_chars apply otherwise): no copy of the numbers
    source = (REPO / "vscode-client" / "src" / "settings.ts").read_text(encoding="utf-8")
    assert 'explicitInt(config, "search.resultCount", 1, 200)' in source
    assert 'explicitInt(config, "search.snippetWidth", 80, 4000)' in source
    assert f'"search.resultCount", {by_key["search.top_k"]}' not in source
