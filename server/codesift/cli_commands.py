"""The `codesift` commands: index, embed, search, route, symbols, callers, callees,
graph, status, serve, mcp: argument parsing and rendering over codesift.engine.

Results go to stdout; progress bars, warnings and logs go to stderr. `search`,
`symbols`, `callers`, `callees` and `graph` bring the index up to date first (building
it on first use), unless `--no-update` is given.

Every command writes through an `Invocation` (its two streams, how it opens the
workspace and the engine). In-process that is the process's own stdout and
stderr and a one-shot `Engine`; a server answering the CLI over its local socket
(codesift/local_socket.py, `answer_socket_request`) runs the same command code
with the client's streams captured (and the client's terminal described) and an
engine that reads the server's live index: same engine calls, same rendering,
same exit codes and messages.
"""

from __future__ import annotations

import argparse
import errno
import functools
import io
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import apsw
from rich.console import Console
from rich.markup import escape

from codesift import __version__
from codesift.cli import SOCKET_COMMANDS
from codesift.console_progress import DEFAULT_INTERVAL_SECONDS, ProgressLines
from codesift.engine.access import open_existing, summary_line
from codesift.engine.listener import EngineListener
from codesift.engine.results import (
    EDGE_KINDS,
    GraphLink,
    GraphQuery,
    GraphResult,
    IndexStatus,
    Symbol,
)
from codesift.engine.session import Engine, embed, reindex
from codesift.engine.symbols import MAX_SYMBOLS
from codesift.engine.workspace import (
    Workspace,
    indexed_folders_below,
    workspace_above,
)
from codesift.errors import (
    CodesiftError,
    ConfigError,
    QueryError,
    ReadOnlyIndexError,
    WorkspaceError,
    error_kind,
    error_message,
)
from codesift.front_defaults import (
    GRAPH_MAX_NODES,
    MAX_NODES_LIMIT,
    NEIGHBOURS_MAX_NODES,
    SYMBOLS_LIMIT,
    search_setting,
)
from codesift.store.database import integrity_problem

# Imported where used (a search of an up-to-date index loads none of them): the
# status command's (git, the models), the router's, the collections', and types.
if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from codesift.embedding import Embedder
    from codesift.engine.folder_search import FoldersResponse
    from codesift.engine.live import Cancellation, FolderIndex, LiveReader
    from codesift.engine.postgres import SharedSearch
    from codesift.history.records import ChangeInfo
    from codesift.history.timespec import TimeFilter
    from codesift.local_socket_server import Hangup, LocalSocketServer
    from codesift.retrieval import Searcher, SearchRequest, SearchResponse
    from codesift.retrieval.routing import RouteMatch
    from codesift.store.postgres.status import RepoStatus

__all__ = [
    "SOCKET_COMMANDS",
    "Invocation",
    "answer_socket_request",
    "build_parser",
    "run",
    "run_command",
    "serve_cli_socket",
]

log = logging.getLogger("codesift")

EXIT_OK = 0
EXIT_INTERNAL = 1  # an unexpected failure (a bug): one line, details with -vv
EXIT_ERROR = 2  # a codesift error: bad input, an unusable index or workspace, a full disk
EXIT_INTERRUPTED = 130

# engine/route.py's MAX_ROUTE_LIMIT, for `route --help` without loading the router
# on every command (a test compares them).
ROUTE_LIMIT_MAX = 20


class _Stream(io.StringIO):
    """A captured stream that answers `isatty` and `encoding` as the client's does,
    so that rich renders for the client's terminal."""

    def __init__(self, tty: bool, encoding: str) -> None:
        super().__init__()
        self._tty = tty
        self._encoding = encoding

    def isatty(self) -> bool:
        return self._tty

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding


@dataclass
class Invocation:
    """Where a command writes and how it opens its workspace and engine.

    In-process (the default): the process's stdout and stderr, rich reading the
    process's environment. A server answering over its socket passes captured
    streams, the client's environment (`environ`: what rich reads) and its own
    `open_workspace` / `open_engine`."""

    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] | None = None
    open_workspace: Callable[[argparse.Namespace], Workspace] | None = None
    open_engine: Callable[[Workspace, EngineListener, argparse.Namespace, bool], Engine] | None = (
        None
    )

    def console(self) -> Console:
        """The command's output (stdout)."""
        return Console(file=self.stdout, highlight=False, soft_wrap=True, _environ=self.environ)

    def err_console(self) -> Console:
        return Console(file=self.stderr, highlight=False, _environ=self.environ)

    def print(self, text: str) -> None:
        """A line of plain output (JSON, status) on stdout."""
        print(text, file=self.stdout)

    def say(self, message: str) -> None:
        """A dim note on stderr (never stdout: that is the command's output)."""
        self.err_console().print(f"[dim]{escape(message)}[/]", soft_wrap=True)

    def warn(self, message: str) -> None:
        self.err_console().print(f"[yellow]warning:[/] {escape(message)}", soft_wrap=True)

    def error(self, message: str) -> None:
        self.err_console().print(f"[red]error:[/] {escape(message)}", soft_wrap=True)

    def workspace(self, args: argparse.Namespace) -> Workspace:
        """The workspace a reading command works on: --root, else the nearest index
        (honouring index.db_path), else the git work tree, else the current folder."""
        if self.open_workspace is not None:
            ws = self.open_workspace(args)
        else:
            ws = Workspace.resolve(getattr(args, "root", None))
            config = getattr(args, "config", None)
            if config:
                ws = Workspace.at(ws.root, config_overrides(config))
        args.db_path = ws.db_path
        return ws

    def engine(
        self, args: argparse.Namespace, *, quiet: bool = False, workspace: Workspace | None = None
    ) -> Engine:
        """The engine of the workspace (`workspace`, else the one `workspace(args)`
        resolves)."""
        ws = workspace if workspace is not None else self.workspace(args)
        listener = ConsoleListener(self, quiet=quiet)
        if self.open_engine is not None:
            return self.open_engine(ws, listener, args, quiet)
        return Engine(
            ws,
            listener,
            update=not getattr(args, "no_update", False),
            vectors=not getattr(args, "no_embed", False),
            quiet=quiet,
            command=f"codesift {args.command}",
        )


