"""The `codesift` command: index, embed, search, symbols, callers, callees, graph,
status, serve: argument parsing and rendering over codesift.engine.

Results go to stdout; progress bars, warnings and logs go to stderr. `search`,
`symbols`, `callers`, `callees` and `graph` bring the index up to date first (building
it on first use), unless `--no-update` is given.
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import apsw
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from codesift import __version__
from codesift.console_progress import DEFAULT_INTERVAL_SECONDS, ProgressLines
from codesift.engine import (
    EDGE_KINDS,
    Engine,
    EngineListener,
    GraphLink,
    GraphQuery,
    GraphResult,
    IndexStatus,
    Symbol,
    Workspace,
    embed,
    index_status,
    indexed_root,
    reindex,
    summary_line,
)
from codesift.engine.symbols import MAX_SYMBOLS
from codesift.errors import CodesiftError, QueryError, WorkspaceError
from codesift.history.records import ChangeInfo
from codesift.retrieval import SearchResponse
from codesift.store.database import integrity_problem

__all__ = ["main"]

log = logging.getLogger("codesift")

EXIT_OK = 0
EXIT_INTERNAL = 1  # an unexpected failure (a bug): one line, details with -vv
EXIT_ERROR = 2  # a codesift error: bad input, an unusable index or workspace, a full disk
EXIT_INTERRUPTED = 130


def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


def _say(message: str) -> None:
    """A dim note on stderr (never stdout: that is the command's output)."""
    _stderr().print(f"[dim]{escape(message)}[/]", soft_wrap=True)


def _warn(message: str) -> None:
    _stderr().print(f"[yellow]warning:[/] {escape(message)}", soft_wrap=True)


class ConsoleListener(EngineListener):
    """Engine events on stderr: notes dim, warnings yellow, progress as a bar on a
    terminal (for 20 files or more) and a line every `progress_every` seconds
    elsewhere; `quiet` drops progress and waiting notes."""

    def __init__(
        self, *, quiet: bool = False, progress_every: float = DEFAULT_INTERVAL_SECONDS
    ) -> None:
        self.quiet = quiet
        self.progress_every = progress_every
        self._console = _stderr()
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._lines: ProgressLines | None = None
        self._total = 0

    def note(self, message: str) -> None:
        _say(message)

    def warning(self, message: str) -> None:
        _warn(message)

    def waiting(self, holder: str, what: str) -> None:
        if self.quiet:
            return
        who = f" ({holder})" if holder else ""
        after = "starts after it" if what == "this run" else "waits for the index"
        _say(
            f"waiting for another codesift process{who} to finish writing the index; {what} {after}"
        )

    def begin(self, task: str, total: int) -> None:
        self._total = total
        if self.quiet:
            return
        unit = "files" if task == "indexing" else "chunks"
        if not self._console.is_terminal:
            self._lines = ProgressLines(sys.stderr, task, unit, interval=self.progress_every)
            return
        if task == "indexing" and total < 20:
            return
        columns = (
            TextColumn("[bold]codesift[/] {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("[dim]{task.fields[path]}"),
        )
        self._bar = Progress(*columns, console=self._console, transient=True)
        self._bar.start()
        self._task = self._bar.add_task(task, total=total, path="")

    def advance(self, done: int, detail: str = "") -> None:
        if self._lines is not None:
            self._lines.update(done, max(self._total, done))
        elif self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, path=detail[-50:])

    def phase(self, description: str) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=description, path="")

    def end(self) -> None:
        if self._lines is not None:
            self._lines.finish()
            self._lines = None
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self._task = None


def _workspace(args: argparse.Namespace) -> Workspace:
    """The workspace a reading command works on: --root, else the nearest index
    (honouring index.db_path), else the git work tree, else the current folder."""
    ws = Workspace.resolve(getattr(args, "root", None))
    args.db_path = ws.db_path
    return ws


def _engine(args: argparse.Namespace, *, quiet: bool = False) -> Engine:
    return Engine(
        _workspace(args),
        ConsoleListener(quiet=quiet),
        update=not getattr(args, "no_update", False),
        vectors=not getattr(args, "no_embed", False),
        quiet=quiet,
        command=f"codesift {args.command}",
    )


def _report_built(engine: Engine, args: argparse.Namespace) -> None:
    """The first run's summary (a new index), on stderr."""
    if engine.built is not None and not args.json:
        _say(summary_line(engine.built, engine.connection()))


