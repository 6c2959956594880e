"""The `codesift` command's entry point.

When a server (`codesift serve`, `codesift mcp`) keeps the workspace's index
live, `search`, `symbols`, `callers`, `callees` and `graph` ask it over its
local socket (codesift/local_socket.py): the server runs the same command code
on its live index and sends back the command's JSON and exit code; the page is
drawn here from that JSON by cli/render_json.py, the code the in-process
command draws it with. That path imports only the standard library (rich only
to colour a terminal's page), so a one-shot search costs little more than
starting Python. Every other command,
and any request the server declines or does not answer in time, runs
in-process (codesift/cli/run.py) as it always has.

The package, by role: parser.py (the command line), invocation.py (streams,
progress), commands.py (index, embed, history, status, serve, mcp), queries.py
(search, route, symbols, callers, callees, graph), render.py (JSON and the other
commands' pages), render_json.py (the reading commands' pages, from their JSON),
shared.py (the shared PostgreSQL index), errors.py (messages and exit codes),
served.py (answering the CLI for a server), team.py (`codesift team`), web.py
(`codesift web`, `codesift token`), run.py.
No server imports this package: `codesift serve` and `codesift mcp` hand the
servers `served.serve_cli_socket` as a parameter.

`-vv` says on stderr which path answered. `CODESIFT_NO_SERVER=1` always answers
in-process.
"""

from __future__ import annotations

import os
import sys

from codesift.local_socket import PROTOCOL, SOCKET_COMMANDS, ask

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time (see _through_server)
    from collections.abc import Sequence
    from typing import Any

__all__ = ["main"]

CONFIG_FILE_NAME = ".codesift.toml"  # config.CONFIG_FILE_NAME (a test compares them)
DEFAULT_DB_PATH = ".codesift/index.db"  # config.IndexSettings().db_path (likewise)
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    answered = _through_server(args)
    if answered is not None:
        return answered
    if _command_of(args) in SOCKET_COMMANDS:
        _one_blas_thread()
    from codesift.cli.run import run

    return run(args)


def _command_of(argv: list[str]) -> str | None:
    """The command word of a command line (after the global -v flags), if any."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
        if not (arg == "--verbose" or set(arg[1:]) == {"v"}):
            return None
    return None


def _one_blas_thread() -> None:
    """One OpenBLAS thread for a one-shot read (search, symbols, graph), unless the
    environment says otherwise: numpy starts a pool of OpenBLAS threads when it is
    imported, which on a busy machine delays the import (`import numpy` 180-370 ms
    -> 80-180 ms at load average 2.8 on 2 cores) for nothing: these commands do no
    BLAS work (their numpy work is einsum and elementwise, which never threads).
    Child processes (a background `codesift embed`) inherit it; they run onnxruntime,
    which has threads of its own."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


# -- the server's path ---------------------------------------------------------------------


def _scan(argv: list[str]) -> tuple[str, str | None, int] | None:
    """(command, --root, -v count) of a command line a server may answer; None for
    anything else (the real parser then reads it in-process). The server parses
    the command line again with the real parser and checks --root."""
    verbose = 0
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        flag = argv[i]
        if flag == "--verbose":
            verbose += 1
        elif len(flag) > 1 and flag[0] == "-" and set(flag[1:]) == {"v"}:
            verbose += len(flag) - 1
        else:
            return None  # --version, --help, ...
        i += 1
    if i >= len(argv) or argv[i] not in SOCKET_COMMANDS:
        return None
    rest = argv[i + 1 :]
    if any(arg == "--db" or arg.startswith("--db=") for arg in rest):
        return None  # the shared index: no local server keeps it
    root: str | None = None
    for j, arg in enumerate(rest):
        if arg in ("-h", "--help", "--"):
            return None
        if arg == "--verbose":  # -v counts after the command too
            verbose += 1
        elif len(arg) > 1 and set(arg[1:]) == {"v"} and arg[0] == "-":
            verbose += len(arg) - 1
        if arg == "--config" or arg.startswith("--config="):
            return None  # settings the server was not started with: in-process
        if arg == "--root" or arg.startswith("--root="):
            if root is not None:
                return None  # several folders: searched in-process
            if arg == "--root":
                if j + 1 >= len(rest):
                    return None
                root = rest[j + 1]
            else:
                root = arg[len("--root=") :]
    return argv[i], root, verbose