# What each task of the engine counts (engine/access.py, engine/history.py).
_TASK_UNITS = {
    "indexing": "files",
    "embedding": "chunks",
    "static vectors": "chunks",
    "git history: commits": "commits",
    "git history: files": "files",
}


class ConsoleListener(EngineListener):
    """Engine events on stderr: notes dim, warnings yellow, progress as a bar on a
    terminal (for 20 files or more) and a line every `progress_every` seconds
    elsewhere; `quiet` drops progress and waiting notes."""

    def __init__(
        self,
        inv: Invocation,
        *,
        quiet: bool = False,
        progress_every: float = DEFAULT_INTERVAL_SECONDS,
    ) -> None:
        self.inv = inv
        self.quiet = quiet
        self.progress_every = progress_every
        self._console = inv.err_console()
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._lines: ProgressLines | None = None
        self._total = 0

    def note(self, message: str) -> None:
        self.inv.say(message)

    def warning(self, message: str) -> None:
        self.inv.warn(message)

    def waiting(self, holder: str, what: str) -> None:
        if self.quiet:
            return
        who = f" ({holder})" if holder else ""
        if what == "the git history pass":
            self.inv.say(
                f"waiting for another codesift process{who} to finish the git history pass"
            )
            return
        # `what` is a whole clause (`this run starts after it`).
        self.inv.say(
            f"waiting for another codesift process{who} to finish writing the index; {what}"
        )

    def begin(self, task: str, total: int) -> None:
        self._total = total
        if self.quiet:
            return
        unit = _TASK_UNITS.get(task, "chunks")
        if not self._console.is_terminal:
            self._lines = ProgressLines(self.inv.stderr, task, unit, interval=self.progress_every)
            return
        if task != "embedding" and total < 20:
            return
        # Loaded only for a bar (a search of an up-to-date index draws none).
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

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
        if self._lines is not None:
            self._lines.phase(description)
        elif self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=description, path="")

    def end(self) -> None:
        if self._lines is not None:
            # Called from `finally`: an exception on its way out (Ctrl-C) is no end.
            self._lines.finish(interrupted=sys.exc_info()[0] is not None)
            self._lines = None
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self._task = None


def _report_built(inv: Invocation, engine: Engine | SharedSearch, args: argparse.Namespace) -> None:
    """The first run's summary (a new index), on stderr."""
    if isinstance(engine, Engine) and engine.built is not None and not args.json:
        inv.say(summary_line(engine.built, engine.connection()))
        left_out = left_out_line(engine.workspace, engine.built.skipped)
        if left_out:
            inv.say(left_out)


def left_out_line(ws: Workspace, skipped: Sequence[tuple[str, str]]) -> str | None:
    """`left out by folder name: deps (index.excluded_dirs), ...`: each folder an index
    run skipped by its name, with the setting that names it (the summary's count of
    skipped files would hide a whole folder of tracked code); None when none."""
    folders = sorted(path for path, reason in skipped if reason == "excluded folder")
    if not folders:
        return None
    excluded = set(ws.settings.index.excluded_dirs)
    setting = {
        p: "excluded_dirs" if p.rsplit("/", 1)[-1] in excluded else "output_dirs" for p in folders
    }
    named = ", ".join(f"{path} (index.{setting[path]})" for path in folders)
    return (
        f"left out by folder name: {named}; to index one, leave its name out of that"
        " setting in .codesift.toml"
    )


def config_overrides(raw: str) -> dict[str, Any]:
    """The settings of the TOML file `raw` (`--config`), to apply on top of each
    folder's .codesift.toml; a collection's relative path is relative to the
    file's folder. ConfigError when the file cannot be read or is not TOML."""
    import tomllib

    path = Path(os.path.expanduser(raw))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--config {raw}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--config {raw}: {exc}") from None
    items = data.get("collections")
    if isinstance(items, list):
        base = path.resolve().parent
        data["collections"] = [
            {**item, "path": str(base / os.path.expanduser(item["path"]))}
            if isinstance(item, dict) and isinstance(item.get("path"), str)
            else item
            for item in items
        ]
    return data


# -- the shared index ------------------------------------------------------------------


def _given_dsn(args: argparse.Namespace) -> str | None:
    """--db, when given (ConfigError when empty)."""
    db: str | None = getattr(args, "db", None)
    if db is not None and not db.strip():
        raise ConfigError("--db needs a DSN (postgresql://user@host/db)")
    return db


def _settings_dsn(ws: Workspace) -> str | None:
    """`index.dsn` when the settings say `index.backend = "postgres"` (ConfigError
    when it is empty), else None."""
    settings = ws.settings.index
    if settings.backend != "postgres":
        return None
    if not settings.dsn.strip():
        raise ConfigError(
            'index.backend is "postgres" but index.dsn is empty: set index.dsn'
            " (.codesift.toml or --config) or give --db DSN"
        )
    from codesift.engine.postgres import dsn_has_password

    if dsn_has_password(settings.dsn):
        raise ConfigError(
            "index.dsn holds a password: settings files are read (and indexed) as text;"
            " keep the password in ~/.pgpass, PGPASSWORD or a pg_service.conf service"
        )
    return settings.dsn


def _shared_dsn(args: argparse.Namespace, inv: Invocation) -> tuple[str | None, Workspace | None]:
    """(the DSN of the shared index a reading command reads, or None for the local
    index; the workspace, when resolved to find out): `--db DSN`, else `index.dsn`
    when the workspace's settings say `index.backend = "postgres"`. ConfigError for
    an empty DSN; QueryError for --repo or --principal without a shared index."""
    db = _given_dsn(args)
    if db is not None:
        return db, None
    ws = inv.workspace(args)
    dsn = _settings_dsn(ws)
    if dsn is not None:
        return dsn, ws
    if getattr(args, "repo", None) or getattr(args, "principal", None):
        raise QueryError(
            "--repo and --principal read the shared index: give --db DSN"
            ' or set index.backend = "postgres"'
        )
    return None, ws


def _open_shared(args: argparse.Namespace, dsn: str) -> SharedSearch:
    """The shared index at `dsn`, read as --principal, over the --repo keys."""
    from codesift.engine.postgres import open_shared_search

    return open_shared_search(
        dsn, principal=args.principal, repos=tuple(args.repo or ()), parallel=False
    )


