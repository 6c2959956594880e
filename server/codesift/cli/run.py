"""Running a parsed command in this process: logging, the error line, Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from codesift.cli.errors import EXIT_INTERRUPTED, EXIT_OK, failure
from codesift.cli.invocation import Invocation
from codesift.cli.parser import build_parser, parse_command_line
from codesift.cli.served import serve_cli_socket

if TYPE_CHECKING:
    from codesift.engine.live import FolderIndex, LiveReader
    from codesift.local_socket_server import LocalSocketServer


def run_command(args: argparse.Namespace, inv: Invocation) -> int:
    """Run the parsed command; an error becomes one `error:` line on stderr and its
    exit code (never a traceback)."""
    try:
        return int(args.func(args, inv))
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        kind, message, code = failure(exc, getattr(args, "db_path", None))
    inv.error(message, kind)
    return code


def setup_logging(verbose: int) -> None:
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )


# What an interrupted command leaves in the index (batches are committed one by one).
_KEPT_ON_INTERRUPT = {
    "embed": "the index keeps the vectors computed so far",
    "resolve": "the index keeps the calls resolved so far; the next pass goes on from there",
    "status": "nothing was changed",
    "": "the index keeps the files indexed and the vectors computed so far",
}


def run(argv: Sequence[str]) -> int:
    """The command `argv` in this process (what `codesift` does without a server)."""
    parser = build_parser()
    args = parse_command_line(parser, argv)
    setup_logging(args.verbose)
    inv = Invocation(cli_socket=answer_cli)
    try:
        return run_command(args, inv)
    except KeyboardInterrupt:
        inv.err_console().print(
            f"interrupted; {_KEPT_ON_INTERRUPT.get(args.command, _KEPT_ON_INTERRUPT[''])}"
        )
        return EXIT_INTERRUPTED


def answer_cli(folder: FolderIndex, reader: LiveReader, label: str) -> LocalSocketServer:
    """The local socket on which a server (`codesift serve`, `codesift mcp`) answers
    the CLI's reading commands for `folder` with this module's `run_command`."""
    return serve_cli_socket(folder, reader, label, run_command)