def _index_of(folder: str) -> str:
    """Where the index of a workspace rooted at `folder` is (engine/workspace.py's
    rule: `index.db_path` from its .codesift.toml, else the default); the server
    checks the answer against the settings it loaded."""
    raw: Any = DEFAULT_DB_PATH
    config = os.path.join(folder, CONFIG_FILE_NAME)
    if os.path.isfile(config):
        try:
            with open(config, encoding="utf-8") as file:
                text = file.read()
            if "db_path" in text:  # else the default: no need to parse it
                import tomllib

                raw = tomllib.loads(text).get("index", {}).get("db_path", DEFAULT_DB_PATH)
        except Exception:  # a broken file: the in-process path reports it
            raw = DEFAULT_DB_PATH
        if not isinstance(raw, str):
            raw = DEFAULT_DB_PATH
    path = os.path.expanduser(raw)
    return path if os.path.isabs(path) else os.path.join(folder, path)


def _locate(root: str | None) -> tuple[str, str] | None:
    """(workspace root, index file) as `Workspace.resolve` finds them, when the
    index exists; None otherwise (no server can be keeping it)."""
    if root is not None:
        folder = os.path.expanduser(root)
        if not os.path.isdir(folder):
            return None
        folder = os.path.realpath(folder)
        db_path = _index_of(folder)
        return (folder, db_path) if os.path.isfile(db_path) else None
    folder = os.path.realpath(os.getcwd())
    while True:
        db_path = _index_of(folder)
        if os.path.isfile(db_path):
            return folder, db_path
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _debug(verbose: int, message: str) -> None:
    if verbose >= 2:
        sys.stderr.write(f"DEBUG codesift.cli: {message}\n")
        sys.stderr.flush()


def _through_server(argv: list[str]) -> int | None:
    """The exit code of `argv` answered by a server, or None to answer in-process."""
    scanned = _scan(argv)
    if scanned is None:
        return None
    command, root, verbose = scanned
    if os.environ.get("CODESIFT_NO_SERVER", "").strip() not in ("", "0"):
        _debug(verbose, "answering in-process: CODESIFT_NO_SERVER is set")
        return None
    located = _locate(root)
    if located is None:
        _debug(verbose, "answering in-process: no index here for a server to keep")
        return None
    folder, db_path = located
    request = {
        "protocol": PROTOCOL,
        "command": command,
        "argv": argv,
        "cwd": os.getcwd(),
        "root": folder,
        "db_path": db_path,
    }
    try:
        asked = ask(db_path, request)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")  # the server's index is none of this command's work
        return EXIT_INTERRUPTED
    answer = asked.answer
    if answer is None:
        _debug(verbose, f"answering in-process: {asked.reason} ({asked.path})")
        return None
    server = answer.get("server") or {}
    _debug(
        verbose,
        f"answered by {server.get('label', 'a server')} (pid {server.get('pid', '?')})"
        f" over the local socket {asked.path}",
    )
    try:
        _draw(answer)
    except BrokenPipeError:
        return 0
    return int(answer["exit"])


def _draw(answer: dict[str, Any]) -> None:
    """Draw what the server's command said, as the command does in-process
    (cli/render_json.py: the standard library, rich only for a terminal): its
    notes on stderr, its page (from its JSON), its error line."""
    notes, shown, error = answer.get("notes"), answer.get("shown"), answer.get("error")
    notes = [note for note in notes if isinstance(note, dict)] if isinstance(notes, list) else []
    if isinstance(error, dict):
        error = {"level": "error", "message": error.get("message", "")}
    if not (notes or isinstance(shown, dict) or isinstance(error, dict)):
        return
    from codesift.cli.render_json import show, write_notes

    write_notes(sys.stderr, notes)
    if isinstance(shown, dict):
        params = shown.get("params")
        show(
            str(shown.get("view")),
            shown.get("data") or {},
            params if isinstance(params, dict) else {},
            bool(shown.get("json")),
            sys.stdout,
            sys.stderr,
        )
    if isinstance(error, dict):
        write_notes(sys.stderr, [error])