def _open_reader(args: argparse.Namespace, inv: Invocation) -> Engine | SharedSearch:
    """What `symbols`, `callers`, `callees` and `graph` read: the shared index
    (see `_shared_dsn`) or the workspace's engine."""
    dsn, ws = _shared_dsn(args, inv)
    if dsn is not None:
        return _open_shared(args, dsn)
    return inv.engine(args, quiet=bool(args.json), workspace=ws)


# -- commands ------------------------------------------------------------------------


def _index_workspace(args: argparse.Namespace, inv: Invocation) -> Workspace:
    """PATH or --root, else the workspace the current folder is in, as for every
    command: the nearest indexed folder at or above it (a subfolder updates its
    workspace's index), else the git work tree, else the current folder."""
    if args.path and args.root:
        raise WorkspaceError("give the folder once: as PATH or as --root")
    raw = args.path or args.root
    overrides = config_overrides(args.config) if args.config else None
    if raw:
        ws = Workspace.resolve(raw, option="index" if args.path else "--root")
        if overrides:
            ws = Workspace.at(ws.root, overrides)
    else:
        ws = Workspace.resolve(None, overrides=overrides)
    args.db_path = ws.db_path
    return ws


def _index_target(args: argparse.Namespace, ws: Workspace) -> str | None:
    """The DSN `codesift index` also writes into: --db, else `index.dsn` with
    `index.backend = "postgres"`; None for the local index only. Checked before
    the local index is touched."""
    dsn = _given_dsn(args) or _settings_dsn(ws)
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
            # The shared index is written with the times: the history pass first.
            from codesift.engine.history import complete_history

            complete_history(ws, conn, listener, quiet=args.quiet, purpose="codesift index --db")
            _write_shared(args, inv, ws, conn, dsn)
    finally:
        conn.close()
    return EXIT_OK


def _write_shared(
    args: argparse.Namespace, inv: Invocation, ws: Workspace, conn: apsw.Connection, dsn: str
) -> None:
    """`index --db` (or `index.backend = "postgres"`): the index just updated,
    written into the shared index under --repo, else `index.repo`, else the
    default key."""
    from codesift.engine.postgres import repo_key, write_shared

    key = repo_key(ws.root, args.repo or ws.settings.index.repo or None)
    shared = write_shared(conn, dsn, key, str(ws.root), on_wait=inv.say)
    if args.json:
        inv.print(
            json.dumps(
                {
                    "repo": key,
                    "files_added": shared.files_added,
                    "files_replaced": shared.files_replaced,
                    "files_deleted": shared.files_deleted,
                    "files_unchanged": shared.files_unchanged,
                    "rows": dict(shared.rows),
                    "seconds": round(shared.seconds, 3),
                }
            )
        )
    elif not args.quiet:
        inv.print(
            f"shared index {key}: {shared.files_added} files added,"
            f" {shared.files_replaced} replaced, {shared.files_deleted} deleted,"
            f" {shared.files_unchanged} unchanged ({shared.rows_written} rows)"
            f" in {shared.seconds:.1f} s"
        )


def _search_shared(
    args: argparse.Namespace, inv: Invocation, dsn: str, ws: Workspace | None
) -> SearchResponse:
    """`search --db` (or `index.backend = "postgres"`): the same search over the
    shared PostgreSQL index, with the workspace's search and embedding settings
    when it was resolved (else the defaults)."""
    from codesift.config import EmbeddingSettings, SearchSettings
    from codesift.engine.models import make_embedder
    from codesift.engine.postgres import open_shared_search
    from codesift.retrieval.request import BROAD_LAYERS, SearchRequest

    defaults = ws.settings.search if ws is not None else SearchSettings()
    request = SearchRequest(
        query=args.query,
        top_k=args.top_k if args.top_k is not None else defaults.top_k,
        layers=tuple(args.layer or ()) or BROAD_LAYERS,
        languages=tuple(args.lang or ()),
        paths=tuple(args.path or ()),
        snippet_chars=(
            args.snippet_chars if args.snippet_chars is not None else defaults.snippet_chars
        ),
        max_tokens=args.max_tokens,
        include_graph=args.graph,
        as_of=args.as_of,
        since=args.since,
        until=args.until,
    )
    embedding = ws.settings.embedding if ws is not None else EmbeddingSettings()
    embedder = None if args.no_embed or not embedding.enabled else make_embedder(embedding)
    with open_shared_search(
        dsn,
        principal=args.principal,
        repos=tuple(args.repo or ()),
        settings=defaults,
        embedder=embedder,
    ) as shared:
        return shared.search(request)


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


def _response_json(response: SearchResponse) -> dict[str, Any]:
    data = asdict(response)
    for result in data["results"]:
        result["provenance"] = [dict(h) for h in result["provenance"]]
    for resource in data["resources"]:
        resource["provenance"] = [dict(h) for h in resource["provenance"]]
        resource["title"] = resource["qualified_name"] or resource["path"]
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