# -- commands ------------------------------------------------------------------------


def _index_workspace(args: argparse.Namespace) -> Workspace:
    """PATH or --root, else the nearest indexed folder at or above the current one
    (a subfolder updates its workspace's index), else the current folder."""
    if args.path and args.root:
        raise WorkspaceError("give the folder once: as PATH or as --root")
    raw = args.path or args.root
    if raw:
        ws = Workspace.resolve(raw, option="index" if args.path else "--root")
    else:
        here = Path.cwd().resolve()
        ws = Workspace.at(indexed_root(here) or here)
    args.db_path = ws.db_path
    return ws


def cmd_index(args: argparse.Namespace) -> int:
    """Build or update the index; writers queue on the index's write lock."""
    ws = _index_workspace(args)
    listener = ConsoleListener(quiet=args.quiet, progress_every=args.progress_every)
    report, vectors, conn = reindex(
        ws, listener, rebuild=args.rebuild, vectors=not args.no_embed, quiet=args.quiet
    )
    try:
        if report.moved_aside is not None:
            _stderr().print(f"moved the old index aside to {report.moved_aside}")
        if vectors is None:
            embedding = "off"
        elif vectors.failed is not None:
            embedding = "failed"
        elif vectors.running_elsewhere:
            embedding = "elsewhere"
            if not args.quiet:
                who = f" ({vectors.holder})" if vectors.holder else ""
                _say(f"another codesift process{who} is computing this index's vectors")
        else:
            embedding = "done"
        if args.json:
            data = {
                **asdict(report.summary),
                "embedded": 0 if vectors is None else vectors.embedded,
                "embedding": embedding,
                "root": str(ws.root),
                "database": str(ws.db_path),
            }
            print(json.dumps(data))
        elif not args.quiet:
            print(summary_line(report.summary, conn))
    finally:
        conn.close()
    return EXIT_OK


def cmd_embed(args: argparse.Namespace) -> int:
    """Compute missing vectors; one embedder per index at a time (the embed lock):
    a second one exits at once, saying who is embedding."""
    ws = _workspace(args)
    quiet = args.quiet or args.json
    listener = ConsoleListener(quiet=quiet, progress_every=args.progress_every)
    report = embed(ws, listener, quiet=quiet)
    if args.json:
        print(json.dumps(report.as_json()))
    elif args.quiet:
        pass
    elif report.running_elsewhere:
        who = f" ({report.holder})" if report.holder else ""
        print(f"another codesift process{who} is computing this index's vectors")
    else:
        ratio = report.total_embedded / report.embeddable if report.embeddable else 1.0
        print(f"embedded {report.embedded} chunks; vectors cover {ratio:.0%} of the index")
    return EXIT_OK


def _response_json(response: SearchResponse) -> dict[str, Any]:
    data = asdict(response)
    for result in data["results"]:
        result["provenance"] = [dict(h) for h in result["provenance"]]
    return data


def _history_text(info: ChangeInfo | None) -> str:
    """`changed 2024-05-01 (abc1234 subject)` for human output."""
    if info is None or info.changed is None:
        return ""
    if info.source == "uncommitted":
        return "changed: uncommitted"
    if info.source == "mtime":
        return f"modified {info.changed[:10]}"
    subject = (info.subject or "")[:60]
    return f"changed {info.changed[:10]} ({(info.commit or '')[:7]} {subject})"


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


def cmd_search(args: argparse.Namespace) -> int:
    engine = _engine(args, quiet=bool(args.json))
    try:
        times = engine.times(args.as_of, args.since, args.until)  # before any indexing
        request = engine.request(
            args.query,
            top_k=args.top_k,
            layers=tuple(args.layer or ()),
            languages=tuple(args.lang or ()),
            paths=tuple(args.path or ()),
            snippet_chars=args.snippet_chars,
            max_tokens=args.max_tokens,
            as_of=times.as_of,
            since=times.since,
            until=times.until,
            include_graph=args.graph,
        )
        response = engine.search(request)
        _report_built(engine, args)
    finally:
        engine.close()
    if args.json:
        print(json.dumps(_response_json(response), ensure_ascii=False))
        return EXIT_OK
    _print_search(args.query, response)
    return EXIT_OK


