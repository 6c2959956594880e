"""The history phase: git times come after the first answer, never before it.

An index run writes files, nodes and chunks; search works from that moment. The
git history pass (history/update.py: walk the commits, then give every file's
nodes and chunks their created / last-changed times) runs afterwards:

- `after_index` (one-shot front ends, right after an index run): a pass with
  little to do (at most INLINE_COMMITS commits to walk and INLINE_FILES files to
  time: a save, a pull of a few commits) runs at once, in milliseconds; a larger
  one goes to a detached `codesift history` process (`start_background_history`),
  as the MiniLM vectors go to a detached `codesift embed`.
- `complete_history`: the pass now, in this process, with progress; it first
  waits for another process's pass (the history lock) and reports how far that
  one is. `codesift history` runs it, and a one-shot search with a time filter
  (`--as-of/--since/--until`) runs it before filtering, so that nothing is
  silently filtered on missing times.
- The language server and the MCP server run the pass on the folder's writer
  thread (engine/live.py), after changes and before vectors; their searches with
  a time filter answer at once, with a `history_pending` warning, until it is done.

One pass per index at a time (the history lock); each step of it is written
under the write lock, so an index run waits one step (about a second) at most.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import apsw

from codesift.engine.detached import start_detached_pass
from codesift.engine.listener import EngineListener
from codesift.engine.workspace import Workspace
from codesift.errors import ReadOnlyIndexError
from codesift.history.state import HistoryPending, HistoryProgress, HistoryStats, history_pending
from codesift.store.locks import IndexLock, taken, writer_lock

__all__ = [
    "INLINE_COMMITS",
    "INLINE_FILES",
    "after_index",
    "complete_history",
    "history_lock",
    "start_background_history",
    "write_steps",
]

log = logging.getLogger(__name__)

# A pass this small runs right after the index run, before the answer.
INLINE_COMMITS = 50
INLINE_FILES = 200
# How often a process waiting for another's pass reads how far it is.
WAIT_POLL_SECONDS = 0.5

TASK_WALK = "git history: commits"
TASK_TIME = "git history: files"


def history_lock(ws: Workspace, purpose: str) -> IndexLock | None:
    """The index's history lock, taken; None when another process holds it (or
    this user cannot write the index)."""
    return taken(ws.db_path, "history", purpose)


def is_small(pending: HistoryPending) -> bool:
    return (
        pending.commits_total - pending.commits_done <= INLINE_COMMITS
        and pending.files <= INLINE_FILES
    )


def write_steps(
    ws: Workspace, purpose: str, *, held: bool = False
) -> Callable[[], AbstractContextManager[bool]]:
    """update_history's batch guard: each step under the index's write lock (none
    to take when the caller `held` it), and no step into an index file that was
    deleted or replaced since the pass began (the pass then stops)."""
    try:
        stat = os.stat(ws.db_path)
        identity: tuple[int, int] | None = (stat.st_dev, stat.st_ino)
    except OSError:
        identity = None

    def same_file() -> bool:
        try:
            now = os.stat(ws.db_path)
        except OSError:
            return False
        return identity == (now.st_dev, now.st_ino)

    @contextlib.contextmanager
    def step() -> Iterator[bool]:
        if not same_file():
            log.warning("%s was deleted or replaced; the history pass stops", ws.db_path)
            yield False
            return
        if held:
            yield True
            return
        with writer_lock(ws.db_path, purpose) as acquired:
            yield acquired and same_file()

    return step


class _Reporter:
    """History progress as two listener tasks: commits walked, then files timed."""

    def __init__(self, listener: EngineListener) -> None:
        self.listener = listener
        self.task: str | None = None

    def __call__(self, event: HistoryProgress) -> None:
        task = TASK_WALK if event.phase == "walking" else TASK_TIME
        if task != self.task:
            self.end()
            if event.total <= 0:
                return
            self.listener.begin(task, event.total)
            self.task = task
        self.listener.advance(event.done)

    def end(self) -> None:
        if self.task is not None:
            self.listener.end()
            self.task = None


def _update(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool,
    purpose: str,
    held: bool,
) -> HistoryStats:
    # The walk's module (and numpy, which its line tables use) only when there is a
    # pass to run: an index run outside git, or with its history current, asks
    # history_pending alone.
    from codesift.history.update import update_history

    reporter = None if quiet else _Reporter(listener)
    try:
        stats = update_history(
            conn,
            ws.root,
            progress=reporter,
            batch_guard=write_steps(ws, f"{purpose}: writing git times", held=held),
        )
    finally:
        if reporter is not None:
            reporter.end()
    return stats  # a history git cannot read was logged (history/update.py)


def complete_history(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool = False,
    purpose: str = "codesift history",
    held: bool = False,
) -> HistoryStats | None:
    """Run what is left of the history pass now (`held`: the caller holds the
    write lock). When another process is at it, wait for it first, reporting how
    far it is, then finish what it left. None when this user cannot write the
    index (its times are read as they are)."""
    lock = IndexLock(ws.db_path, "history", purpose=purpose)
    try:
        if not lock.try_acquire():
            _wait_for_other(ws, conn, lock, listener, quiet=quiet)
    except ReadOnlyIndexError:
        return None
    try:
        return _update(ws, conn, listener, quiet=quiet, purpose=purpose, held=held)
    finally:
        lock.release()


def _wait_for_other(
    ws: Workspace,
    conn: apsw.Connection,
    lock: IndexLock,
    listener: EngineListener,
    *,
    quiet: bool,
) -> None:
    listener.waiting(lock.holder(), "the git history pass")
    reporter = None if quiet else _Reporter(listener)

    def report() -> None:
        if reporter is not None:
            with contextlib.suppress(apsw.Error):
                pending = history_pending(conn, ws.root)
                if pending.commits_done < pending.commits_total:
                    reporter(
                        HistoryProgress("walking", pending.commits_done, pending.commits_total)
                    )

    try:
        lock.acquire(on_poll=report, poll=WAIT_POLL_SECONDS)
    finally:
        if reporter is not None:
            reporter.end()


def after_index(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool = False,
    held: bool = True,
) -> str:
    """Right after an index run (the caller holds the write lock when `held`):
    a small history pass now, a large one in the background. Returns "done",
    "background" (a detached `codesift history` was started), "elsewhere"
    (another process is at it) or "none" (nothing to do)."""
    pending = history_pending(conn, ws.root)
    if not pending.pending:
        return "none"
    if is_small(pending):
        lock = history_lock(ws, "codesift: updating git times")
        if lock is None:
            return "elsewhere"
        try:
            _update(ws, conn, listener, quiet=True, purpose="codesift", held=held)
        finally:
            lock.release()
        return "done"
    started = start_background_history(ws)
    if not quiet:
        where = "in the background" if started else "by another codesift process"
        walk = pending.commits_total - pending.commits_done
        what = f"{pending.files:,} files"
        if walk:
            what = f"{walk:,} commits, then {what}"
        listener.note(
            f"git history ({what}) is being computed {where}; results carry their times"
            " once it is done (codesift status shows how far; codesift history waits for it)"
        )
    return "background" if started else "elsewhere"


def start_background_history(ws: Workspace) -> bool:
    """Run the history pass in a detached `codesift history` process, unless
    another process is at it already; True when one was started. Its log is
    `history.log` beside the index."""
    return start_detached_pass(ws, "history", "history", "history.log")