def _search_request(args: argparse.Namespace, engine: Engine, times: TimeFilter) -> SearchRequest:
    """The search the command line asks for, with the engine's defaults for what it
    leaves out and `times` (resolved in the engine's folder)."""
    return engine.request(
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


def cmd_search(args: argparse.Namespace, inv: Invocation) -> int:
    if len(args.roots or ()) > 1:
        return _search_folders(args, inv)
    if args.no_route:
        raise QueryError("--no-route needs several --root folders")
    dsn, ws = _shared_dsn(args, inv)
    if dsn is not None:
        response = _search_shared(args, inv, dsn, ws)
        if args.json:
            inv.print(json.dumps(_response_json(response), ensure_ascii=False))
        else:
            _print_search(inv, args.query, response)
        return EXIT_OK
    engine = inv.engine(args, quiet=bool(args.json), workspace=ws)
    try:
        times = engine.times(args.as_of, args.since, args.until)  # before any indexing
        response = engine.search(_search_request(args, engine, times))
        _report_built(inv, engine, args)
    finally:
        engine.close()
    if args.json:
        inv.print(json.dumps(_response_json(response), ensure_ascii=False))
        return EXIT_OK
    _print_search(inv, args.query, response)
    return EXIT_OK


def _search_folders(args: argparse.Namespace, inv: Invocation) -> int:
    """`search` over several --root folders (engine/folder_search.py)."""
    from codesift.engine.folder_search import search_folders
    from codesift.retrieval.request import SearchResponse

    if getattr(args, "db", None) is not None or args.repo or args.principal:
        raise QueryError("--db, --repo and --principal search the shared index: give one --root")
    workspaces = _workspaces_of(args, args.roots)
    args.db_path = workspaces[0].db_path
    engines = [inv.engine(args, quiet=bool(args.json), workspace=ws) for ws in workspaces]

    def request_for(engine: Engine) -> SearchRequest:
        try:  # a revision is resolved in each folder's repository
            times = engine.times(args.as_of, args.since, args.until)
        except QueryError as exc:
            raise QueryError(f"{exc} (folder {engine.root})") from None
        return _search_request(args, engine, times).validated(root=engine.root)

    try:
        found = search_folders(
            engines,
            request_for,
            ConsoleListener(inv, quiet=bool(args.json)),
            route_first=False if args.no_route else None,
        )
        for engine in engines:
            _report_built(inv, engine, args)
    finally:
        for engine in engines:
            engine.close()
    if args.json:
        inv.print(json.dumps(_folders_json(found), ensure_ascii=False))
        return EXIT_OK
    if found.routed:
        inv.say(f"routed to {', '.join(found.routed)} (of {len(engines)} folders)")
    response = SearchResponse(
        query=found.query,
        results=[hit.result for hit in found.results],
        took_ms=found.took_ms,
        resources=found.resources,
    )
    _print_search(inv, args.query, response, [hit.folder for hit in found.results])
    return EXIT_OK


def _folders_json(found: FoldersResponse) -> dict[str, Any]:
    """`search --json` over several folders: a single folder's fields, each result
    with its `folder` and `root`, and what the router chose."""
    from codesift.retrieval.request import SearchResponse

    data = _response_json(
        SearchResponse(
            query=found.query,
            results=[hit.result for hit in found.results],
            took_ms=found.took_ms,
            tokens=found.tokens,
            truncated_by_budget=found.truncated_by_budget,
            resources=found.resources,
        )
    )
    for hit, result in zip(found.results, data["results"], strict=True):
        result["folder"] = hit.folder
        result["root"] = str(hit.root)
    data["streams"] = [{**asdict(s), "folder": name} for name, s in found.streams]
    data["searched"] = found.searched
    data["routed"] = found.routed
    data["folder_order"] = found.folder_order or None
    del data["stages"], data["rerank"]
    return data


def _print_search(
    inv: Invocation,
    query: str,
    response: SearchResponse,
    folders: Sequence[str] | None = None,
) -> None:
    """The page for people; `folders`: each result's folder (a search over several)."""
    console = inv.console()
    for warning in response.warnings:  # a served search's `history_pending`, say
        inv.warn(warning.message)
    if not response.results and not response.resources:
        console.print(f"no results for {escape(query)!r}")
        return
    # One print of the whole page (each line's markup closes on that line): rich's
    # per-call cost made a line-by-line page the slowest part of a served search.
    lines: list[str] = []
    for i, result in enumerate(response.results, start=1):
        found_by = " ".join(f"{h.stream}#{h.rank}" for h in result.provenance)
        where = f"[magenta]{escape(folders[i - 1])}[/] " if folders is not None else ""
        lines.append(
            f"[bold]{i:>2}[/] {where}[cyan]{escape(result.path)}:"
            f"{result.start_line}-{result.end_line}[/]"
            f"  [green]{escape(result.kind)}[/] [bold]{escape(result.qualified_name)}[/]"
            f"  [dim]{result.layer} · {found_by} · {result.score:.4f}[/]"
        )
        when = _history_text(result.history)
        if when:
            lines.append(f"     [dim]{escape(when)}[/]")
        lines.extend(f"     [dim]│[/] {escape(line)}" for line in result.snippet.split("\n"))
        if result.truncated:
            lines.append(f"     [dim]│ … (from line {result.snippet_start_line})[/]")
        for edge in result.graph:
            node = edge.node
            lines.append(
                f"     [magenta]{GRAPH_LABELS.get(edge.relation, edge.relation)}[/]"
                f" [dim]({edge.kind}, line {edge.line})[/] [green]{escape(node.kind)}[/]"
                f" [bold]{escape(node.qualified_name)}[/]"
                f"  [cyan]{escape(node.path)}:{node.start_line}-{node.end_line}[/]"
            )
        for link in result.related:
            lines.append(
                f"     [yellow]≡ mentioned in[/] [bold]{escape(link.collection)}[/]"
                f" [cyan]{escape(link.path)}:{link.start_line}-{link.end_line}[/]"
                f" {escape(link.title)} [dim]({escape(link.term)})[/]"
            )
    if response.resources:
        lines.append("[bold]from the document collections[/]")
    for i, resource in enumerate(response.resources, start=1):
        title = resource.qualified_name or resource.path
        lines.append(
            f"[bold]{i:>2}[/] [yellow]{escape(resource.collection)}[/]"
            f" [cyan]{escape(resource.path)}:{resource.start_line}-{resource.end_line}[/]"
            f"  [bold]{escape(title)}[/]  [dim]{resource.layer} · {resource.score:.4f}[/]"
        )
        lines.extend(f"     [dim]│[/] {escape(line)}" for line in resource.snippet.split("\n"))
    summary = f"{len(response.results)} results"
    if response.resources:
        summary += f" and {len(response.resources)} resources"
    lines.append(f"[dim]{summary} in {response.took_ms:.0f} ms[/]")
    console.print("\n".join(lines))


def _workspaces_of(args: argparse.Namespace, roots: Sequence[str | None]) -> list[Workspace]:
    """The folders of a command over several (`route`, `search --root A --root B`):
    each of `roots` once (None: the current workspace), --config applied to each."""
    overrides = config_overrides(args.config) if args.config else None
    found: list[Workspace] = []
    for root in roots:
        ws = Workspace.resolve(root)
        if overrides:
            ws = Workspace.at(ws.root, overrides)
        if all(w.root != ws.root for w in found):
            found.append(ws)
    return found


def cmd_route(args: argparse.Namespace, inv: Invocation) -> int:
    """Which folders and collections a question is about, pool by pool."""
    from codesift.engine.collections import collections_of
    from codesift.engine.route import check_route, folder_names, route, route_json

    check_route(args.query, args.limit)  # before any index is touched
    if _given_dsn(args) is not None:
        return _route_shared(args, inv)
    if args.repo or args.principal:
        raise QueryError("--repo and --principal route over the shared index: give --db DSN")
    roots, below = _route_roots(args.root)
    workspaces = _workspaces_of(args, roots)
    args.db_path = workspaces[0].db_path
    listener = ConsoleListener(inv, quiet=bool(args.json))
    result = route(args.query, workspaces, listener, limit=args.limit)
    names = folder_names([ws.root for ws in workspaces])
    paths = {name: str(ws.root) for name, ws in zip(names, workspaces, strict=True)}
    if not args.json:
        which = f"indexed folders below {below}" if below is not None else "folders"
        if len(names) == 1:
            which = which.replace("folders", "folder", 1)
        listener.note(f"routed among {len(names)} {which}: {', '.join(names)}")
    collections = {c.name: str(c.root) for ws in workspaces for c in collections_of(ws) if c.name}

    def where(match: RouteMatch) -> dict[str, Any]:
        pool = paths if match.kind == "repository" else collections
        return {"path": pool.get(match.name)}

    data = route_json(result, where)
    data["folders"] = [{"name": name, "path": path} for name, path in paths.items()]
    if args.json:
        inv.print(json.dumps(data, ensure_ascii=False))
        return EXIT_OK
    _print_route(inv, data)
    return EXIT_OK


def _route_shared(args: argparse.Namespace, inv: Invocation) -> int:
    """`route --db`: the shared index's repositories this principal may read."""
    from codesift.engine.postgres import route_shared
    from codesift.engine.route import route_json

    if args.root:
        raise QueryError("--root routes among local folders: leave it out with --db")
    result = route_shared(
        args.db,
        args.query,
        principal=args.principal,
        repos=tuple(args.repo or ()),
        limit=args.limit,
    )
    data = route_json(result, lambda match: {"path": None})
    if args.json:
        inv.print(json.dumps(data, ensure_ascii=False))
    else:
        _print_route(inv, data)
    return EXIT_OK


def _route_roots(given: Sequence[str] | None) -> tuple[Sequence[str | None], Path | None]:
    """The folders `route` routes among: the ones given; else the current workspace;
    outside any (no index above, no git work tree: a scratch or home folder) the
    folders below that have an index, never an index built here (then the folder
    they are under is returned too). WorkspaceError when there is none."""
    if given:
        return given, None
    here = Path.cwd()
    if workspace_above(here) is not None:
        return [None], None
    below = indexed_folders_below(here)
    if not below:
        raise WorkspaceError(
            f"no codesift index at or below {here} (and no git work tree): run `codesift"
            " index` in the folders to route among, or name them with --root"
        )
    return [str(folder) for folder in below], here.resolve()


def _print_route(inv: Invocation, data: Mapping[str, Any]) -> None:
    lines: list[str] = []
    for pool in ("repositories", "collections"):
        lines.append(f"[bold]{pool}[/]")
        matches = data[pool]
        if not matches:
            lines.append("  [dim](none)[/]")
        for match in matches:
            lines.append(
                f"  [bold]{match['confidence']:.2f}[/]  [cyan]{escape(match['name'])}[/]"
                f"  [dim]{escape(match.get('path') or '')}[/]"
            )
            lines.append(f"        [dim]{escape(match['rationale'])}[/]")
    inv.console().print("\n".join(lines))


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


def cmd_symbols(args: argparse.Namespace, inv: Invocation) -> int:
    if args.limit < 1 or args.limit > MAX_SYMBOLS:
        raise QueryError(f"--limit must be between 1 and {MAX_SYMBOLS}, got {args.limit}")
    engine = _open_reader(args, inv)
    try:
        times = engine.times(args.as_of, args.since, args.until)
        found = engine.symbols(args.name, args.limit, times)
        _report_built(inv, engine, args)
    finally:
        engine.close()
    if args.json:
        exact = [_symbol_json(s) for s in found.exact]
        inv.print(json.dumps({"exact": exact, "fuzzy": [_symbol_json(s) for s in found.fuzzy]}))
        return EXIT_OK
    console = inv.console()
    if not found.all:
        console.print(f"no definitions match {escape(args.name)!r}")
    for symbol in found.exact:
        _print_symbol(console, symbol)
    if found.fuzzy:
        console.print("[dim]similar names:[/]")
        for symbol in found.fuzzy:
            _print_symbol(console, symbol, "  ")
    return EXIT_OK


def _graph_command(args: argparse.Namespace, inv: Invocation, direction: str) -> int:
    engine = _open_reader(args, inv)
    try:
        times = engine.times(args.as_of, args.since, args.until)
        query = GraphQuery(
            direction=direction, depth=1, kinds=("calls",), max_nodes=args.max_nodes, times=times
        )
        walk = engine.graph(args.name, query)
        _report_built(inv, engine, args)
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
                            "confidence": link.confidence,
                        },
                        "node": _symbol_json(other),
                    }
                    for link, other in pairs
                ],
            }
            for root, pairs in groups
        ]
        inv.print(json.dumps({"name": args.name, "nodes": payload, "truncated": walk.truncated}))
        return EXIT_OK
    console = inv.console()
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
                how = link.confidence or "unresolved"
                if link.guessed:
                    how += ", by name: a guess"
                console.print(f"      [dim]{where} ({how})[/]")
            else:
                name = escape(link.target_name)
                console.print(f"  → [bold]{name}[/] [dim](unresolved, line {link.line})[/]")
    if walk.truncated:
        console.print(f"[dim]stopped at {args.max_nodes} definitions (--max-nodes)[/]")
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