def _print_search(query: str, response: SearchResponse) -> None:
    console = Console(highlight=False, soft_wrap=True)
    if not response.results:
        console.print(f"no results for {escape(query)!r}")
        return
    for i, result in enumerate(response.results, start=1):
        found_by = " ".join(f"{h.stream}#{h.rank}" for h in result.provenance)
        console.print(
            f"[bold]{i:>2}[/] [cyan]{escape(result.path)}:{result.start_line}-{result.end_line}[/]"
            f"  [green]{escape(result.kind)}[/] [bold]{escape(result.qualified_name)}[/]"
            f"  [dim]{result.layer} · {found_by} · {result.score:.4f}[/]"
        )
        when = _history_text(result.history)
        if when:
            console.print(f"     [dim]{escape(when)}[/]")
        for line in result.snippet.split("\n"):
            console.print(f"     [dim]│[/] {escape(line)}")
        if result.truncated:
            console.print(f"     [dim]│ … (from line {result.snippet_start_line})[/]")
        for edge in result.graph:
            node = edge.node
            console.print(
                f"     [magenta]{GRAPH_LABELS.get(edge.relation, edge.relation)}[/]"
                f" [dim]({edge.kind}, line {edge.line})[/] [green]{escape(node.kind)}[/]"
                f" [bold]{escape(node.qualified_name)}[/]"
                f"  [cyan]{escape(node.path)}:{node.start_line}-{node.end_line}[/]"
            )
    console.print(f"[dim]{len(response.results)} results in {response.took_ms:.0f} ms[/]")


def _symbol_json(symbol: Symbol | None) -> dict[str, Any] | None:
    if symbol is None:
        return None
    data = asdict(symbol.node)
    data["history"] = asdict(symbol.history) if symbol.history is not None else None
    return data


def _print_symbol(console: Console, symbol: Symbol, prefix: str = "") -> None:
    node = symbol.node
    when = _history_text(symbol.history)
    console.print(
        f"{prefix}[cyan]{escape(node.path)}:{node.start_line}-{node.end_line}[/]  "
        f"[green]{node.kind}[/] [bold]{escape(node.qualified_name)}[/]  "
        f"[dim]{escape(node.signature[:120])}[/]" + (f"  [dim]{escape(when)}[/]" if when else "")
    )


def cmd_symbols(args: argparse.Namespace) -> int:
    if args.limit < 1 or args.limit > MAX_SYMBOLS:
        raise QueryError(f"--limit must be between 1 and {MAX_SYMBOLS}, got {args.limit}")
    engine = _engine(args, quiet=bool(args.json))
    try:
        times = engine.times(args.as_of, args.since, args.until)
        found = engine.symbols(args.name, args.limit, times)
        _report_built(engine, args)
    finally:
        engine.close()
    if args.json:
        exact = [_symbol_json(s) for s in found.exact]
        print(json.dumps({"exact": exact, "fuzzy": [_symbol_json(s) for s in found.fuzzy]}))
        return EXIT_OK
    console = Console(highlight=False, soft_wrap=True)
    if not found.all:
        console.print(f"no definitions match {escape(args.name)!r}")
    for symbol in found.exact:
        _print_symbol(console, symbol)
    if found.fuzzy:
        console.print("[dim]similar names:[/]")
        for symbol in found.fuzzy:
            _print_symbol(console, symbol, "  ")
    return EXIT_OK


def _graph_command(args: argparse.Namespace, direction: str) -> int:
    engine = _engine(args, quiet=bool(args.json))
    try:
        times = engine.times(args.as_of, args.since, args.until)
        query = GraphQuery(
            direction=direction, depth=1, kinds=("calls",), max_nodes=2000, times=times
        )
        walk = engine.graph(args.name, query)
        _report_built(engine, args)
    finally:
        engine.close()
    groups = _neighbours(walk, direction)
    if args.json:
        payload = [
            {
                "node": _symbol_json(walk.node(root)),
                direction: [
                    {
                        "edge": {
                            "kind": link.kind,
                            "line": link.line,
                            "name": link.target_name,
                            "resolution": link.resolution,
                        },
                        "node": _symbol_json(other),
                    }
                    for link, other in pairs
                ],
            }
            for root, pairs in groups
        ]
        print(json.dumps({"name": args.name, "nodes": payload}))
        return EXIT_OK
    console = Console(highlight=False, soft_wrap=True)
    if not groups:
        console.print(f"no definition named {escape(args.name)!r}")
    for root, pairs in groups:
        target = walk.node(root)
        if target is not None:
            _print_symbol(console, target)
        if not pairs:
            console.print(f"  [dim]no {direction} found[/]")
        for link, other in pairs:
            if other is not None:
                where = f"line {link.line}" if direction == "callers" else f"called at {link.line}"
                arrow = "←" if direction == "callers" else "→"
                _print_symbol(console, other, f"  {arrow} ")
                console.print(f"      [dim]{where} ({link.resolution or 'unresolved'})[/]")
            else:
                name = escape(link.target_name)
                console.print(f"  → [bold]{name}[/] [dim](unresolved, line {link.line})[/]")
    return EXIT_OK


