"""cli/render_json.py: the reading commands' pages drawn from their JSON, written
without rich where rich would write plain text, byte for byte as rich does."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from codesift.cli import render_json
from codesift.engine.results import GUESSES
from codesift.local_socket import SOCKET_COMMANDS

# Text rich changes on its way out: control codes, tabs (after ASCII and after wide
# characters), markup-like brackets, backslashes, an emoji code.
LINES: list[list[tuple[str, str | None]]] = [
    [(" 1", "bold"), (" ", None), ("a.py:1-2", "cyan"), ("  [bold]x[/] \\", None)],
    [("     ", None), ("│", "dim"), (" \tif x:\r", None)],
    [("ab\tc\td\x07e\x08f\x0bg\x0ch", None)],
    [("emoji :smile: stays", "yellow")],
    [("", "dim"), ("", None)],
    [("wide 表\tafter", None)],
    [("  \t", "dim"), ("end  ", None)],
]


def rich_wrote(lines: list[list[tuple[str, str | None]]], environ: dict[str, str]) -> str:
    text = Text()
    for i, line in enumerate(lines):
        if i:
            text.append("\n")
        for piece, style in line:
            text.append(piece, style)
    out = io.StringIO()
    Console(file=out, highlight=False, soft_wrap=True, _environ=environ).print(text)
    return out.getvalue()


# How rich decides about a terminal and its colours (on a stream that is no tty).
ENVIRONMENTS: list[dict[str, str]] = [
    {},
    {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "90"},
    {"FORCE_COLOR": "1", "COLORTERM": "truecolor"},
    {"FORCE_COLOR": "1", "TERM": "xterm-16color"},
    {"FORCE_COLOR": "1", "NO_COLOR": "1"},
    {"FORCE_COLOR": "1", "TERM": "dumb"},
    {"FORCE_COLOR": ""},
    {"FORCE_COLOR": "1", "TTY_COMPATIBLE": "0"},
    {"TTY_COMPATIBLE": "1", "TERM": "vt100"},
]


@pytest.mark.parametrize("environ", ENVIRONMENTS)
def test_a_page_is_written_as_rich_writes_it(environ: dict[str, str]) -> None:
    for lines in (LINES, *([line] for line in LINES)):
        out = io.StringIO()
        render_json.write_lines(out, lines, environ)
        assert out.getvalue() == rich_wrote(lines, environ), (environ, lines)


@pytest.mark.parametrize("environ", ENVIRONMENTS[1:2] + ENVIRONMENTS[4:5])
def test_styles_the_pages_use_are_written_without_rich(environ: dict[str, str]) -> None:
    """Every style of the pages (not only those in LINES), on a terminal."""
    lines = [[(f"{style} text", style) for style in render_json._SGR], [("\tx", None)]]
    out = io.StringIO()
    render_json.write_lines(out, lines, environ)
    assert out.getvalue() == rich_wrote(lines, environ)
    code = (
        "import io, sys\n"
        "from codesift.cli.render_json import write_lines\n"
        f"write_lines(io.StringIO(), {lines!r}, {environ!r})\n"
        "print('rich' in sys.modules)"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert loaded.stdout.strip() == "False", loaded.stderr


# A command's notes as the CLI printed them with rich's markup before they were
# data (`[dim]message[/]`, `[yellow]warning:[/] message`, `[red]error:[/] message`).
MARKUP = {"note": "[dim]{}[/]", "warning": "[yellow]warning:[/] {}", "error": "[red]error:[/] {}"}
MESSAGES = [
    "searching the index as it is",
    "two\nlines\tand a tab",
    "[bold]not markup[/] a\\b",
    "wide 表\tafter",
    "",
    "cr\r\nlf\x07",
    "ends with a newline\n",
]


def rich_noted(level: str, message: str, environ: dict[str, str]) -> str:
    out = io.StringIO()
    console = Console(file=out, highlight=False, _environ=environ)
    console.print(MARKUP[level].format(escape(message)), soft_wrap=True)
    return out.getvalue()


@pytest.mark.parametrize("environ", ENVIRONMENTS)
def test_notes_are_written_as_rich_wrote_them(environ: dict[str, str]) -> None:
    for level in render_json.NOTE_LEVELS:
        for message in MESSAGES:
            out = io.StringIO()
            render_json.write_notes(out, [{"level": level, "message": message}], environ)
            assert out.getvalue() == rich_noted(level, message, environ), (level, message)
    both = io.StringIO()
    notes = [{"level": "note", "message": "a"}, {"level": "warning", "message": "b"}]
    render_json.write_notes(both, notes, environ)
    assert both.getvalue() == rich_noted("note", "a", environ) + rich_noted("warning", "b", environ)


def test_a_note_is_printed_as_it_is_said() -> None:
    """What rich's markup changed is no longer changed: an emoji code stays a code,
    a backslash at the end of a warning stays one."""
    out = io.StringIO()
    notes = [{"level": "note", "message": ":smile:"}, {"level": "error", "message": "C:\\"}]
    render_json.write_notes(out, notes, {})
    assert out.getvalue() == ":smile:\nerror: C:\\\n"
    assert rich_noted("note", ":smile:", {}) != ":smile:\n"


def test_it_repeats_the_engine_constants_and_covers_the_socket_commands() -> None:
    assert render_json.GUESSES == GUESSES
    assert set(render_json.VIEWS) == set(SOCKET_COMMANDS)


def test_it_imports_only_the_standard_library() -> None:
    code = "import sys, codesift.cli.render_json\nprint('\\n'.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    heavy = {"rich", "numpy", "apsw", "codesift.engine", "codesift.cli.render", "typing"}
    assert not heavy & loaded, heavy & loaded


def test_a_search_page_from_json() -> None:
    result = {
        "path": "shop/a.py",
        "start_line": 3,
        "end_line": 4,
        "kind": "function",
        "qualified_name": "charge[x]",
        "layer": "code",
        "score": 0.123456,
        "provenance": [{"stream": "bm25", "rank": 1, "score": 2.0}],
        "history": {"changed": "2024-05-01T00:00:00", "source": "git", "commit": "abcdef12345"},
        "snippet": "def charge():\n    pass",
        "snippet_start_line": 3,
        "truncated": True,
        "graph": [],
        "related": [],
    }
    data = {"query": "q", "results": [result], "took_ms": 4.4, "warnings": [{"message": "w"}]}
    page = render_json.page_of("search", data, {})
    plain = ["".join(piece for piece, _ in line) for line in page.lines]
    assert plain == [
        " 1 shop/a.py:3-4  function charge[x]  code · bm25#1 · 0.1235",
        "     changed 2024-05-01 (abcdef1 )",
        "     │ def charge():",
        "     │     pass",
        "     │ … (from line 3)",
        "1 results in 4 ms",
    ]
    assert page.warnings == ["w"]
    empty = render_json.page_of("search", {"query": "it's", "results": [], "took_ms": 1}, {})
    assert ["".join(p for p, _ in line) for line in empty.lines] == ['no results for "it\'s"']