def cmd_graph(args: argparse.Namespace, inv: Invocation) -> int:
    """The code graph around the definitions named NAME: callers, callees or both,
    DEPTH edges away, along the edge kinds asked for."""
    engine = _open_reader(args, inv)
    try:
        times = engine.times(args.as_of, args.since, args.until)
        kinds = tuple(args.kind or ("calls",))
        query = GraphQuery(args.direction, args.depth, kinds, args.max_nodes, times)
        walk = engine.graph(args.name, query)
        _report_built(inv, engine, args)
    finally:
        engine.close()
    if args.json:
        inv.print(
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
    console = inv.console()
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
            f"  [dim]line {link.line}{f' ({link.confidence})' if link.confidence else ''}[/]"
        )
    if walk.truncated:
        console.print(f"[dim]stopped at {args.max_nodes} definitions (--max-nodes)[/]")
    return EXIT_OK


def cmd_callers(args: argparse.Namespace, inv: Invocation) -> int:
    return _graph_command(args, inv, "callers")


def cmd_callees(args: argparse.Namespace, inv: Invocation) -> int:
    return _graph_command(args, inv, "callees")


_QUERY_PATHS = {
    "static": 'embedded by the static model (embedding.model = "static")',
    "int8": "embedded by the int8 query encoder",
    "pending": "embedded by the int8 query encoder, built on the first search",
    "batch": "embedded by the batch model (embedding.quantized_queries = false)",
    "off": "not embedded (embeddings are off)",
}