def _neighbours(
    walk: GraphResult, direction: str
) -> list[tuple[int, list[tuple[GraphLink, Symbol | None]]]]:
    """Each starting definition with its edges in `direction` and the other end."""
    groups: list[tuple[int, list[tuple[GraphLink, Symbol | None]]]] = []
    for root in dict.fromkeys(walk.roots):
        pairs: list[tuple[GraphLink, Symbol | None]] = []
        for link in walk.edges:
            if direction == "callers" and link.target == root:
                pairs.append((link, walk.node(link.source)))
            elif direction == "callees" and link.source == root:
                pairs.append((link, None if link.target is None else walk.node(link.target)))
        groups.append((root, pairs))
    return groups


def cmd_graph(args: argparse.Namespace) -> int:
    """The code graph around the definitions named NAME: callers, callees or both,
    DEPTH edges away, along the edge kinds asked for."""
    engine = _engine(args, quiet=bool(args.json))
    try:
        times = engine.times(args.as_of, args.since, args.until)
        kinds = tuple(args.kind or ("calls",))
        query = GraphQuery(args.direction, args.depth, kinds, args.max_nodes, times)
        walk = engine.graph(args.name, query)
        _report_built(engine, args)
    finally:
        engine.close()
    if args.json:
        print(
            json.dumps(
                {
                    "name": args.name,
                    "roots": list(walk.roots),
                    "nodes": [_symbol_json(s) for s in walk.nodes],
                    "edges": [asdict(link) for link in walk.edges],
                    "truncated": walk.truncated,
                }
            )
        )
        return EXIT_OK
    console = Console(highlight=False, soft_wrap=True)
    if not walk.roots:
        console.print(f"no definition named {escape(args.name)!r}")
        return EXIT_OK
    for symbol in walk.nodes:
        _print_symbol(console, symbol, "* " if symbol.node.id in walk.roots else "  ")
    for link in walk.edges:
        source = walk.node(link.source)
        target = walk.node(link.target) if link.target is not None else None
        src = source.node.qualified_name if source else str(link.source)
        dst = target.node.qualified_name if target else f"{link.target_name} (unresolved)"
        console.print(
            f"  [bold]{escape(src)}[/] [magenta]{link.kind}[/] [bold]{escape(dst)}[/]"
            f"  [dim]line {link.line}[/]"
        )
    if walk.truncated:
        console.print(f"[dim]stopped at {args.max_nodes} definitions (--max-nodes)[/]")
    return EXIT_OK


def cmd_callers(args: argparse.Namespace) -> int:
    return _graph_command(args, "callers")


def cmd_callees(args: argparse.Namespace) -> int:
    return _graph_command(args, "callees")


_QUERY_PATHS = {
    "int8": "embedded by the int8 query encoder",
    "pending": "embedded by the int8 query encoder, built on the first search",
    "batch": "embedded by the batch model (embedding.quantized_queries = false)",
    "off": "not embedded (embeddings are off)",
}


def cmd_status(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    status = index_status(ws)
    if not status.exists:
        if args.json:
            print(json.dumps({"root": status.root, "database": status.database, "exists": False}))
        else:
            print(f"no index at {ws.db_path}; run `codesift index` in {ws.root}")
        return EXIT_OK
    if args.json:
        print(json.dumps(asdict(status)))
        return EXIT_OK
    _print_status(status)
    return EXIT_OK


def _print_status(status: IndexStatus) -> None:
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.last_update))
        if status.last_update
        else "never"
    )
    vectors, history, rerank = status.vectors, status.history, status.rerank
    assert vectors is not None and history is not None and rerank is not None
    ratio = vectors.embedded / vectors.embeddable if vectors.embeddable else 1.0
    print(f"root        {status.root}")
    print(f"database    {status.database} ({status.database_bytes / 1e6:.1f} MB)")
    print(f"files       {status.files}")
    print(f"nodes       {status.nodes}")
    print(f"edges       {status.edges}")
    print(f"chunks      {status.chunks}")
    print(f"vectors     {vectors.embedded} of {vectors.embeddable} chunks ({ratio:.0%})")
    if vectors.queries_error:
        print(
            "queries     embedded by the batch model: the query model failed:"
            f" {vectors.queries_error}"
        )
    else:
        print(f"queries     {_QUERY_PATHS[vectors.queries]}")
    print(f"updated     {when}")
    if not history.available:
        at = f" at {history.head[:10]}" if history.head else ""
        print(
            f"history     unavailable{at}: {history.error}"
            f" ({history.mtime_files} files dated by modification time)"
        )
    else:
        print(f"history     {'git' if history.source == 'git' else 'file modification times'}")
    print("languages   " + ", ".join(f"{k} {v}" for k, v in status.languages.items()))
    if not rerank.enabled:
        print("rerank      off")
    elif rerank.active:
        print(f"rerank      {rerank.provider} ({rerank.model_path})")
    else:
        print(f"rerank      off: {rerank.warning}")


