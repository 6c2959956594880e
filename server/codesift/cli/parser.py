"""The command line (argparse): every command, its options and their defaults
(front_defaults.py, the settings' bounds).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from codesift import __version__
from codesift.cli.commands import (
    cmd_embed,
    cmd_history,
    cmd_index,
    cmd_mcp,
    cmd_resolve,
    cmd_serve,
    cmd_status,
)
from codesift.cli.queries import (
    cmd_callees,
    cmd_callers,
    cmd_graph,
    cmd_route,
    cmd_search,
    cmd_symbols,
)
from codesift.console_progress import DEFAULT_INTERVAL_SECONDS
from codesift.engine.results import EDGE_KINDS, MAX_SYMBOLS, TESTS_CHOICES
from codesift.front_defaults import (
    GRAPH_MAX_NODES,
    MAX_NODES_LIMIT,
    NEIGHBOURS_MAX_NODES,
    SYMBOLS_LIMIT,
    search_setting,
)

# engine/route.py's MAX_ROUTE_LIMIT, for `route --help` without loading the router
# on every command (a test compares them).
ROUTE_LIMIT_MAX = 20


def build_parser(
    parser_class: type[argparse.ArgumentParser] | None = None,
) -> argparse.ArgumentParser:
    """The command line; `parser_class` replaces ArgumentParser (for the parser a
    server uses, which must never print or exit)."""
    parser = (parser_class or argparse.ArgumentParser)(
        prog="codesift",
        description="Local hybrid code search: symbols, signatures and prose questions.",
    )
    parser.add_argument("--version", action="version", version=f"codesift {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log to stderr (-v info, -vv debug)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(
        p: argparse.ArgumentParser,
        *,
        update: bool = True,
        times: bool = True,
        several: bool = False,
    ) -> None:
        if several:  # `search`: read by one_root into args.root / args.roots
            p.add_argument(
                "--root",
                action="append",
                dest="roots",
                help="workspace folder (default: nearest indexed folder, else the git work"
                " tree, else the current folder); repeat it to search several folders,"
                " routed first",
            )
            p.set_defaults(root=None)
        else:
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
                help="only content created at or before TIME (date, time, 2w, '3 days ago',"
                " Unix seconds, tag)",
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
            help="when stderr is not a terminal, print a progress line this often"
            f" (default {DEFAULT_INTERVAL_SECONDS:g})",
        )

    def shared_options(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument(
            "--db",
            metavar="DSN",
            help=f"{what} the shared PostgreSQL index at DSN (default: index.dsn when"
            ' index.backend is "postgres"; docs/postgres.md)',
        )
        p.add_argument(
            "--repo",
            action="append",
            help="with the shared index: only this repository key (repeatable)",
        )
        p.add_argument(
            "--principal",
            help="with the shared index: read as this user or group"
            " (default: the database role's own view)",
        )

    def config_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--config",
            metavar="FILE",
            help="a settings TOML applied on top of each folder's .codesift.toml"
            " (e.g. [[collections]] to search beside the code)",
        )

    p = sub.add_parser("index", help="build or update the index of a folder")
    p.add_argument(
        "path",
        nargs="?",
        help="workspace folder (default: nearest indexed folder, else the git work tree, else"
        " the current folder)",
    )
    p.add_argument("--root", help="workspace folder (the same as PATH)")
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="move the existing index aside (never deleted) and build a new one",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    p.add_argument("--no-embed", action="store_true", help="do not compute vectors")
    p.add_argument(
        "--db",
        metavar="DSN",
        help="then write the index into the shared PostgreSQL index at DSN (default: index.dsn"
        ' when index.backend is "postgres"; docs/postgres.md)',
    )
    p.add_argument(
        "--repo",
        help="its repository key there (default: index.repo, else the remote's slug@branch)",
    )
    config_option(p)
    progress_option(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("embed", help="compute the missing vectors of an index")
    p.add_argument("--root", help="workspace folder")
    p.add_argument("--config", help="a settings TOML applied on top of .codesift.toml")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    progress_option(p)
    p.set_defaults(func=cmd_embed)

    def pass_options(p: argparse.ArgumentParser) -> None:
        """The options of a command that completes a background pass (history, resolve)."""
        p.add_argument("--root", help="workspace folder")
        p.add_argument("--quiet", action="store_true", help="no progress or summary")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        p.add_argument("--config", help="a settings TOML applied on top of .codesift.toml")
        p.add_argument("--background", action="store_true", help=argparse.SUPPRESS)
        progress_option(p)

    p = sub.add_parser(
        "history",
        help="compute the git history (created / last-changed times) now",
        description="Complete the git history pass of an index now, with progress. An index"
        " run makes search available first and computes the history afterwards (small"
        " updates at once, a large history in a background `codesift history`); this"
        " command waits for that one, then finishes what is left.",
    )
    pass_options(p)
    p.set_defaults(func=cmd_history)

    p = sub.add_parser(
        "resolve",
        help="resolve the call graph of a large index run now",
        description="Complete the call pass of an index now, with progress. A large index"
        " run makes search available first and resolves its calls afterwards (in a"
        " background `codesift resolve`); callers, callees and graph wait for it, and so"
        " does this command, which then finishes what is left.",
    )
    pass_options(p)
    p.set_defaults(func=cmd_resolve)

    p = sub.add_parser("search", help="hybrid search: symbols, signatures or prose")
    p.add_argument("query")
    top_k, top_k_min, top_k_max = search_setting("top_k")
    snippet, snippet_min, snippet_max = search_setting("snippet_chars")
    p.add_argument(
        "-k",
        "--top-k",
        type=int,
        help=f"number of results, {top_k_min}..{top_k_max}"
        f" (default: search.top_k, {top_k} unless .codesift.toml says otherwise)",
    )
    p.add_argument("--lang", action="append", help="only this language (repeatable)")
    p.add_argument("--path", action="append", help="only paths matching this glob (repeatable)")
    p.add_argument(
        "--layer",
        action="append",
        choices=["code", "ast", "summary", "doc"],
        help="search these layers (repeatable; default code, summary, doc)",
    )
    p.add_argument(
        "--snippet-chars",
        type=int,
        help=f"snippet size, {snippet_min}..{snippet_max}"
        f" (default: search.snippet_chars, {snippet} unless .codesift.toml says otherwise)",
    )
    p.add_argument("--max-tokens", type=int, help="fit the whole answer in this many tokens")
    p.add_argument(
        "--graph",
        action="store_true",
        help="show each code result's parent, callees and callers (at most 20 in all)",
    )
    p.add_argument(
        "--no-embed", action="store_true", help="lexical and symbol streams only (no vectors)"
    )
    p.add_argument(
        "--no-route",
        action="store_true",
        help="with several --root: search every folder, merged by score alone",
    )
    p.add_argument(
        "--tests",
        choices=TESTS_CHOICES,
        default="include",
        help="exclude: leave out results in test files (tests/, test_*.py, *_test.go,"
        " *.spec.ts, FooTest.java...); auto: leave them out unless the query asks for"
        " test code (quoted text, a pasted line, a test's name or path; default include)",
    )
    config_option(p)
    common(p, several=True)
    shared_options(p, "search")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("route", help="which folders and document collections a question is about")
    p.add_argument("query")
    p.add_argument(
        "--root",
        action="append",
        help="a folder to route between (repeatable; default: the current workspace)",
    )
    config_option(p)
    p.add_argument(
        "--limit",
        type=int,
        default=3,
        help=f"sources listed per pool, 1..{ROUTE_LIMIT_MAX} (default 3)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    shared_options(p, "route over")
    p.set_defaults(func=cmd_route)

    p = sub.add_parser("symbols", help="find definitions by name: exact first, then fuzzy")
    p.add_argument("name")
    p.add_argument(
        "--limit",
        type=int,
        default=SYMBOLS_LIMIT,
        help=f"at most this many definitions, 1..{MAX_SYMBOLS} (default {SYMBOLS_LIMIT})",
    )
    common(p)
    config_option(p)
    shared_options(p, "read")
    p.set_defaults(func=cmd_symbols)

    for name, func, text in (
        ("callers", cmd_callers, "who calls a function or method"),
        ("callees", cmd_callees, "what a function or method calls"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("name", help="name or qualified name of the definition")
        p.add_argument(
            "--max-nodes",
            type=int,
            default=NEIGHBOURS_MAX_NODES,
            help=f"show at most this many definitions, 1..{MAX_NODES_LIMIT}"
            f" (default {NEIGHBOURS_MAX_NODES})",
        )
        common(p)
        config_option(p)
        shared_options(p, "read")
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
        "--max-nodes",
        type=int,
        default=GRAPH_MAX_NODES,
        help=f"stop at this many definitions, 1..{MAX_NODES_LIMIT} (default {GRAPH_MAX_NODES})",
    )
    common(p)
    config_option(p)
    shared_options(p, "walk")
    p.set_defaults(func=cmd_graph)

    p = sub.add_parser("status", help="what is indexed: counts by language, size, last update")
    common(p, update=False, times=False)
    config_option(p)
    shared_options(p, "report on")
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
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio"
        " (other than loopback only with tokens: codesift token add)",
    )
    p.set_defaults(func=cmd_mcp)

    from codesift.cli.team import add_team_parser
    from codesift.cli.web import add_web_parsers

    add_team_parser(sub)
    add_web_parsers(sub, config_option)
    # Common options in either place: `codesift -vv search x` = `codesift search x -vv`.
    for command in sub.choices.values():
        command.add_argument(
            "-v",
            "--verbose",
            action="count",
            default=0,
            dest="verbose_after",
            help="log to stderr (-v info, -vv debug; also before the command)",
        )
    return parser


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """`argv` parsed by `parser`: -v counted before and after the command together,
    --root as one folder where one is given (see one_root)."""
    args = parser.parse_args(argv)
    args.verbose += args.__dict__.pop("verbose_after", 0)
    return one_root(args)


def one_root(args: argparse.Namespace) -> argparse.Namespace:
    """`search` reads --root as a list (`roots`); one of them is `root`, as every
    other command has it."""
    roots = getattr(args, "roots", None)
    if roots is not None and len(roots) == 1:
        args.root = roots[0]
    return args


def _positive_seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {raw}")
    return value