def cmd_status(args: argparse.Namespace, inv: Invocation) -> int:
    from codesift.engine.status import index_status  # git and the models' state

    dsn, resolved = _shared_dsn(args, inv)
    if dsn is not None:
        return _shared_status(args, inv, dsn)
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
    _print_status(inv, status)
    return EXIT_OK


def _shared_status(args: argparse.Namespace, inv: Invocation, dsn: str) -> int:
    """`status --db`: each repository of the shared index this principal may read."""
    with _open_shared(args, dsn) as shared:
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
        _print_repo_status(inv, repo)
    return EXIT_OK


def _local_time(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _print_repo_status(inv: Invocation, repo: RepoStatus) -> None:
    embeddable = max(repo.chunks, 1)
    models = f" ({repo.models})" if repo.models else ""
    inv.print(f"repository  {repo.repo}")
    if repo.root:
        inv.print(f"root        {repo.root}")
    inv.print(f"files       {repo.files}")
    inv.print(f"nodes       {repo.nodes}")
    inv.print(f"edges       {repo.edges}")
    inv.print(f"chunks      {repo.chunks}")
    inv.print(f"vectors     {repo.vectors} ({repo.vectors / embeddable:.0%} of chunks){models}")
    inv.print(f"indexed     {_local_time(repo.indexed_at)}")
    if repo.state in ("indexing", "interrupted"):
        since = _local_time(repo.job_started_at)
        if repo.state == "indexing":
            inv.print(f"job         running since {since}")
        else:
            inv.print(
                f"job         interrupted (started {since}): its committed files are in;"
                " the next indexing job of this key writes the rest"
            )
    if repo.commit:
        day = time.strftime("%Y-%m-%d", time.gmtime(repo.commit_time or 0))
        inv.print(f"commit      {repo.commit[:10]} {day} {(repo.subject or '')[:60]}")
    elif repo.state != "indexed":
        inv.print("commit      none yet")
    else:
        inv.print("commit      none (not a git repository)")
    inv.print("languages   " + ", ".join(f"{k} {v}" for k, v in repo.languages.items()))


def _print_status(inv: Invocation, status: IndexStatus) -> None:
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.last_update))
        if status.last_update
        else "never"
    )
    vectors, history, rerank = status.vectors, status.history, status.rerank
    assert vectors is not None and history is not None and rerank is not None
    ratio = vectors.embedded / vectors.embeddable if vectors.embeddable else 1.0
    inv.print(f"root        {status.root}")
    access = ", read-only for this user" if status.read_only else ""
    inv.print(f"database    {status.database} ({status.database_bytes / 1e6:.1f} MB{access})")
    inv.print(f"files       {status.files}")
    inv.print(f"nodes       {status.nodes}")
    inv.print(f"edges       {status.edges}")
    inv.print(f"chunks      {status.chunks}")
    inv.print(f"vectors     {vectors.embedded} of {vectors.embeddable} chunks ({ratio:.0%})")
    if vectors.usable > vectors.embedded:
        usable = vectors.usable / vectors.embeddable if vectors.embeddable else 1.0
        models = ", ".join(f"{name} {count}" for name, count in sorted(vectors.models.items()))
        inv.print(f"searchable  {vectors.usable} chunks ({usable:.0%}) with a vector: {models}")
    if vectors.queries_error:
        inv.print(
            "queries     embedded by the batch model: the query model failed:"
            f" {vectors.queries_error}"
        )
    else:
        inv.print(f"queries     {_QUERY_PATHS[vectors.queries]}")
    inv.print(f"updated     {when}")
    if not history.available:
        at = f" at {history.head[:10]}" if history.head else ""
        inv.print(
            f"history     unavailable{at}: {history.error}"
            f" ({history.mtime_files} files dated by modification time)"
        )
    elif history.pending:
        walk = ""
        if history.commits_done < history.commits_total:
            walk = f"{history.commits_done:,} of {history.commits_total:,} commits walked, "
        inv.print(
            f"history     git, being computed: {walk}{history.files_pending:,} files to time"
            " (codesift history waits for it)"
        )
    else:
        inv.print(f"history     {'git' if history.source == 'git' else 'file modification times'}")
    inv.print("languages   " + ", ".join(f"{k} {v}" for k, v in status.languages.items()))
    if not rerank.enabled:
        inv.print("rerank      off")
    elif rerank.active:
        inv.print(f"rerank      {rerank.provider} ({rerank.model_path})")
    else:
        inv.print(f"rerank      off: {rerank.warning}")


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
    serve(tcp=tcp)
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace, inv: Invocation) -> int:
    """The MCP server for agents on stdio (docs/mcp.md); logs go to stderr or --log-file."""
    from codesift.mcp import serve  # the MCP SDK loads only for this command

    return serve(args.root, log_file=args.log_file, http=args.http)


