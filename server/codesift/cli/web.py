"""`codesift web` and `codesift token` (docs/http.md).

    codesift web [--root DIR]... [--db DSN] [--listen HOST:PORT] [--config FILE]
                 [--tokens FILE] [--allow-host HOST]... [--cors-origin ORIGIN]...
                 [--log-file FILE] [--answer-cache N]
    codesift token add NAME --principal P [--db DSN | --tokens FILE] [--json]
    codesift token revoke NAME [--db DSN | --tokens FILE] [--json]
    codesift token list [--db DSN | --tokens FILE] [--json]

Thin: the server is codesift/web, the token stores codesift/engine/web_tokens.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from codesift.cli.invocation import Invocation

__all__ = ["add_web_parsers", "cmd_token", "cmd_web"]

EXIT_OK = 0


class Output(Protocol):
    def print(self, text: str) -> None: ...


def add_web_parsers(sub: Any, config_option: Any) -> None:
    """`web` and `token` on the subparsers `sub` of the codesift parser."""
    # Not codesift.web.app: the parser is built for every command, and a search
    # must not load the web server (tests/integration/test_cold_search_imports.py).
    from codesift.serving.listen import DEFAULT_WEB_LISTEN as DEFAULT_LISTEN

    p = sub.add_parser("web", help="serve the REST API, the /search console and MCP over HTTP")
    p.add_argument(
        "--root",
        action="append",
        help="workspace folder (default: nearest indexed folder, "
        "else the git work tree, else the current folder); repeat it to serve several",
    )
    p.add_argument(
        "--db", metavar="DSN", help="also serve this shared PostgreSQL index (tokens: its table)"
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default=DEFAULT_LISTEN,
        help=f"address (default {DEFAULT_LISTEN}; other than loopback only with tokens)",
    )
    p.add_argument("--tokens", metavar="FILE", help="the token file (default: docs/http.md)")
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a Host name a loopback server also answers to (a local proxy's)",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a page origin (https://dash.example.com) allowed to call /api/ from a browser",
    )
    p.add_argument("--log-file", help="write logs to this file instead of stderr")
    p.add_argument(
        "--answer-cache",
        type=int,
        default=256,
        metavar="N",
        help="answers to repeated questions kept while the index is unchanged (default 256;"
        " 0: none)",
    )
    config_option(p)
    p.set_defaults(func=cmd_web)

    token = sub.add_parser("token", help="create, revoke and list the HTTP servers' tokens")
    commands = token.add_subparsers(dest="token_command", required=True)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        q: argparse.ArgumentParser = commands.add_parser(name, help=text)
        where = q.add_mutually_exclusive_group()
        where.add_argument("--db", metavar="DSN", help="the shared index's tokens")
        where.add_argument("--tokens", metavar="FILE", help="the local token file")
        q.add_argument("--json", action="store_true", help="machine-readable output")
        return q

    q = command("add", "create a token for a principal (its secret is shown once)")
    q.add_argument("name")
    q.add_argument("--principal", required=True, help="who the token reads as")
    q = command("revoke", "delete a token: it stops working at its next request")
    q.add_argument("name")
    command("list", "the tokens (names and principals, never secrets)")
    token.set_defaults(func=cmd_token)


def cmd_web(args: argparse.Namespace, inv: Invocation) -> int:
    from codesift.web.app import WebOptions, serve

    if args.log_file:
        handler = logging.FileHandler(args.log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        for old in list(root.handlers):
            root.removeHandler(old)
        root.addHandler(handler)
        if root.level > logging.INFO:
            root.setLevel(logging.INFO)
    if logging.getLogger().level > logging.DEBUG:
        logging.getLogger("mcp").setLevel(logging.WARNING)
    roots = list(dict.fromkeys(args.root or ()))
    config: dict[str, Any] | None = None
    if args.config:
        from codesift.cli.invocation import config_overrides

        config = config_overrides(args.config)
    options = WebOptions(
        root=roots[0] if roots else None,
        roots=tuple(roots[1:]),
        db=args.db,
        listen=args.listen,
        config=config,
        tokens_file=Path(args.tokens).expanduser() if args.tokens else None,
        allowed_hosts=tuple(args.allow_host),
        cors_origins=tuple(args.cors_origin),
        answer_cache=max(0, args.answer_cache),
    )
    return serve(
        options,
        announce=lambda line: print(line, file=sys.stderr, flush=True),
        cli_socket=inv.cli_socket,  # `codesift search` & co. ask this server
    )


def cmd_token(args: argparse.Namespace, inv: Output) -> int:
    from codesift.engine.web_tokens import open_token_store

    store = open_token_store(args.db, Path(args.tokens).expanduser() if args.tokens else None)
    try:
        data, lines = _token_command(args, store)
    finally:
        store.close()
    inv.print(json.dumps(data, ensure_ascii=False) if args.json else "\n".join(lines))
    return EXIT_OK


def _token_command(args: argparse.Namespace, store: Any) -> tuple[Any, list[str]]:
    from codesift.errors import QueryError

    name = str(args.token_command)
    if name == "add":
        secret = store.add(args.name, args.principal)
        return (
            {"name": args.name, "principal": args.principal, "token": secret},
            [
                secret,
                f"(token {args.name} reads as {args.principal}, kept in {store.describe()};"
                " this is the only time the secret is shown)",
            ],
        )
    if name == "revoke":
        if not store.revoke(args.name):
            raise QueryError(f"no token named {args.name} in {store.describe()}")
        return {"name": args.name, "revoked": True}, [f"revoked {args.name}"]
    found = store.tokens()
    rows = [{"name": t.name, "principal": t.principal, "created": t.created} for t in found]
    lines = [f"{t.name}  {t.principal}  {t.created}" for t in found] or [
        f"no tokens in {store.describe()}"
    ]
    return {"tokens": rows}, lines
