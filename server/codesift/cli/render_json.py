"""The reading commands' output drawn from their JSON (engine/results.py's
vocabulary, the documents `--json` prints): search, symbols, callers, callees
and graph.

Both ways a command is answered use it, so that their output is the same byte
for byte: in-process, the command hands its JSON here (Invocation.show); through
a server (codesift/local_socket.py), the server sends the JSON and the CLI's fast
path (cli/__init__.py) draws it here. It imports only the standard library
(the fast path stays small): a page is lines of (text, style) pieces, written as
rich writes them (control codes other than newlines and tabs dropped, tabs
expanded to 8 columns; on a terminal each style's SGR codes, as rich decides
from the environment); rich itself draws only what this cannot say the same.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: the CLI's fast path stays small
    from collections.abc import Mapping, Sequence
    from typing import Any, TextIO

    Piece = tuple[str, str | None]
    Line = list[Piece]

__all__ = [
    "GRAPH_LABELS",
    "GUESSES",
    "NOTE_LEVELS",
    "VIEWS",
    "Page",
    "json_text",
    "note_lines",
    "page_of",
    "show",
    "write_notes",
]

# The views drawn here (the CLI commands a server answers, SOCKET_COMMANDS).
VIEWS = ("search", "symbols", "callers", "callees", "graph")
# engine/results.GUESSES: confidences that mean "found by the name alone" (a test
# compares them).
GUESSES = frozenset({"unique", "guess"})
# How `search --graph` names each edge for people (the JSON keeps relation and kind).
GRAPH_LABELS = {
    "parent": "↑ contained in",
    "callee": "→ calls",
    "caller": "← called by",
    "base": "▷ inherits",
    "subclass": "◁ inherited by",
    "imports": "→ imports",
    "imported_by": "← imported by",
}
# How a command's notes on stderr begin and look, by level (cli/invocation.py's
# say, warn and error; a server answering the CLI sends them as data, the CLI
# draws them here): (label, the label's style, the message's style).
NOTE_LEVELS: dict[str, tuple[str, str | None, str | None]] = {
    "note": ("", None, "dim"),
    "warning": ("warning:", "yellow", None),
    "error": ("error:", "red", None),
}
# What rich drops from text (rich.control.STRIP_CONTROL_CODES: bell, backspace,
# vertical tab, form feed, carriage return).
_STRIP = {7: None, 8: None, 11: None, 12: None, 13: None}
# The styles the pages use, as rich writes them (SGR parameters; colours are
# rich's standard ones, the same in every colour system).
_SGR = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "magenta": "35",
    "cyan": "36",
}


class Page:
    """What a command shows: `lines` on stdout (each a list of (text, style)
    pieces), `warnings` on stderr before them."""

    __slots__ = ("lines", "warnings")

    def __init__(self) -> None:
        self.lines: list[Line] = []
        self.warnings: list[str] = []

    def add(self, *pieces: Piece) -> None:
        self.lines.append(list(pieces))


def json_text(view: str, data: Mapping[str, Any]) -> str:
    """The `--json` document of `view` as the command prints it."""
    return json.dumps(data, ensure_ascii=False) if view == "search" else json.dumps(data)


def show(
    view: str,
    data: Mapping[str, Any],
    params: Mapping[str, Any],
    as_json: bool,
    stdout: TextIO,
    stderr: TextIO,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Write `view`'s output of `data` (`params`: what the page needs from the
    command line) to the streams, as JSON or as the page for people."""
    if as_json:
        stdout.write(json_text(view, data) + "\n")
        stdout.flush()
        return
    page = page_of(view, data, params)
    env = os.environ if environ is None else environ
    write_notes(stderr, [{"level": "warning", "message": w} for w in page.warnings], env)
    write_lines(stdout, page.lines, env)


def note_lines(level: str, message: str) -> list[Line]:
    """A note of `level` (NOTE_LEVELS) as lines: `warning: message`, `error:
    message`, or the message dim; each line of a message on one line (as rich
    draws a styled text with newlines in it)."""
    label, label_style, style = NOTE_LEVELS[level]
    lines = message.split("\n")
    if not label:
        return [[(line, style)] for line in lines]
    first: Line = [(label, label_style), (" " + lines[0], style)]
    return [first, *([(line, style)] for line in lines[1:])]


def write_notes(
    stream: TextIO, notes: Sequence[Mapping[str, Any]], environ: Mapping[str, str] | None = None
) -> None:
    """Write a command's notes (`{"level", "message"}` each) to `stream` (stderr),
    one `Console.print` of rich's each, as the command draws them in-process."""
    env = os.environ if environ is None else environ
    for note in notes:
        level = str(note.get("level"))
        if level in NOTE_LEVELS:
            write_lines(stream, note_lines(level, str(note.get("message", ""))), env)


def page_of(view: str, data: Mapping[str, Any], params: Mapping[str, Any]) -> Page:
    """The page for people of `view`'s JSON."""
    if view == "search":
        return search_page(data, params.get("folders"))
    if view == "symbols":
        return symbols_page(data, str(params["name"]))
    if view in ("callers", "callees"):
        return neighbours_page(data, view)
    if view == "graph":
        return graph_page(data)
    raise ValueError(f"no page for {view!r}")