# -- argument parsing ----------------------------------------------------------------


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
        if several:  # `search`: read by _one_root into args.root / args.roots
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
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    progress_option(p)
    p.set_defaults(func=cmd_embed)

    p = sub.add_parser(
        "history",
        help="compute the git history (created / last-changed times) now",
        description="Complete the git history pass of an index now, with progress. An index"
        " run makes search available first and computes the history afterwards (small"
        " updates at once, a large history in a background `codesift history`); this"
        " command waits for that one, then finishes what is left.",
    )
    p.add_argument("--root", help="workspace folder")
    p.add_argument("--quiet", action="store_true", help="no progress or summary")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--background", action="store_true", help=argparse.SUPPRESS)
    progress_option(p)
    p.set_defaults(func=cmd_history)

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
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (no auth: loopback)",
    )
    p.set_defaults(func=cmd_mcp)

    from codesift.cli_team import add_team_parser

    add_team_parser(sub)
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
    --root as one folder where one is given (see _one_root)."""
    args = parser.parse_args(argv)
    args.verbose += args.__dict__.pop("verbose_after", 0)
    return _one_root(args)


def _positive_seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {raw}")
    return value


def _sqlite_error_message(exc: apsw.Error, kind: str, db_path: Path | None) -> str:
    """One line a person can act on, for an SQLite error that reached the top
    (by its kind, codesift/errors.py)."""
    where = f"the index {db_path}" if db_path is not None else "the index"
    if kind == "disk_full":
        return (
            f"the disk holding {where} is full; the index keeps every file completed so far:"
            " free some space and run `codesift index` again"
        )
    if kind == "index_read_only":
        return f"{where} cannot be written (read-only for this user or on a read-only disk)"
    if kind == "index_damaged":
        problem = integrity_problem(db_path) if db_path is not None else None
        detail = f" ({problem})" if problem else f" ({exc})"
        return (
            f"{where} is damaged{detail}; run `codesift index --rebuild` to move it aside"
            " and build a new one"
        )
    if kind == "index_busy":
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


def failure(exc: Exception, db_path: Path | None) -> tuple[str, int]:
    """The one-line message and exit code of an error that ended a command: its
    kind (codesift/errors.py) decides; `internal` (a bug) is exit 1, every other
    kind exit 2. An OSError that is not an index error (a full disk, a missing
    file) counts as a codesift error, not a bug."""
    if "psycopg" in sys.modules:  # a shared-index command ran: its errors in one line
        from codesift.engine.postgres import database_error

        exc = database_error(exc) or exc
    kind = error_kind(exc)
    if kind == "internal":
        if isinstance(exc, OSError):
            log.debug("OS error", exc_info=True)
            return _os_error_message(exc), EXIT_ERROR
        log.debug("unexpected failure", exc_info=True)
        detail = f"{type(exc).__name__}: {exc}"
        return f"unexpected failure: {detail} (run with -vv for the details)", EXIT_INTERNAL
    if isinstance(exc, apsw.Error):
        log.debug("SQLite error", exc_info=True)
        return _sqlite_error_message(exc, kind, db_path), EXIT_ERROR
    return (str(exc) or error_message(exc)), EXIT_ERROR


def run_command(args: argparse.Namespace, inv: Invocation) -> int:
    """Run the parsed command; an error becomes one `error:` line on stderr and its
    exit code (never a traceback)."""
    try:
        return int(args.func(args, inv))
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        message, code = failure(exc, getattr(args, "db_path", None))
    inv.error(message)
    return code


def _one_root(args: argparse.Namespace) -> argparse.Namespace:
    """`search` reads --root as a list (`roots`); one of them is `root`, as every
    other command has it."""
    roots = getattr(args, "roots", None)
    if roots is not None and len(roots) == 1:
        args.root = roots[0]
    return args


def setup_logging(verbose: int) -> None:
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )


# What an interrupted command leaves in the index (batches are committed one by one).
_KEPT_ON_INTERRUPT = {
    "embed": "the index keeps the vectors computed so far",
    "status": "nothing was changed",
    "": "the index keeps the files indexed and the vectors computed so far",
}


def run(argv: Sequence[str]) -> int:
    """The command `argv` in this process (what `codesift` does without a server)."""
    parser = build_parser()
    args = parse_command_line(parser, argv)
    setup_logging(args.verbose)
    inv = Invocation()
    try:
        return run_command(args, inv)
    except KeyboardInterrupt:
        inv.err_console().print(
            f"interrupted; {_KEPT_ON_INTERRUPT.get(args.command, _KEPT_ON_INTERRUPT[''])}"
        )
        return EXIT_INTERRUPTED


# -- answering the CLI for a server ---------------------------------------------------------

# The commands a server answers over its local socket, and the environment variables
# rich reads to decide colours, width and terminal-ness: the fast path's (cli.py,
# standard library only), so the two cannot differ.
# Before answering, the server waits this long for changes it has seen to be indexed
# (the first index: FIRST_INDEX_WAIT_SECONDS); when that is not enough, the CLI
# answers in-process (and waits for the index's write lock as it always does).
FRESH_WAIT_SECONDS = 10.0
FIRST_INDEX_WAIT_SECONDS = 60.0


class _Decline(Exception):
    """The server does not answer this request: the CLI answers in-process."""


class _QuietParser(argparse.ArgumentParser):
    """A parser that never prints or exits (a server's stdout is its protocol
    channel): anything argparse would print is a reason to decline."""

    def _print_message(self, message: str, file: Any = None) -> None:
        raise _Decline("the command line asks for help or usage")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _Decline(message or "the command line cannot be parsed here")

    def error(self, message: str) -> NoReturn:
        raise _Decline(f"the command line cannot be parsed here: {message}")


_PARSER_LOCK = threading.Lock()


@functools.cache
def _server_parser() -> argparse.ArgumentParser:
    """The quiet parser, built once (building it costs a few ms: argparse looks up
    translations for every option)."""
    return build_parser(_QuietParser)


class LiveEngine(Engine):
    """The engine a server runs the CLI's command with: the same operations as
    in-process (Engine.search, .symbols, .graph, with the CLI's workspace and
    settings), on this reader thread's connection to the live index and the
    folder's Searcher (its in-memory vectors, its loaded models). Never updates
    the index (the server's writer keeps it fresh) and closes nothing it shares."""

    def __init__(
        self,
        ws: Workspace,
        listener: EngineListener,
        folder: FolderIndex,
        reader: LiveReader,
        cancel: Cancellation,
        *,
        vectors: bool,
        quiet: bool,
        command: str,
    ) -> None:
        super().__init__(ws, listener, update=False, vectors=vectors, quiet=quiet, command=command)
        self.folder = folder
        self.reader = reader
        self.cancel = cancel
        self._live: apsw.Connection | None = None

    def connection(self) -> apsw.Connection:
        if self._live is None:
            self._live = self.reader.open(self.folder, None)
            self.cancel.attach(self._live)
        return self._live

    def _make_searcher(self, conn: apsw.Connection) -> Searcher:
        from codesift.store.reader import has_vectors

        warning = self.folder.rerank_status()["warning"]
        if warning:
            self.listener.warning(str(warning))
        embedder: Embedder | None = None
        if self.workspace.settings.embedding.enabled and self.vectors and has_vectors(conn):
            embedder = self.reader.embedder(self.folder)
        return self.folder.searcher(conn, embedder)

    def close(self) -> None:
        # The Searcher is the folder's and the connection the reader thread's.
        self._searcher = None
        live, self._live = self._live, None
        if live is not None:
            self.cancel.detach(live)


def _client_streams(request: Mapping[str, Any]) -> tuple[_Stream, _Stream, dict[str, str]]:
    env = request.get("env")
    environ = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    streams = []
    for name in ("stdout", "stderr"):
        info = request.get(name)
        info = info if isinstance(info, dict) else {}
        tty = bool(info.get("tty", False))
        streams.append(_Stream(tty, str(info.get("encoding") or "utf-8")))
    return streams[0], streams[1], environ


def _requested_workspace(
    request: Mapping[str, Any], args: argparse.Namespace, folder: FolderIndex
) -> Workspace:
    """The workspace the client resolved, checked against the folder served here:
    the same index, and the same settings for everything an answer depends on."""
    root, db_path, cwd = request.get("root"), request.get("db_path"), request.get("cwd")
    if not (isinstance(root, str) and isinstance(db_path, str) and isinstance(cwd, str)):
        raise _Decline("the request does not say which workspace")
    if args.root is not None:  # as argparse read it (abbreviations too): must be the same
        named = Path(cwd, os.path.expanduser(args.root)).resolve()
        if named != Path(root):
            raise _Decline(f"--root {args.root} is not the workspace the client resolved")
    try:
        ws = Workspace.at(Path(root))
    except CodesiftError as exc:
        raise _Decline(f"the workspace's settings: {exc}") from None
    if ws.db_path != folder.db_path or Path(db_path) != ws.db_path:
        raise _Decline(f"this server keeps {folder.db_path}, not {ws.db_path}")
    mine, theirs = folder.settings, ws.settings
    if (mine.search, mine.rerank, mine.embedding) != (
        theirs.search,
        theirs.rerank,
        theirs.embedding,
    ):
        raise _Decline("the server's settings differ from the workspace's .codesift.toml")
    return ws


def answer_socket_request(
    request: Mapping[str, Any],
    folder: FolderIndex,
    reader: LiveReader,
    hangup: Hangup | None = None,
) -> dict[str, Any]:
    """Run a CLI command (`request["argv"]`) as `codesift` would in-process, against
    the folder's live index, with the client's output captured: `{"exit", "stdout",
    "stderr"}`, or `{"fallback": why}` when the client should answer itself. A
    client that hangs up cancels the wait for freshness and the search."""
    from codesift.engine.live import Cancellation

    cancel = Cancellation()
    if hangup is not None:
        hangup.on_hangup(cancel.cancel)
    try:
        return _answer(request, folder, reader, cancel)
    except _Decline as exc:
        return {"fallback": str(exc)}


def _answer(
    request: Mapping[str, Any], folder: FolderIndex, reader: LiveReader, cancel: Cancellation
) -> dict[str, Any]:
    argv = request.get("argv")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise _Decline("the request has no command line")
    with _PARSER_LOCK:
        args = parse_command_line(_server_parser(), argv)
    if args.command not in SOCKET_COMMANDS:
        raise _Decline(f"`codesift {args.command}` runs in-process")
    if len(getattr(args, "roots", None) or ()) > 1:
        raise _Decline("a search over several folders runs in-process")
    if getattr(args, "config", None):
        raise _Decline("--config names settings this server was not started with")
    ws = _requested_workspace(request, args, folder)
    if ws.settings.index.backend == "postgres" or getattr(args, "db", None) is not None:
        raise _Decline("the workspace reads the shared index (index.backend = postgres)")
    if not getattr(args, "no_update", False):
        if not folder.watching:  # changes on disk may be unknown to it: the CLI looks itself
            raise _Decline("the server does not watch this folder's files")
        first = not folder.progress.first_index_done
        wait = FIRST_INDEX_WAIT_SECONDS if first else FRESH_WAIT_SECONDS
        try:
            fresh = reader.wait_fresh(folder, cancel, open_timeout=wait, fresh_timeout=wait)
        except CodesiftError as exc:
            raise _Decline(f"the server's index is not usable: {exc}") from None
        if cancel.cancelled:
            raise _Decline("the client hung up")
        if not fresh:
            raise _Decline("the server's index is not up to date yet")
    if folder.progress.state in ("error", "stopped"):  # the CLI says what is wrong its own way
        raise _Decline(f"the server's index is in state {folder.progress.state}")
    stdout, stderr, environ = _client_streams(request)

    def open_engine(
        ws: Workspace, listener: EngineListener, args: argparse.Namespace, quiet: bool
    ) -> Engine:
        return LiveEngine(
            ws,
            listener,
            folder,
            reader,
            cancel,
            vectors=not getattr(args, "no_embed", False),
            quiet=quiet,
            command=f"codesift {args.command}",
        )

    inv = Invocation(stdout, stderr, environ, lambda args: ws, open_engine)

    def run_here(cancel: Cancellation) -> int:
        return run_command(args, inv)

    code = reader.readers.submit(run_here, cancel).result()
    return {"exit": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


def serve_cli_socket(folder: FolderIndex, reader: LiveReader, label: str) -> LocalSocketServer:
    """Start answering the CLI's reading commands for `folder` on its local socket
    (codesift/local_socket.py); stop it with `.stop()` when the folder goes."""
    from codesift.local_socket_server import LocalSocketServer

    server = LocalSocketServer(
        folder.db_path,
        lambda request, hangup: answer_socket_request(request, folder, reader, hangup),
        label=label,
    )
    server.start()
    return server
