"""The call phase: a cold index answers searches before its calls are resolved.

A large index run (at least DEFER_CALLS_MIN_FILES files to parse) writes the calls
edges with their names but without their targets; the call pass (call_pass.py)
resolves them afterwards. Until it is done, callers / callees / graph see only the
edges already resolved (imports, inheritance and the files done), and say so
(`calls_pending`, the files left).

- `after_index` (one-shot front ends, right after an index run): a pass with at
  most INLINE_FILES files runs at once; a larger one goes to a detached
  `codesift resolve --background`, which then goes on with the git history pass
  (one background process, not two competing for the cores).
- `complete_calls`: the pass now, in this process, with progress; it first waits
  for another process's pass (the calls lock). `codesift resolve` runs it, and a
  one-shot callers / callees / graph runs it before walking, so that a graph is
  never silently partial.
- The language server and the MCP server run it on the folder's writer thread
  (engine/live_folder.py), right after the index run; their graph answers carry
  `calls_pending` until it is done.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from codesift.config import Settings
from codesift.engine.detached import start_detached_pass
from codesift.engine.history import write_steps
from codesift.engine.listener import EngineListener
from codesift.engine.workspace import Workspace
from codesift.errors import ReadOnlyIndexError
from codesift.store.call_targets import calls_owed, calls_pending_count, targets_pending_count
from codesift.store.locks import IndexLock, taken

if TYPE_CHECKING:
    from codesift.call_pass import CallPassProgress, CallPassStats

__all__ = [
    "INLINE_FILES",
    "TASK_FILES",
    "after_index",
    "calls_lock",
    "calls_pending_count",
    "complete_calls",
    "resolve_here",
    "start_background_calls",
]

log = logging.getLogger(__name__)

# A pass this small (what a killed pass left, say) runs right after the index
# run, before the answer; a run defers its calls only with more files than this
# (indexer.DEFER_CALLS_MIN_FILES).
INLINE_FILES = 50
# How often a process waiting for another's pass reads how far it is.
WAIT_POLL_SECONDS = 0.5

TASK_FILES = "call graph: files"


def calls_lock(ws: Workspace, purpose: str) -> IndexLock | None:
    """The index's calls lock, taken; None when another process holds it (or
    this user cannot write the index)."""
    return taken(ws.db_path, "calls", purpose)


def _run(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool,
    purpose: str,
    held: bool,
) -> bool:
    """The pass over what is left; whether it completed."""
    from codesift.call_pass import resolve_pending_calls

    left = calls_pending_count(conn)
    began = False

    def report(event: CallPassProgress) -> None:
        nonlocal began
        if event.phase == "files":
            if not began:
                listener.begin(TASK_FILES, event.total)
                began = True
            listener.advance(event.done)
        else:
            if began:
                listener.end()
                began = False
            listener.phase("resolving calls across files")

    try:
        stats = resolve_pending_calls(
            ws.root,
            ws.settings,
            conn,
            progress=None if quiet or not left else report,
            batch_guard=write_steps(ws, f"{purpose}: writing call targets", held=held),
        )
    finally:
        if began:
            listener.end()
    if stats.files or stats.changed:
        log.info(
            "call pass: %d file(s) resolved, %d changed since, in %.1f s",
            stats.files,
            stats.changed,
            stats.seconds,
        )
    return stats.complete


def complete_calls(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool = False,
    purpose: str = "codesift resolve",
    held: bool = False,
) -> bool | None:
    """Run what is left of the call pass now (`held`: the caller holds the write
    lock). When another process is at it, wait for it first, reporting how far
    it is, then finish what it left. None when this user cannot write the index
    (its graph is read as it is); else whether the pass is complete."""
    lock = IndexLock(ws.db_path, "calls", purpose=purpose)
    try:
        if not lock.try_acquire():
            _wait_for_other(conn, lock, listener, quiet=quiet)
    except ReadOnlyIndexError:
        return None
    try:
        if not calls_owed(conn):
            return True
        return _run(ws, conn, listener, quiet=quiet, purpose=purpose, held=held)
    finally:
        lock.release()


def _wait_for_other(
    conn: apsw.Connection, lock: IndexLock, listener: EngineListener, *, quiet: bool
) -> None:
    listener.waiting(lock.holder(), "the call graph pass")
    total = targets_pending_count(conn)
    began = False

    def report() -> None:
        nonlocal began
        if not quiet and total:
            with contextlib.suppress(apsw.Error):
                left = targets_pending_count(conn)
                if not began:
                    listener.begin(TASK_FILES, total)
                    began = True
                listener.advance(total - left)

    try:
        lock.acquire(on_poll=report, poll=WAIT_POLL_SECONDS)
    finally:
        if began:
            listener.end()


def after_index(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool = False,
    held: bool = True,
) -> str:
    """Right after an index run (the caller holds the write lock when `held`):
    a small call pass now, a large one in the background. Returns "done",
    "background" (a detached `codesift resolve` was started; it goes on with the
    git history), "elsewhere" (another process is at it) or "none"."""
    if not calls_owed(conn):
        return "none"
    left = targets_pending_count(conn)
    if left <= INLINE_FILES:
        lock = calls_lock(ws, "codesift: resolving calls")
        if lock is None:
            return "elsewhere"
        try:
            _run(ws, conn, listener, quiet=True, purpose="codesift", held=held)
        finally:
            lock.release()
        return "done"
    started = start_background_calls(ws)
    if not quiet:
        where = "in the background" if started else "by another codesift process"
        listener.note(
            f"the call graph ({left:,} files) is being resolved {where}; search works"
            " now (codesift status shows how far; codesift callers/callees/graph and"
            " codesift resolve wait for it)"
        )
    return "background" if started else "elsewhere"


def resolve_here(
    root: Path,
    settings: Settings,
    conn: apsw.Connection,
    db_path: Path,
    *,
    report: Callable[[CallPassProgress], None],
    stop: threading.Event,
    batch_guard: Callable[[], AbstractContextManager[bool]],
) -> CallPassStats | None:
    """The pass in a long-running writer (the live folder's): each batch inside
    `batch_guard()`, until `stop`. None when another process is at it."""
    from codesift.call_pass import resolve_pending_calls

    lock = IndexLock(db_path, "calls", purpose=f"codesift serve: resolving calls of {root}")
    if not lock.try_acquire():
        log.info("the calls of %s are resolved by %s; not here", root, lock.holder())
        return None
    try:
        stats = resolve_pending_calls(
            root,
            settings,
            conn,
            progress=report,
            cancel=stop,
            batch_guard=batch_guard,
        )
    finally:
        lock.release()
    log.info("calls of %d file(s) of %s resolved in %.1f s", stats.files, root, stats.seconds)
    return stats


def start_background_calls(ws: Workspace) -> bool:
    """Run the call pass, then the git history pass, in a detached `codesift
    resolve --background` process, unless another process is at it; True when one
    was started. Its log is `resolve.log` beside the index."""
    return start_detached_pass(ws, "calls", "resolve", "resolve.log")
