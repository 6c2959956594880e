"""The CLI's side of the local socket (codesift/local_socket.py): a server
(`codesift serve`, `codesift mcp`) is given `serve_cli_socket` and answers the
CLI's reading commands with the same command code on its live index. What the
command shows is sent as its JSON (engine/results.py's vocabulary, what `--json`
prints), which the CLI draws itself (cli/render_json.py), and so are its notes
and its error (`{"level", "message"}` each, `{"kind", "message"}`): the server
draws nothing for the client's terminal.
"""

from __future__ import annotations

import argparse
import functools
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from codesift.cli.invocation import CapturedStream, Invocation
from codesift.cli.parser import build_parser, parse_command_line
from codesift.engine.listener import EngineListener
from codesift.engine.live_engine import LiveEngine
from codesift.engine.session import Engine
from codesift.engine.workspace import Workspace
from codesift.errors import CodesiftError
from codesift.local_socket import SOCKET_COMMANDS

if TYPE_CHECKING:
    from codesift.engine.live import Cancellation, FolderIndex, LiveReader
    from codesift.local_socket_server import Hangup, LocalSocketServer

# How a parsed command runs (cli/run.py's run_command, handed down: run.py imports
# this module).
RunCommand = Callable[[argparse.Namespace, Invocation], int]


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
    *,
    run_command: RunCommand,
) -> dict[str, Any]:
    """Run a CLI command (`request["argv"]`) as `codesift` would in-process, against
    the folder's live index: `{"exit", "notes", "error", "shown"}` (`shown`: the
    command's JSON for the client to draw, `{"view", "json", "data", "params"}`, or
    None after an error; `notes`: its notes on stderr, `{"level", "message"}` each,
    in order; `error`: `{"kind", "message"}` of its error line, or None), or
    `{"fallback": why}` when the client should answer itself. A
    client that hangs up cancels the wait for freshness and the search. `run_command`
    runs the parsed command."""
    from codesift.engine.live import Cancellation

    cancel = Cancellation()
    if hangup is not None:
        hangup.on_hangup(cancel.cancel)
    try:
        return _answer(request, folder, reader, cancel, run_command)
    except _Decline as exc:
        return {"fallback": str(exc)}


def _answer(
    request: Mapping[str, Any],
    folder: FolderIndex,
    reader: LiveReader,
    cancel: Cancellation,
    run_command: RunCommand,
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
    # Nothing is drawn here: what the command writes itself (not through the
    # Invocation) is a reason to decline (below).
    stdout, stderr = CapturedStream(False, "utf-8"), CapturedStream(False, "utf-8")

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

    inv = Invocation(stdout, stderr, {}, lambda args: ws, open_engine, keep_shown=True)

    def run_here(cancel: Cancellation) -> int:
        return run_command(args, inv)

    code = reader.readers.submit(run_here, cancel).result()
    # Every reading command shows its output through inv.show and its notes through
    # inv.say / warn / error, the page last (a command read only: running it again
    # in the CLI changes nothing).
    if stdout.getvalue() or stderr.getvalue():
        raise _Decline(f"`codesift {args.command}` wrote to its streams itself")
    if inv.noted_after_shown:
        raise _Decline(f"`codesift {args.command}` wrote a note after its page")
    return {"exit": code, "notes": inv.notes, "error": inv.failed, "shown": inv.shown}


def serve_cli_socket(
    folder: FolderIndex, reader: LiveReader, label: str, run_command: RunCommand
) -> LocalSocketServer:
    """Start answering the CLI's reading commands for `folder` on its local socket
    (codesift/local_socket.py), each with `run_command`; stop it with `.stop()` when
    the folder goes."""
    from codesift.local_socket_server import LocalSocketServer

    server = LocalSocketServer(
        folder.db_path,
        lambda request, hangup: answer_socket_request(
            request, folder, reader, hangup, run_command=run_command
        ),
        label=label,
    )
    server.start()
    return server
