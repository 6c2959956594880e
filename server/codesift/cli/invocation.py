"""Where a command writes (its two streams, rich's environment) and how it opens
its workspace and engine; the engine's events on stderr (ConsoleListener).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from codesift.cli.render_json import show, write_notes
from codesift.console_progress import DEFAULT_INTERVAL_SECONDS, ProgressLines
from codesift.engine.access import summary_line
from codesift.engine.listener import EngineListener
from codesift.engine.session import Engine
from codesift.engine.workspace import Workspace
from codesift.errors import ConfigError

# rich is loaded only to draw (another command's page, a progress bar): a reading
# command on an up-to-date index draws with cli/render_json.py and needs none of it.
if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from codesift.engine.api import IndexReader
    from codesift.local_socket_server import CliSocketStarter


class CapturedStream(io.StringIO):
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
    # What `codesift serve` and `codesift mcp` hand their server to answer the CLI
    # on the local socket (cli/run.py's; None: the servers open no socket).
    cli_socket: CliSocketStarter | None = None
    # A server answering over its socket keeps (`keep_shown`) what a reading command
    # shows (`{"view", "json", "data", "params"}`), its notes on stderr (`{"level",
    # "message"}`, in order) and its error (`{"kind", "message"}`) for the CLI to
    # draw (cli/render_json.py); else they are drawn here, with the same code.
    shown: dict[str, Any] | None = None
    notes: list[dict[str, str]] = field(default_factory=list)
    failed: dict[str, str] | None = None
    keep_shown: bool = False
    # Whether a note came after the page (kept notes are drawn before it).
    noted_after_shown: bool = False

    def console(self) -> Console:
        """The command's output (stdout)."""
        from rich.console import Console

        return Console(file=self.stdout, highlight=False, soft_wrap=True, _environ=self.environ)

    def err_console(self) -> Console:
        from rich.console import Console

        return Console(file=self.stderr, highlight=False, _environ=self.environ)

    def show(self, view: str, data: dict[str, Any], as_json: bool, **params: Any) -> None:
        """A reading command's output from its JSON (render_json.py draws it, here
        or in the CLI that asked a server)."""
        if self.keep_shown:
            self.shown = {"view": view, "json": as_json, "data": data, "params": params}
            return
        show(view, data, params, as_json, self.stdout, self.stderr, self.environ)

    def print(self, text: str) -> None:
        """A line of plain output (JSON, status) on stdout."""
        print(text, file=self.stdout)

    def say(self, message: str) -> None:
        """A dim note on stderr (never stdout: that is the command's output)."""
        self._note("note", message)

    def warn(self, message: str) -> None:
        """`warning: message` on stderr."""
        self._note("warning", message)

    def error(self, message: str, kind: str = "internal") -> None:
        """The command's `error: message` line on stderr (`kind`: codesift/errors.py's
        word for it, which a server answering the CLI sends with it)."""
        if self.keep_shown:
            self.failed = {"kind": kind, "message": message}
            return
        write_notes(self.stderr, [{"level": "error", "message": message}], self.environ)

    def _note(self, level: str, message: str) -> None:
        note = {"level": level, "message": message}
        if self.keep_shown:
            self.noted_after_shown |= self.shown is not None
            self.notes.append(note)
            return
        write_notes(self.stderr, [note], self.environ)

    def workspace(self, args: argparse.Namespace) -> Workspace:
        """The workspace a reading command works on: --root, else the nearest index
        (honouring index.db_path), else the git work tree, else the current folder."""
        if self.open_workspace is not None:
            ws = self.open_workspace(args)
        else:
            ws = Workspace.resolve(getattr(args, "root", None))
            config = getattr(args, "config", None)
            if config:
                ws = configured_workspace(ws.root, config)
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


# What each task of the engine counts (engine/access.py, engine/history.py,
# engine/call_phase.py).
_TASK_UNITS = {
    "indexing": "files",
    "call graph: files": "files",
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
        self._stderr: Console | None = None  # made when first drawn on
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._lines: ProgressLines | None = None
        self._total = 0

    def _console(self) -> Console:
        if self._stderr is None:
            self._stderr = self.inv.err_console()
        return self._stderr

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
        if not self._console().is_terminal:
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
        self._bar = Progress(*columns, console=self._console(), transient=True)
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


def report_built(inv: Invocation, engine: IndexReader, args: argparse.Namespace) -> None:
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


def configured_workspace(root: Path, raw: str) -> Workspace:
    """The workspace at `root` with the settings file `raw` (`--config`) on top of
    its .codesift.toml; the background passes it starts are given the file too."""
    return Workspace.at(
        root, config_overrides(raw), config_file=Path(os.path.expanduser(raw)).resolve()
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