# -- writing ------------------------------------------------------------------------------


def _is_terminal(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Whether rich takes `stream` for a terminal (rich.console.Console.is_terminal:
    TTY_COMPATIBLE, then FORCE_COLOR, then isatty)."""
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _styled(stream: TextIO, environ: Mapping[str, str]) -> tuple[bool, bool]:
    """(whether rich writes styles on `stream`, whether without colours): a
    terminal that is not a dumb one; NO_COLOR keeps bold and dim only."""
    if not _is_terminal(stream, environ):
        return False, False
    if environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return False, False
    return True, environ.get("NO_COLOR", "") != ""


def _drawn_line(line: Line, styled: bool, no_color: bool) -> str | None:
    """A line as rich writes it (each styled piece between its SGR codes and a
    reset); None when only rich can say (a tab in a styled piece, or after text
    that is not ASCII: rich counts terminal cells)."""
    pieces = [(piece.translate(_STRIP), style) for piece, style in line]
    if any("\t" in text for text, _ in pieces):
        if not all(text.isascii() for text, _ in pieces):
            return None
        if styled and any("\t" in text and style for text, style in pieces):
            return None
    if styled and any(style is not None and style not in _SGR for _, style in pieces):
        return None
    out: list[str] = []
    column = 0
    for text, style in pieces:
        if "\t" in text:
            text = (" " * column + text).expandtabs(8)[column:]
        column += len(text)
        codes = _SGR.get(style or "", "") if styled else ""
        if no_color and codes not in ("1", "2"):
            codes = ""
        out.append(f"\x1b[{codes}m{text}\x1b[0m" if codes and text else text)
    return "".join(out)


def write_lines(stream: TextIO, lines: Sequence[Line], environ: Mapping[str, str]) -> None:
    """Write `lines` (and a newline) as rich's `Console.print(soft_wrap=True)` would
    (a test compares them): plain text without a terminal, the styles' SGR codes
    on one; rich itself draws what this cannot say the same."""
    styled, no_color = _styled(stream, environ)
    drawn = [_drawn_line(line, styled, no_color) for line in lines]
    if all(text is not None for text in drawn):
        stream.write("\n".join(text for text in drawn if text is not None) + "\n")
        stream.flush()
        return
    from rich.console import Console
    from rich.text import Text

    text = Text()
    for i, line in enumerate(lines):
        if i:
            text.append("\n")
        for piece, style in line:
            text.append(piece, style)
    console = Console(file=stream, highlight=False, soft_wrap=True, _environ=dict(environ))
    console.print(text)


# -- the pages ----------------------------------------------------------------------------


def history_text(info: Mapping[str, Any] | None) -> str:
    """`changed 2024-05-01 (abc1234 subject)` for human output."""
    if info is None or info.get("changed") is None:
        return ""
    changed = str(info["changed"])
    if info.get("source") == "uncommitted":
        return "changed: uncommitted"
    if info.get("source") == "mtime":
        return f"modified {changed[:10]}"
    subject = (info.get("subject") or "")[:60]
    return f"changed {changed[:10]} ({(info.get('commit') or '')[:7]} {subject})"


def _span(item: Mapping[str, Any]) -> str:
    return f"{item['path']}:{item['start_line']}-{item['end_line']}"


def _snippet(page: Page, snippet: str) -> None:
    for line in snippet.split("\n"):
        page.add(("     ", None), ("│", "dim"), (" " + line, None))


def _result(page: Page, i: int, result: Mapping[str, Any], folder: str | None) -> None:
    found_by = " ".join(f"{h['stream']}#{h['rank']}" for h in result["provenance"])
    where: list[Piece] = [(folder, "magenta"), (" ", None)] if folder is not None else []
    page.add(
        (f"{i:>2}", "bold"),
        (" ", None),
        *where,
        (_span(result), "cyan"),
        ("  ", None),
        (result["kind"], "green"),
        (" ", None),
        (result["qualified_name"], "bold"),
        ("  ", None),
        (f"{result['layer']} · {found_by} · {result['score']:.4f}", "dim"),
    )
    when = history_text(result.get("history"))
    if when:
        page.add(("     ", None), (when, "dim"))
    _snippet(page, result["snippet"])
    if result["truncated"]:
        page.add(("     ", None), (f"│ … (from line {result['snippet_start_line']})", "dim"))
    for edge in result.get("graph") or ():
        node = edge["node"]
        page.add(
            ("     ", None),
            (GRAPH_LABELS.get(edge["relation"], edge["relation"]), "magenta"),
            (" ", None),
            (f"({edge['kind']}, line {edge['line']})", "dim"),
            (" ", None),
            (node["kind"], "green"),
            (" ", None),
            (node["qualified_name"], "bold"),
            ("  ", None),
            (_span(node), "cyan"),
        )
    for link in result.get("related") or ():
        page.add(
            ("     ", None),
            ("≡ mentioned in", "yellow"),
            (" ", None),
            (link["collection"], "bold"),
            (" ", None),
            (_span(link), "cyan"),
            (f" {link['title']} ", None),
            (f"({link['term']})", "dim"),
        )


def search_page(data: Mapping[str, Any], folders: Sequence[str] | None = None) -> Page:
    """`search`'s page; `folders`: each result's folder (a search over several)."""
    page = Page()
    page.warnings = [str(w["message"]) for w in data.get("warnings") or ()]
    results, resources = data["results"], data.get("resources") or []
    if not results and not resources:
        page.add((f"no results for {data['query']!r}", None))
        return page
    for i, result in enumerate(results, start=1):
        _result(page, i, result, folders[i - 1] if folders is not None else None)
    if resources:
        page.add(("from the document collections", "bold"))
    for i, resource in enumerate(resources, start=1):
        page.add(
            (f"{i:>2}", "bold"),
            (" ", None),
            (resource["collection"], "yellow"),
            (" ", None),
            (_span(resource), "cyan"),
            ("  ", None),
            (resource["qualified_name"] or resource["path"], "bold"),
            ("  ", None),
            (f"{resource['layer']} · {resource['score']:.4f}", "dim"),
        )
        _snippet(page, resource["snippet"])
    summary = f"{len(results)} results"
    if resources:
        summary += f" and {len(resources)} resources"
    page.add((f"{summary} in {data['took_ms']:.0f} ms", "dim"))
    return page


def _symbol(page: Page, symbol: Mapping[str, Any], prefix: str = "") -> None:
    when = history_text(symbol.get("history"))
    pieces: list[Piece] = [
        (prefix, None),
        (_span(symbol), "cyan"),
        ("  ", None),
        (symbol["kind"], "green"),
        (" ", None),
        (symbol["qualified_name"], "bold"),
        ("  ", None),
        ((symbol.get("signature") or "")[:120], "dim"),
    ]
    if when:
        pieces += [("  ", None), (when, "dim")]
    page.add(*pieces)


def symbols_page(data: Mapping[str, Any], name: str) -> Page:
    page = Page()
    if not data["exact"] and not data["fuzzy"]:
        page.add((f"no definitions match {name!r}", None))
    for symbol in data["exact"]:
        _symbol(page, symbol)
    if data["fuzzy"]:
        page.add(("similar names:", "dim"))
        for symbol in data["fuzzy"]:
            _symbol(page, symbol, "  ")
    return page


def _cut(page: Page, data: Mapping[str, Any]) -> None:
    if data.get("truncated"):
        page.add(
            (
                f"truncated: stopped at {data['max_nodes']} definitions (--max-nodes);"
                f" {data['omitted']} more not shown",
                "yellow",
            )
        )
    if data.get("calls_pending"):
        page.add(
            (
                f"the calls of {data['calls_pending']:,} files are not resolved yet (codesift"
                " resolve): callers and callees may be missing",
                "yellow",
            )
        )


def neighbours_page(data: Mapping[str, Any], direction: str) -> Page:
    """`callers` / `callees`: each definition named, then its neighbours."""
    page = Page()
    if not data["nodes"]:
        page.add((f"no definition named {data['name']!r}", None))
    for group in data["nodes"]:
        if group["node"] is not None:
            _symbol(page, group["node"])
        if not group[direction]:
            page.add(("  ", None), (f"no {direction} found", "dim"))
        for pair in group[direction]:
            edge, other = pair["edge"], pair["node"]
            if other is not None:
                line = edge["line"]
                where = f"line {line}" if direction == "callers" else f"called at {line}"
                _symbol(page, other, f"  {'←' if direction == 'callers' else '→'} ")
                how = edge["confidence"] or "unresolved"
                if edge["confidence"] in GUESSES:
                    how += ", by name: a guess"
                page.add(("      ", None), (f"{where} ({how})", "dim"))
            else:
                page.add(
                    ("  → ", None),
                    (edge["name"], "bold"),
                    (" ", None),
                    (f"(unresolved, line {edge['line']})", "dim"),
                )
    _cut(page, data)
    return page


def graph_page(data: Mapping[str, Any]) -> Page:
    """`graph`: the definitions met (the named ones starred), then the edges."""
    page = Page()
    roots = set(data["roots"])
    if not roots:
        page.add((f"no definition named {data['name']!r}", None))
        return page
    by_id: dict[Any, Mapping[str, Any]] = {}
    for symbol in data["nodes"]:
        by_id.setdefault(symbol["id"], symbol)
        _symbol(page, symbol, "* " if symbol["id"] in roots else "  ")
    for link in data["edges"]:
        source = by_id.get(link["source"])
        target = by_id.get(link["target"]) if link["target"] is not None else None
        src = source["qualified_name"] if source else str(link["source"])
        dst = target["qualified_name"] if target else f"{link['target_name']} (unresolved)"
        confidence = f" ({link['confidence']})" if link["confidence"] else ""
        page.add(
            ("  ", None),
            (src, "bold"),
            (" ", None),
            (link["kind"], "magenta"),
            (" ", None),
            (dst, "bold"),
            ("  ", None),
            (f"line {link['line']}{confidence}", "dim"),
        )
    _cut(page, data)
    return page
