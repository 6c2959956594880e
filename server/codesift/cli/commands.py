"""The commands that build and serve the index: index, embed, history, status,
serve, mcp.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import asdict

from codesift.cli.errors import EXIT_OK
from codesift.cli.invocation import (
    ConsoleListener,
    Invocation,
    config_overrides,
    configured_workspace,
    left_out_line,
)
from codesift.cli.render import print_repo_status, print_status
from codesift.cli.shared import given_dsn, open_shared, settings_dsn, shared_dsn, write_into_shared
from codesift.engine.access import open_existing, summary_line
from codesift.engine.session import embed, reindex
from codesift.engine.workspace import Workspace
from codesift.errors import CodesiftError, QueryError, ReadOnlyIndexError, WorkspaceError


def _index_workspace(args: argparse.Namespace, inv: Invocation) -> Workspace:
    """PATH or --root, else the workspace the current folder is in, as for every
    command: the nearest indexed folder at or above it (a subfolder updates its
    workspace's index), else the git work tree, else the current folder."""
    if args.path and args.root:
        raise WorkspaceError("give the folder once: as PATH or as --root")
    raw = args.path or args.root
    if raw:
        ws = Workspace.resolve(raw, option="index" if args.path else "--root")
    else:
        overrides = config_overrides(args.config) if args.config else None
        ws = Workspace.resolve(None, overrides=overrides)  # its index.db_path finds the root
    if args.config:
        ws = configured_workspace(ws.root, args.config)
    args.db_path = ws.db_path
    return ws


def _index_target(args: argparse.Namespace, ws: Workspace) -> str | None:
    """The DSN `codesift index` also writes into: --db, else `index.dsn` with
    `index.backend = "postgres"`; None for the local index only. Checked before
    the local index is touched."""
    dsn = given_dsn(args) or settings_dsn(ws)
    if dsn is None and args.repo:
        raise QueryError(
            "--repo names the key in the shared index: give --db DSN"
            ' or set index.backend = "postgres"'
        )
    if dsn is not None:
        from codesift.engine.postgres import check_repo_key, repo_key

        check_repo_key(repo_key(ws.root, args.repo or ws.settings.index.repo or None))
    return dsn


def cmd_index(args: argparse.Namespace, inv: Invocation) -> int:
    """Build or update the index; writers queue on the index's write lock."""
    ws = _index_workspace(args, inv)
    dsn = _index_target(args, ws)
    listener = ConsoleListener(inv, quiet=args.quiet, progress_every=args.progress_every)
    report, vectors, conn = reindex(
        ws, listener, rebuild=args.rebuild, vectors=not args.no_embed, quiet=args.quiet
    )
    try:
        if report.moved_aside is not None:
            inv.err_console().print(f"moved the old index aside to {report.moved_aside}")
        if vectors is None:
            embedding = "off"
        elif vectors.failed is not None:
            embedding = "failed"
        elif vectors.running_elsewhere:
            embedding = "elsewhere"
            if not args.quiet:
                who = f" ({vectors.holder})" if vectors.holder else ""
                inv.say(f"another codesift process{who} is computing this index's vectors")
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
            inv.print(json.dumps(data))
        elif not args.quiet:
            inv.print(summary_line(report.summary, conn))
            left_out = left_out_line(ws, report.summary.skipped)
            if left_out:
                inv.print(left_out)
        if dsn is not None:
            # The shared index is written with the graph and the times: both passes first.
            from codesift.engine.call_phase import complete_calls
            from codesift.engine.history import complete_history

            complete_calls(ws, conn, listener, quiet=args.quiet, purpose="codesift index --db")
            complete_history(ws, conn, listener, quiet=args.quiet, purpose="codesift index --db")
            write_into_shared(args, inv, ws, conn, dsn)
    finally:
        conn.close()
    return EXIT_OK


def cmd_embed(args: argparse.Namespace, inv: Invocation) -> int:
    """Compute missing vectors; one embedder per index at a time (the embed lock):
    a second one exits at once, saying who is embedding."""
    ws = inv.workspace(args)
    quiet = args.quiet or args.json
    listener = ConsoleListener(inv, quiet=quiet, progress_every=args.progress_every)
    report = embed(ws, listener, quiet=quiet)
    if args.json:
        inv.print(json.dumps(report.as_json()))
    elif args.quiet:
        pass
    elif report.running_elsewhere:
        who = f" ({report.holder})" if report.holder else ""
        inv.print(f"another codesift process{who} is computing this index's vectors")
    else:
        ratio = report.total_embedded / report.embeddable if report.embeddable else 1.0
        inv.print(f"embedded {report.embedded} chunks; vectors cover {ratio:.0%} of the index")
    return EXIT_OK


def cmd_history(args: argparse.Namespace, inv: Invocation) -> int:
    """Complete the git history pass (created / last-changed times) now, with
    progress; waits for another process's pass first. `--background` is how
    `codesift index` and `codesift search` start it detached: timed log lines."""
    from codesift.engine.history import complete_history
    from codesift.history.update import history_pending

    ws = inv.workspace(args)
    quiet = args.quiet or args.json
    listener = ConsoleListener(inv, quiet=quiet, progress_every=args.progress_every)
    conn = open_existing(ws)
    try:
        before = history_pending(conn, ws.root)
        started = time.perf_counter()
        stats = complete_history(
            ws, conn, listener, quiet=quiet, purpose="codesift history: computing git times"
        )
        after = history_pending(conn, ws.root)
    finally:
        conn.close()
    seconds = time.perf_counter() - started
    if stats is None:
        raise ReadOnlyIndexError(f"the index {ws.db_path} is read-only for this user")
    if args.json:
        data = {
            "source": stats.source,
            "commits": stats.commits,
            "files_timed": stats.files_timed,
            "complete": not after.pending,
            "error": stats.error,
            "seconds": round(seconds, 3),
            "pending_before": before.as_json(),
        }
        inv.print(json.dumps(data))
    elif not args.quiet:
        if stats.source == "mtime":
            inv.print(
                f"not a git repository: {stats.files_timed} file(s) timed by modification time"
            )
        else:
            inv.print(
                f"git history: walked {stats.commits:,} commit(s), timed {stats.files_timed:,}"
                f" file(s) in {seconds:.1f}s" + ("" if not after.pending else " (not complete)")
            )
    return EXIT_OK


def cmd_resolve(args: argparse.Namespace, inv: Invocation) -> int:
    """Complete the call pass (the targets of the calls a large index run wrote
    without them) now, with progress; waits for another process's pass first.
    `--background` is how an index run starts it detached: it then goes on with
    the git history pass."""
    from codesift.engine.call_phase import calls_pending_count, complete_calls

    ws = inv.workspace(args)
    quiet = args.quiet or args.json
    listener = ConsoleListener(inv, quiet=quiet, progress_every=args.progress_every)
    conn = open_existing(ws)
    try:
        before = calls_pending_count(conn)
        started = time.perf_counter()
        complete = complete_calls(
            ws, conn, listener, quiet=quiet, purpose="codesift resolve: resolving calls"
        )
        seconds = time.perf_counter() - started
        if args.background and complete:
            from codesift.engine.history import complete_history

            complete_history(
                ws, conn, listener, quiet=quiet, purpose="codesift resolve: computing git times"
            )
    finally:
        conn.close()
    if complete is None:
        raise ReadOnlyIndexError(f"the index {ws.db_path} is read-only for this user")
    if args.json:
        data = {"files": before, "complete": complete, "seconds": round(seconds, 3)}
        inv.print(json.dumps(data))
    elif not args.quiet:
        state = "" if complete else " (not complete)"
        inv.print(f"call graph: resolved the calls of {before:,} file(s) in {seconds:.1f}s{state}")
    return EXIT_OK


def cmd_status(args: argparse.Namespace, inv: Invocation) -> int:
    from codesift.engine.status import index_status  # git and the models' state

    dsn, resolved = shared_dsn(args, inv)
    if dsn is not None:
        return shared_status(args, inv, dsn)
    ws = resolved if resolved is not None else inv.workspace(args)
    status = index_status(ws)
    if not status.exists:
        if args.json:
            inv.print(
                json.dumps({"root": status.root, "database": status.database, "exists": False})
            )
        else:
            inv.print(f"no index at {ws.db_path}; run `codesift index` in {ws.root}")
        return EXIT_OK
    if args.json:
        inv.print(json.dumps(asdict(status)))
        return EXIT_OK
    print_status(inv, status)
    return EXIT_OK


def shared_status(args: argparse.Namespace, inv: Invocation, dsn: str) -> int:
    """`status --db`: each repository of the shared index this principal may read."""
    with open_shared(args, dsn) as shared:
        repos = shared.status()
    if args.json:
        inv.print(json.dumps({"repositories": [asdict(r) for r in repos]}))
        return EXIT_OK
    if not repos:
        inv.print("no repository of the shared index to show")
        return EXIT_OK
    for i, repo in enumerate(repos):
        if i:
            inv.print("")
        print_repo_status(inv, repo)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace, inv: Invocation) -> int:
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
    serve(tcp=tcp, cli_socket=inv.cli_socket)
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace, inv: Invocation) -> int:
    """The MCP server for agents on stdio (docs/mcp.md); logs go to stderr or --log-file."""
    from codesift.mcp import serve  # the MCP SDK loads only for this command

    return serve(args.root, log_file=args.log_file, http=args.http, cli_socket=inv.cli_socket)