def cmd_serve(args: argparse.Namespace) -> int:
    """The language server on stdio (or TCP); logs go to stderr or --log-file."""
    from codesift.lsp import serve  # pygls loads only for this command

    if args.log_file:
        handler: logging.Handler = logging.FileHandler(args.log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root_logger = logging.getLogger()
        for old in list(root_logger.handlers):
            root_logger.removeHandler(old)
        root_logger.addHandler(handler)
        if args.verbose == 0:
            root_logger.setLevel(logging.INFO)
    tcp = None
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise CodesiftError(f"--tcp wants HOST:PORT, got {args.tcp!r}")
        tcp = (host, int(port))
    serve(tcp=tcp)
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    """The MCP server for agents on stdio (docs/mcp.md); logs go to stderr or --log-file."""
    from codesift.mcp import serve  # the MCP SDK loads only for this command

    return serve(args.root, log_file=args.log_file, http=args.http)


# -- argument parsing ----------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codesift",
        description="Local hybrid code search: symbols, signatures and prose questions.",
    )
    parser.add_argument("--version", action="version", version=f"codesift {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log to stderr (-v info, -vv debug)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, *, update: bool = True, times: bool = True) -> None:
        p.add_argument(
            "--root",
            help="workspace folder (default: nearest indexed folder, "
            "else the git work tree, else the current folder)",
        )
        p.add_argument("--json", action="store_true", help="machine-readable output")
        if times:
            p.add_argument(
                "--as-of",
                metavar="TIME",
                help="only content created at or before TIME (date, time, 2w, '3 days ago', tag)",
            )
            p.add_argument(
                "--since", metavar="TIME", help="only content last changed at or after TIME"
            )
            p.add_argument(
                "--until", metavar="TIME", help="only content last changed at or before TIME"
            )
        if update:
            p.add_argument(
                "--no-update",
                action="store_true",
                help="search the index as it is, without updating it first",
            )

    def progress_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--progress-every",
            type=_positive_seconds,
            default=DEFAULT_INTERVAL_SECONDS,
            metavar="SECONDS",
            help="when stderr is not a terminal, print a progress line this often (default 5)",
        )

    p = sub.add_parser("index", help="build or update the index of a folder")
    p.add_argument("path", nargs="?", help="workspace folder (default: current folder)")
    p.add_argument("--root", help="workspace folder (the same as PATH)")
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="move the existing index aside (never deleted) and build a new one",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    p.add_argument("--no-embed", action="store_true", help="do not compute vectors")
    progress_option(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("embed", help="compute the missing vectors of an index")
    p.add_argument("--root", help="workspace folder")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    progress_option(p)
    p.set_defaults(func=cmd_embed)

    p = sub.add_parser("search", help="hybrid search: symbols, signatures or prose")
    p.add_argument("query")
    p.add_argument("-k", "--top-k", type=int, help="number of results, 1..200 (default 10)")
    p.add_argument("--lang", action="append", help="only this language (repeatable)")
    p.add_argument("--path", action="append", help="only paths matching this glob (repeatable)")
    p.add_argument(
        "--layer",
        action="append",
        choices=["code", "ast", "summary", "doc"],
        help="search these layers (repeatable; default code, summary, doc)",
    )
    p.add_argument("--snippet-chars", type=int, help="snippet size, 80..4000 (default 600)")
    p.add_argument("--max-tokens", type=int, help="fit the whole answer in this many tokens")
    p.add_argument(
        "--graph",
        action="store_true",
        help="show each code result's parent, callees and callers (at most 20 in all)",
    )
    p.add_argument(
        "--no-embed", action="store_true", help="lexical and symbol streams only (no vectors)"
    )
    common(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("symbols", help="find definitions by name: exact first, then fuzzy")
    p.add_argument("name")
    p.add_argument("--limit", type=int, default=20)
    common(p)
    p.set_defaults(func=cmd_symbols)

    for name, func, text in (
        ("callers", cmd_callers, "who calls a function or method"),
        ("callees", cmd_callees, "what a function or method calls"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("name", help="name or qualified name of the definition")
        common(p)
        p.set_defaults(func=func)

    p = sub.add_parser("graph", help="the code graph around a definition: edges of any kind")
    p.add_argument("name", help="name or qualified name of the definition")
    p.add_argument(
        "--direction",
        choices=["callers", "callees", "both"],
        default="both",
        help="edges into the definition, out of it, or both (default)",
    )
    p.add_argument("--depth", type=int, default=1, help="edges away, 1..10 (default 1)")
    p.add_argument(
        "--kind",
        action="append",
        choices=list(EDGE_KINDS),
        help="follow edges of this kind (repeatable; default calls)",
    )
    p.add_argument(
        "--max-nodes", type=int, default=100, help="stop at this many definitions (1..2000)"
    )
    common(p)
    p.set_defaults(func=cmd_graph)

    p = sub.add_parser("status", help="what is indexed: counts by language, size, last update")
    common(p, update=False, times=False)
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("serve", help="run the language server (LSP over stdio)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (debugging)")
    p.add_argument("--log-file", help="write logs to this file instead of stderr")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("mcp", help="run the MCP server for agents (stdio, or HTTP)")
    p.add_argument(
        "--root",
        help="workspace folder (default: nearest indexed folder, "
        "else the git work tree, else the current folder)",
    )
    p.add_argument("--log-file", help="write logs to this file instead of stderr")
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (no auth: loopback)",
    )
    p.set_defaults(func=cmd_mcp)
    return parser


def _positive_seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {raw}")
    return value


def _sqlite_error_message(exc: apsw.Error, db_path: Path | None) -> str:
    """One line a person can act on, for an SQLite error that reached the top."""
    where = f"the index {db_path}" if db_path is not None else "the index"
    if isinstance(exc, apsw.FullError):
        return (
            f"the disk holding {where} is full; the index keeps every file completed so far:"
            " free some space and run `codesift index` again"
        )
    if isinstance(exc, apsw.ReadOnlyError):
        return f"{where} cannot be written (read-only for this user or on a read-only disk)"
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        problem = integrity_problem(db_path) if db_path is not None else None
        detail = f" ({problem})" if problem else f" ({exc})"
        return (
            f"{where} is damaged{detail}; run `codesift index --rebuild` to move it aside"
            " and build a new one"
        )
    if isinstance(exc, apsw.BusyError):
        return (
            f"{where} stayed locked by another process; try again when it has finished"
            " (codesift status shows what is running)"
        )
    if isinstance(exc, apsw.IOError):
        return f"cannot read or write {where}: disk I/O error ({exc})"
    if isinstance(exc, apsw.CantOpenError):
        return f"cannot open {where}: {exc}"
    return f"{where}: {exc}"


def _os_error_message(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            "the disk is full; the index keeps every file completed so far: free some space"
            " and run `codesift index` again"
        )
    what = exc.strerror or str(exc)
    name = exc.filename if exc.filename is not None else ""
    return f"{what}: {name}" if name else what


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    db_path: Path | None = None
    try:
        return int(args.func(args))
    except CodesiftError as exc:
        message = str(exc)
        code = EXIT_ERROR
    except KeyboardInterrupt:
        _stderr().print("interrupted; the index keeps every file completed so far")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except apsw.Error as exc:
        db_path = getattr(args, "db_path", None)
        log.debug("SQLite error", exc_info=True)
        message, code = _sqlite_error_message(exc, db_path), EXIT_ERROR
    except OSError as exc:
        log.debug("OS error", exc_info=True)
        message, code = _os_error_message(exc), EXIT_ERROR
    except Exception as exc:  # a bug: one line for the user, the traceback with -vv
        log.debug("unexpected failure", exc_info=True)
        message = f"unexpected failure: {type(exc).__name__}: {exc} (run with -vv for the details)"
        code = EXIT_INTERNAL
    _stderr().print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
